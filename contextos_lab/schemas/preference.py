"""Preference feedback: "A's answer was better than B's", signed like an override.

Two traces or outputs (`a_id`, `b_id`) of two things being compared (`a_subject`, `b_subject`:
a config / trial id, a decision key, a model profile...), which one was preferred or a tie, on
which criterion, by whom. Signed with the store's key like a FeedbackEntry (HMAC-SHA256 of the
canonical entry without its signature), immutable once stored. Bradley-Terry win rates per
subject come from `contextos_lab.insights.preferences`.
"""

from __future__ import annotations

from enum import StrEnum
from typing import ClassVar

from pydantic import AwareDatetime, Field, model_validator

from contextos_lab.schemas.base import Envelope
from contextos_lab.schemas.ids import PreferenceId


class Preferred(StrEnum):
    a = "a"
    b = "b"
    tie = "tie"


class PreferenceEntry(Envelope):
    """One signed pairwise judgement between two outputs."""

    id_field: ClassVar[str] = "preference_id"
    store_kind: ClassVar[str] = "preference_entry"

    preference_id: PreferenceId
    a_id: str = Field(min_length=1, description="trace or output id of the first side")
    b_id: str = Field(min_length=1, description="trace or output id of the second side")
    a_subject: str = Field(min_length=1, description="what produced A (config, trial, key)")
    b_subject: str = Field(min_length=1, description="what produced B")
    preferred: Preferred
    criterion: str = Field(min_length=1, examples=["helpfulness", "policy_compliance"])
    decision_key: str | None = None
    comment: str | None = None
    signed_by: str = Field(min_length=1)
    signed_at: AwareDatetime
    signature: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")

    @model_validator(mode="after")
    def _two_sides(self) -> PreferenceEntry:
        if self.a_id == self.b_id:
            raise ValueError("a_id and b_id name the same output: nothing was compared")
        return self
