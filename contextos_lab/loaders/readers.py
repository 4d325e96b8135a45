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

Each format's reader lives in its own module (`json_rows`, `csv_rows`, `parquet_rows`) over the
shared `raw_rows`; this one names the formats, picks one and opens the file.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

from contextos_lab.loaders.csv_rows import (
    _csv_data_rows,
    _csv_row,
    _csv_rows,
    _header_problem,
    _LineTap,
)
from contextos_lab.loaders.json_rows import (
    _json_items,
    _json_rows,
    _json_type,
    _jsonl_rows,
    _loads,
    _object_pairs,
    _parse_json_row,
    _repeated_message,
    _RepeatedKeys,
    parse_json_object,
    repeated_key,
)
from contextos_lab.loaders.kinds import FORMATS, Format
from contextos_lab.loaders.parquet_rows import (
    _PARQUET_BATCH,
    _drop_nulls,
    _parquet_batches,
    _parquet_rows,
)
from contextos_lab.loaders.quarantine import E, LoadResult, Locator
from contextos_lab.loaders.raw_rows import _BOM, RawRow, UnreadableSource, _jsonable, json_text

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


@runtime_checkable
class Loader(Protocol[E]):
    """The loader seam (docs/design.md, "Seams"): a source in, valid records and
    quarantined rows out."""

    def load(self, source: Path | str) -> LoadResult[E]: ...


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


#: Names this module has always offered (the private ones too); the format readers and the
#: shared row types now live in json_rows, csv_rows, parquet_rows and raw_rows.
__all__ = [
    "EXTENSIONS",
    "FORMATS",
    "LOCATORS",
    "TABULAR",
    "_BOM",
    "_PARQUET_BATCH",
    "Format",
    "Loader",
    "RawRow",
    "RowSource",
    "UnreadableSource",
    "_LineTap",
    "_RepeatedKeys",
    "_csv_data_rows",
    "_csv_row",
    "_csv_rows",
    "_drop_nulls",
    "_header_problem",
    "_json_items",
    "_json_rows",
    "_json_type",
    "_jsonable",
    "_jsonl_rows",
    "_loads",
    "_object_pairs",
    "_parquet_batches",
    "_parquet_rows",
    "_parse_json_row",
    "_repeated_message",
    "detect_format",
    "json_text",
    "open_rows",
    "parse_json_object",
    "repeated_key",
]
