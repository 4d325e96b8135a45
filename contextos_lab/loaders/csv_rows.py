"""CSV rows with their raw text; a cut-off or over-long row is quarantined, never padded."""

from __future__ import annotations

import csv
import io
import itertools
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from contextos_lab.loaders.quarantine import clip
from contextos_lab.loaders.raw_rows import (
    RawRow,
    UnreadableSource,
    bom_encoding,
    decode_text,
    escaped_byte,
    undecodable,
)


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

    def rest(self) -> Iterator[str]:
        """The lines not read yet."""
        return self._lines


def _csv_rows(path: Path, data: bytes) -> Iterator[RawRow]:
    # surrogateescape keeps bad bytes visible per cell, so one bad row does not sink the file.
    text = decode_text(data, "surrogateescape")  # by its BOM: UTF-8 unless it says UTF-16/32
    tap = _LineTap(iter(io.StringIO(text, newline="")))
    reader = csv.reader(tap, strict=True)
    try:
        header = next(reader)
    except csv.Error as exc:
        raise UnreadableSource(path, f"the header row is not valid CSV: {exc}") from None
    except StopIteration:  # e.g. a byte-order mark and nothing else
        no_header = "the file has no header row (no text after decoding)"
        raise UnreadableSource(path, no_header) from None
    tap.drain()
    encoding = bom_encoding(data)[0]
    problem = _header_problem(header, encoding)
    if problem:
        raise UnreadableSource(path, problem)
    return _csv_data_rows(reader, tap, header, encoding)


def _header_problem(header: list[str], encoding: str) -> str | None:
    bad = next((b for b in map(escaped_byte, header) if b is not None), None)
    if bad is not None:
        return f"the header row is {undecodable(encoding, bad)}"
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


def _csv_data_rows(
    reader: Any, tap: _LineTap, header: list[str], encoding: str
) -> Iterator[RawRow]:
    """Data rows in order. A malformed row whose parse ran over several lines (an unclosed
    quote swallows the rest of the file) is quarantined as its first line only, and reading
    resumes on the next line, so every later row is still accepted or quarantined itself."""
    old_limit = csv.field_size_limit()
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))  # the 10 MB check is the loader's job
    base = 0  # physical lines before the current reader's first line
    try:
        while True:
            number = base + reader.line_num + 1
            try:
                cells = next(reader)
            except StopIteration:
                return
            except csv.Error as exc:
                lines = tap.drain().splitlines(keepends=True)
                yield RawRow(number, clip("".join(lines[:1])), error=f"malformed CSV: {exc}")
                if len(lines) > 1:  # re-read what the bad row swallowed, line by line
                    base = number
                    tap = _LineTap(itertools.chain(lines[1:], tap.rest()))
                    reader = csv.reader(tap, strict=True)
                continue
            raw = clip(tap.drain())
            if not cells or cells == [""]:
                continue
            yield _csv_row(number, raw, header, cells, encoding)
    finally:
        csv.field_size_limit(old_limit)


def _csv_row(number: int, raw: str, header: list[str], cells: list[str], encoding: str) -> RawRow:
    for i, cell in enumerate(cells):  # bytes the file's encoding cannot decode: that reason first
        bad = escaped_byte(cell)
        if bad is not None:
            field = header[i] if i < len(header) else (header[-1] if header else None)
            return RawRow(number, raw, field=field, error=undecodable(encoding, bad))
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
        if cell == "":
            continue
        *parents, leaf = name.split(".")
        target = data
        for part in parents:
            target = target.setdefault(part, {})
        target[leaf] = cell
    return RawRow(number, raw, data=data)
