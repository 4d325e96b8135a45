"""What every format reader yields or raises: a `RawRow` per row, `UnreadableSource` per file."""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, datetime
from itertools import pairwise
from pathlib import Path
from typing import Any

from contextos_lab.errors import ContextosError

_BOM = b"\xef\xbb\xbf"
#: Byte-order marks and the encodings they announce (UTF-32 before UTF-16: FF FE 00 00).
_BOMS = (
    (b"\xff\xfe\x00\x00", "utf-32-le"),
    (b"\x00\x00\xfe\xff", "utf-32-be"),
    (_BOM, "utf-8"),
    (b"\xff\xfe", "utf-16-le"),
    (b"\xfe\xff", "utf-16-be"),
)
#: A byte-order mark at the start of a line (after blanks): files concatenated by tools that
#: write one per file, or one per appended line.
_LINE_BOM = re.compile(r"(?m)^([ \t\r]*)\ufeff")


#: The error handler `decode_text` uses for "surrogateescape": each undecodable byte as the
#: lone surrogate U+DC00 + byte, as surrogateescape does, but for any byte. Python's own refuses
#: bytes below 0x80, and the stray newline `echo >> file` leaves after a UTF-16 export is one.
ESCAPE = "contextos-escape"
_ESCAPED = re.compile("[\udc00-\udcff]")


def _escape_any_byte(exc: UnicodeError) -> tuple[str, int]:
    if not isinstance(exc, UnicodeDecodeError):
        raise exc
    return "".join(chr(0xDC00 + b) for b in exc.object[exc.start : exc.end]), exc.end


codecs.register_error(ESCAPE, _escape_any_byte)


def bom_encoding(data: bytes) -> tuple[str, int]:
    """(encoding, BOM length) its byte-order mark names: ("utf-8", 0) without one."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return encoding, len(bom)
    return "utf-8", 0


def decode_text(data: bytes, errors: str = "strict") -> str:
    """Text decoded by its byte-order mark (UTF-8 when there is none), every BOM stripped
    before anything reads it (format detection included): at the start of the file or of any
    line. With `errors="strict"` undecodable bytes raise UnicodeDecodeError; with
    "surrogateescape" each becomes U+DC00 + byte (`escaped_byte` finds it), whatever the byte."""
    encoding, skip = bom_encoding(data)
    handler = ESCAPE if errors == "surrogateescape" else errors
    text = data[skip:].decode(encoding, handler)
    return _LINE_BOM.sub(r"\1", text) if "\ufeff" in text else text


def escaped_byte(text: str) -> int | None:
    """The first undecodable byte `decode_text(..., "surrogateescape")` left in `text`."""
    found = _ESCAPED.search(text)
    return ord(found.group()) - 0xDC00 if found else None


def undecodable(encoding: str, byte: int) -> str:
    """The quarantine reason for bytes that do not decode in the file's encoding."""
    named = "" if encoding == "utf-8" else " (the encoding its byte-order mark names)"
    return f"not valid {encoding.upper()}{named}: byte 0x{byte:02x}"


class UnreadableSource(ContextosError):
    """The file cannot be read at all; nothing was loaded from it."""

    def __init__(self, path: Path | str, reason: str) -> None:
        self.path, self.reason = Path(path), reason
        super().__init__(f"{path}: {reason}")


@dataclass(frozen=True)
class RawRow:
    """A row as read: `data` when it parsed to an object, else `error` (and maybe `field`)."""

    number: int
    raw: str
    data: dict[str, Any] | None = None
    error: str | None = None
    field: str | None = None


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


def rows_held(path: Path) -> int:
    """How many rows (records, runs, lines) a file holds, read tolerantly: what a whole-file
    refusal counts, so a file of 15 runs refused as unreadable accounts for 15 rows.

    A JSON array counts its top-level elements (by a scan of brackets and strings, so a value
    nested too deeply to parse, a bad escape or a cut-off tail still counts); any other JSON
    value is one row; JSON lines count their non-blank lines; Parquet its metadata's rows; an
    empty file (blank, or a byte-order mark alone) none. Never raises.
    """
    try:
        data = Path(path).read_bytes()
    except OSError:
        return 1
    if data.startswith(b"PAR1"):
        try:
            import pyarrow.parquet as pq

            return max(1, pq.ParquetFile(path).metadata.num_rows)
        except Exception:  # a cut or fake Parquet file: one unreadable file
            return 1
    text = decode_text(data, "replace").strip()
    if not text:
        return 0
    if text.startswith("["):
        return max(1, _array_elements(text))
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) > 1:
        return len(lines)
    return 1


def _array_elements(text: str) -> int:
    """Top-level elements of a JSON array, counted without parsing (`_top_level`): none when
    no element holds anything but blanks."""
    commas, end = _top_level(text)
    parts = _elements(text, commas, end)
    return len(commas) + 1 if any(part.strip() for part in parts) else 0


def array_items(text: str) -> list[str] | None:
    """The texts of a JSON array's top-level elements, found by a scan of brackets and strings
    (iterative: no depth limit), or None when `text` is not one closed array. What a list file
    is read by when the whole document cannot be parsed (one element nested too deeply), so
    that element is quarantined alone and its neighbours still load."""
    text = text.strip()
    if not text.startswith("["):
        return None
    commas, end = _top_level(text)
    if end is None or text[end + 1 :].strip():
        return None
    return [t.strip() for t in _elements(text, commas, end) if t.strip()]


def _top_level(text: str) -> tuple[list[int], int | None]:
    """(offsets of the top-level commas of the array `text` opens with "[", offset of its
    closing bracket or None when it never closes): one scan of brackets and strings, iterative
    so no depth limit, shared by the row count and the element reader. Nothing after the
    close is read."""
    commas: list[int] = []
    depth, in_string, escaped = 0, False, False
    for i, ch in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
            if depth == 0:
                return commas, i
        elif ch == "," and depth == 1:
            commas.append(i)
    return commas, None


def _elements(text: str, commas: list[int], end: int | None) -> Iterator[str]:
    """The texts between the opening bracket, the top-level commas and the close (or the end)."""
    bounds = [0, *commas, len(text) if end is None else end]
    return (text[a + 1 : b] for a, b in pairwise(bounds))
