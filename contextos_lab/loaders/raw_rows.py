"""What every format reader yields or raises: a `RawRow` per row, `UnreadableSource` per file."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any

_BOM = b"\xef\xbb\xbf"


class UnreadableSource(Exception):
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
