"""Write loader fixture files in tmp_path (no committed fixtures): rows in, file of any format out.

Rows are plain dicts (an envelope's `model_dump(mode="json")`, or a deliberately broken one), so
tests can write bad rows as easily as good ones. The CSV and Parquet writers follow the loaders'
tabular conventions: sub-models become dotted CSV headers / Parquet structs, other dicts and
(CSV only) lists become JSON text, None becomes an empty cell / null.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import BaseModel

from contextos_lab.schemas import FeedbackRecord, PreferenceEntry, Scorecard
from contextos_lab.schemas.base import Envelope, _unwrap
from tests.factories import T0, decision_record, feedback_entry

OPERATOR = "user_finance_lead_77"


def decision_row(i: int = 0, **over: Any) -> dict[str, Any]:
    return {**decision_record(i).model_dump(mode="json"), **over}


def feedback_row(i: int = 0, **over: Any) -> dict[str, Any]:
    return {**feedback_entry(i).model_dump(mode="json"), **over}


def feedback_record_row(i: int = 0, **over: Any) -> dict[str, Any]:
    record = FeedbackRecord(
        feedback_id=f"fb_2026_05_10_t{i}",
        kind="tip",
        context={"decision_record_id": f"dr_2026_05_01_r{i}", "intent": "support.refund"},
        operator=OPERATOR,
        correction=f"check the window first ({i})",
        evidence_refs=[f"order:{i}"],
        captured_at=T0,
    )
    return {**record.model_dump(mode="json"), **over}


def scorecard_row(i: int = 0, **over: Any) -> dict[str, Any]:
    card = Scorecard(
        scorecard_id=f"sc_{i}",
        subject_id=f"trace_{i}",
        decision_key="support.refund.execute",
        policy=1.0,
        safety=0.95,
        utility=0.5 + i / 100,
        latency=120.0 + i,
        economics=0.3,
        n_cases=10,
        details={"latency_p95": 180.5},
        computed_at=T0,
    )
    return {**card.model_dump(mode="json"), **over}


def preference_row(i: int = 0, **over: Any) -> dict[str, Any]:
    entry = PreferenceEntry(
        preference_id=f"pf_2026_05_10_p{i}",
        a_id=f"trace_{i}_a",
        b_id=f"trace_{i}_b",
        a_subject="trial_3",
        b_subject="trial_7",
        preferred=("a", "b", "tie")[i % 3],
        criterion="helpfulness",
        decision_key="support.refund.execute",
        signed_by=OPERATOR,
        signed_at=T0,
    )
    return {**entry.model_dump(mode="json"), **over}


def write_rows(path: Path, rows: Sequence[dict[str, Any]], model: type[Envelope]) -> Path:
    """Write `rows` in the format `path`'s extension names."""
    writers = {".jsonl": write_jsonl, ".json": write_json, ".csv": write_csv, ".parquet": write_pq}
    writers[path.suffix](path, rows, model)
    return path


def write_jsonl(path: Path, rows: Sequence[dict[str, Any]], model: type[Envelope]) -> None:
    text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    path.write_bytes(text.encode("utf-8"))


def write_json(path: Path, rows: Sequence[dict[str, Any]], model: type[Envelope]) -> None:
    path.write_text(json.dumps(list(rows), ensure_ascii=False, indent=1), encoding="utf-8")


def write_csv(path: Path, rows: Sequence[dict[str, Any]], model: type[Envelope]) -> None:
    flat = [_flatten(model, row) for row in rows]
    header = list(dict.fromkeys(name for row in flat for name in row))
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(header)
        for row in flat:
            writer.writerow([row.get(name, "") for name in header])


def write_pq(path: Path, rows: Sequence[dict[str, Any]], model: type[Envelope]) -> None:
    table = pa.Table.from_pylist([_tabular(model, row) for row in rows])
    pq.write_table(table, path)


def _submodel(model: type[BaseModel], name: str) -> type[BaseModel] | None:
    info = model.model_fields.get(name)
    annotation = _unwrap(info.annotation) if info is not None else None
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return None


def _tabular(model: type[BaseModel], row: dict[str, Any]) -> dict[str, Any]:
    """Parquet cells: sub-models stay structs, free-form dicts become JSON text."""
    out: dict[str, Any] = {}
    for name, value in row.items():
        sub = _submodel(model, name)
        if isinstance(value, dict):
            out[name] = _tabular(sub, value) if sub else json.dumps(value, ensure_ascii=False)
        else:
            out[name] = value
    return out


def _flatten(model: type[BaseModel], row: dict[str, Any], prefix: str = "") -> dict[str, str]:
    out: dict[str, str] = {}
    for name, value in row.items():
        sub = _submodel(model, name)
        if isinstance(value, dict) and sub is not None:
            out.update(_flatten(sub, value, f"{prefix}{name}."))
        else:
            out[f"{prefix}{name}"] = _cell(value)
    return out


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False)
    return str(value)
