"""Rows to typed envelopes: size check, tabular JSON cells, pydantic validation, duplicate ids.

Every refused row becomes one `QuarantinedRow` whose message lists all of its field errors
(pydantic's own wording, which names an enum's allowed values; the reason-class validator names
its registry). Duplicate policy: within one file the first valid row with an id wins and every
later row with that id is quarantined, identical or not, with the line of the first; the
message says whether the content was identical, so a copy-paste slip reads differently from a
conflicting edit.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any, Generic, TypeGuard, get_args, get_origin

from pydantic import AwareDatetime, BaseModel, NaiveDatetime, ValidationError

from contextos_lab.loaders.hazards import (
    MAX_STRING_CHARS,
    find_hazard,
    parse_constant,
    parse_float,
)
from contextos_lab.loaders.kinds import KIND_NAMES
from contextos_lab.loaders.quarantine import E, LoadResult, Origin
from contextos_lab.loaders.readers import TABULAR, RawRow, open_rows
from contextos_lab.schemas.base import Envelope, EnvelopeList, _unwrap
from contextos_lab.schemas.decision import DecisionRecord
from contextos_lab.schemas.feedback import FeedbackEntry, FeedbackRecord
from contextos_lab.schemas.preference import PreferenceEntry
from contextos_lab.schemas.scorecard import Scorecard

#: `contextos-lab ingest KIND`: the envelope each kind of file holds.
KINDS: dict[str, type[Envelope]] = dict(
    zip(
        KIND_NAMES,
        (DecisionRecord, FeedbackEntry, FeedbackRecord, Scorecard, PreferenceEntry),
        strict=True,
    )
)
__all__ = ["KINDS", "MAX_STRING_CHARS", "RecordLoader", "describe_errors", "load_records"]
_INPUT_PREVIEW = 80


class RecordLoader(Generic[E]):
    """Loads one envelope type from any supported format (implements `readers.Loader`)."""

    def __init__(self, model: type[E], fmt: str | None = None) -> None:
        self.model, self.fmt = model, fmt

    def load(self, source: Path | str) -> LoadResult[E]:
        rows = open_rows(source, self.fmt)
        result: LoadResult[E] = LoadResult(
            rows.path, rows.format, rows.locator, EnvelopeList([], self.model)
        )
        by_id: dict[str, E] = {}
        seen = 0
        for row in rows.rows:
            seen += 1
            origin = Origin(row.number, row.raw)
            record = self._record(row, origin, result, tabular=rows.format in TABULAR)
            if record is None:
                continue
            first = by_id.get(record.artifact_id)
            if first is not None:
                same = first.content_hash() == record.content_hash()
                result.quarantine(
                    origin,
                    self.model.id_field,
                    f"duplicate id {record.artifact_id} (first at {rows.locator} "
                    f"{result.origins[record.artifact_id].line}; "
                    f"{'identical' if same else 'different'} content)",
                    "duplicate",
                )
                continue
            by_id[record.artifact_id] = record
            result.origins[record.artifact_id] = origin
            result.records.append(record)
        if seen == 0:
            result.notes.append("file is empty" if rows.empty else "file has no data rows")
        return result

    def _record(
        self, row: RawRow, origin: Origin, result: LoadResult[E], *, tabular: bool
    ) -> E | None:
        if row.error is not None or row.data is None:
            result.quarantine(origin, row.field, row.error or "no data", "parse")
            return None
        data = decode_cells(self.model, row.data) if tabular else row.data
        hazard = find_hazard(data)
        if hazard is not None:
            result.quarantine(origin, hazard[0], _hazard_message(hazard), "validate")
            return None
        numeric = _numeric_datetime(self.model, data)
        if numeric is not None:
            result.quarantine(
                origin,
                numeric,
                f"{numeric}: a number is not a date-time (epoch seconds or milliseconds? "
                "write an ISO 8601 date-time)",
                "validate",
            )
            return None
        try:
            record = self.model.model_validate(data)
        except ValidationError as exc:
            field, message = describe_errors(exc)
            result.quarantine(origin, field, message, "validate")
            return None
        except RecursionError:
            result.quarantine(origin, None, "(row): value is nested too deeply", "validate")
            return None
        # what pydantic made of the row must still be storable as read: a text cell "1e400"
        # for a float field becomes inf, which must be refused, never stored as null/Infinity
        hazard = find_hazard(record.model_dump(mode="json"))
        if hazard is not None:
            result.quarantine(origin, hazard[0], _hazard_message(hazard), "validate")
            return None
        return record


_DATETIMES = (datetime, AwareDatetime, NaiveDatetime)


def _numeric_datetime(model: type[BaseModel], data: dict[str, Any]) -> str | None:
    """A date-time field given a number (or numeric text): pydantic would read it as epoch
    seconds or milliseconds by its size, a guess that changes what was written."""
    for name, info in model.model_fields.items():
        annotation = _unwrap(info.annotation)
        if not (isinstance(annotation, type) and issubclass(annotation, _DATETIMES)):
            continue
        value = data.get(name)
        if isinstance(value, bool) or value is None:
            continue
        if isinstance(value, (int, float)):
            return name
        if isinstance(value, str):
            try:
                float(value)
            except ValueError:
                continue
            return name
    return None


def _hazard_message(hazard: tuple[str, str]) -> str:
    field, why = hazard
    return f"field {field} {why}" if why.startswith("is ") else f"field {field}: {why}"


def load_records(kind: str, path: Path | str, fmt: str | None = None) -> LoadResult[Envelope]:
    """Load a file of `kind` (see KINDS); raises `UnreadableSource` when it cannot be read."""
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}; use one of {', '.join(KINDS)}")
    return RecordLoader(KINDS[kind], fmt).load(path)


def describe_errors(exc: ValidationError) -> tuple[str | None, str]:
    """(first error's dotted field, every error as `field: message (got ...)` joined by `; `)."""
    errors = exc.errors(include_url=False)
    parts = []
    for err in errors:
        where = _dotted(err["loc"]) or "(row)"
        got = "" if err["type"] == "missing" else f" (got {_preview(err.get('input'))})"
        parts.append(f"{where}: {err['msg']}{got}")
    return (_dotted(errors[0]["loc"]) or None) if errors else None, "; ".join(parts)


def _dotted(loc: tuple[int | str, ...]) -> str:
    return ".".join(str(part) for part in loc)


def _preview(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= _INPUT_PREVIEW else f"{text[:_INPUT_PREVIEW]}…"


def decode_cells(model: type[BaseModel], data: dict[str, Any]) -> dict[str, Any]:
    """Tabular cells are text: decode JSON arrays/objects, but only where the field is not a
    string, so a string that happens to look like JSON stays a string."""
    out: dict[str, Any] = {}
    for name, value in data.items():
        info = model.model_fields.get(name)
        annotation = _unwrap(info.annotation) if info is not None else None
        if isinstance(value, dict) and _is_model(annotation):
            out[name] = decode_cells(annotation, value)
        elif isinstance(value, str) and info is not None and _holds_container(annotation):
            out[name] = _json_or_text(value)
        else:
            out[name] = value
    return out


def _is_model(annotation: Any) -> TypeGuard[type[BaseModel]]:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def _holds_container(annotation: Any) -> bool:
    if annotation is Any or _is_model(annotation):
        return True
    origin = get_origin(annotation) or annotation
    if origin in (dict, list, tuple, set, frozenset):
        return True
    return any(_holds_container(_unwrap(arg)) for arg in get_args(annotation))


def _json_or_text(cell: str) -> Any:
    stripped = cell.strip()
    if not stripped.startswith(("[", "{")):
        return cell
    try:
        return json.loads(stripped, parse_float=parse_float, parse_constant=parse_constant)
    except (ValueError, RecursionError):
        return cell  # pydantic then names the field and the expected type
