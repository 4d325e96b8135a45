"""What admission, append and verification need of a store: its URL, engine and keys.

A Protocol rather than `ExperienceStore` itself, so those modules (which the store calls)
never import the store back: the store package has no import circle, not even a
TYPE_CHECKING one.
"""

from __future__ import annotations

from typing import Protocol

from sqlalchemy import Engine


class StoreHandle(Protocol):
    """The attributes of an `ExperienceStore` its admission, append and verify steps read."""

    url: str
    engine: Engine

    @property
    def signing_key(self) -> bytes: ...

    @property
    def authorised_overriders(self) -> frozenset[str] | None: ...
