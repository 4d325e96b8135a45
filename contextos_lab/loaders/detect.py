"""Which trace format a file holds, read from its content, never from its path.

A folder can be renamed or moved (`tau-bench/` → `restaurant/`, `Hand-Crafted/` → `handoff/`)
without changing what is detected, so keys, ids and splits stay the same. Each file is judged by
its first JSON value (the first element of a list, the first line of JSON lines, the first row
of a parquet file's columns):

- `tau-bench`: a run with `traj`/`trajectory` and a `reward` (or `info.reward_info`);
- `who-and-when`: a multi-agent run's `history` of turns (`content` + `name`/`role`), with or
  without the annotation (`mistake_agent`/`mistake_step`/`mistake_reason`);
- `otlp`: an OTLP/JSON request (`resourceSpans`);
- `inspect`: an Inspect AI eval log (a `.eval` zip archive, or JSON with `eval` and `version`);
- `unknown`: anything else (the OTLP reader then quarantines it with its reason).
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from contextos_lab.loaders.guard import read_text

KINDS = ("tau-bench", "who-and-when", "otlp", "inspect", "unknown")
#: File suffixes a folder is searched for (recursively, in sorted order).
SUFFIXES = (".json", ".jsonl", ".parquet", ".eval")
_WW_KEYS = {"mistake_agent", "mistake_step", "mistake_reason"}


def _turns(history: Any) -> bool:
    """A list of turns: objects with `content` and a speaker (`name` or `role`)."""
    return (
        isinstance(history, list)
        and bool(history)
        and all(
            isinstance(t, Mapping) and "content" in t and ("name" in t or "role" in t)
            for t in history[:3]
        )
    )


def kind_of_value(value: Any) -> str:
    first = value[0] if isinstance(value, list) and value else value
    if not isinstance(first, Mapping):
        return "unknown"
    keys = set(first)
    if keys & {"traj", "trajectory"} and ("reward" in keys or "info" in keys):
        return "tau-bench"
    if "history" in keys and (keys & _WW_KEYS or _turns(first["history"]) or "question" in keys):
        return "who-and-when"
    if "resourceSpans" in keys or "resource_spans" in keys:
        return "otlp"
    if "eval" in keys and "version" in keys:
        return "inspect"
    return "unknown"


def _first_value(path: Path) -> Any:
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            names = set(archive.namelist())
        return (
            {"eval": {}, "version": 2} if names & {"header.json", "_journal/start.json"} else None
        )
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        return {name: None for name in pq.read_schema(path).names}
    text = read_text(path)
    try:
        return json.loads(text)
    except ValueError:
        line = next((ln for ln in text.splitlines() if ln.strip()), "")
        return json.loads(line)


def detect(path: Path) -> str:
    """The format of one file (see the module docstring); unreadable files are `unknown`."""
    try:
        return kind_of_value(_first_value(path))
    except (OSError, ValueError, UnicodeDecodeError, zipfile.BadZipFile, ImportError):
        return "unknown"


def files_of(source: Path) -> list[Path]:
    """The file itself, or a folder's trace files in sorted order of their path within it."""
    if not source.is_dir():
        return [source]
    found = [p for p in source.rglob("*") if p.is_file() and p.suffix in SUFFIXES]
    return sorted(found, key=lambda p: p.relative_to(source).parts)


def group_by_kind(sources: Iterable[Path]) -> dict[str, list[Path]]:
    """Each source's files grouped by detected format (a folder may mix formats)."""
    groups: dict[str, list[Path]] = {}
    for source in sources:
        for path in files_of(source):
            groups.setdefault(detect(path), []).append(path)
    return groups


__all__ = ["KINDS", "SUFFIXES", "detect", "files_of", "group_by_kind", "kind_of_value"]
