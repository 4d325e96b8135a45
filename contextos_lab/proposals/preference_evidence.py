"""Pairwise preferences as evidence in a TuningProposal: how often judges preferred the change.

Seed 001's TuningProposal defines no evidence field (its example carries `target`,
`candidate_change`, `expected_delta`, `evaluation_run_id`, `status`), so nothing new is added to
the envelope: the evidence goes into the proposal's free-form `gate` block, beside the proposer's
provenance, as `gate.preferences` (one block per criterion judged). Each block gives the
candidate's Bradley-Terry win rate with its 95 % bootstrap interval (`insights.preferences`), its
judgement counts, the baseline's win rate on the same criterion, the head-to-head record against
the baseline, and the PreferenceEntry ids that compared the candidate (the cited evidence; the
Bradley-Terry fit itself uses every judgement of that criterion, as a ranking must).

Subjects: a trial is named `<study>/trial_<n>`, its folder under `runs/` (what a proposer or a
judge reads). A bare `trial_<n>` is not matched: it could belong to any study.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from contextos_lab.insights.preferences import win_rates
from contextos_lab.schemas.preference import PreferenceEntry

METHOD = (
    "Bradley-Terry (choix ilsr_pairwise_dense; a tie is half a win each way); win rate = "
    "modelled chance of beating a random other subject; 95% percentile bootstrap over judgements"
)


def trial_subject(study: str, trial_number: int) -> str:
    """The preference subject naming one trial of a study (its run-layout folder)."""
    return f"{study}/trial_{int(trial_number)}"


def _row(table: Any, subject: str) -> dict[str, Any] | None:
    hit = table[table["subject"] == subject]
    if hit.empty:
        return None
    r = hit.iloc[0]
    return {
        "subject": subject,
        "win_rate": float(r["win_rate"]),
        "ci_low": float(r["ci_low"]),
        "ci_high": float(r["ci_high"]),
        "comparisons": int(r["comparisons"]),
        "wins": int(r["wins"]),
        "ties": int(r["ties"]),
        "losses": int(r["losses"]),
    }


def _head_to_head(entries: Sequence[PreferenceEntry], subject: str, baseline: str) -> dict:
    """Direct judgements between the candidate and the baseline: wins, ties, losses."""
    wins = ties = losses = 0
    for e in entries:
        if {e.a_subject, e.b_subject} != {subject, baseline}:
            continue
        if e.preferred.value == "tie":
            ties += 1
        elif (e.a_subject if e.preferred.value == "a" else e.b_subject) == subject:
            wins += 1
        else:
            losses += 1
    return {"against": baseline, "wins": wins, "ties": ties, "losses": losses}


def preference_evidence(
    entries: Sequence[PreferenceEntry],
    *,
    subject: str,
    baseline: str | None = None,
    n_boot: int = 200,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """One evidence block per criterion on which `subject` was judged (empty: no judgement).

    Deterministic for a given set of entries and seed, so re-emitting the same proposal from
    the same store gives the same block."""
    blocks = []
    for criterion in sorted({e.criterion for e in entries}):
        judged = sorted(
            (e for e in entries if e.criterion == criterion), key=lambda e: e.preference_id
        )
        cited = [e.preference_id for e in judged if subject in (e.a_subject, e.b_subject)]
        if not cited:
            continue
        table = win_rates(judged, n_boot=n_boot, seed=seed)
        mine = _row(table, subject)
        if mine is None:  # compared only with itself
            continue
        block: dict[str, Any] = {"criterion": criterion, **mine, "subjects": len(table)}
        if baseline is not None and baseline != subject:
            block["baseline"] = _row(table, baseline)
            block["head_to_head"] = _head_to_head(judged, subject, baseline)
        block["preference_ids"] = cited
        block["method"] = METHOD
        blocks.append(block)
    return blocks


def proposal_preferences(
    entries: Sequence[PreferenceEntry], study: str, trial_number: int, baseline_trial: int = 0
) -> list[dict[str, Any]]:
    """`gate.preferences` for a study's trial, against the study's baseline trial."""
    return preference_evidence(
        entries,
        subject=trial_subject(study, trial_number),
        baseline=trial_subject(study, baseline_trial),
    )
