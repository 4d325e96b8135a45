"""`--no-cache` and `--cache PATH`: set at parse time as environment variables, so the
notebooks a command runs (and `result_cache`) see them too. Apart from `result_cache` so that
adding the flags to a parser, as `search --help` does, loads no SQLAlchemy."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

#: Set to "1" (by `--no-cache`) to run every case afresh; inherited by notebook kernels.
NO_CACHE_ENV = "CONTEXTOS_LAB_NO_CACHE"
#: Set (by `--cache PATH`) to a cache shared across studies; inherited by notebook kernels.
CACHE_ENV = "CONTEXTOS_LAB_CACHE"


def cache_reads_enabled() -> bool:
    return os.environ.get(NO_CACHE_ENV, "") != "1"


class _NoCache(argparse.Action):
    """`--no-cache`: set at parse time, so the notebooks a command runs see it too."""

    def __call__(self, parser: Any, namespace: Any, values: Any, option: Any = None) -> None:
        os.environ[NO_CACHE_ENV] = "1"
        setattr(namespace, self.dest, True)


class _SharedCache(argparse.Action):
    """`--cache PATH`: set at parse time, so the notebooks a command runs see it too."""

    def __call__(self, parser: Any, namespace: Any, values: Any, option: Any = None) -> None:
        value = str(values)
        if not value.strip():
            parser.error("--cache needs a file path or a database URL")
        os.environ[CACHE_ENV] = value if "://" in value else str(Path(value).resolve())
        setattr(namespace, self.dest, value)


def add_no_cache_flag(parser: argparse.ArgumentParser) -> None:
    """`--no-cache` and `--cache PATH` (where paid results live)."""
    parser.add_argument(
        "--no-cache",
        action=_NoCache,
        nargs=0,
        default=False,
        help="run every harness call afresh (results are still stored for later runs)",
    )
    parser.add_argument(
        "--cache",
        action=_SharedCache,
        default=None,
        metavar="PATH",
        help="result cache outside the study (a SQLite file or a database URL), shared by "
        "every --out folder that names it (default: beside the study)",
    )
