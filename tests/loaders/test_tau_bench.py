from __future__ import annotations

from pathlib import Path

from contextos_lab.insights.run_insights import failure_table, runs_frame
from contextos_lab.loaders.tau_bench import load_tau_bench
from contextos_lab.loaders.tau_bench_diagnosis import Action, derive_reason
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
        9: ("wrong_arguments", "state_mismatch"),  # 250.0 == 250 after normalisation
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
