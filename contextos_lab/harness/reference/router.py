"""Skill routing: lexical score plus the learned feedback boost of seed 002.

Lexical score of a skill = 1 - 0.6**hits, where hits counts the skill's keywords in the request
(0 hits -> 0.0, 1 -> 0.40, 2 -> 0.64, 3 -> 0.78). Final score = lexical + boost; the top skill
wins (ties go to the first skill in `SKILLS`), and below `min_confidence` the desk escalates.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from contextos_lab.harness.reference.knowledge_base import SKILL_KEYWORDS, SKILLS
from contextos_lab.memory.routing_feedback import RoutingFeedbackStore, explain_boost

_WORD = re.compile(r"[a-z]+")


def lexical_scores(query: str) -> np.ndarray:
    """One score per skill, in `SKILLS` order."""
    words = set(_WORD.findall(query.lower()))
    hits = np.array([len(words & SKILL_KEYWORDS[s]) for s in SKILLS], dtype=np.float64)
    return 1.0 - 0.6**hits


@dataclass(frozen=True)
class RouteDecision:
    skill: str | None
    confidence: float
    boost: float
    explanation: str


def route(query: str, store: RoutingFeedbackStore, min_confidence: float) -> RouteDecision:
    """Route one query live against a store (each boost read decays, as the seed says)."""
    lex = lexical_scores(query)
    boosts = np.array([store.get_boost(query, s) for s in SKILLS])
    final = lex + boosts
    top = int(np.argmax(final))
    return _decision(query, lex[top], boosts[top], SKILLS[top], min_confidence)


def _decision(
    query: str, lex: float, boost: float, skill: str, min_confidence: float
) -> RouteDecision:
    conf = float(min(1.0, max(0.0, lex + boost)))
    reason = f"{skill}: lexical {lex:.2f}"
    if boost:
        reason += f" {explain_boost(boost)}"
    if conf < min_confidence:
        reason += f"; confidence {conf:.2f} < {min_confidence:.2f}, escalating"
        return RouteDecision(None, conf, float(boost), reason)
    return RouteDecision(skill, conf, float(boost), reason)


def route_table(
    queries: Sequence[str],
    boosts: Mapping[str, Mapping[str, float]],
    min_confidence: float,
    lexical: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]:
    """Vectorised routing of unique normalised queries against a read-free boost snapshot.

    Returns (skill index or -1 for escalate, confidence, boost of the chosen skill, explanations).
    """
    b = np.zeros_like(lexical)
    for qi, q in enumerate(queries):
        row = boosts.get(q)
        if row:
            for si, s in enumerate(SKILLS):
                b[qi, si] = row.get(s, 0.0)
    final = lexical + b
    top = final.argmax(axis=1)
    rows = np.arange(len(queries))
    conf = np.clip(final[rows, top], 0.0, 1.0)
    chosen_boost = b[rows, top]
    explanations = [
        _decision(
            q, lexical[i, top[i]], chosen_boost[i], SKILLS[top[i]], min_confidence
        ).explanation
        for i, q in enumerate(queries)
    ]
    skill = np.where(conf < min_confidence, -1, top)
    return skill, conf, chosen_boost, explanations
