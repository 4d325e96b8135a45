"""Attribution reads the trace: roles, signals, the decisive step with its evidence."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from contextos_lab.insights.attribution import (
    Attributor,
    RunTrace,
    Turn,
    agent_key,
    get_attributor,
    register,
    run_trace,
)
from contextos_lab.insights.attribution.features import (
    STEP_FEATURES,
    roles,
    run_signals,
    step_features,
)
from contextos_lab.insights.attribution.fitting import cross_validated
from contextos_lab.insights.attribution.linear import LastActorBeforeErrorRule, LinearAttributor
from contextos_lab.insights.attribution.registry import ATTRIBUTORS
from contextos_lab.insights.attribution.signals import error_family, error_type
from contextos_lab.loaders.who_and_when import load_who_and_when
from contextos_lab.plugins import DuplicateName
from tests.insights.attribution.traces import group_chat_run, orchestrated_run, write_runs


def _runs(tmp_path, raws) -> list[RunTrace]:
    result = load_who_and_when(write_runs(tmp_path, raws))
    assert not result.quarantined
    return [run_trace(t) for t in result.traces]


def test_agent_name_variants_are_one_agent() -> None:
    keys = {agent_key(n) for n in ("WebSurfer", "Websurfer", "Web Surfer", "web_surfer")}
    assert keys == {"websurfer"}


def test_roles_come_from_what_a_speaker_does(tmp_path) -> None:
    (orch,) = _runs(tmp_path / "o", [orchestrated_run(1)])
    assert roles(orch)[agent_key("Orchestrator")] == "orchestrator"
    assert roles(orch)[agent_key("WebSurfer")] == "agent"
    (chat,) = _runs(tmp_path / "c", [group_chat_run(1)])
    assert roles(chat)[agent_key("Computer_terminal")] == "tool"


def test_a_role_word_inside_an_experts_name_does_not_make_it_a_tool() -> None:
    # An expert whose compound name merely contains "Computer" or "Manager" speaks prose: its
    # name's head word says what it is (the old substring match made it a tool, never blamed).
    run = RunTrace(
        "r",
        (
            Turn(0, "WomenInComputerScienceHistory_Expert", "The task: who founded the club?"),
            Turn(1, "WomenInComputerScienceHistory_Expert", "It was founded in 1972 by Ada."),
            Turn(2, "Computer_terminal", "exitcode: 0 (execution succeeded)\nCode output: 1972"),
            Turn(3, "Project_Manager_Expert", "I agree with the finding above."),
            Turn(4, "Orchestrator (-> Coder)", "Please check the year again."),
            Turn(5, "ComputerTerminal", "The script ran and printed 1972."),
            Turn(6, "CodeExecutorAgent", "The script ran and printed 1972 again."),
            Turn(7, "PlannerAgent", "Plan: confirm the year from a second source."),
        ),
    )
    role = roles(run)
    assert role[agent_key("WomenInComputerScienceHistory_Expert")] == "agent"
    assert role[agent_key("Project_Manager_Expert")] == "agent"
    assert role[agent_key("Computer_terminal")] == "tool"
    assert role[agent_key("ComputerTerminal")] == "tool"
    assert role[agent_key("Orchestrator (-> Coder)")] == "orchestrator"
    # a framework's generic suffix ("Agent") is not the head word: the word before it is
    assert role[agent_key("CodeExecutorAgent")] == "tool"
    assert role[agent_key("PlannerAgent")] == "orchestrator"


def test_the_orchestrators_ledger_loop_stall_and_limit_are_read(tmp_path) -> None:
    (run,) = _runs(tmp_path, [orchestrated_run(1)])
    s = run_signals(run)
    assert s.loop_steps == [6, 8] and s.stall_steps == [6, 8] and s.limit
    assert s.ending == "on a round or time limit"
    assert s.repeated_steps == [7, 8]  # the same click again, the same ledger again


def test_an_execution_error_is_typed_from_the_traceback(tmp_path) -> None:
    (run,) = _runs(tmp_path, [group_chat_run(1)])
    s = run_signals(run)
    assert s.errors == [2] and s.error_types == {2: "FileNotFoundError"}
    assert error_family(error_type("exitcode: 1\nModuleNotFoundError: x")) == (
        "a missing file or module"
    )
    assert s.terminated and s.ending == "with TERMINATE"


def test_attribution_names_agent_step_and_evidence(tmp_path) -> None:
    (run,) = _runs(tmp_path, [group_chat_run(1)])
    for attributor in (get_attributor(), LastActorBeforeErrorRule()):
        a = attributor.attribute(run)
        assert a is not None and a.run_id == run.run_id
        assert a.role == "agent" and run.turns[a.step].speaker == a.agent
        assert a.signal and a.signal in {name for name, _ in a.signals}
        assert a.excerpt and a.excerpt[:20] == " ".join(run.turns[a.step].content.split())[:20]
        assert a.evidence["error_steps"] == [2]
    rule = LastActorBeforeErrorRule().attribute(run)
    assert rule is not None and (rule.agent, rule.step) == ("Data_Expert", 1)


def test_tool_output_and_the_user_are_never_blamed(tmp_path) -> None:
    runs = _runs(tmp_path, [group_chat_run(1), orchestrated_run(2)])
    for run in runs:
        a = get_attributor().attribute(run)
        assert a is not None and a.role not in ("tool", "user")


def test_the_orchestrated_run_blames_the_agent_before_the_loop(tmp_path) -> None:
    (run,) = _runs(tmp_path, [orchestrated_run(1, surfer="Websurfer")])
    a = get_attributor().attribute(run)
    assert a is not None and agent_key(a.agent) == "websurfer" and a.step == 5
    assert "last_actor_before_first_flag" in {name for name, _ in a.signals}


def test_a_plugged_attributor_satisfies_the_protocol() -> None:
    class FirstTurn:
        name = "first-turn"

        def attribute(self, run):
            return None

    with ATTRIBUTORS.registered("first-turn", FirstTurn):  # gone again after the block
        assert isinstance(get_attributor("first-turn"), Attributor)
        with pytest.raises(DuplicateName, match="replace=True"):
            register("first-turn", FirstTurn)
    assert "first-turn" not in ATTRIBUTORS.names()
    assert isinstance(get_attributor(), Attributor)
    assert isinstance(LastActorBeforeErrorRule(), Attributor)
    with pytest.raises(KeyError, match="unknown attributor"):
        get_attributor("nope")


def test_cross_validation_scores_a_run_without_its_own_label(tmp_path) -> None:
    """Leave-one-run-out: changing a run's annotated step cannot change its own attribution."""
    runs = _runs(tmp_path, [group_chat_run(i) for i in range(6)] + [orchestrated_run(9)])
    steps = [1, 3, 1, 3, 1, 3, 5]
    before = cross_validated(runs, steps, folds=len(runs))
    moved = cross_validated(runs, [0, *steps[1:]], folds=len(runs))
    assert before[0] is not None and moved[0] is not None
    assert before[0].step == moved[0].step
    assert [a.step for a in before[1:]] != [None]  # the others are attributed too


