"""A gate re-run on an unchanged study reads nothing and writes nothing.

Every gate read of a held-out set spends a level of its error budget, so reading it again for
the same question (same spec, same study front, same held-out set) would both waste the budget
and, at the next level, possibly promote something else: a second, different TuningProposal
for the same evidence. `unchanged_since` finds the earlier gate in the out folder that answered
exactly this question; the command then says so and stops before any kernel starts.
"""

from __future__ import annotations

from pathlib import Path

from contextos_lab.gate.gate_record import GateRun


def _front(pairs: list[tuple[int, dict]]) -> list[tuple[int, str]]:
    from contextos_lab.schemas.base import canonical_json

    return sorted((n, canonical_json(diff)) for n, diff in pairs)


def unchanged_since(
    spec_path: str | Path,
    storage: str,
    out: Path,
    *,
    study_name: str | None = None,
    max_candidates: int | None = None,
) -> GateRun | None:
    """The earlier gate run in `out` on this spec, study front and held-out set, if any."""
    from contextos_lab.autotune.cases import load_case_set, scope_to_intent
    from contextos_lab.autotune.context import prepare
    from contextos_lab.autotune.spec.load import load_spec
    from contextos_lab.gate.run_gate import GATE_FILE, load_gate_run, spec_hash
    from contextos_lab.gate.study_front import front_candidates, load_study

    gate_file = out / GATE_FILE
    if not gate_file.is_file():
        return None
    try:
        previous = load_gate_run(gate_file)
    except (OSError, ValueError):
        return None  # an unreadable record answers nothing: gate again
    ctx = prepare(load_spec(spec_path))
    name = study_name or ctx.spec.name
    if previous.study != name or previous.spec_hash != spec_hash(ctx.spec):
        return None
    heldout = scope_to_intent(
        load_case_set(ctx.spec.resolve(ctx.spec.heldout_test_set)), ctx.spec.target.intent
    )
    if previous.heldout.get("manifest_hash") != heldout.manifest_hash:
        return None
    ranked = front_candidates(load_study(name, storage), ctx.spec, max_candidates)
    now = _front([(int(r["number"]), dict(r["config_diff"])) for r in ranked.to_dict("records")])
    before = _front([(c.trial_number, c.config_diff) for c in previous.candidates])
    return previous if now == before else None
