""" "Why does this rule exist?" (seed 000: "the answer is a query"): one call that walks the
rule's recorded upstream links back through verdict, proposal and insight to the signed
operator corrections, and checks they are the ones the rule's lineage names.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from contextos_lab.schemas.base import EnvelopeList
from contextos_lab.schemas.feedback import FeedbackEntry
from contextos_lab.schemas.strategy import ReplayVerdict, StrategyProposal, StrategyRule
from contextos_lab.store.lineage import LineageNode, lineage


@dataclass
class WhyAnswer:
    rule: StrategyRule
    proposal: StrategyProposal | None
    verdict: ReplayVerdict | None
    corrections: EnvelopeList[FeedbackEntry]
    tree: LineageNode

    @property
    def feedback_ids(self) -> list[str]:
        return [c.id for c in self.corrections]

    def frame(self) -> pd.DataFrame:
        cols = ["id", "signed_by", "signed_at", "override_reason_class", "override_reason_text"]
        return self.corrections.to_frame()[[*cols, "trace_id", "decision_record_id"]]

    def render(self) -> str:
        head = [
            f"rule {self.rule.rule_id} ({self.rule.status.value}), "
            f"released by {self.rule.released_by} at {self.rule.released_at}",
            f"pinned baseline {self.rule.pinned_baseline}",
        ]
        if self.proposal is not None:
            head.append(f"proposal {self.proposal.proposal_id}: {self.proposal.rationale}")
        if self.verdict is not None:
            head.append(f"replay {self.verdict.verdict_id}: {self.verdict.status.value}")
        body = [
            f"  {c.id} {c.signed_by} {c.signed_at.isoformat()} {c.override_reason_class}: "
            f"{c.override_reason_text or ''}"
            for c in self.corrections
        ]
        return "\n".join([*head, f"{len(body)} operator corrections:", *body])

    def _repr_html_(self) -> str:
        return f"<pre>{self.render()}</pre>" + self.corrections._repr_html_()


def why_rule_exists(store: Any, rule_id: str) -> WhyAnswer:
    """The corrections behind a rule, found by walking the store, not by trusting its fields."""
    rule = store.get(StrategyRule, rule_id)
    if rule is None:
        raise KeyError(f"{rule_id!r} is not a StrategyRule in the store")
    tree = lineage(store, rule_id)
    ids = list(dict.fromkeys(n.artifact_id for n in tree.walk() if n.kind == "feedback_entry"))
    if rule.lineage is not None:
        named = set(rule.lineage.feedback_ids)
        if not named <= set(ids):
            raise ValueError(
                f"{rule_id} names feedback the store does not link: {named - set(ids)}"
            )
        ids = [i for i in ids if i in named]  # the direct contributors, not superseded entries
    corrections = EnvelopeList([store.get(FeedbackEntry, i) for i in ids], FeedbackEntry)
    proposal = store.get(StrategyProposal, rule.proposal_id) if rule.proposal_id else None
    verdict = None
    if rule.lineage is not None and rule.lineage.replay_verdict_id:
        verdict = store.get(ReplayVerdict, rule.lineage.replay_verdict_id)
    return WhyAnswer(rule, proposal, verdict, corrections, tree)
