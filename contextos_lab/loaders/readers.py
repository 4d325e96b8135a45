"""Raw row readers: bytes on disk to (row number, dict | why not), one format each.

Readers know nothing of the schemas; they only say where each row starts and why a row could
not even be parsed. A row-level problem becomes a `RawRow` with `error` set (the loader
quarantines it and reads on); `UnreadableSource` is raised only when the file as a whole
cannot be read (missing, a directory, no permission, not Parquet, a JSON document that does
not parse), because then there are no rows to speak of.

A JSON object (JSON Lines row, JSON array item, or any object nested in one) in which a key
occurs twice is quarantined naming that key: `json.loads` would keep the last value silently.

Tabular formats (CSV, Parquet) have no null that differs from "absent": an empty CSV cell or
a Parquet null means the field is missing, so the model's default applies. A CSV row with fewer
(or more) cells than the header is quarantined, not padded: a cut-off row is not a row of
empty cells.
"""

from __future__ import annotations

import csv
import io
import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import IO, Any, Literal, Protocol, get_args, runtime_checkable

import pyarrow as pa
import pyarrow.parquet as pq

from contextos_lab.loaders.hazards import parse_constant, parse_float
from contextos_lab.loaders.quarantine import E, LoadResult, Locator, clip

Format = Literal["jsonl", "json", "csv", "parquet"]
FORMATS: tuple[str, ...] = get_args(Format)
EXTENSIONS: dict[str, Format] = {
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "json",
    ".csv": "csv",
    ".parquet": "parquet",
    ".pq": "parquet",
}
LOCATORS: dict[Format, Locator] = {"jsonl": "line", "csv": "line", "json": "row", "parquet": "row"}
#: Formats whose cells carry nested values as JSON text (decoded against the model later).
TABULAR: frozenset[Format] = frozenset({"csv", "parquet"})
_BOM = b"\xef\xbb\xbf"
_PARQUET_BATCH = 1024


class UnreadableSource(Exception):
    """The file cannot be read at all; nothing was loaded from it."""

    def __init__(self, path: Path | str, reason: str) -> None:
        self.path, self.reason = Path(path), reason
        super().__init__(f"{path}: {reason}")


@runtime_checkable
class Loader(Protocol[E]):
    """The DESIGN.md loader seam: a source in, valid records and quarantined rows out."""

    def load(self, source: Path | str) -> LoadResult[E]: ...


@dataclass(frozen=True)
class RawRow:
    """A row as read: `data` when it parsed to an object, else `error` (and maybe `field`)."""

    number: int
    raw: str
    data: dict[str, Any] | None = None
    error: str | None = None
    field: str | None = None


@dataclass
class RowSource:
    path: Path
    format: Format
    rows: Iterator[RawRow]
    empty: bool = False

    @property
    def locator(self) -> Locator:
        return LOCATORS[self.format]


def detect_format(path: Path, override: str | None = None) -> Format:
    if override is not None:
        if override not in FORMATS:
            raise UnreadableSource(path, f"unknown format {override!r}; use one of {FORMATS}")
        return override  # type: ignore[return-value]
    fmt = EXTENSIONS.get(path.suffix.lower())
    if fmt is None:
        known = ", ".join(EXTENSIONS)
        raise UnreadableSource(
            path,
            f"cannot tell the format from {path.suffix or 'no extension'!r} ({known}); "
            "pass --format",
        )
    return fmt


def open_rows(path: Path | str, fmt: str | None = None) -> RowSource:
    """Check the file can be read and return its rows (read lazily where the format allows)."""
    path = Path(path)
    chosen = detect_format(path, fmt)
    try:
        if path.is_dir():
            raise UnreadableSource(path, "is a directory, not a file")
        handle = path.open("rb")
    except FileNotFoundError:
        raise UnreadableSource(path, "no such file") from None
    except OSError as exc:
        raise UnreadableSource(path, exc.strerror or str(exc)) from exc
    if path.stat().st_size == 0:
        handle.close()
        return RowSource(path, chosen, iter(()), empty=True)
    if chosen == "jsonl":
        return RowSource(path, chosen, _jsonl_rows(handle))
    if chosen == "parquet":
        handle.close()
        return RowSource(path, chosen, _parquet_rows(path))
    with handle:
        data = handle.read()
    if not data.removeprefix(_BOM).strip():
        return RowSource(path, chosen, iter(()), empty=True)
    if chosen == "json":
        return RowSource(path, chosen, _json_rows(path, data))
    return RowSource(path, chosen, _csv_rows(path, data))


# -- JSON Lines ----------------------------------------------------------------------------


class _RepeatedKeys(dict[str, Any]):
    """A JSON object in which a key occurs more than once (`repeated`: its dotted path)."""

    repeated: str


