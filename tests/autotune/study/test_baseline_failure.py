"""A failed baseline's exit status comes from the typed `fail_code` its trial recorded (in
any process that reads the study), never from the words of its reason."""

from __future__ import annotations

import optuna
import pytest

from contextos_lab.autotune.objective import RunError, ScoringFailure
from contextos_lab.autotune.study.baseline import (
    HarnessProtocolError,
    HarnessUnreachable,
    baseline_failed,
)
from contextos_lab.autotune.study.trial_run import FAIL_CODE
from contextos_lab.errors import EXIT_HARNESS, EXIT_PROTOCOL
from contextos_lab.harness.program.result_lines import PROTOCOL_ERROR
from contextos_lab.harness.protocol import Fault


def _failed(attrs: dict[str, object]) -> optuna.trial.FrozenTrial:
    study = optuna.create_study()
    trial = study.ask()
    for key, value in attrs.items():
        trial.set_user_attr(key, value)
    study.tell(trial, state=optuna.trial.TrialState.FAIL)
    return study.trials[0]


@pytest.mark.parametrize(
    ("attrs", "expected"),
    [
        ({"fail_reason": "exit 1", FAIL_CODE: EXIT_PROTOCOL}, HarnessProtocolError),
        # the words alone decide nothing: a reason quoting the phrase, recorded as exit 4
        ({"fail_reason": f"stderr said {PROTOCOL_ERROR}", FAIL_CODE: EXIT_HARNESS}, None),
        ({"fail_reason": f"{PROTOCOL_ERROR}: from an older kit"}, None),
    ],
)
def test_the_exit_status_is_the_recorded_code(attrs: dict[str, object], expected: type | None):
    error = baseline_failed(_failed(attrs), 0)
    assert type(error) is (expected or HarnessUnreachable)
    assert str(attrs["fail_reason"]) in str(error)


def test_over_budget_is_unreachable() -> None:
    error = baseline_failed(None, 3)
    assert type(error) is HarnessUnreachable and "over budget" in str(error)


def test_every_run_errored_carries_the_protocol_status_typed() -> None:
    protocol = RunError(f"{PROTOCOL_ERROR}: line 2: not JSON", Fault.protocol)
    assert ScoringFailure.errored(protocol).code == EXIT_PROTOCOL
    assert ScoringFailure.errored(RunError("TimeoutError: no answer")).code == EXIT_HARNESS
    assert ScoringFailure.errored(None).code == EXIT_HARNESS
    # the words alone decide nothing: a harness's own error quoting the phrase is not a fault
    quoted = RunError(f"upstream: {PROTOCOL_ERROR}")
    assert ScoringFailure.errored(quoted).code == EXIT_HARNESS


def test_an_unknown_fault_on_the_first_errored_run_names_the_harness_and_case() -> None:
    """It was a raw `ValueError` out of `fault_of` (a traceback out of `search`)."""
    import pandas as pd

    from contextos_lab.autotune.objective import first_error
    from contextos_lab.harness.execution import Execution
    from contextos_lab.harness.protocol import UnknownFault

    rows = pd.DataFrame(
        {"case_id": ["c0", "c1"], "error": [None, "upstream timed out"],
         "fault": [None, "timeout"], "repeat": [0, 1]}
    )  # fmt: skip
    execution = Execution(rows, paid_calls=2, cache_hits=0, wall_s=0.0, concurrency=1, repeats=2)
    expected = r"^h\.py: case 'c1', repeat 1: field `fault`: 'timeout'"
    with pytest.raises(UnknownFault, match=expected):
        first_error(execution, "h.py")
    rows.loc[1, "fault"] = "protocol"
    assert first_error(execution, "h.py") == RunError("upstream timed out", Fault.protocol)
