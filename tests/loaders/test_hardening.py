"""Malformed input never raises, is never coerced, and is quarantined naming its field."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contextos_lab.loaders import ingest_file, load_records, quarantine_path
from contextos_lab.loaders.ingest import store_loaded
from contextos_lab.loaders.otlp import load_otlp
from contextos_lab.loaders.tau_bench import load_tau_bench
from contextos_lab.loaders.who_and_when import load_who_and_when
from contextos_lab.schemas import DecisionRecord
from contextos_lab.store import ExperienceStore
from tests.loaders.fixtures import decision_row, scorecard_row
from tests.loaders.malformed import make_case, run_case


@pytest.fixture
def store(tmp_path: Path) -> ExperienceStore:
    return ExperienceStore(f"sqlite:///{tmp_path / 'store.db'}", signing_key=b"k")


def _jsonl(path: Path, *lines: str) -> Path:
    path.write_bytes("".join(f"{line}\n" for line in lines).encode("utf-8"))
    return path


@pytest.mark.parametrize("token", ["1e400", "-1e999", "NaN", "Infinity"])
def test_non_finite_numbers_are_quarantined_never_coerced(
    tmp_path: Path, store: ExperienceStore, token: str
) -> None:
    good = json.dumps(scorecard_row(1))
    bad = json.dumps(scorecard_row(0, latency=7.25)).replace("7.25", token)
    report = ingest_file("scorecards", _jsonl(tmp_path / "s.jsonl", bad, good), store)
    assert (report.accepted, len(report.quarantined)) == (1, 1)
    assert report.quarantined[0].field == "latency"
    assert store.count() == 1 and store.verify().ok


def test_text_cell_that_overflows_a_float_is_quarantined(tmp_path: Path) -> None:
    path = tmp_path / "s.csv"
    row = scorecard_row(0)
    header = [k for k in row if not isinstance(row[k], dict)]
    cells = ["1e400" if k == "latency" else str(row[k]) for k in header]
    path.write_text(",".join(header) + "\n" + ",".join(cells) + "\n", encoding="utf-8")
    (q,) = load_records("scorecards", path).quarantined
    assert q.field == "latency" and "not finite" in q.message


def test_lone_surrogates_in_values_and_keys_are_quarantined_and_written(
    tmp_path: Path, store: ExperienceStore
) -> None:
    value = json.dumps(decision_row(0, decision="x\ud800"))
    key = json.dumps({**decision_row(1), "inputs": {"\udfff": 1}})
    path = tmp_path / "d.json"
    path.write_text(f"[{value}, {key}, {json.dumps(decision_row(2))}]", encoding="utf-8")
    report = ingest_file("decisions", path, store)
    assert [q.field for q in report.quarantined] == ["decision", "inputs.\\udfff"]
    assert report.accepted == 1
    text = quarantine_path(path).read_text(encoding="utf-8")  # written, valid UTF-8
    assert "\\ud800" in text


def test_undecodable_csv_byte_is_quarantined_and_the_file_written(
    tmp_path: Path, store: ExperienceStore
) -> None:
    row = decision_row(0)
    header = [k for k in row if isinstance(row[k], str)]
    good = ",".join(str(row[k]) for k in header)
    bad = good.replace("approve", "appr\xffove")
    path = tmp_path / "d.csv"
    data = (",".join(header) + "\n" + good.replace("_r0", "_r1") + "\n" + bad + "\n").encode(
        "utf-8", "surrogateescape"
    )
    path.write_bytes(data.replace("\xff".encode(), b"\xff"))
    report = ingest_file("decisions", path, store)
    assert report.accepted == 1 and len(report.quarantined) == 1
    assert report.quarantined[0].field == "decision"
    assert quarantine_path(path).is_file()


@pytest.mark.parametrize("depth", [65, 150, 900, 100_000])
def test_deep_nesting_is_quarantined(tmp_path: Path, store: ExperienceStore, depth: int) -> None:
    deep = '{"k":[' * depth + "1" + "]}" * depth
    row = json.dumps(decision_row(0)).replace('"inputs": {', f'"inputs": {{"deep": {deep}, ', 1)
    report = ingest_file("decisions", _jsonl(tmp_path / "d.jsonl", row), store)
    (q,) = report.quarantined
    assert report.accepted == 0
    assert q.field is not None or "nested too deeply" in q.message


def test_an_id_with_a_trailing_newline_is_refused(tmp_path: Path) -> None:
    rid = decision_row(0)["record_id"]
    path = _jsonl(tmp_path / "d.jsonl", json.dumps(decision_row(0, record_id=f"{rid}\n")))
    (q,) = load_records("decisions", path).quarantined
    assert q.field == "record_id"


def test_quarantine_is_written_before_any_row_is_stored(
    tmp_path: Path, store: ExperienceStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _jsonl(tmp_path / "d.jsonl", json.dumps(decision_row(0)), "{bad")
    loaded = load_records("decisions", path)

    def fail(*_: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr("contextos_lab.loaders.ingest.write_quarantine", fail)
    with pytest.raises(OSError):
        store_loaded("decisions", loaded, store)
    assert store.count() == 0  # the file's rows are stored together with their quarantine


def test_trace_loaders_accept_a_bom_and_quarantine_wrong_types(tmp_path: Path) -> None:
    span = {
        "traceId": "t1",
        "spanId": "s1",
        "name": "x",
        "startTimeUnixNano": "1700000000000000000",
        "status": {"code": [1]},
    }
    request = {"resourceSpans": [{"scopeSpans": [{"spans": [span, {**span, "spanId": "s2"}]}]}]}
    good = {**span, "spanId": "s3", "status": {"code": 1}}
    request["resourceSpans"][0]["scopeSpans"][0]["spans"].append(good)
    path = tmp_path / "o.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(request).encode())
    result = load_otlp(path)
    assert len(result.traces) == 1 and len(result.quarantined) == 2
    assert {q.field for q in result.quarantined} == {"status.code"}

    runs = [{"reward": 1.0, "traj": [{"role": "assistant", "tool_calls": ["x"]}], "task_id": 1}]
    tau = tmp_path / "t.json"
    tau.write_bytes(b"\xef\xbb\xbf" + json.dumps(runs).encode())
    (q,) = load_tau_bench(tau).quarantined
    assert q.field == "traj"

    ww = tmp_path / "w.json"
    row = {"mistake_reason": "r", "mistake_agent": "a", "mistake_step": 1e400, "history": []}
    ww.write_bytes(b"\xef\xbb\xbf" + json.dumps(row).encode())
    # an unstorable annotation value is a malformed label: reported per field, run analysed
    result = load_who_and_when(ww)
    assert not result.quarantined and len(result.records) == 1
    missing = result.records[0].inputs["annotation_missing"]
    assert set(missing) == {"mistake_step"} and missing["mistake_step"].startswith("malformed")


SAMPLE = settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@SAMPLE
@given(seed=st.integers(0, 2**32 - 1))
def test_generated_malformed_files_never_escape(tmp_path: Path, seed: int) -> None:
    """A small sample of benchmarks/fuzz_loaders.py: every loader, ingest into a real store."""
    rng = random.Random(seed)
    root = tmp_path / str(seed)
    root.mkdir()
    store = ExperienceStore(
        f"sqlite:///{root / 's.db'}", signing_key=b"k", authorised_overriders=set()
    )
    for index in range(4):
        case = make_case(root, index, rng)
        out = run_case(case, store)
        assert out.traceback is None, out.traceback
        assert out.unaccounted == 0, (case.damage, case.rows_in, out)
        assert out.without_field == 0, out.details
        assert out.altered == 0, out.details
    assert store.verify().ok
    assert all(isinstance(r, DecisionRecord) for r in store.list(DecisionRecord))


def test_a_number_for_a_date_time_is_refused_not_read_as_epoch(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "d.jsonl", json.dumps(decision_row(0, decided_at=3.5)))
    (q,) = load_records("decisions", path).quarantined
    assert q.field == "decided_at" and "ISO 8601" in q.message
