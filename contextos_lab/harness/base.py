"""The whole harness contract in one class: what a harness must do, and what it may declare
(docs/harness-contract.md).

`Harness` (protocol.py) is the minimum: `name`, `tunable_surfaces()`, `run(case, config)`.
Everything the kit can use beyond that is a member of `BaseHarness` with a default, as
Optuna's `BaseSampler` gives its optional hooks defaults: the kit reads these members
directly, never by probing. A harness that only satisfies the Protocol is wrapped once by
`as_base_harness`, the single place that looks at what a plain object offers.
"""

from __future__ import annotations

import hashlib
import inspect
import math
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from contextos_lab.harness.protocol import RESULT_COLUMNS, Harness, RunResult
from contextos_lab.schemas.surface import TunableSurface


class BaseHarness(ABC):
    """Subclass this to write a harness; override only what you have."""

    #: Names the harness in studies, the cache and reports.
    name: str
    #: Keys the result cache: bump it when the harness answers differently. None: the
    #: harness's source file is hashed, so editing it still invalidates what was cached.
    version: str | None = None
    #: Cases the kit may run at once by default (the spec's `max_concurrency` overrides).
    max_concurrency: int | None = None
    #: Cases one `run_batch` call runs at once: the kit cuts `max_concurrency /
    #: per_process_concurrency` chunks per repeat.
    per_process_concurrency: int = 1
    #: True: the kit calls `run_batch` once per chunk (a vectorised harness, a program run
    #: once per chunk). False: it calls `run` once per case on its own threads.
    batched: bool = False

    @abstractmethod
    def tunable_surfaces(self) -> Sequence[TunableSurface]:
        """The knobs autotune may change, each with its baseline and bounds."""

    @abstractmethod
    def run(
        self, case: Mapping[str, Any], config: Mapping[str, Any], seed: int | None = None
    ) -> RunResult:
        """One case under one config. `seed` is the kit's recorded seed for this (case,
        repeat): sample with it, so a repeat reproduces. Raise, or return a result with
        `error` set, when the case cannot run: either becomes an error row."""

    def run_batch(
        self,
        cases: pd.DataFrame,
        config: Mapping[str, Any],
        seeds: Sequence[int] | None = None,
        case_timeout_s: float | None = None,
    ) -> pd.DataFrame:
        """RESULT_COLUMNS, one row per case in input order (default: `run` per case)."""
        records = cases.to_dict(orient="records")
        chosen = list(seeds) if seeds is not None else [None] * len(records)
        rows = [
            self.run(case, config, seed=s).model_dump()
            for case, s in zip(records, chosen, strict=True)
        ]
        return pd.DataFrame(rows, columns=list(RESULT_COLUMNS))

    def describe(self) -> None:
        """Called once before cache keys are made: learn `version` or concurrency late (a
        program asks itself `--surfaces`)."""
        return None

    def cache_identity(self) -> str:
        """The version part of the result-cache key (see `version`)."""
        if self.version:
            return str(self.version)
        return "src:" + source_digest(type(self))

    def batch_deadline_s(self, n_cases: int, case_timeout_s: float) -> float:
        """How long the kit waits for a `run_batch` chunk of `n_cases` before giving up on it:
        each case's deadline times the rounds the chunk needs, plus a second."""
        rounds = math.ceil(n_cases / max(self.per_process_concurrency, 1))
        return case_timeout_s * rounds + 1.0

    def declare_inputs(self, fields: Sequence[str]) -> None:
        """The case fields the spec allows this harness to see (`harness.case_inputs`); a
        harness in this process sees the case as given and may ignore it."""
        return None

    def close(self) -> None:
        """Release processes or connections held between calls (a persistent program's)."""
        return None


def source_digest(cls: type, files: Sequence[Path] = (), prefix: bytes = b"") -> str:
    """16 hex digits over `prefix` and the files (default: the class's source file)."""
    digest = hashlib.sha256(prefix)
    if not files:
        src = inspect.getsourcefile(cls)
        files = [Path(src)] if src else []
    for f in files:
        digest.update(f.read_bytes())
    return digest.hexdigest()[:16]


class _Adapted(BaseHarness):
    """A Protocol-only harness seen through BaseHarness. Reads what the plain object offers
    once, here, so nothing else in the kit has to ask."""

    def __init__(self, inner: Harness) -> None:
        self.inner = inner
        self.name = inner.name
        self.version = _opt(getattr(inner, "version", None))
        declared = getattr(inner, "max_concurrency", None)
        self.max_concurrency = int(declared) if declared else None
        self._batch = getattr(inner, "run_batch", None)
        self.batched = self._batch is not None
        self._seeded = _accepts(inner.run, "seed")
        self._batch_kwargs = {
            k for k in ("seeds", "case_timeout_s") if self._batch and _accepts(self._batch, k)
        }

    def tunable_surfaces(self) -> Sequence[TunableSurface]:
        return self.inner.tunable_surfaces()

    def run(
        self, case: Mapping[str, Any], config: Mapping[str, Any], seed: int | None = None
    ) -> RunResult:
        if self._seeded:
            return self.inner.run(case, config, seed=seed)  # type: ignore[call-arg]
        return self.inner.run(case, config)

    def run_batch(
        self,
        cases: pd.DataFrame,
        config: Mapping[str, Any],
        seeds: Sequence[int] | None = None,
        case_timeout_s: float | None = None,
    ) -> pd.DataFrame:
        if self._batch is None:
            return super().run_batch(cases, config, seeds, case_timeout_s)
        given = {"seeds": seeds, "case_timeout_s": case_timeout_s}
        return self._batch(cases, config, **{k: given[k] for k in self._batch_kwargs})

    def cache_identity(self) -> str:
        if self.version:
            return self.version
        return "src:" + source_digest(type(self.inner))


def as_base_harness(harness: Harness | BaseHarness) -> BaseHarness:
    """`harness` itself when it subclasses BaseHarness, else wrapped (see `_Adapted`)."""
    return harness if isinstance(harness, BaseHarness) else _Adapted(harness)


def _opt(value: Any) -> str | None:
    return str(value) if value not in (None, "") else None


def _accepts(fn: Any, name: str) -> bool:
    try:
        return name in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


__all__ = ["BaseHarness", "as_base_harness", "source_digest"]
