"""What a gate run records in `gate.json` (candidates, verdicts, budget) and how it is read back."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

from contextos_lab.gate.heldout.error_budget import GateBudget
from contextos_lab.gate.research import ResearchConfirmation
from contextos_lab.gate.verdict import GateDecision

GATE_FILE = "gate.json"


class GateCandidate(BaseModel):
    """A feasible front member as the gate tested it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    candidate_id: str
    trial_number: int
    rank: int
    params: dict[str, Any]
    config_diff: dict[str, dict[str, Any]]
    layers: list[str] = Field(default_factory=list)
    #: Provenance of an outside proposal (`contextos-lab enqueue`); None for sampler trials.
    proposer: dict[str, Any] | None = None
    n_changed: int = 0
    #: Blast radius and explainability as the search ranked them (seed 001's order).
    n_control_flow: int = 0
    diff_size: float = 0.0
    #: Means per evaluator; None = not scored (policy, when no case's intent has a rule).
    search_scores: dict[str, float | None]
    heldout_means: dict[str, float | None]


class GateRun(BaseModel):
    """What `gate.json` holds: provenance, the held-out read count and every verdict."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    run_id: str
    created_at: datetime
    study: str
    storage: str
    spec_name: str
    spec_path: str
    spec_hash: str
    target: dict[str, Any]
    guardrails: dict[str, Any]
    guardrail_strings: list[str]
    baseline_tuple: dict[str, Any]
    tunable_surfaces: list[str]
    rollback_target: str
    search_set: dict[str, Any]
    heldout: dict[str, Any]
    #: The study's baseline trial (preference evidence compares the change against it).
    baseline_trial: int | None = None
    prior_heldout_reads: int
    reads_warning: str | None
    alpha: float
    n_boot: int
    baseline_heldout_means: dict[str, float | None]
    candidates: list[GateCandidate]
    decisions: list[GateDecision]
    research: list[ResearchConfirmation] = Field(default_factory=list)
    #: Earlier reads of the held-out *trace* split the research candidates were confirmed on
    #: (its own ledger entry, `traces:<hash>`); None when no candidates were confirmed.
    research_prior_heldout_reads: int | None = None
    research_reads_warning: str | None = None
    #: This gate's share of the held-out set's error budget (LORD++ across gates).
    error_budget: GateBudget | None = None
    #: What the answer depends on (`gate.reuse.inputs_hash`): the same question asked again is
    #: answered from this record. None in records written before it was kept.
    inputs_hash: str | None = None

    @property
    def promoted(self) -> list[GateDecision]:
        return [d for d in self.decisions if d.verdict == "promote"]

    def candidate(self, candidate_id: str) -> GateCandidate:
        return next(c for c in self.candidates if c.candidate_id == candidate_id)

    def table(self) -> pd.DataFrame:
        """Candidate × metric: delta, 95% CI, p, Holm-adjusted p, verdict.

        `p_holm` is Holm across the tested candidates for every metric (each metric its own
        family); on the target metric it equals the decision's `target_p_adjusted`.
        """
        from contextos_lab.gate.paired_tests import holm_adjust

        rows = []
        for d in self.decisions:
            for t in d.tests:
                rows.append(
                    {
                        "candidate": d.candidate_id,
                        "verdict": d.verdict,
                        "metric": t.metric,
                        "is_target": t.metric == d.target_metric,
                        "test": t.test,
                        "n": t.n,
                        "baseline": t.baseline_mean,
                        "candidate_mean": t.candidate_mean,
                        "delta": t.delta,
                        "ci_low": t.ci_low,
                        "ci_high": t.ci_high,
                        "p_value": t.p_value,
                    }
                )
        frame = pd.DataFrame(rows)
        if frame.empty:
            return frame.assign(p_holm=pd.Series(dtype=float))
        frame["p_holm"] = frame.groupby("metric", sort=False)["p_value"].transform(
            lambda p: pd.Series(holm_adjust(list(p)), index=p.index)
        )
        return frame


@dataclass
class GateResult:
    run: GateRun
    baseline: pd.DataFrame
    frames: dict[str, pd.DataFrame]
    path: Path | None = None
    ranked: pd.DataFrame = field(default_factory=pd.DataFrame)

    def differences(self, metric: str) -> pd.DataFrame:
        """Per-case candidate − baseline differences of one metric (for the paired plots)."""
        return pd.DataFrame(
            {cid: f[metric] - self.baseline[metric] for cid, f in self.frames.items()}
        )


def load_gate_run(path: str | Path) -> GateRun:
    return GateRun.model_validate(json.loads(Path(path).read_text(encoding="utf-8")))
