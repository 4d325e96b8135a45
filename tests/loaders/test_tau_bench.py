from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contextos_lab.insights.findings.checks import _consistent, tau_class_consistency
from contextos_lab.insights.runs.insights import failure_table, runs_frame
from contextos_lab.loaders.tau_bench import load_tau_bench
from contextos_lab.loaders.tau_bench_diagnosis import Action, action_diff, derive_reason, is_write
from contextos_lab.schemas import TerminalStatus

FIXTURE = Path(__file__).parents[1] / "insights" / "fixtures" / "tau_bench_airline_small.json"


def test_each_reason_class_is_derived_from_the_fixture() -> None:
    result = load_tau_bench(FIXTURE)
    by_task = {r.inputs["task_id"]: r for r in result.records}
    expected = {
        1: ("premature_end", "ended before any write; book_reservation expected"),
        2: ("wrong_arguments", "book_reservation: insurance differ"),
        3: ("extra_write", "cancel_reservation not in ground truth"),
        4: ("wrong_tool", "called update_reservation_flights instead of cancel_reservation"),
        5: ("transferred_to_human", "handed off instead of acting"),
        6: ("step_limit", "conversation ended without the stop token"),
        7: ("missing_action", "cancel_reservation never called"),  # the call errored
        8: ("missing_action", "missing_output"),
        # 250.0 == 250 after normalisation: every write matched, so no write is called wrong
        9: ("state_mismatch", "state_mismatch"),
    }
    for task, (cls, detail) in expected.items():
        assert (by_task[task].inputs["reason_class"], by_task[task].inputs["reason_detail"]) == (
            cls,
            detail,
        ), task
    assert by_task[0].status == TerminalStatus.completed and "reason_class" not in by_task[0].inputs
    assert by_task[5].status == TerminalStatus.escalated and by_task[5].inputs["failed"]
    assert by_task[1].decision_key == "airline.book_reservation"
    assert by_task[8].decision_key == "airline.read_only"  # no expected write: read-only key
    assert by_task[3].decision_key == "airline.book_reservation"  # not its extra cancel
    assert by_task[3].inputs["action_diff"]["extra"] == ["cancel_reservation"]
    assert by_task[2].inputs["action_diff"]["wrong_arguments"] == {
        "book_reservation": ["insurance"]
    }
    assert by_task[1].inputs["action_diff"]["missing"] == ["book_reservation"]
    assert by_task[10].status == TerminalStatus.completed  # `trajectory` spelling accepted
    assert len(result.traces) == len(result.records) == 12
    # a failed run without ground truth is analysed from its trajectory, not quarantined
    assert by_task[13].inputs["failed"] and "reason_class" not in by_task[13].inputs
    assert by_task[13].decision_key == "airline.no_ground_truth"
    assert result.traces[1].tool_calls == ("get_user_details",)


def test_variant_records_are_quarantined_with_reasons() -> None:
    result = load_tau_bench(FIXTURE)
    got = {(q.line, q.field) for q in result.quarantined}
    assert got == {(12, "reward"), (13, "traj"), (15, None)}
    assert all(q.message and q.file.endswith(".json") for q in result.quarantined)


def test_unreadable_file_is_quarantined_not_raised(tmp_path) -> None:
    bad = tmp_path / "gpt-4o-retail.json"
    bad.write_text("{not json")
    result = load_tau_bench(bad)
    assert not result.records and result.quarantined[0].stage == "parse"


def test_failure_counts_add_up_to_failed_runs() -> None:
    frame = runs_frame(list(load_tau_bench(FIXTURE).records))
    assert int(failure_table(frame)["count"].sum()) == int(frame["failed"].sum()) == 10


def test_transfer_in_ground_truth_is_not_a_failure_reason() -> None:
    gt = [Action("transfer_to_human_agents", {})]
    taken = [Action("transfer_to_human_agents", {}), Action("cancel_reservation", {"id": 1})]
    assert derive_reason(taken, gt, stopped=True).reason_class == "extra_write"


def _write(name: str, **kwargs: object) -> Action:
    return Action(name, dict(kwargs))


