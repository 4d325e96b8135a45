"""The raw text of a trace step, kept on its span so reviewers can read the trace itself.

Reviewers judge a failure from the turns around the failing step, not from a summary, so the
trajectory loaders copy each turn's text (clipped) onto its span under `CONTENT`.
"""

from __future__ import annotations

#: Span attribute holding the turn's text (clipped to CONTENT_CHARS characters).
CONTENT = "contextos.content"
CONTENT_CHARS = 4000

__all__ = ["CONTENT", "CONTENT_CHARS"]
