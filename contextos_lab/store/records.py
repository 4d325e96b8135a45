"""What the store hands back: stored rows, append outcomes, refusals and verify reports."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from contextos_lab.errors import ContextosError

if TYPE_CHECKING:  # the envelopes load where a row is read as one: `store verify` needs none
    from contextos_lab.schemas.base import Envelope


class StoreRefusal(ContextosError, ValueError):
    """A write the store will not take; nothing was written. Names the artifact and why."""

    def __init__(self, kind: str, artifact_id: str, reason: str) -> None:
        self.kind, self.artifact_id, self.reason = kind, artifact_id, reason
        super().__init__(f"refused {kind} {artifact_id}: {reason}")


@dataclass(frozen=True)
class StoredRow:
    seq: int
    kind: str
    artifact_id: str
    body: str
    content_sha256: str
    prev_row_sha256: str
    row_sha256: str
    upstream_ids: tuple[str, ...]
    upstream_sha256: str | None
    written_at: str

    def envelope(self) -> Envelope:
        from contextos_lab.schemas.envelopes import ENVELOPES_BY_KIND

        return ENVELOPES_BY_KIND[self.kind].model_validate_json(self.body)


@dataclass(frozen=True)
class AppendOutcome:
    artifact_id: str
    kind: str
    status: Literal["stored", "unchanged"]
    seq: int | None
    artifact: Envelope


@dataclass
class VerifyReport:
    ok: bool
    rows_checked: int
    first_bad_seq: int | None = None
    first_bad_id: str | None = None
    reason: str | None = None
    warnings: list[str] = field(default_factory=list)
    #: A stable name for what failed (`rows_deleted`, `rolled_back`, `row_mac_invalid`, ...).
    verdict: str | None = None

    def __str__(self) -> str:
        if self.ok and self.verdict == "empty":
            return "ok: empty store: nothing was ever written, so there is nothing to verify"
        if self.ok:
            text = f"ok: {self.rows_checked} rows, chain, seal, anchor and signatures hold"
            return "; ".join([text, *(f"warning: {w}" for w in self.warnings)])
        where = (
            f"row seq={self.first_bad_seq} id={self.first_bad_id}: " if self.first_bad_id else ""
        )
        return (
            f"TAMPERED [{self.verdict}]: {where}{self.reason} "
            f"({self.rows_checked} rows checked before it)"
        )
