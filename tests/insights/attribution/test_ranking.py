"""Ranked candidates with calibrated probabilities, scored top-1/top-3, with ECE."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from contextos_lab.insights.attribution import RunTrace, Turn, get_attributor
from contextos_lab.insights.attribution.linear import LinearAttributor
from contextos_lab.insights.attribution.protocol import Attribution, Candidate
from contextos_lab.insights.attribution.ranking import (
    TEMPERATURE_BOUNDS,
    fit_temperature,
    probabilities,
)
from contextos_lab.insights.attribution.scoring import (
    Annotated,
    reliability,
    top_k_agreement,
    trivial_baselines,
)


def _run() -> RunTrace:
    return RunTrace(
        "r",
        (
            Turn(0, "Planner_Expert", "Task: count the rows of t.csv and report the total."),
            Turn(1, "Coder_Expert", "```python\nprint(len(open('t.csv').readlines()))\n```"),
            Turn(2, "Computer_terminal", "exitcode: 1\nTraceback: FileNotFoundError t.csv"),
            Turn(3, "Coder_Expert", "The file is missing, I will use sample data instead: 42."),
            Turn(4, "Checker_Expert", "The total is 42. TERMINATE"),
        ),
    )


def test_the_default_attributor_ranks_three_candidates_with_their_evidence() -> None:
    a = get_attributor().attribute(_run())
    assert a is not None and len(a.candidates) == 3
    first = a.candidates[0]
    assert (first.step, first.agent, first.probability) == (a.step, a.agent, a.probability)
    assert [c.score for c in a.candidates] == sorted((c.score for c in a.candidates), reverse=True)
    assert all(c.signals and c.excerpt for c in a.candidates)
    assert 2 not in [c.step for c in a.candidates]  # tool output is never a candidate
    assert abs(sum(p for _, p in a.agents) - 1.0) < 1e-3
    assert a.low_confidence == (a.probability < 0.5)


def test_low_confidence_follows_the_threshold_and_top_k_is_honoured() -> None:
    flat = LinearAttributor({}, temperature=1.0, top_k=2)  # every score 0: uniform over 4
    a = flat.attribute(_run())
    assert a is not None and len(a.candidates) == 2 and a.low_confidence
    assert a.probability == 0.25 and a.step == 0  # ties: the earliest step
    sure = LinearAttributor({"first_turn": 10.0}, low_confidence_below=0.5).attribute(_run())
    assert sure is not None and not sure.low_confidence and sure.probability > 0.99


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(-5, 5), min_size=1, max_size=12), st.floats(0.1, 10))
def test_probabilities_are_a_distribution_that_keeps_the_order(scores, t) -> None:
    p = probabilities(scores, t)
    assert abs(p.sum() - 1) < 1e-9 and (p >= 0).all()
    order = np.argsort(scores, kind="stable")
    assert (np.diff(p[order]) >= -1e-12).all()


def test_the_temperature_sharpens_when_the_top_score_is_right_and_flattens_when_not() -> None:
    rng = np.random.default_rng(0)
    sets = [rng.normal(size=6) for _ in range(40)]
    right = [int(np.argmax(s)) for s in sets]
    wrong = [int(np.argmin(s)) for s in sets]
    assert fit_temperature(sets, right) < 0.2
    assert fit_temperature(sets, wrong) == TEMPERATURE_BOUNDS[1] or fit_temperature(
        sets, wrong
    ) > fit_temperature(sets, right)
    assert fit_temperature(sets, [None] * len(sets)) == 1.0


def _att(
    step: int,
    p: float,
    steps: tuple[int, ...] = (),
    agents: tuple[str, ...] = (),
    named: str | None = None,
):
    """An attribution naming `named` (default: the first of `agents`, else "a0")."""
    cands = tuple(Candidate(s, s, f"a{s}", 0.0, 0.0) for s in steps)
    return Attribution(
        "r",
        named or (agents[0] if agents else "a0"),
        step,
        "agent",
        "x",
        probability=p,
        candidates=cands,
        agents=tuple((a, 0.0) for a in agents),
    )


def test_top_k_agreement_and_ece() -> None:
    run = _run()
    key = [Annotated(run, 1, "Coder_Expert"), Annotated(run, 3, "Checker_Expert")]
    atts = [
        _att(1, 0.9, (1, 3, 4), ("Coder_Expert", "Checker_Expert")),
        _att(1, 0.9, (1, 4, 3), ("Coder_Expert", "Planner_Expert", "Checker_Expert")),
    ]
    got = top_k_agreement(atts, key)
    assert got == {"agent": {"top1": 0.5, "top3": 1.0}, "step": {"top1": 0.5, "top3": 1.0}}
    rel = reliability(atts, key)
    assert rel["runs"] == 2 and abs(rel["ece"] - 0.4) < 1e-9  # stated 0.9, observed 0.5
    assert trivial_baselines(key)["step_most_common"] == 0.5


def test_agent_top1_scores_the_agent_the_attribution_names() -> None:
    """Top step spoken by the coder, but the checker's two steps hold more summed probability:
    top-1 scores the named agent (the coder), top-3 adds the others by summed probability."""
    run = _run()
    att = _att(1, 0.4, (1, 3, 4), ("Checker_Expert", "Coder_Expert"), named="Coder_Expert")
    coder, checker = Annotated(run, 1, "Coder_Expert"), Annotated(run, 4, "Checker_Expert")
    assert top_k_agreement([att], [coder])["agent"] == {"top1": 1.0, "top3": 1.0}
    assert top_k_agreement([att], [checker])["agent"] == {"top1": 0.0, "top3": 1.0}


def test_clusters_count_members_resting_on_low_confidence_attributions() -> None:
    import pandas as pd

    from contextos_lab.insights.attribution.mechanisms import mechanism_clusters

    rows = [
        {
            "record_id": f"r{i}",
            "agent": "Coder",
            "agent_key": "coder",
            "role": "agent",
            "act": "runs code that fails",
            "loop": False,
            "stall": False,
            "limit": False,
            "ending": "with TERMINATE",
            "diff": None,
            "error": None,
            "low_confidence": i < 2,
        }
        for i in range(5)
    ]
    clusters = mechanism_clusters(pd.DataFrame(rows), min_size=3)
    assert clusters["low_confidence"].tolist() == [2]
    assert mechanism_clusters(pd.DataFrame(), 3).columns[-1] == "low_confidence"
