"""Where the feedback record (seed 003) lives: a path and its environment variable, no pydantic.

Apart from `command_record` so `runs --help` can show the default file without loading the
record model (issue 40); `command_record` and `runner` re-export these names.
"""

from __future__ import annotations

import os
from pathlib import Path

#: Where records go unless a path is given or CONTEXTOS_FEEDBACK_RECORD is set.
DEFAULT_RECORD_PATH = Path(".contextos/runs/feedback_record.jsonl")
RECORD_PATH_ENV = "CONTEXTOS_FEEDBACK_RECORD"


def default_record_path() -> Path:
    return Path(os.environ.get(RECORD_PATH_ENV) or DEFAULT_RECORD_PATH)
