"""Proposal files from a gate run: one TuningProposal per sweep when anything was promoted,
ResearchTasks only for patterns the gate confirmed on the held-out split (or knowledge gaps
tuning left open).

One decision per sweep: the promoted candidates are one proposal's family of operating points
(`gate.family`), rank 1 as its `candidate_change`. Re-running the same sweep on the same data
emits nothing new: a proposal with the same evidence key (spec, sets, promoted changes) already
in the folder is reported as "already proposed", with its path.

Every file names the rendered HTML report it was reviewed with, by path and SHA-256, so a
reviewer can tell the report they read is the one the proposal cites. Files are written by
`files.proposal_files` (atomic, never overwritten, never through a link; its names are re-exported
here). Nothing here touches a harness.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from contextos_lab.gate.family import OperatingPoint, evidence_key, promoted_family
from contextos_lab.gate.run_gate import GateRun
from contextos_lab.gate.verdict import GateDecision
from contextos_lab.proposals.files.proposal_files import ProposalExists as ProposalExists
from contextos_lab.proposals.files.proposal_files import UnsafeProposalPath as UnsafeProposalPath
from contextos_lab.proposals.files.proposal_files import report_matches as report_matches
from contextos_lab.proposals.files.proposal_files import report_ref, write_envelope
from contextos_lab.proposals.files.proposal_files import sha256_file as sha256_file
from contextos_lab.proposals.files.proposal_files import write_new as write_new
from contextos_lab.proposals.preference_evidence import proposal_preferences
from contextos_lab.schemas.ids import new_id
from contextos_lab.schemas.preference import PreferenceEntry
from contextos_lab.schemas.research import ResearchTask
from contextos_lab.schemas.tuning import (
    BaselineTuple,
    CandidateChange,
    FrontierPoint,
    ReportRef,
    TuningProposal,
    TuningTarget,
    ValueChange,
)

PROPOSALS_DIR = "proposals"



class EmitResult(BaseModel):
    """What emission wrote, what it refused to write, and why."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    run_id: str
    tuning_proposals: list[str] = Field(default_factory=list)
    research_tasks: list[str] = Field(default_factory=list)
    not_emitted: list[dict[str, Any]] = Field(default_factory=list)
    existing: list[str] = Field(default_factory=list)
    message: str = ""


def _layer(layers: list[str]) -> str:
    return "+".join(sorted(layers)) if layers else "config"


def expected_delta(decision: GateDecision) -> dict[str, Any]:
    """Per metric: held-out delta with its 95% bootstrap interval, the test and its p-value."""
    return {
        t.metric: {
            "delta": t.delta,
            "ci_low": t.ci_low,
            "ci_high": t.ci_high,
            "baseline": t.baseline_mean,
            "candidate": t.candidate_mean,
            "test": t.test,
            "p_value": t.p_value,
            "n": t.n,
        }
        for t in decision.tests
        if t.n > 0  # a metric no held-out case scored (policy without rules): the notes say so
    }


def _change(cand: Any) -> CandidateChange:
    return CandidateChange(
        layer=_layer(cand.layers),
        diff={k: ValueChange.model_validate(v) for k, v in cand.config_diff.items()},
    )


def tuning_proposal(
    run: GateRun,
    family: list[OperatingPoint] | GateDecision,
    report: ReportRef,
    preferences: Sequence[PreferenceEntry] = (),
) -> TuningProposal:
    """The seed-001 TuningProposal for a sweep's promoted family (rank 1 is the change).

    `preferences`: pairwise judgements (e.g. the store's PreferenceEntry rows); where the
    change was judged, its win rate, interval and cited ids go into `gate.preferences`."""
    if isinstance(family, GateDecision):  # one decision: a family of one
        if family.verdict != "promote":
            raise ValueError(f"{family.candidate_id} is {family.verdict!r}; only promote emits")
        family = [OperatingPoint(1, run.candidate(family.candidate_id), family)]
    if not family:
        raise ValueError("nothing promoted: no TuningProposal")
    top = family[0]
    cand, decision = top.candidate, top.decision
    key = evidence_key(run, family)
    judged = (
        proposal_preferences(preferences, run.study, cand.trial_number, run.baseline_trial or 0)
        if preferences
        else []
    )
    return TuningProposal(
        tuning_proposal_id=new_id("at", seed=key),
        target=TuningTarget.model_validate(run.target),
        guardrails={**run.guardrails, "as_strings": run.guardrail_strings},
        baseline_tuple=BaselineTuple.model_validate(run.baseline_tuple),
        tunable_surfaces=tuple(run.tunable_surfaces),
        search_set=f"{run.search_set['path']}@sha256:{run.search_set['manifest_hash']}",
        heldout_test_set=f"{run.heldout['path']}@sha256:{run.heldout['manifest_hash']}",
        rollback_target=run.rollback_target,
        candidate_change=_change(cand),
        expected_delta=expected_delta(decision),
        evaluation_run_id=run.run_id,
        gate=_gate_evidence(run, top, key, len(family), judged),
        report=report,
        operating_points=tuple(_frontier_point(p) for p in family),
    )


