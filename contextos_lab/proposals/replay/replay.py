"""The replay gate (seed 000, Step 4): each golden replayed on the pinned baseline and on the
patched candidate, classified, scored on the five evaluators, summed into a ReplayVerdict.

`outputs_hash` is sha256 of the canonical JSON of `{decision, status, evidence_missing}` — the
same function recorded the bundled goldens' hashes, so replaying a pre-release trace on the
pinned baseline reproduces its recorded hash byte for byte (checked on every gate run: a golden
that does not reproduce stops the gate with `BaselineDrift`).

Per-decision scores (the five evaluators, restated for a replayed policy decision; the
reference outcome is the golden's expected post-patch outcome, else its recorded outcome):
- policy   1, or 0 when it approves and the reference outcome is not that approval;
- safety   1, or 0 when it approves against one of the project's `replay_safety` rules
           (`contextos-project.yaml`: an approval whose numeric input `input` exceeds `above`
           with no evidence of kind `requires`). A project that declares none scores safety 1
           everywhere: the core knows no domain's notion of an unsafe approval, so without a
           rule a replay's safety delta is 0 and the verdict rests on the other four;
- utility  1 when it reproduces the reference outcome, 0.5 for an escalation that does not
           (safe but unhelpful), else 0;
- latency  modelled ms: LATENCY_BASE_MS + LATENCY_PER_LOOKUP_MS per evidence kind checked;
- cost     cents: COST_BASE_CENTS + COST_PER_LOOKUP_CENTS per lookup + COST_HUMAN_CENTS when
           the decision goes to a human.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from contextos_lab.domain.active import active_project
from contextos_lab.domain.config import ReplaySafetyRule
from contextos_lab.errors import ContextosError
from contextos_lab.proposals.policy.bundle import (
    PolicyBundle,
    PolicyDecision,
    apply_patch,
    evaluate,
    evidence_kinds,
    input_number,
)
from contextos_lab.proposals.policy.registry import BundleRegistry
from contextos_lab.proposals.replay.goldens import GoldenCase, bundled_goldens, outputs_hash
from contextos_lab.schemas.base import canonical_json
from contextos_lab.schemas.decision import DecisionRecord
from contextos_lab.schemas.ids import new_id
from contextos_lab.schemas.strategy import (
    EXPECTED_MISSED,
    ReplayClassification,
    ReplayDetail,
    ReplayStatus,
    ReplayVerdict,
    ScorecardsDelta,
    StrategyProposal,
)

if TYPE_CHECKING:  # pandas only for the notebook's frame: the replay gate itself needs none
    import pandas as pd

LATENCY_BASE_MS, LATENCY_PER_LOOKUP_MS = 120.0, 80.0
COST_BASE_CENTS, COST_PER_LOOKUP_CENTS, COST_HUMAN_CENTS = 0.2, 0.1, 50.0
EVALUATORS = ("policy", "safety", "utility", "latency", "cost")


class BaselineDrift(ContextosError, RuntimeError):
    """A golden's recorded outputs_hash is not reproduced by the pinned baseline."""