def _object_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """`object_pairs_hook`: a plain dict, or `_RepeatedKeys` naming the first repeated key
    (here or in a nested object) instead of letting the last value silently win."""
    out: dict[str, Any] = {}
    repeated: str | None = None
    for key, value in pairs:
        if repeated is None:
            if key in out:
                repeated = key
            else:
                inner = repeated_key(value)
                repeated = f"{key}.{inner}" if inner is not None else None
        out[key] = value
    if repeated is None:
        return out
    flagged = _RepeatedKeys(out)
    flagged.repeated = repeated
    return flagged


def repeated_key(value: Any) -> str | None:
    """Dotted path of a key that occurred twice in a JSON object parsed by this module."""
    if isinstance(value, _RepeatedKeys):
        return value.repeated
    if isinstance(value, list):
        for i, item in enumerate(value):
            inner = repeated_key(item)
            if inner is not None:
                return f"{i}.{inner}"
    return None


def _repeated_message(path: str) -> str:
    return f"key {path!r} occurs more than once in the object (which value is meant?)"


def _loads(text: str) -> Any:
    # non-finite numbers are kept as flagged text, so the loader can name their field
    return json.loads(
        text,
        parse_float=parse_float,
        parse_constant=parse_constant,
        object_pairs_hook=_object_pairs,
    )


def parse_json_object(text: str) -> tuple[dict[str, Any] | None, str | None]:
    """(object, None) or (None, why not): one JSON value that must be an object, in which no
    key occurs twice (JSON would otherwise keep only the last value, silently)."""
    data, error, _ = _parse_json_row(text)
    return data, error


def _parse_json_row(text: str) -> tuple[dict[str, Any] | None, str | None, str | None]:
    """(object, error, field): `field` names a repeated key."""
    try:
        value = _loads(text)
    except json.JSONDecodeError as exc:
        if exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated string"):
            return None, f"JSON ends early at column {exc.colno} (truncated?): {exc.msg}", None
        return None, f"invalid JSON at column {exc.colno}: {exc.msg}", None
    except ValueError as exc:
        return None, f"invalid JSON: {exc}", None
    except RecursionError:
        return None, "JSON is nested too deeply", None
    if not isinstance(value, dict):
        return None, f"expected a JSON object, got {_json_type(value)}", None
    repeated = repeated_key(value)
    if repeated is not None:
        return None, _repeated_message(repeated), repeated
    return value, None, None


def _jsonl_rows(handle: IO[bytes]) -> Iterator[RawRow]:
    """Binary, line by line: one bad line (bytes or JSON) never hides the lines after it."""
    with handle:
        offset = 0
        for number, line in enumerate(handle, start=1):
            start, offset = offset, offset + len(line)
            body = line.rstrip(b"\r\n")
            if number == 1 and body.startswith(_BOM):
                body, start = body[len(_BOM) :], start + len(_BOM)
            if not body.strip():
                continue
            try:
                text = body.decode("utf-8")
            except UnicodeDecodeError as exc:
                bad = body[exc.start]
                yield RawRow(
                    number,
                    clip(body.decode("utf-8", "replace")),
                    error=f"not valid UTF-8: byte 0x{bad:02x} at byte offset {start + exc.start} "
                    f"of the file (column {exc.start + 1} of the line)",
                )
                continue
            data, error, field = _parse_json_row(text)
            yield RawRow(number, clip(text), data=data, error=error, field=field)


# -- JSON ----------------------------------------------------------------------------------


def _json_rows(path: Path, data: bytes) -> Iterator[RawRow]:
    try:
        text = data.removeprefix(_BOM).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UnreadableSource(
            path, f"not valid UTF-8: byte 0x{data[exc.start]:02x} at byte offset {exc.start}"
        ) from None
    try:
        value = _loads(text)
    except json.JSONDecodeError as exc:
        raise UnreadableSource(
            path, f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from None
    except (ValueError, RecursionError) as exc:
        raise UnreadableSource(path, f"invalid JSON: {exc or 'nested too deeply'}") from None
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list):
        raise UnreadableSource(
            path, f"expected an array of objects or one object, got {_json_type(value)}"
        )
    return _json_items(value)


def _json_items(items: list[Any]) -> Iterator[RawRow]:
    for number, item in enumerate(items, start=1):
        raw = clip(json_text(item))
        repeated = repeated_key(item)
        if repeated is not None:
            yield RawRow(number, raw, field=repeated, error=_repeated_message(repeated))
        elif isinstance(item, dict):
            yield RawRow(number, raw, data=item)
        else:
            yield RawRow(number, raw, error=f"expected a JSON object, got {_json_type(item)}")


# -- CSV -----------------------------------------------------------------------------------


class _LineTap:
    """Iterates lines for `csv.reader` and keeps them, so each row's raw text is known."""

    def __init__(self, lines: Iterator[str]) -> None:
        self._lines = lines
        self._taken: list[str] = []

    def __iter__(self) -> _LineTap:
        return self

    def __next__(self) -> str:
        line = next(self._lines)
        self._taken.append(line)
        return line

    def drain(self) -> str:
        text = "".join(self._taken)
        self._taken.clear()
        return text