turns = st.lists(
    st.builds(
        Turn,
        index=st.integers(0, 50),
        speaker=st.sampled_from(["A", "b_Agent", "Computer_terminal", "Orchestrator", "user"]),
        content=st.text(max_size=80)
        | st.sampled_from(["exitcode: 1\nTraceback", "TERMINATE", '"is_in_loop": true']),
        tool=st.none() | st.sampled_from(["book", "transfer_to_human_agents"]),
    ),
    max_size=12,
)


@given(turns)
def test_features_are_bounded_and_attribution_never_crashes(ts) -> None:
    run = RunTrace("r", tuple(ts))
    for row in step_features(run):
        assert set(row) == set(STEP_FEATURES) and all(0.0 <= v <= 1.0 for v in row.values())
    a = LinearAttributor({f: 1.0 for f in STEP_FEATURES}).attribute(run)
    assert a is None or (0 <= a.position < len(ts) and a.step == ts[a.position].index)
    json.dumps(a.evidence if a else {})


def test_rank_and_first_of_kind_features_mark_the_acting_turns_only() -> None:
    """The acting-turn rank skips tool output; "first code" / "first failing action" mark one
    turn each, and a figure kept to the end marks the turn that first states it."""
    run = RunTrace(
        "r",
        (
            Turn(0, "Planner_Expert", "Solve the task. Please verify the result."),
            Turn(1, "Coder_Expert", "```python\nprint(1/0)\n```"),
            Turn(2, "Computer_terminal", "exitcode: 1 (execution failed)\nZeroDivisionError"),
            Turn(3, "Coder_Expert", "Assuming 42 then: ```python\nprint(42)\n```"),
            Turn(4, "Computer_terminal", "exitcode: 0 (execution succeeded)\nCode output: 42"),
            Turn(5, "Checker_Expert", "I verified it. The final answer is 42. TERMINATE"),
        ),
    )
    rows = step_features(run)
    assert [rows[i]["actor_rank_1"] for i in range(6)] == [0, 1, 0, 0, 0, 0]
    assert [rows[i]["actor_rank_2"] for i in range(6)] == [0, 0, 0, 1, 0, 0]
    assert [rows[i]["first_code"] for i in range(6)] == [0, 1, 0, 0, 0, 0]
    assert [rows[i]["first_failing_action"] for i in range(6)] == [0, 1, 0, 0, 0, 0]
    assert [rows[i]["first_figure_reaching_the_end"] for i in range(6)] == [0, 0, 0, 1, 0, 0]
    assert rows[3]["hedge_language"] == 1 and rows[1]["hedge_language"] == 0
    assert rows[5]["verify_language"] == 1 and rows[5]["answer_language"] == 1
    # the turns that read an execution result (after the terminal), not the terminal itself
    assert [rows[i]["responds_to_tool_output"] for i in range(6)] == [0, 0, 0, 1, 0, 1]


