"""One gate run: a study's feasible front re-run on held-out beside the baseline, then verdicts.

Reads the study from its storage by name (it must have been created from this spec: same
problem hash), takes the feasible Pareto front in the seed's ranking, evaluates baseline and
candidates on the held-out set (`gate.heldout.heldout`, the only reader), applies `verdict.decide`
with
the spec's target and guardrails, optionally confirms ResearchTask candidates on the held-out
split of the traces, and writes `gate.json`. Nothing is emitted or applied here.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import optuna
import pandas as pd

from contextos_lab.autotune.context import RunContext, prepare
from contextos_lab.autotune.spec.load import load_spec
from contextos_lab.autotune.spec.run_spec import TuningRunSpec
from contextos_lab.autotune.study.artifacts import recorded_case_hashes
from contextos_lab.autotune.study.open import StudyMismatch, problem_hash
from contextos_lab.autotune.study.storage import StorageUnreachable, default_storage_url
from contextos_lab.gate.gate_record import (
    GATE_FILE,
    GateCandidate,
    GateResult,
    GateRun,
    load_gate_run,
)
from contextos_lab.gate.heldout.heldout import (
    HeldoutSet,
    heldout_cases,
    open_heldout,
    paired_frames,
)
from contextos_lab.gate.heldout.ledger_entries import _confirm_research, _settle_budget
from contextos_lab.gate.record_fields import (
    GateRunContext,
    candidates,
    identity,
    reads,
    spec_fields,
    with_heldout_means,
)
from contextos_lab.gate.record_fields import means as _means
from contextos_lab.gate.research import ResearchConfirmation
from contextos_lab.gate.reuse import file_digest, inputs_hash, reusable, write_cases
from contextos_lab.gate.reuse import write_atomic as _write_atomic
from contextos_lab.gate.study_front import StudyNotFound, front_candidates, load_study
from contextos_lab.gate.verdict import GateDecision, GateGuardrails, decide
from contextos_lab.schemas.base import canonical_json, sha256_hex
from contextos_lab.schemas.ids import new_id

#: Bump when what `spec_hash` covers changes on purpose (a new behaviour default below).
SPEC_HASH_VERSION = "spec-hash/1"
#: Fields whose value changes what the gate decides or proposes even when the spec does not
#: write them: their effective value is hashed always, so a changed default changes the hash.
#: Every other default is left out, so a field added later with a default leaves the hash of
#: every existing spec as it was ("already proposed" survives an upgrade).
BEHAVIOUR_DEFAULTS: tuple[str, ...] = (
    "evaluate",
    "objectives",
    "repeats",
    "max_error_rate",
    "gain_tolerance",
    "heldout_budget",
)


def spec_hash(spec: TuningRunSpec) -> str:
    """The spec as written (fields equal to their defaults dropped, at every depth), the
    effective value of each behaviour-changing default, and a version tag."""
    effective = spec.model_dump(mode="json", include=set(BEHAVIOUR_DEFAULTS))
    written = spec.model_dump(mode="json", exclude_defaults=True)
    return sha256_hex(
        canonical_json({"version": SPEC_HASH_VERSION, "spec": written, "defaults": effective})
    )


def guardrails_of(spec: TuningRunSpec) -> GateGuardrails:
    deltas = {
        k: v for k, v in spec.guardrails.accepted_deltas.model_dump().items() if v is not None
    }
    floors = spec.guardrails.floors
    return GateGuardrails(
        policy_floor=floors.policy, safety_floor=floors.safety, accepted_delta=deltas
    )


def _intents(cases: pd.DataFrame) -> dict[str, str] | None:
    """Case id -> intent, to name the intents a metric does not score in the gate's notes."""
    if "intent" not in cases.columns:
        return None
    return {str(c): str(i) for c, i in zip(cases["case_id"], cases["intent"], strict=True)}


def run_gate(
    spec: str | Path | TuningRunSpec,
    *,
    storage: str | None = None,
    out_dir: str | Path,
    study_name: str | None = None,
    run_id: str | None = None,
    ledger_file: str | Path | None = None,
    alpha: float = 0.05,
    n_boot: int = 2000,
    seed: int = 0,
    max_candidates: int | None = None,
    insights: str | Path | None = None,
    sources: Sequence[str] = ("synthetic",),
    ctx: RunContext | None = None,
    reuse: bool = True,
) -> GateResult:
    """Run the held-out gate for a study and write `out_dir/gate.json` (and the per-case
    scores, `gate_cases.json`). With `reuse`, a gate in `out_dir` that answered exactly this
    question (`gate.reuse.inputs_hash`) is returned as it was: nothing read, spent or written.

    Raises SpecError (bad spec), StorageUnreachable, StudyNotFound, StudyMismatch (the study
    was built from another spec), HeldoutOverlapError (refused before any case runs).
    """
    spec_path = str(spec) if not isinstance(spec, TuningRunSpec) else ""
    ctx = ctx or prepare(spec if isinstance(spec, TuningRunSpec) else load_spec(spec))
    out = Path(out_dir)
    url = storage or default_storage_url(out)
    name = study_name or ctx.spec.name
    study = _open_study(ctx, url, name, spec_path)
    ranked = front_candidates(study, ctx.spec, max_candidates)
    s_hash = spec_hash(ctx.spec)
    cands = candidates(ranked)
    inputs = _inputs(
        ctx, name, s_hash, cands, insights, sources,
        alpha=alpha, n_boot=n_boot, seed=seed, max_candidates=max_candidates,
    )  # fmt: skip
    if reuse and (earlier := reusable(out, inputs, run_id)) is not None:
        return GateResult(*earlier, path=out / GATE_FILE, ranked=ranked)  # as it was
    q = GateRunContext(ctx, run_id or new_id("eval"), name, s_hash, ledger_file, url, spec_path)
    heldout = _open_heldout(q, study, len(ranked))
    baseline, frames = paired_frames(ctx, heldout, {c.candidate_id: c.params for c in cands})
    decisions = _decisions(ctx, heldout, baseline, frames, alpha=alpha, seed=seed, n_boot=n_boot)
    budget = _settle_budget(heldout, decisions, q.run_id, ledger_file)  # ledger: before research
    research = _research(q, alpha, insights, sources, decisions)
    run = GateRun(
        **identity(q, study),
        **spec_fields(ctx, heldout),
        **reads(heldout.prior_reads, research[0]),
        alpha=alpha,
        n_boot=n_boot,
        baseline_heldout_means=_means(baseline),
        candidates=with_heldout_means(cands, frames),
        decisions=decisions,
        research=research[1],
        error_budget=budget,
        inputs_hash=inputs,
    )
    path = _write(out, run, inputs, baseline, frames)
    return GateResult(run=run, baseline=baseline, frames=frames, path=path, ranked=ranked)


