"""The held-out ledger entries a gate makes after its verdicts: budget outcome, trace-split read."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from contextos_lab.gate.heldout import ledger
from contextos_lab.gate.heldout.error_budget import GateBudget, advice, sweep_p_value
from contextos_lab.gate.heldout.heldout import HeldoutSet
from contextos_lab.gate.research import ResearchConfirmation
from contextos_lab.gate.verdict import GateDecision
from contextos_lab.schemas.base import canonical_json, sha256_hex


def _settle_budget(
    heldout: HeldoutSet,
    decisions: Sequence[GateDecision],
    run_id: str,
    ledger_file: str | Path | None,
) -> GateBudget:
    """Record whether this gate promoted (a promotion earns LORD++ budget back) and say where
    the held-out set's budget stands afterwards."""
    eligible = [d.target_p_adjusted for d in decisions if d.verdict in ("promote", "underpowered")]
    p_value = sweep_p_value(eligible)
    promoted = any(d.verdict == "promote" for d in decisions)
    before = heldout.budget
    ledger.record_outcome(
        manifest_hash=heldout.manifest_hash,
        run_id=run_id,
        index=before.next_index,
        p_value=p_value,
        promoted=promoted,
        path=ledger_file,
    )
    after, _ = ledger.budget_state(heldout.manifest_hash, path=ledger_file)
    return GateBudget(
        method=before.method,
        alpha_total=before.alpha,
        horizon=before.horizon,
        index=before.next_index,
        alpha_tested=before.next_level,
        p_value=p_value,
        promoted=promoted,
        spent_before=before.spent,
        after=after,
        advice=advice(after, str(heldout.path)),
    )


def _confirm_research(
    insights: str | Path,
    sources: Sequence[str],
    *,
    alpha: float,
    closed: bool,
    intent: str,
    run_id: str,
    study: str,
    s_hash: str,
    ledger_file: str | Path | None,
) -> tuple[int | None, list[ResearchConfirmation]]:
    """(earlier reads of the held-out trace split, confirmations); (None, []) with no candidates."""
    from contextos_lab.gate.research import confirm, heldout_runs, load_candidates, split_of

    candidates = load_candidates(insights)
    if not candidates:
        return None, []
    split = split_of(candidates)
    runs = heldout_runs(sources, split)
    # The held-out split of the traces is a held-out set too: its reads are counted.
    prior = ledger.record_read(
        manifest_hash="traces:"
        + sha256_hex(canonical_json({"sources": list(sources), "split": split.to_dict()})),
        run_id=run_id,
        study=study,
        spec_hash=s_hash,
        heldout_path=",".join(sources),
        n_cases=len(runs),
        n_candidates=len(candidates),
        path=ledger_file,
    )
    return prior, confirm(
        candidates, runs, alpha=alpha, tuning_closed_gap=closed, target_intent=intent
    )