def test_an_l1_fit_is_reproducible() -> None:
    """liblinear (the L1 solver) shuffles its data: the same runs must give the same weights
    on every fit, or the cross-validated figure and `--write-weights` move from run to run."""
    import numpy as np

    from contextos_lab.insights.attribution.features import STEP_FEATURES
    from contextos_lab.insights.attribution.fitting import _fit

    rng = np.random.default_rng(3)
    x = rng.random((120, len(STEP_FEATURES)))
    y = (x[:, 0] + 0.4 * rng.standard_normal(120) > 0.5).astype(int)
    fits = [_fit(x, y, c=0.3, penalty="l1") for _ in range(5)]
    assert all(f == fits[0] for f in fits[1:])


def test_a_prior_weight_outweighs_every_fitted_weight() -> None:
    """A feature the training runs cannot inform (constant there, like a tool-using agent's
    first write in group chats) keeps its stated prior, raised to the largest fitted weight's
    magnitude: a fixed 2.0 lost to a refit whose weights grew past it."""
    import numpy as np

    from contextos_lab.insights.attribution.features import STEP_FEATURES
    from contextos_lab.insights.attribution.fitting import PRIOR_WEIGHTS, _fit

    rng = np.random.default_rng(5)
    x = rng.random((200, len(STEP_FEATURES)))
    signal = STEP_FEATURES.index("has_code")
    y = (x[:, signal] > 0.5).astype(int)  # a sharp signal: its fitted weight is large
    for f in PRIOR_WEIGHTS:
        x[:, STEP_FEATURES.index(f)] = 0.0
    w = _fit(x, y, c=10.0, penalty="l2")
    largest = max(abs(v) for f, v in w.items() if f not in PRIOR_WEIGHTS)
    assert largest > 2.0
    assert w["first_write_call"] == w["last_actor_before_first_flag"] == largest
    assert w["role_orchestrator"] == w["role_user"] == 0.0
