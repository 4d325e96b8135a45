"""The notebook checks the browser test and benchmark share (checks.py), on hand-made cells:
they run everywhere, Chromium or not."""

from __future__ import annotations

from typing import Any

import matplotlib
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.notebooks import checks

matplotlib.use("Agg")


def _md(text: str) -> dict[str, Any]:
    return {"cell_type": "markdown", "source": text}


def _code(outputs: int, count: int | None = 1, source: str = "x") -> dict[str, Any]:
    shown = [{"output_type": "stream", "name": "stdout", "text": "x"}] * outputs
    return {"cell_type": "code", "source": source, "outputs": shown, "execution_count": count}


@given(st.lists(st.tuples(st.booleans(), st.lists(st.booleans(), max_size=3)), max_size=6))
def test_a_section_is_empty_exactly_when_it_has_code_and_none_of_it_shows_anything(
    sections: list[tuple[bool, list[bool]]],
) -> None:
    cells, expected = [], []
    for i, (prose, shows) in enumerate(sections):
        cells.append(_md(f"## s{i}\nsome prose"))
        if prose:
            cells.append(_md("more prose, no heading"))
        cells += [_code(int(s)) for s in shows]
        if shows and not any(shows):
            expected.append(f"## s{i}")
    assert checks.empty_sections(cells) == expected


def test_a_cell_left_unrun_is_named_and_an_empty_one_is_not() -> None:
    cells = [_code(1), _code(0, None, "import os\nos.getcwd()"), _code(0, None, "  \n")]
    assert checks.not_run(cells) == ["import os\nos.getcwd()"]


def test_errors_and_stderr_are_read_from_the_outputs() -> None:
    cells = [
        {
            "cell_type": "code",
            "source": "x",
            "execution_count": 1,
            "outputs": [
                {"output_type": "stream", "name": "stderr", "text": ["Warn", "ing\n"]},
                {"output_type": "error", "ename": "KeyError", "evalue": "'a'", "traceback": []},
            ],
        }
    ]
    assert checks.errors(cells) == ["KeyError: 'a'"]
    assert checks.stderr(cells) == ["Warning\n"]


@pytest.mark.parametrize(
    ("title", "xlabel", "ylabel", "bare"),
    [("t", "day", "rate", False), ("", "day", "rate", True), ("t", "", "rate", True)],
)
def test_a_figure_needs_a_title_and_axis_labels(
    title: str, xlabel: str, ylabel: str, bare: bool
) -> None:
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    ax.plot([1, 2])
    ax.set(title=title, xlabel=xlabel, ylabel=ylabel)
    assert checks.unlabelled(fig) is bare
    plt.close(fig)
