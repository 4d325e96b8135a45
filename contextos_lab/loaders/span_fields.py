"""Reading one exported span's own fields: ids, times, status, each refused with its field.

The export readers share these so that the same value reads the same in every tool's shape:
OpenTelemetry's Python SDK writes ids as `0x…` hex, OTLP/JSON and Phoenix as bare hex, so ids
are compared without the prefix (spans of one trace from two exporters meet). Times are ISO 8601
text or datetimes; an integer is read as nanoseconds only where the tool documents nanoseconds
(OTLP, MLflow), never guessed from its size.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from functools import wraps
from typing import Any, Literal, TypeVar

from contextos_lab.errors import ContextosError
from contextos_lab.loaders.guard import Problem

T = TypeVar("T")
Status = Literal["OK", "ERROR", "UNSET"]
_ERROR_WORDS = {"ERROR", "STATUS_CODE_ERROR", "2", "FAILED", "FAILURE"}
_OK_WORDS = {"OK", "STATUS_CODE_OK", "1", "SUCCESS", "SUCCEEDED"}


class Refused(ContextosError, ValueError):
    """A field of one exported row that cannot be read: the row is quarantined with it."""

    def __init__(self, field: str | None, message: str) -> None:
        super().__init__(message)
        self.field, self.message = field, message


def refusing(read: Callable[[Any], T]) -> Callable[[Any], tuple[T | None, Problem]]:
    """`read` in the (value, problem) form `guard.guarded` expects, `Refused` as the problem."""

    @wraps(read)
    def wrapped(raw: Any) -> tuple[T | None, Problem]:
        try:
            return read(raw), (None, "")
        except Refused as exc:
            return None, (exc.field, exc.message)

    return wrapped


def span_id(value: Any, field: str) -> str:
    """An id as comparable text (`0x` prefix and case dropped from hex ids)."""
    if value is None or value == "" or isinstance(value, (bool, Mapping, list)):
        raise Refused(field, f"{field} missing or not an id: {value!r}")
    text = str(value).strip()
    text = text[2:].lower() if text[:2].lower() == "0x" else text
    if not text:
        raise Refused(field, f"{field} is empty: {value!r}")
    return text


def parent_id(value: Any) -> str | None:
    if value is None or value == "" or value != value:  # NaN: an empty Parquet/CSV cell
        return None
    return span_id(value, "parent_id")


def when(value: Any, field: str, *, nanos: bool = False) -> datetime:
    """A timestamp: datetime, ISO 8601 text, or (`nanos`) integer nanoseconds since the epoch."""
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if nanos and not isinstance(value, bool) and isinstance(value, (int, str)):
        text = str(value).strip()
        if text.isdigit():
            return datetime.fromtimestamp(int(text) / 1e9, tz=UTC)
    if isinstance(value, str) and value.strip():
        try:
            at = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            pass
        else:
            return at if at.tzinfo else at.replace(tzinfo=UTC)
    unit = "ISO 8601 date-time or integer nanoseconds" if nanos else "ISO 8601 date-time"
    raise Refused(field, f"{field} is not a {unit}: {value!r}")


def maybe_when(value: Any, field: str, *, nanos: bool = False) -> datetime | None:
    if value is None or value == "" or value != value:
        return None
    return when(value, field, nanos=nanos)


def status(code: Any) -> Status:
    """OK / ERROR / UNSET from any tool's status word or OTLP's numeric code."""
    if isinstance(code, Mapping):
        code = code.get("status_code", code.get("code"))
    word = str(code).strip().upper().removeprefix("STATUSCODE.") if code is not None else ""
    if word in _ERROR_WORDS:
        return "ERROR"
    return "OK" if word in _OK_WORDS else "UNSET"


__all__ = ["Refused", "Status", "maybe_when", "parent_id", "refusing", "span_id", "status", "when"]
