"""Per-system features: the step's speaker, tool and place, named so a weights file carries
them and the linear attributor weighs them (and the bundled weights, which have none, do not)."""

from __future__ import annotations

import pytest

from contextos_lab.errors import UserError
from contextos_lab.insights.attribution import RunTrace, Turn
from contextos_lab.insights.attribution.linear import LinearAttributor, run_system_rows
from contextos_lab.insights.attribution.system_features import is_system_feature
from contextos_lab.insights.attribution.weights_file import WeightsFile, read_weights, write_weights

RUN = RunTrace(
    "r",
    (
        Turn(0, "Lead", "Task: book the table."),
        Turn(1, "Booker", "", tool="make_booking"),
        Turn(2, "tool", "ok"),
        Turn(3, "Booker", "Booked for two."),
        Turn(4, "Lead", "Thanks."),
    ),
)


def test_rows_name_speaker_tool_place_from_the_end_and_fifth() -> None:
    rows = run_system_rows(RUN)
    assert len(rows) == 4  # the tool's output is not a candidate
    assert rows[1] == {"speaker:booker": 1.0, "tool:make_booking": 1.0, "from_end:2": 1.0,
                       "fifth:1": 1.0}  # fmt: skip
    assert rows[-1] == {"speaker:lead": 1.0, "from_end:0": 1.0, "fifth:4": 1.0}
    assert all(is_system_feature(name) for row in rows for name in row)
    assert not is_system_feature("first_turn") and not is_system_feature("colour:red")


def test_a_learnt_speaker_weight_moves_the_blame_and_survives_a_weights_file(tmp_path) -> None:
    assert LinearAttributor({"first_turn": 1.0}).attribute(RUN).step == 0
    path = write_weights(
        tmp_path / "w.json", WeightsFile(weights={"first_turn": 1.0, "speaker:booker": 2.0})
    )
    loaded = read_weights(path)
    assert LinearAttributor(loaded.weights).attribute(RUN).step == 1
    (tmp_path / "bad.json").write_text('{"weights": {"colour:red": 1.0}}')
    with pytest.raises(UserError, match="colour:red"):
        read_weights(tmp_path / "bad.json")
