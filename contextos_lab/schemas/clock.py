"""The time stamp of data that carries no clock.

Trace exports such as tau-bench's and Who&When's have no timestamps. Their records still need an
aware `decided_at`, so loaders put every such record at `NO_CLOCK` (the Unix epoch, which no real
run carries) rather than inventing a timeline from file order; trend fits then decline to run.
"""

from __future__ import annotations

from datetime import UTC, datetime

NO_CLOCK = datetime(1970, 1, 1, tzinfo=UTC)

__all__ = ["NO_CLOCK"]
