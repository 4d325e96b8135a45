"""The replay gate for adjustment-layer StrategyRules (seed 001: "every proposal goes through
the Evaluation Engine on a golden replay before review"), for all six layers.

A layer rule is replayed like a policy patch (seed 000, Step 4): each golden of the layer
(`harness/goldens/LAYER_<layer>.jsonl`, GoldenCase lines) is decided on the pinned baseline —
the layer's live adjustments — and on the candidate — the same plus this rule's adjustment —
then classified (unchanged_baseline / changed_to_expected / changed_unexpected) and summed into
a ReplayVerdict whose `proposal_id` is the rule's id. A rule released to supersede another is
replayed on the live layer without the rule it replaces.

What an adjustment does to a decision is the domain's knowledge, so the project supplies it:
`harness/layer_replay.py` with `replay(record, adjustments) -> {decision, status?,
evidence_missing?}` where `adjustments` are the live entries `{layer, applies_to, type, value}`
that apply to the record. The core hashes those outputs exactly as the policy gate does, checks
the baseline reproduces each golden's recorded outputs_hash (else `BaselineDrift`), and scores:
policy and safety 0 for an approval the reference outcome does not approve, utility as the
policy gate scores it; latency and cost are not modelled by a layer replay (delta 0).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from contextos_lab.domain.active import active_project
from contextos_lab.domain.config import DomainConfig
from contextos_lab.errors import ContextosError
from contextos_lab.proposals.compile.entry import resolve_entry
from contextos_lab.proposals.compile.table import CompileError
from contextos_lab.proposals.release.layer_registry import LayerRegistry, LayerState
from contextos_lab.proposals.replay.goldens import (
    ExpectedOutcome,
    GoldenCase,
    load_goldens,
    outputs_hash,
)
from contextos_lab.proposals.replay.replay import EVALUATORS, BaselineDrift, build_verdict
from contextos_lab.schemas.base import canonical_json
from contextos_lab.schemas.decision import DecisionRecord
from contextos_lab.schemas.strategy import (
    EXPECTED_MISSED,
    ReplayClassification,
    ReplayDetail,
    ReplayVerdict,
    StrategyRule,
)

#: The project's layer replayer: `harness/layer_replay.py`, function `replay`.
REPLAYER_ENTRY = "layer_replay:replay"
Replayer = Callable[[DecisionRecord, list[dict[str, Any]]], dict[str, Any]]


class LayerReplayError(ContextosError, ValueError):
    """The project cannot replay this layer (no replayer, no goldens, a malformed outcome)."""


def layer_goldens_id(layer: str) -> str:
    return f"LAYER_{layer}"


def project_replayer(project: DomainConfig | None = None) -> Replayer:
    project = project or active_project()
    try:
        return resolve_entry(REPLAYER_ENTRY, project.root)
    except CompileError as exc:
        raise LayerReplayError(
            f"project {project.name} has no layer replayer ({project.root}/harness/"
            f"layer_replay.py with replay(record, adjustments)): {exc}"
        ) from None


def layer_goldens(layer: str, project: DomainConfig | None = None) -> list[GoldenCase]:
    project = project or active_project()
    path = project.goldens_path(layer_goldens_id(layer))
    if not path.is_file():
        raise LayerReplayError(f"no goldens for the {layer} layer (looked for {path})")
    return load_goldens(path)


def applies(applies_to: dict[str, Any], record: DecisionRecord) -> bool:
    """`intent` matches the record's intent or decision key (or a dotted parent of either);
    any other key must equal the record's input of that name."""
    for key, want in applies_to.items():
        if key == "intent":
            names = (record.intent or "", record.decision_key)
            if not any(n == want or n.startswith(f"{want}.") for n in names):
                return False
        elif record.inputs.get(key) != want:
            return False
    return True


def entries(
    state: LayerState, extra: StrategyRule | None = None, without: str | None = None
) -> list[dict[str, Any]]:
    """The layer's live adjustments (minus `without`, plus a candidate rule's), by rule id."""
    rules = {k: v for k, v in state.rules.items() if k != without}
    if extra is not None and extra.adjustment is not None:
        a = extra.adjustment
        rules[extra.rule_id] = {"applies_to": extra.applies_to, "type": a.type, "value": a.value}
    return [{"layer": state.layer, "rule_id": k, **rules[k]} for k in sorted(rules)]