def _csv_rows(path: Path, data: bytes) -> Iterator[RawRow]:
    # surrogateescape keeps bad bytes visible per cell, so one bad row does not sink the file.
    text = data.removeprefix(_BOM).decode("utf-8", "surrogateescape")
    tap = _LineTap(iter(io.StringIO(text, newline="")))
    reader = csv.reader(tap, strict=True)
    try:
        header = next(reader)
    except csv.Error as exc:
        raise UnreadableSource(path, f"the header row is not valid CSV: {exc}") from None
    tap.drain()
    problem = _header_problem(header)
    if problem:
        raise UnreadableSource(path, problem)
    return _csv_data_rows(reader, tap, header)


def _header_problem(header: list[str]) -> str | None:
    if any(_bad_bytes(name) for name in header):
        return "the header row is not valid UTF-8"
    for i, name in enumerate(header, start=1):
        if not name.strip():
            return f"column {i} of the header has no name"
    seen: set[str] = set()
    for name in header:
        if name in seen:
            return f"column {name!r} appears twice in the header"
        seen.add(name)
    for name in header:
        for other in header:
            if other.startswith(f"{name}."):
                return f"column {name!r} clashes with the nested column {other!r}"
    return None


def _csv_data_rows(reader: Any, tap: _LineTap, header: list[str]) -> Iterator[RawRow]:
    old_limit = csv.field_size_limit()
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))  # the 10 MB check is the loader's job
    try:
        while True:
            number = reader.line_num + 1
            try:
                cells = next(reader)
            except StopIteration:
                return
            except csv.Error as exc:
                yield RawRow(number, clip(tap.drain()), error=f"malformed CSV: {exc}")
                continue
            raw = clip(tap.drain())
            if not cells or cells == [""]:
                continue
            yield _csv_row(number, raw, header, cells)
    finally:
        csv.field_size_limit(old_limit)


def _csv_row(number: int, raw: str, header: list[str], cells: list[str]) -> RawRow:
    if len(cells) > len(header):
        return RawRow(
            number, raw, error=f"row has {len(cells)} cells; the header has {len(header)}"
        )
    if len(cells) < len(header):
        # a CSV writer writes every column (empty cells included): fewer means a cut-off row,
        # whose missing fields must not quietly take the model's defaults
        return RawRow(
            number,
            raw,
            error=f"row has {len(cells)} cells; the header has {len(header)} (truncated?)",
        )
    data: dict[str, Any] = {}
    for name, cell in zip(header, cells, strict=False):
        bad = _bad_bytes(cell)
        if bad is not None:
            return RawRow(number, raw, field=name, error=f"not valid UTF-8: byte 0x{bad:02x}")
        if cell == "":
            continue
        *parents, leaf = name.split(".")
        target = data
        for part in parents:
            target = target.setdefault(part, {})
        target[leaf] = cell
    return RawRow(number, raw, data=data)


def _bad_bytes(text: str) -> int | None:
    """The first undecodable byte that surrogateescape smuggled into `text`, if any."""
    for ch in text:
        if "\udc80" <= ch <= "\udcff":
            return ord(ch) - 0xDC00
    return None


# -- Parquet -------------------------------------------------------------------------------


def _parquet_rows(path: Path) -> Iterator[RawRow]:
    try:
        parquet = pq.ParquetFile(path)
    except (pa.ArrowException, OSError) as exc:
        raise UnreadableSource(path, f"not a readable Parquet file: {exc}") from None
    return _parquet_batches(path, parquet)


def _parquet_batches(path: Path, parquet: pq.ParquetFile) -> Iterator[RawRow]:
    number = 0
    try:
        for batch in parquet.iter_batches(batch_size=_PARQUET_BATCH):
            for row in batch.to_pylist():
                number += 1
                yield RawRow(number, clip(json_text(row)), data=_drop_nulls(row))
    except (pa.ArrowException, OSError) as exc:
        raise UnreadableSource(path, f"Parquet data unreadable after row {number}: {exc}") from None


def _drop_nulls(value: dict[str, Any]) -> dict[str, Any]:
    return {
        k: _drop_nulls(v) if isinstance(v, dict) else v for k, v in value.items() if v is not None
    }


# -- shared --------------------------------------------------------------------------------


def json_text(value: Any) -> str:
    """JSON for a row's raw text; datetimes and bytes (Parquet) shown as text."""
    try:
        return json.dumps(value, ensure_ascii=False, default=_jsonable, sort_keys=True)
    except (RecursionError, ValueError, TypeError):
        return "(a value too deeply nested or too odd to show)"


def _jsonable(value: Any) -> str:
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def _json_type(value: Any) -> str:
    names = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")