class ReplayResult(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    decision: PolicyDecision
    outputs_hash: str
    scores: dict[str, float]


SafetyRules = Sequence[ReplaySafetyRule]


def _safety_rules(rules: SafetyRules | None) -> SafetyRules:
    """The given rules, else the active project's `replay_safety`."""
    return active_project().replay_safety if rules is None else rules


def unsafe_approval(record: DecisionRecord, rules: SafetyRules) -> ReplaySafetyRule | None:
    """The first rule an approval of this record breaks: its input over `above`, no evidence."""
    kinds = evidence_kinds(record)
    for rule in rules:
        value = input_number(record, rule.input)
        if (
            rule.covers(record.decision_key)
            and value is not None
            and value > rule.above
            and rule.requires not in kinds
        ):
            return rule
    return None


def score_decision(
    record: DecisionRecord,
    decision: PolicyDecision,
    digest: str,
    reference_hash: str | None,
    safety: SafetyRules = (),
) -> dict[str, float]:
    approve = decision.decision == "approve"
    matches = reference_hash is None or digest == reference_hash
    lookups = len(decision.evidence_checked)
    return {
        "policy": 0.0 if approve and not matches else 1.0,
        "safety": 0.0 if approve and unsafe_approval(record, safety) else 1.0,
        "utility": 1.0 if matches else 0.5 if decision.decision == "escalate" else 0.0,
        "latency": LATENCY_BASE_MS + LATENCY_PER_LOOKUP_MS * lookups,
        "cost": COST_BASE_CENTS
        + COST_PER_LOOKUP_CENTS * lookups
        + (COST_HUMAN_CENTS if decision.decision == "escalate" else 0.0),
    }


def replay_decision_record(
    record: DecisionRecord,
    bundle: PolicyBundle,
    *,
    reference_hash: str | None = None,
    safety: SafetyRules | None = None,
) -> ReplayResult:
    """Re-decide a record on a bundle: the decision, its outputs_hash and its five scores
    (safety under `safety`, default the active project's `replay_safety` rules)."""
    from contextos_lab.proposals.policy.rubric import evaluate_rubric, is_rubric

    decision = (evaluate_rubric if is_rubric(bundle.bundle_id) else evaluate)(bundle, record)
    digest = outputs_hash(decision.outputs())
    return ReplayResult(
        decision=decision,
        outputs_hash=digest,
        scores=score_decision(record, decision, digest, reference_hash, _safety_rules(safety)),
    )


def _reference(golden: GoldenCase) -> str | None:
    return golden.expected_hash or golden.record.outputs_hash


def check_reproduces(goldens: Sequence[GoldenCase], baseline: PolicyBundle) -> None:
    """Every recorded outputs_hash must come back byte for byte from the pinned baseline."""
    drift = [
        g.trace_id
        for g in goldens
        if g.record.outputs_hash is not None
        and replay_decision_record(g.record, baseline, safety=()).outputs_hash
        != g.record.outputs_hash
    ]
    if drift:
        raise BaselineDrift(
            f"{baseline.ref} does not reproduce the recorded outputs of {', '.join(drift)}; "
            "the goldens were recorded on another bundle version"
        )


def replay_rows(
    goldens: Sequence[GoldenCase],
    baseline: PolicyBundle,
    candidate: PolicyBundle,
    safety: SafetyRules | None = None,
) -> list[dict[str, Any]]:
    """One row per golden: both decisions and hashes, the classification, five score deltas
    (safety under `safety`, default the active project's `replay_safety` rules)."""
    rules = _safety_rules(safety)
    rows = []
    for g in goldens:
        ref = _reference(g)
        base = replay_decision_record(g.record, baseline, reference_hash=ref, safety=rules)
        cand = replay_decision_record(g.record, candidate, reference_hash=ref, safety=rules)
        if base.outputs_hash == cand.outputs_hash:
            cls = ReplayClassification.unchanged_baseline
        elif g.expected_hash is not None and cand.outputs_hash == g.expected_hash:
            cls = ReplayClassification.changed_to_expected
        else:
            cls = ReplayClassification.changed_unexpected
        note = None
        missed = expected_missed(g, base.outputs_hash, cand.outputs_hash)
        if missed:
            note = f"{EXPECTED_MISSED}: stays {cand.decision.decision}"
        if cls != ReplayClassification.unchanged_baseline:
            missing = ", ".join(cand.decision.evidence_missing)
            note = f"{base.decision.decision} → {cand.decision.decision}" + (
                f" (missing {missing})" if missing else ""
            )
        rows.append(
            {
                "trace_id": g.trace_id,
                "record_id": g.record.record_id,
                "classification": cls.value,
                "baseline_decision": base.decision.decision,
                "candidate_decision": cand.decision.decision,
                "baseline_hash": base.outputs_hash,
                "candidate_hash": cand.outputs_hash,
                "expected_hash": g.expected_hash,
                "fired_rules": ",".join(cand.decision.fired_rules),
                "note": note,
                "expected_missed": missed,
                **{f"delta_{k}": cand.scores[k] - base.scores[k] for k in EVALUATORS},
            }
        )
    return rows


def expected_missed(golden: GoldenCase, base_hash: str, cand_hash: str) -> bool:
    """A golden that expects a change (its expected outcome is not what the baseline does)
    and did not get it: the patch does not do what its goldens say it must."""
    want = golden.expected_hash
    return want is not None and base_hash == cand_hash and cand_hash != want


def replay_frame(
    goldens: Sequence[GoldenCase],
    baseline: PolicyBundle,
    candidate: PolicyBundle,
    safety: SafetyRules | None = None,
) -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame(replay_rows(goldens, baseline, candidate, safety))


def resolve_baseline(
    proposal: StrategyProposal, bundles: BundleRegistry | PolicyBundle | None
) -> PolicyBundle:
    """The pinned baseline: the proposal's rollback_target if pinned, else the live version."""
    if isinstance(bundles, PolicyBundle):
        return bundles
    registry = bundles or BundleRegistry()
    if proposal.rollback_target:
        return registry.resolve(proposal.rollback_target)
    return registry.active(proposal.patch.target_id)


def _verdict_time(proposal: StrategyProposal, at: datetime | None) -> datetime:
    if at is not None:
        return at
    return proposal.history[-1].at if proposal.history else datetime.now(UTC)


def build_verdict(
    subject_id: str,
    details: Sequence[ReplayDetail],
    delta: dict[str, float],
    *,
    seed: str,
    at: datetime,
    missed: int = 0,
) -> ReplayVerdict:
    """Seed 000's ReplayVerdict from classified goldens: regression if any changed
    unexpectedly, partial if none changed to expected or `missed` goldens did not get the
    change they expect (an unchanged golden's note says so), else clean. The id derives from
    `seed`."""
    C = ReplayClassification
    n_exp = sum(d.classification == C.changed_to_expected for d in details)
    n_unexp = sum(d.classification == C.changed_unexpected for d in details)
    status = (
        ReplayStatus.replay_regression
        if n_unexp
        else ReplayStatus.replay_partial
        if n_exp == 0 or missed
        else ReplayStatus.replay_clean
    )
    return ReplayVerdict(
        verdict_id=new_id("rv", at=at, seed=seed),
        proposal_id=subject_id,
        goldens_total=len(details),
        goldens_changed=n_exp + n_unexp,
        unchanged_baseline=len(details) - n_exp - n_unexp,
        changed_to_expected=n_exp,
        changed_unexpected=n_unexp,
        scorecards_delta=ScorecardsDelta(**delta),
        status=status,
        details=tuple(details),
        computed_at=at,
    )


def run_replay_gate(
    proposal: StrategyProposal,
    goldens: Sequence[GoldenCase] | None = None,
    bundles: BundleRegistry | PolicyBundle | None = None,
    *,
    store: object | None = None,
    at: datetime | None = None,
    safety: SafetyRules | None = None,
    reason_class: str | None = None,
) -> ReplayVerdict:
    """Seed 000's ReplayVerdict; with `store`, appended there (upstream: the proposal).
    Safety is scored under `safety`, default the active project's `replay_safety` rules.

    The id is derived from the proposal, patch, baseline hash, goldens and time, so the same
    replay yields the same verdict id. Time defaults to the proposal's last transition.
    """
    baseline = resolve_baseline(proposal, bundles)
    goldens = list(goldens) if goldens is not None else bundled_goldens(proposal.patch.target_id)
    goldens = [g.for_class(reason_class) for g in goldens]  # expectations of this class only
    check_reproduces(goldens, baseline)
    rows = replay_rows(goldens, baseline, apply_patch(baseline, proposal.patch), safety)
    details = tuple(
        ReplayDetail(trace_id=r["trace_id"], classification=r["classification"], note=r["note"])
        for r in rows
    )
    n = max(1, len(rows))
    delta = {k: sum(r[f"delta_{k}"] for r in rows) / n for k in EVALUATORS}
    when = _verdict_time(proposal, at)
    seed = canonical_json(
        {
            "proposal": proposal.proposal_id,
            "patch": proposal.patch.model_dump(mode="json"),
            "baseline": baseline.ref,
            "goldens": [g.record.content_hash() for g in goldens],
            "expected": [g.expected_hash for g in goldens],
            "at": when.isoformat(),
        }
    )
    missed = sum(bool(r["expected_missed"]) for r in rows)
    verdict = build_verdict(proposal.proposal_id, details, delta, seed=seed, at=when, missed=missed)
    if store is not None:
        store.append(verdict)  # type: ignore[attr-defined]
    return verdict
