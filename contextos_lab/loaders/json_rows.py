"""JSON Lines and JSON rows, parsed so a key that occurs twice in an object is named, not lost."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from contextos_lab.loaders.hazards import parse_constant, parse_float
from contextos_lab.loaders.quarantine import clip
from contextos_lab.loaders.raw_rows import (
    _BOM,
    RawRow,
    UnreadableSource,
    array_items,
    bom_encoding,
    decode_text,
    escaped_byte,
    json_text,
    undecodable,
)

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
    encoding, _ = bom_encoding(handle.peek(4)[:4] if hasattr(handle, "peek") else b"")
    if encoding != "utf-8":
        with handle:
            yield from _wide_jsonl_rows(handle.read(), encoding)
        return
    with handle:
        offset = 0
        for number, line in enumerate(handle, start=1):
            start, offset = offset, offset + len(line)
            body = line.rstrip(b"\r\n")
            if body.startswith(_BOM):  # line 1, or any line of files concatenated with BOMs
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


def _wide_jsonl_rows(data: bytes, encoding: str) -> Iterator[RawRow]:
    """JSON Lines in UTF-16/32 (as its BOM says): decoded whole, then line by line; a line
    holding bytes the encoding cannot decode is quarantined naming it, the others load."""
    text = decode_text(data, "surrogateescape")
    for number, line in enumerate(text.split("\n"), start=1):
        line = line.rstrip("\r")
        if not line.strip():
            continue
        bad = escaped_byte(line)
        if bad is not None:
            yield RawRow(number, clip(line), error=undecodable(encoding, bad))
            continue
        data_, error, field = _parse_json_row(line)
        yield RawRow(number, clip(line), data=data_, error=error, field=field)


# -- JSON ----------------------------------------------------------------------------------


def _json_rows(path: Path, data: bytes) -> Iterator[RawRow]:
    text = _document_text(path, data)
    try:
        value = _loads(text)
    except json.JSONDecodeError as exc:
        raise UnreadableSource(
            path, f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from None
    except RecursionError:
        items = array_items(text)  # one element too deep: read the list element by element
        if items is None:
            raise UnreadableSource(path, "invalid JSON: nested too deeply") from None
        return _json_item_texts(items)
    except ValueError as exc:
        raise UnreadableSource(path, f"invalid JSON: {exc}") from None
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list):
        raise UnreadableSource(
            path, f"expected an array of objects or one object, got {_json_type(value)}"
        )
    return _json_items(value)


def _document_text(path: Path, data: bytes) -> str:
    """The document decoded by its BOM. Stray bytes after it (what `echo >> file` or a CRLF
    conversion leaves after a UTF-16 export) are dropped; any other byte the encoding cannot
    decode makes the file unreadable, naming the encoding and the byte offset."""
    text = decode_text(data, "surrogateescape").rstrip()
    while text and escaped_byte(text[-1]) is not None:
        text = text[:-1].rstrip()
    bad = escaped_byte(text)
    if bad is None:
        return text
    encoding, skip = bom_encoding(data)
    try:
        data[skip:].decode(encoding)
        offset = ""
    except UnicodeDecodeError as exc:
        offset = f" at byte offset {skip + exc.start}"
    raise UnreadableSource(path, undecodable(encoding, bad) + offset)


def _json_item_texts(items: list[str]) -> Iterator[RawRow]:
    """Rows of a list file whose elements are read one by one (`raw_rows.array_items`)."""
    for number, text in enumerate(items, start=1):
        data, error, field = _parse_json_row(text)
        yield RawRow(number, clip(text), data=data, error=error, field=field)


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


def _json_type(value: Any) -> str:
    names = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")
