"""One decision per sweep: the promoted candidates as a family of operating points.

Seed 001 ("Pareto-frontier proposals"): the operator picks a frontier point rather than a
single scalar winner. Every candidate the gate promoted is one operating point; they are ranked
by the held-out target gain, then blast radius (control-flow changes, then surfaces changed),
then explainability (distance of the diff from the baseline, in grid steps). Rank 1 is the
recommended point; the others stay on the table for the operator.

The family's evidence key (spec, search and held-out manifests, the promoted changes) is what
makes re-running the same sweep on the same data a no-op for emission ("already proposed").
"""

from __future__ import annotations

from dataclasses import dataclass

from contextos_lab.gate.run_gate import GateCandidate, GateRun
from contextos_lab.gate.verdict import GateDecision
from contextos_lab.schemas.base import canonical_json, sha256_hex


@dataclass(frozen=True)
class OperatingPoint:
    rank: int
    candidate: GateCandidate
    decision: GateDecision

    @property
    def target_gain(self) -> float:
        """Held-out improvement of the target metric; positive is better either way."""
        t = self.decision.test_for(self.decision.target_metric)
        return t.delta if self.decision.target_direction == "increase" else -t.delta


def promoted_family(run: GateRun) -> list[OperatingPoint]:
    """The promoted candidates of one gate run, best operating point first."""
    pairs = [(run.candidate(d.candidate_id), d) for d in run.promoted]

    def key(pair: tuple[GateCandidate, GateDecision]) -> tuple[float, int, int, float, int]:
        c, d = pair
        gain = OperatingPoint(0, c, d).target_gain
        return (-gain, c.n_control_flow, c.n_changed, c.diff_size, c.rank)

    return [OperatingPoint(i, c, d) for i, (c, d) in enumerate(sorted(pairs, key=key), start=1)]


def evidence_key(run: GateRun, family: list[OperatingPoint]) -> str:
    """Same change and same evidence → same key, whatever the run id or the date."""
    return sha256_hex(
        canonical_json(
            {
                "spec_hash": run.spec_hash,
                "study": run.study,
                "search_set": run.search_set.get("manifest_hash"),
                "heldout": run.heldout.get("manifest_hash"),
                "changes": sorted(
                    canonical_json(p.candidate.config_diff) for p in family
                ),
            }
        )
    )
