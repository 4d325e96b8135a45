"""`insights.json` is written piece by piece: the same bytes as one `canonical_json` of the whole
report, and never the whole report (nor a whole long frame) as dicts at once (issue 39)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contextos_lab.insights import report_json
from contextos_lab.insights.pipeline import ClusterReport, analyse, write_report
from contextos_lab.insights.sources import load_sources
from contextos_lab.schemas.base import canonical_json

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(scope="module")
def report() -> ClusterReport:
    return analyse(load_sources([str(FIXTURES)]), text_backend=None)


def _long(report: ClusterReport, n: int) -> ClusterReport:
    """The report with `n` attribution rows (copies of one, ids varied)."""
    row = {c: None for c in report.attributions.columns}
    row.update({"excerpt": "é ü \u2014 “quoted”", "candidates": [{"step": 1, "p": 0.5}]})
    rows = [{**row, "record_id": f"dr_{i}", "step": i, "probability": i / 7} for i in range(n)]
    report.attributions = pd.DataFrame(rows, columns=report.attributions.columns)
    return report


def test_written_bytes_equal_one_canonical_dump(tmp_path: Path, report: ClusterReport) -> None:
    long = _long(report, 2 * report_json.CHUNK + 7)
    want = canonical_json(long.to_json()) + "\n"
    assert write_report(long, tmp_path).read_text(encoding="utf-8") == want
    assert json.loads(want)["attributions"][-1]["record_id"] == f"dr_{2 * report_json.CHUNK + 6}"


def test_no_whole_report_nor_whole_frame_at_once(
    tmp_path: Path, report: ClusterReport, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The old writer built `report.to_json()` (every attribution row as a dict) and one string
    of it; the memory that took grew with the corpus. Now neither happens."""
    long = _long(report, 3 * report_json.CHUNK)
    want = canonical_json(long.to_json()) + "\n"
    sizes: list[int] = []
    to_dict = pd.DataFrame.to_dict

    def counted(self: pd.DataFrame, *args: Any, **kwargs: Any) -> Any:
        sizes.append(len(self))
        return to_dict(self, *args, **kwargs)

    def refused(self: ClusterReport) -> dict[str, Any]:
        raise AssertionError("write_report built the whole report as one dict")

    monkeypatch.setattr(pd.DataFrame, "to_dict", counted)
    monkeypatch.setattr(ClusterReport, "to_json", refused)
    assert write_report(long, tmp_path).read_text(encoding="utf-8") == want
    assert sizes and max(sizes) <= report_json.CHUNK


@settings(max_examples=25)
@given(
    st.dictionaries(
        st.text(max_size=5),
        st.one_of(
            st.integers(),
            st.text(max_size=8),
            st.lists(st.dictionaries(st.text(max_size=3), st.floats(allow_nan=False), max_size=3)),
        ),
        max_size=6,
    )
)
def test_parts_join_as_canonical_json(payload: dict[str, Any]) -> None:
    """Any mix of plain values and lists written item by item joins to canonical JSON."""
    parts = {
        k: report_json.Items(lambda v=v: iter(v)) if isinstance(v, list) else v
        for k, v in payload.items()
    }
    out = io.StringIO()
    report_json.write_parts(parts, out)
    assert out.getvalue() == canonical_json(payload)
    assert report_json.as_dict(parts) == payload
