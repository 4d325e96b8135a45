"""`next:` lines that run as printed: the suggested command with this invocation's project and
store appended.

A command prints what to run next. Printed bare (`contextos-lab replay sp_…`), the next command
would read another store or another project, so `complete` appends `--project DIR`, `--store URL`
and a non-default `--bundles DIR` of the running command to each suggested `contextos-lab`
command that takes them. `main` sets the running command with `invocation(args, project)`.
"""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: `cli.app.build_parser`: the parser of one command (by its first word), built on demand
ParserFor = Callable[[str], argparse.ArgumentParser]

ALTERNATIVES = "   |   "


@dataclass(frozen=True)
class _Invocation:
    project: Path | None
    store: str | None
    bundles: str | None
    #: Builds the CLI's parser for a command, handed in by `cli.main` (this module never imports
    #: the CLI: the CLI imports it, and an import the other way would close a circle).
    parser_for: ParserFor | None = None


_current: list[_Invocation] = []


@contextmanager
def invocation(
    args: argparse.Namespace,
    project: Path | None,
    parser_for: ParserFor | None = None,
) -> Iterator[None]:
    """`project`: the running command's project folder (None: it loaded none)."""
    store = getattr(args, "store", None)
    bundles = getattr(args, "bundles", None)
    _current.append(
        _Invocation(project, store if isinstance(store, str) else None, bundles, parser_for)
    )
    try:
        yield
    finally:
        _current.pop()


def _options_of(words: list[str]) -> set[str]:
    """The option strings the leaf parser of `contextos-lab WORDS...` accepts."""
    build = _current[-1].parser_for if _current else None
    if build is None or not words:  # no CLI invocation running: no options to complete with
        return set()
    parser: Any = build(words[0])  # that command's parser only (the others are stubs)
    for word in words:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs or word not in subs[0].choices:
            break
        parser = subs[0].choices[word]
    return {opt for action in parser._actions for opt in action.option_strings}


def complete_command(command: str) -> str:
    """`contextos-lab ...` with the running command's project, store and bundles appended."""
    if not _current or not command.startswith("contextos-lab "):
        return command
    now = _current[-1]
    words = shlex.split(command)[1:]
    options = _options_of(words)
    extra: list[str] = []
    if now.project and "--project" in options and "--project" not in words:
        extra += ["--project", str(now.project)]
    if now.store and "--store" in options and "--store" not in words:
        extra += ["--store", now.store]
    if now.bundles and "--bundles" in options and "--bundles" not in words:
        extra += ["--bundles", now.bundles]
    return shlex.join(["contextos-lab", *words, *extra])


def complete(text: str) -> str:
    """Each `|`-separated alternative completed; a trailing `(note)` kept after the command."""
    parts = []
    for alternative in text.split(ALTERNATIVES):
        command, sep, note = alternative.partition("   (")
        parts.append(complete_command(command.strip()) + (f"   ({note}" if sep else ""))
    return ALTERNATIVES.join(parts)