def _write(
    out: Path, run: GateRun, inputs: str, baseline: pd.DataFrame, frames: dict[str, pd.DataFrame]
) -> Path:
    """The per-case scores, then `gate.json` (atomically: a reader never sees half a run)."""
    write_cases(out, run_id=run.run_id, inputs=inputs, baseline=baseline, frames=frames)
    path = out / GATE_FILE
    _write_atomic(path, run.model_dump_json(indent=1) + "\n")
    return path


def _inputs(
    ctx: RunContext,
    study: str,
    s_hash: str,
    cands: list[GateCandidate],
    insights: str | Path | None,
    sources: Sequence[str],
    **settings: Any,
) -> str:
    """The hash of the question a gate run answers (`gate.reuse.inputs_hash`): the spec, the
    held-out manifest, the candidates, the settings, and the insights file with its sources."""
    return inputs_hash(
        ctx,
        study=study,
        spec_hash=s_hash,
        heldout_manifest=heldout_cases(ctx)[0].manifest_hash,
        candidates=cands,
        settings={
            **settings,
            "insights": file_digest(insights),
            "sources": list(sources) if insights is not None else None,
        },
    )


def _open_heldout(q: GateRunContext, study: optuna.Study, n_candidates: int) -> HeldoutSet:
    """The held-out set, opened for this run (`gate.heldout.heldout.open_heldout`: the overlap
    check and the ledger entry come first)."""
    return open_heldout(
        q.ctx,
        run_id=q.run_id,
        study=q.study,
        spec_hash=q.spec_hash,
        n_candidates=n_candidates,
        recorded_search_hashes=recorded_case_hashes(study, q.url),
        ledger_file=q.ledger_file,
        budget=q.ctx.spec.heldout_budget,
    )


def _research(
    q: GateRunContext,
    alpha: float,
    insights: str | Path | None,
    sources: Sequence[str],
    decisions: list[GateDecision],
) -> tuple[int | None, list[ResearchConfirmation]]:
    """(prior held-out reads of the traces' split, confirmations) of the research candidates
    in `insights`; (None, []) without insights. A promotion closes the question it answered."""
    if insights is None:
        return None, []
    return _confirm_research(
        insights,
        sources,
        alpha=alpha,
        closed=any(d.verdict == "promote" for d in decisions),
        intent=q.ctx.spec.target.intent,
        run_id=q.run_id,
        study=q.study,
        s_hash=q.spec_hash,
        ledger_file=q.ledger_file,
    )


def _open_study(ctx: RunContext, url: str, name: str, spec_path: str) -> optuna.Study:
    """The study to gate, refused (`StudyMismatch`) when another spec built it; its paid
    results become the context's cache when it has none."""
    study = load_study(name, url)  # first: a missing study is named before any file is opened
    if ctx.cache is None:  # the study's paid results: the baseline re-run reads them, and a
        # gate re-run on the same study and held-out set gets the same runs, hence its verdicts
        from contextos_lab.harness.result_cache import open_for_study

        ctx.cache = open_for_study(url)
    recorded = study.user_attrs.get("problem_hash")
    if recorded is not None and recorded != problem_hash(ctx):
        raise StudyMismatch(
            f"study {name!r} was created from a different spec than {spec_path or 'this one'}"
        )
    return study


def _decisions(
    ctx: RunContext,
    heldout: HeldoutSet,
    baseline: pd.DataFrame,
    frames: dict[str, pd.DataFrame],
    *,
    alpha: float,
    seed: int,
    n_boot: int,
) -> list[GateDecision]:
    """`verdict.decide` on the paired held-out frames with the spec's target and guardrails,
    at the error budget's next promotion level; none without candidates."""
    if not frames:
        return []
    return decide(
        baseline,
        frames,
        target_metric=ctx.spec.target.metric.value,
        target_direction=ctx.spec.target.direction.value,
        guardrails=guardrails_of(ctx.spec),
        alpha=alpha,
        seed=seed,
        n_boot=n_boot,
        promote_alpha=heldout.budget.next_level,
        intents=_intents(heldout.cases.cases),
    )


#: Names this module has always offered (the private ones too); the records, the study front
#: and the ledger entries now live in gate_record, study_front and ledger_entries.
__all__ = [
    "GATE_FILE",
    "GateCandidate",
    "GateResult",
    "GateRun",
    "StorageUnreachable",
    "StudyNotFound",
    "_confirm_research",
    "_means",
    "_settle_budget",
    "_write_atomic",
    "front_candidates",
    "guardrails_of",
    "load_gate_run",
    "load_study",
    "run_gate",
    "spec_hash",
]