def decide(
    replayer: Replayer, record: DecisionRecord, adjustments: list[dict[str, Any]]
) -> tuple[str, str]:
    """(outputs_hash, decision) of the record replayed with the adjustments that apply."""
    chosen = [a for a in adjustments if applies(a.get("applies_to") or {}, record)]
    raw = replayer(record, chosen)
    try:
        out = ExpectedOutcome.model_validate(
            {k: raw.get(k) for k in ("decision", "status", "evidence_missing") if k in raw}
        )
    except (ValueError, AttributeError) as exc:
        raise LayerReplayError(
            f"layer replayer returned {raw!r} for {record.record_id}: {exc}"
        ) from None
    return outputs_hash(out.outputs()), out.decision


def _scores(record_approves: bool, digest: str, reference: str | None) -> dict[str, float]:
    matches = reference is None or digest == reference
    bad = record_approves and not matches
    return {
        "policy": 0.0 if bad else 1.0,
        "safety": 0.0 if bad else 1.0,
        "utility": 1.0 if matches else 0.0,
        "latency": 0.0,
        "cost": 0.0,
    }


def _replay_one(
    replayer: Replayer,
    g: GoldenCase,
    base_adj: list[dict[str, Any]],
    cand_adj: list[dict[str, Any]],
) -> tuple[ReplayDetail, dict[str, float], bool]:
    """One golden replayed on the live layer and with the rule: how its outcome moved, the
    evaluators' deltas, and whether it still misses the golden's expected outcome."""
    C = ReplayClassification
    (base, base_d), (cand, cand_d) = (
        decide(replayer, g.record, base_adj),
        decide(replayer, g.record, cand_adj),
    )
    ref = g.expected_hash or g.record.outputs_hash
    missed = False
    if base == cand:
        cls, note = C.unchanged_baseline, None
        if g.expected_hash is not None and cand != g.expected_hash:
            missed = True
            note = f"{EXPECTED_MISSED}: stays {cand_d}"
    elif g.expected_hash is not None and cand == g.expected_hash:
        cls, note = C.changed_to_expected, "changed to the golden's expected outcome"
    else:
        cls, note = C.changed_unexpected, "changed, but not to an expected outcome"
    sb = _scores(base_d == "approve", base, ref)
    sc = _scores(cand_d == "approve", cand, ref)
    delta = {k: sc[k] - sb[k] for k in EVALUATORS}
    return ReplayDetail(trace_id=g.trace_id, classification=cls, note=note), delta, missed


def run_layer_replay(
    rule: StrategyRule,
    layers: LayerRegistry,
    goldens: Sequence[GoldenCase] | None = None,
    *,
    project: DomainConfig | None = None,
    store: Any = None,
    at: datetime | None = None,
    supersedes: str | None = None,
    reason_class: str | None = None,
) -> ReplayVerdict:
    """Seed 000's ReplayVerdict for a proposed layer rule; with `store`, appended there.
    `supersedes`: the active rule this one is to replace (left out of both sides)."""
    if rule.adjustment is None:
        raise LayerReplayError(f"{rule.rule_id} has no layer adjustment to replay")
    layer = rule.adjustment.layer.value
    replayer = project_replayer(project)
    goldens = list(goldens) if goldens is not None else layer_goldens(layer, project)
    goldens = [g.for_class(reason_class) for g in goldens]
    baseline = layers.active(layer)
    base_adj = entries(baseline, without=supersedes)
    cand_adj = entries(baseline, rule, without=supersedes)
    details, deltas = [], []
    drift = []
    missed = 0
    for g in goldens:
        recorded = g.record.outputs_hash
        if recorded is not None and decide(replayer, g.record, [])[0] != recorded:
            drift.append(g.trace_id)
        detail, golden_delta, golden_missed = _replay_one(replayer, g, base_adj, cand_adj)
        details.append(detail)
        deltas.append(golden_delta)
        missed += golden_missed
    if drift:
        raise BaselineDrift(
            f"the {layer} replayer with no adjustment does not reproduce the recorded outputs "
            f"of {', '.join(drift)}: goldens and replayer disagree"
        )
    n = max(1, len(details))
    when = at or datetime.now(UTC)
    seed = canonical_json(
        {
            "rule": rule.rule_id,
            "adjustment": rule.adjustment.model_dump(mode="json"),
            "baseline": baseline.ref,
            "supersedes": supersedes,
            "goldens": [g.record.content_hash() for g in goldens],
            "expected": [g.expected_hash for g in goldens],
            "at": when.isoformat(),
        }
    )
    delta = {k: sum(d[k] for d in deltas) / n for k in EVALUATORS}
    verdict = build_verdict(rule.rule_id, details, delta, seed=seed, at=when, missed=missed)
    if store is not None:
        store.append(verdict)
    return verdict
