"""What a loader could not accept, where it was and why, and the `FILE.quarantine.jsonl` beside it.

Quarantine file policy: the file always reflects the last ingest of its source. It is written
(atomically: temp file + `os.replace`) when that run quarantined at least one row, and an old
one is removed when the run quarantined none, so a stale file never suggests a problem that
a corrected source no longer has.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Generic, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from contextos_lab.schemas.base import E, EnvelopeList, canonical_json

if TYPE_CHECKING:  # pandas only for the frame view: reading and ingesting rows need none
    import pandas as pd

#: Raw text kept per quarantined row; enough to recognise the row, small enough for a 10 MB one.
RAW_LIMIT = 2048

Locator = Literal["line", "row"]
Stage = Literal["parse", "validate", "duplicate", "store"]


def clip(text: str, limit: int = RAW_LIMIT) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}…[truncated; {len(text)} characters in all]"


def printable(text: str) -> str:
    """`text` with lone surrogates (undecodable bytes kept by `surrogateescape`, or `\\ud800`
    escapes in JSON) spelled as `\\udcff`, so it can always be written as UTF-8."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


class QuarantinedRow(BaseModel):
    """One refused row: `line` is a 1-based file line (JSONL, CSV; the CSV header is line 1)
    or a 1-based row number (JSON arrays, Parquet), as `locator` says. `field` is a dotted
    path, or None when the whole row is the problem (bad bytes, bad JSON, not an object)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    file: str
    locator: Locator
    line: int = Field(ge=1)
    field: str | None
    message: str
    stage: Stage
    raw: str = ""
    #: Rows this entry stands for: 1 for a row; every row a whole refused file held (a trace
    #: file of 15 trajectories refused as unreadable counts 15; an empty file 0), so no row
    #: goes uncounted.
    rows: int = Field(default=1, ge=0)

    @field_validator("file", "field", "message", "raw", mode="before")
    @classmethod
    def _printable(cls, value: object) -> object:
        return printable(value) if isinstance(value, str) else value

    def describe(self) -> str:
        where = f"{self.locator} {self.line}"
        if self.field is None or self.message.startswith(f"{self.field}:"):
            return f"{where}: {self.message}"
        return f"{where}: {self.field}: {self.message}"


@dataclass(frozen=True)
class Origin:
    """Where an accepted record came from, so a later store refusal can point at its row."""

    line: int
    raw: str


@dataclass
class LoadResult(Generic[E]):
    """The records a source yielded and the rows it did not: the `Loader` result
    (docs/design.md, "Seams")."""

    source: Path
    format: str
    locator: Locator
    records: EnvelopeList[E]
    quarantined: list[QuarantinedRow] = field(default_factory=list)
    origins: dict[str, Origin] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def quarantine(
        self, origin: Origin, field_: str | None, message: str, stage: Stage
    ) -> QuarantinedRow:
        row = QuarantinedRow(
            file=str(self.source),
            locator=self.locator,
            line=origin.line,
            field=field_,
            message=message,
            stage=stage,
            raw=clip(origin.raw),
        )
        self.quarantined.append(row)
        return row

    @property
    def quarantined_rows(self) -> int:
        """Rows refused, a whole refused file counted by the rows it held."""
        return sum(q.rows for q in self.quarantined)

    def summary(self) -> str:
        return f"accepted {len(self.records)}, quarantined {self.quarantined_rows}"

    def quarantined_frame(self) -> pd.DataFrame:
        import pandas as pd

        columns = list(QuarantinedRow.model_fields)
        return pd.DataFrame([q.model_dump() for q in self.quarantined], columns=columns)


def quarantine_path(source: Path) -> Path:
    return source.with_name(f"{source.name}.quarantine.jsonl")


def write_quarantine(source: Path, rows: Sequence[QuarantinedRow]) -> Path | None:
    """Write `SOURCE.quarantine.jsonl` (or remove a stale one when `rows` is empty)."""
    target = quarantine_path(source)
    if not rows:
        with contextlib.suppress(FileNotFoundError):
            target.unlink()
        return None
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            for row in rows:
                fh.write(canonical_json(row.model_dump(mode="json")) + "\n")
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    return target
