"""How long a released rule is watched, and how far back its baseline slice reaches (days).

Plain numbers apart from `windows` (which loads the envelopes) so `release --help` and
`monitor --help` show them as defaults without loading pydantic (issue 40).
"""

from __future__ import annotations

WINDOW_DAYS = 14
BASELINE_DAYS = 60