def _gate_evidence(
    run: GateRun, top: OperatingPoint, key: str, n_points: int, judged: list[dict[str, Any]]
) -> dict[str, Any]:
    """What the gate found for the change (the proposal's `gate` field)."""
    cand, decision = top.candidate, top.decision
    return {
        "verdict": decision.verdict,
        "reasons": list(decision.reasons),
        **({"notes": list(decision.notes)} if decision.notes else {}),
        "candidate_id": cand.candidate_id,
        "proposer": cand.proposer or {"kind": "sampler", "by": f"sampler:{run.study}"},
        "study": run.study,
        "trial_number": cand.trial_number,
        "target_metric": decision.target_metric,
        "target_p_value": decision.target_p_value,
        "target_p_adjusted": decision.target_p_adjusted,
        "correction": f"holm across {len(run.decisions)} candidate(s)",
        "alpha": run.alpha,
        "heldout_cases": decision.n_cases,
        "heldout_manifest_hash": run.heldout["manifest_hash"],
        "prior_heldout_reads": run.prior_heldout_reads,
        "reads_warning": run.reads_warning,
        "error_budget": (run.error_budget.model_dump(mode="json") if run.error_budget else None),
        "spec_hash": run.spec_hash,
        "evidence_key": key,
        "operating_points": n_points,
        **({"preferences": judged} if judged else {}),
    }


def _frontier_point(p: OperatingPoint) -> FrontierPoint:
    return FrontierPoint(
        rank=p.rank,
        candidate_id=p.candidate.candidate_id,
        trial_number=p.candidate.trial_number,
        change=_change(p.candidate),
        expected_delta=expected_delta(p.decision),
        target_p_adjusted=p.decision.target_p_adjusted,
        proposer=p.candidate.proposer,
    )


def already_proposed(directory: str | Path, key: str) -> Path | None:
    """The proposal file in `directory` with this evidence key, if one was emitted before."""
    import json

    folder = Path(directory)
    if not folder.is_dir():
        return None
    for path in sorted(folder.glob("at_*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if (data.get("gate") or {}).get("evidence_key") == key:
            return path
    return None


def research_task(run: GateRun, index: int, report: ReportRef) -> ResearchTask:
    c = run.research[index]
    if not c.confirmed:
        raise ValueError(f"{c.research_task_id} is unconfirmed on held-out; it is not emitted")
    return ResearchTask.model_validate(
        {
            **c.task,
            "confirmation": {
                "basis": c.basis,
                "reason": c.reason,
                "evaluation_run_id": run.run_id,
                "pattern_spec": c.pattern_spec,
                "search_counts": c.search_counts,
                "heldout": c.heldout,
                "p_adjusted": c.p_adjusted,
                "correction": f"holm across {len(run.research)} candidate(s)",
                "alpha": run.alpha,
                # reads of the held-out trace split before this run (None: unknown, an older
                # gate.json), and the reuse warning past the threshold
                "prior_heldout_reads": run.research_prior_heldout_reads,
                "reads_warning": run.research_reads_warning,
            },
            "report": report.model_dump(),
        }
    )


def _message(
    run: GateRun,
    target: Path,
    n_points: int,
    written_t: list[str],
    written_r: list[str],
    existing: list[str],
    already: str | None,
) -> str:
    """One line: what was written, what already existed, or why nothing was promoted."""
    if written_t:
        points = f"{n_points} operating point(s)"
        message = f"1 TuningProposal file with {points} on the front in {target}"
    elif already:
        message = f"already proposed: {already} (same change, same evidence); nothing new"
    else:
        verdicts = sorted({d.verdict for d in run.decisions}) or ["no feasible candidates"]
        message = (
            f"nothing promoted on held-out ({len(run.decisions)} candidate(s): "
            f"{', '.join(verdicts)}); no TuningProposal emitted"
        )
    if written_r:
        message += f"; {len(written_r)} ResearchTask file(s)"
    others = len(existing) - (1 if already else 0)
    if others:
        message += f"; {others} ResearchTask file(s) already existed and were left untouched"
    return message


def emit(
    run: GateRun,
    report: str | Path,
    out_dir: str | Path,
    preferences: Sequence[PreferenceEntry] = (),
) -> EmitResult:
    """Write the proposal files a gate run earns into `out_dir/proposals/`.

    `report` is the rendered HTML of the gate notebook for this run (its hash goes into every
    file). A file that already exists (same evidence) is left as it is; its path is listed in
    `existing`. `preferences` become the TuningProposal's preference evidence.
    """
    target = Path(out_dir) / PROPOSALS_DIR
    ref = report_ref(report, target)
    written_t: list[str] = []
    written_r: list[str] = []
    existing: list[str] = []
    not_emitted: list[dict[str, Any]] = []
    for d in run.decisions:
        if d.verdict != "promote":
            not_emitted.append(
                {"candidate_id": d.candidate_id, "verdict": d.verdict, "reasons": list(d.reasons)}
            )
    family = promoted_family(run)
    already: str | None = None
    if family:
        earlier = already_proposed(target, evidence_key(run, family))
        if earlier is None:
            proposal = tuning_proposal(run, family, ref, preferences)
            try:
                written_t.append(str(write_envelope(proposal, target)))
            except ProposalExists:
                earlier = target / f"{proposal.artifact_id}.json"
        if earlier is not None:
            already = str(earlier)
            existing.append(already)
    for i, c in enumerate(run.research):
        if not c.confirmed:
            not_emitted.append(
                {"research_task_id": c.research_task_id, "verdict": c.basis, "reasons": [c.reason]}
            )
            continue
        task = research_task(run, i, ref)
        try:
            written_r.append(str(write_envelope(task, target)))
        except ProposalExists:
            existing.append(str(target / f"{task.artifact_id}.json"))
    message = _message(run, target, len(family), written_t, written_r, existing, already)
    return EmitResult(
        run_id=run.run_id,
        tuning_proposals=written_t,
        research_tasks=written_r,
        not_emitted=not_emitted,
        existing=existing,
        message=message,
    )
