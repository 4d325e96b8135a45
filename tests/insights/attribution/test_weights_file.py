"""A weights file round-trips, and anything else is one UserError naming the file and field."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contextos_lab.errors import UserError
from contextos_lab.insights.attribution.weights_file import WeightsFile, read_weights, write_weights

JSONISH = st.recursive(
    st.none() | st.booleans() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=12), inner),
    max_leaves=8,
)


def test_a_written_file_reads_back(tmp_path) -> None:
    saved = WeightsFile(weights={"first_turn": 1.5}, temperature=0.8, runs=7, used_runs=6)
    path = write_weights(tmp_path / "w.json", saved)
    assert read_weights(path) == saved


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("{", "line 1: not JSON"),
        ('{"weights": {"first_turn": "x"}}', "field weights.first_turn"),
        ('{"weights": {}, "temperature": 0}', "field temperature"),
        ('{"weights": {}, "format": "other/2"}', "field format"),
        ('{"temperature": 1}', "field weights"),
    ],
)
def test_bad_files_name_the_file_and_field(tmp_path, text, says) -> None:
    path = tmp_path / "w.json"
    path.write_text(text)
    with pytest.raises(UserError, match=str(path)) as err:
        read_weights(path)
    assert says in str(err.value)
    with pytest.raises(UserError, match="no such weights file"):
        read_weights(tmp_path / "absent.json")


@settings(max_examples=60, deadline=None)
@given(JSONISH)
def test_any_json_is_a_weights_file_or_one_user_error(value) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "w.json"
        path.write_text(json.dumps(value))
        try:
            got = read_weights(path)
        except UserError as exc:
            assert str(path) in str(exc)
        else:
            assert isinstance(got, WeightsFile)


def test_a_file_that_cannot_be_written_names_its_path(tmp_path) -> None:
    (tmp_path / "f").write_text("")
    with pytest.raises(UserError, match="cannot write the weights file"):
        write_weights(tmp_path / "f" / "w.json", WeightsFile(weights={}))
