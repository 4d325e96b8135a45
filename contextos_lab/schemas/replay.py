"""ReplayPacket (seed 001): the portable contract for replayable evidence."""

from __future__ import annotations

from enum import StrEnum
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from contextos_lab.schemas.base import Envelope


class SourceType(StrEnum):
    replay_case = "replay_case"
    environment_episode = "environment_episode"
    operator_correction = "operator_correction"
    golden_case = "golden_case"
    synthetic = "synthetic"


class SourcePressure(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    source_type: SourceType
    source_ref: str = Field(min_length=1)
    severity: str | None = None


class SideEffectPolicy(StrEnum):
    none = "none"
    dry_run = "dry_run"
    sandboxed = "sandboxed"


class ExpectedReplayOutcome(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    decision: str = Field(min_length=1)
    terminal_state: str | None = None
    properties: dict[str, Any] = Field(default_factory=dict)


class ReplayPacket(Envelope):
    """A case the harness can be re-run on, with what must hold after.

    All packets name the source pressure, pinned context pack, compiled-context hash,
    side-effect policy and expected outcome (seed 001). `case` holds the request and facts.
    """

    id_field: ClassVar[str] = "packet_id"
    store_kind: ClassVar[str] = "replay_packet"

    packet_id: str = Field(min_length=1)
    source_pressure: SourcePressure
    pinned_context_pack: str = Field(min_length=1)
    compiled_context_hash: str = Field(pattern=r"^[0-9a-f]{64}$")
    side_effect_policy: SideEffectPolicy = SideEffectPolicy.none
    expected_outcome: ExpectedReplayOutcome
    case: dict[str, Any] = Field(default_factory=dict)
    forbidden_strings: tuple[str, ...] = Field(
        default=(), description="PII that must never appear in output"
    )
