"""Record files in every encoding a user's tools write, each with the damage that befalls them.

Encodings: UTF-8, UTF-8 with a BOM, UTF-16 LE/BE with their BOMs, cp1252 and Latin-1 (no BOM:
read as UTF-8, so their accented bytes are undecodable). Damage: none, a file cut short, one
stray byte appended (`echo >> file` after an Excel export), a CRLF conversion done on the bytes
(which misaligns UTF-16), a NUL byte inserted. Rows come from `malformed.py`'s generators (row
damage included); used by benchmarks/fuzz_loaders.py and tests/loaders/test_encodings.py.
"""

from __future__ import annotations

import random
from pathlib import Path

from tests.loaders.malformed import BASE_ROWS, Case, _csv, _json, _jsonl, _rows

#: name -> (byte-order mark written, codec)
ENCODINGS: dict[str, tuple[bytes, str]] = {
    "utf-8": (b"", "utf-8"),
    "utf-8-sig": (b"\xef\xbb\xbf", "utf-8"),
    "utf-16-le": (b"\xff\xfe", "utf-16-le"),
    "utf-16-be": (b"\xfe\xff", "utf-16-be"),
    "cp1252": (b"", "cp1252"),
    "latin-1": (b"", "latin-1"),
}
DAMAGE = ("none", "truncated", "stray byte", "crlf", "nul")


def _damaged(data: bytes, damage: str, skip: int, rng: random.Random) -> bytes:
    if damage == "truncated":
        return data[: rng.randrange(skip, len(data) + 1)]
    if damage == "stray byte":
        return data + rng.choice((b"\n", b"\r", b"\x00", b"\xff", b"x"))
    if damage == "crlf":
        return data.replace(b"\n", b"\r\n")
    if damage == "nul":
        at = rng.randrange(skip, len(data) + 1)
        return data[:at] + b"\x00" + data[at:]
    return data


def encoding_case(root: Path, index: int, rng: random.Random, encoding: str, damage: str) -> Case:
    """One record file (CSV, JSON Lines or JSON) in `encoding` with `damage`. Rows and values
    are checked (`rows_in`, `inputs`) only where the bytes still say exactly what was written:
    UTF-8 with or without its BOM, undamaged."""
    kind = rng.choice(list(BASE_ROWS))
    fmt = rng.choice(("csv", "jsonl", "json"))
    case = Case(root / f"e{index}.{fmt}", kind, fmt, None)
    rows, case.damage = _rows(kind, rng, 100_000 + index * 10)
    case.rows_in = len(rows)
    utf8 = {"jsonl": _jsonl, "json": _json, "csv": _csv}[fmt](case, rows, rng)
    bom, codec = ENCODINGS[encoding]
    if codec == "utf-8":
        data = bom + utf8
    else:  # what was written, re-spelled in the encoding (what it cannot spell as "?")
        text = utf8.decode("utf-8", "replace") + "# café ñ €"[:0]
        data = bom + text.encode(codec, "replace")
    exact = codec == "utf-8" and damage == "none"
    if fmt == "jsonl" and exact:
        case.rows_in = sum(1 for line in utf8.split(b"\n") if line.strip())
    if not exact:
        case.rows_in, case.inputs = None, {}
    case.damage.append(f"{encoding}/{damage}")
    case.path.write_bytes(_damaged(data, damage, len(bom), rng))
    return case