def test_a_wrongly_argued_write_is_not_called_a_wrong_tool() -> None:
    """The issue's case: cancel is missing and book was made with a wrong argument."""
    gt = [_write("cancel_reservation", id=1), _write("book_reservation", bags=1)]
    taken = [_write("book_reservation", bags=2)]
    reason = derive_reason(taken, gt, stopped=True)
    assert (reason.reason_class, reason.action) == ("wrong_arguments", "book_reservation")
    assert reason.detail == "book_reservation: bags differ"


def test_wrong_tool_only_in_place_of_an_expected_write() -> None:
    gt = [_write("update_reservation_flights", id=1)]
    reason = derive_reason([_write("cancel_reservation", id=1)], gt, stopped=True)
    assert (reason.reason_class, reason.action, reason.called) == (
        "wrong_tool",
        "update_reservation_flights",
        "cancel_reservation",
    )


def test_a_transfer_after_a_wrong_or_extra_write_is_classed_by_the_write() -> None:
    transfer = Action("transfer_to_human_agents", {})
    gt = [_write("book_reservation", bags=1)]
    extra = [_write("book_reservation", bags=1), _write("send_certificate", n=1), transfer]
    assert derive_reason(extra, gt, stopped=True).reason_class == "extra_write"
    argued = [_write("book_reservation", bags=3), transfer]
    assert derive_reason(argued, gt, stopped=True).reason_class == "wrong_arguments"
    only_missing = [Action("get_user_details", {}), transfer]
    assert derive_reason(only_missing, gt, stopped=True).reason_class == "transferred_to_human"
    cut_off = [_write("cancel_reservation", id=9)]
    assert derive_reason(cut_off, [], stopped=False).reason_class == "extra_write"


TOOLS = st.sampled_from(["book_reservation", "cancel_reservation", "send_certificate"])
ACTIONS = st.builds(
    Action,
    TOOLS,
    st.fixed_dictionaries({"id": st.integers(0, 2)}),
    st.booleans(),
)
EXPECTED = st.lists(st.builds(Action, TOOLS, st.fixed_dictionaries({"id": st.integers(0, 2)})))
HANDOFF = Action("transfer_to_human_agents", {})
TRANSFER = st.just(HANDOFF)


@settings(max_examples=300, deadline=None)
@given(
    taken=st.lists(st.one_of(ACTIONS, TRANSFER), max_size=6),
    expected=st.lists(st.one_of(EXPECTED.map(tuple), st.just((HANDOFF,))), max_size=2),
    stopped=st.booleans(),
    outputs_ok=st.booleans(),
)
def test_the_class_always_agrees_with_the_diff(taken, expected, stopped, outputs_ok) -> None:
    """By construction: whatever was taken and expected, the class reads true off the diff."""
    gt = [a for group in expected for a in group]
    reason = derive_reason(taken, gt, stopped=stopped, outputs_ok=outputs_ok)
    inputs = {
        "reason_class": reason.reason_class,
        "reason_detail": reason.detail,
        "reason_action": reason.action,
        "reason_called": reason.called,
        "action_diff": action_diff(taken, gt),
        "taken_writes": [a.name for a in taken if is_write(a.name) and not a.failed],
    }
    assert _consistent(inputs), inputs


def test_the_fixture_classes_agree_with_their_diffs() -> None:
    frame = runs_frame(list(load_tau_bench(FIXTURE).records))
    got = tau_class_consistency(frame)
    assert got["failed_runs"] == 9 and got["share"] == 1.0, got["inconsistent"]
    assert got["without_ground_truth"] == 1  # loaded and attributed, but no diff to judge


@pytest.mark.external
def test_real_tau_bench_classes_agree_with_their_diffs(external_dir: Path) -> None:
    folder = external_dir / "tau-bench" / "historical_trajectories"
    frame = runs_frame(list(load_tau_bench(folder).records))
    got = tau_class_consistency(frame)
    assert got["failed_runs"] > 100 and got["share"] == 1.0, got["inconsistent"]
    # the old rule called 5 runs wrong_tool, 4 of them against the diff
    assert got["classes"].get("wrong_tool", 0) <= 1
