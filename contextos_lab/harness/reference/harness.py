"""SupportDeskHarness: the bundled, deterministic support desk with every adjustment layer.

One run: route the request (lexical score + seed-002 feedback boost; below `min_confidence`
escalate at once) -> recall reflections for the turn's entities (seed 004; surfaced as past
observations, never obeyed as instructions) -> retrieve up to `top_k` documents within
`max_hops`, then keep them in rank order while the context fits `context_token_budget` -> the
skill's rules decide (policy knobs) -> the output quotes records, redacted unless
`redact_pii` is off.

Modelled cost (documented so results reproduce anywhere):
  tokens_in  = 350 system + request + reflections + kept evidence + memory look-ups
               + redaction instructions (60 + 20 per PII document in context) when redacting
  tokens_out = per output template (30..90)
  latency_ms = 150 + 0.05*tokens_in + 12*tokens_out + 40*hops + 40*look-ups + 10 recall
               + 25 redaction pass;  a low-confidence escalation skips everything after routing.

Search space (`tunable_surfaces`, discretised by each surface's grid): 2·2·2·3 routing ×
3·3 retrieval × 2·3·2 memory × 3·2·2·2 policy × 2 budget = 124,416 configs — enumerable
exhaustively for a benchmark's true Pareto front, too many for random search to stumble on it.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from contextos_lab.harness.base import BaseHarness
from contextos_lab.harness.protocol import RunResult
from contextos_lab.harness.reference.core import (
    LAT_BASE,
    LAT_PER_HOP,
    LAT_PER_IN,
    LAT_PER_LOOKUP,
    LAT_PER_OUT,
    LAT_RECALL,
    LAT_REDACT,
    REDACT_PER_PII,
    REDACT_TOKENS,
    SYSTEM_TOKENS,
    Core,
    run_core,
)
from contextos_lab.harness.reference.prepared import KINDS, Prepared, prepare_cases
from contextos_lab.harness.reference.result_frame import result_frame
from contextos_lab.harness.reference.surfaces import (
    HARNESS_NAME,
    SEARCH_SPACE_SIZE,
    SURFACES,
    resolve_config,
)
from contextos_lab.schemas.surface import TunableSurface

#: The names this module has always offered; the model itself lives in the sibling modules
#: (surfaces, prepared, core, result_frame).
__all__ = [
    "KINDS",
    "LAT_BASE",
    "LAT_PER_HOP",
    "LAT_PER_IN",
    "LAT_PER_LOOKUP",
    "LAT_PER_OUT",
    "LAT_RECALL",
    "LAT_REDACT",
    "REDACT_PER_PII",
    "REDACT_TOKENS",
    "SEARCH_SPACE_SIZE",
    "SURFACES",
    "SYSTEM_TOKENS",
    "Core",
    "Prepared",
    "SupportDeskHarness",
    "reference_harness",
    "run_core",
]

#: Former private name of `resolve_config`, kept for callers that imported it from here.
_resolve = resolve_config


class SupportDeskHarness(BaseHarness):
    """The reference harness (see the module docstring for its model). Deterministic, so it
    ignores seeds; vectorised, so the kit hands it whole chunks (`batched`)."""

    name = HARNESS_NAME
    batched = True

    def __init__(self, cache_size: int = 4) -> None:
        self._cache: OrderedDict[tuple[Any, ...], Prepared] = OrderedDict()
        self._cache_size = cache_size

    def tunable_surfaces(self) -> Sequence[TunableSurface]:
        return SURFACES

    def prepared(self, cases: pd.DataFrame) -> Prepared:
        ids = tuple(cases["case_id"])
        hashes = tuple(cases["content_hash"]) if "content_hash" in cases else ()
        key = (ids, hashes)
        hit = self._cache.get(key)
        if hit is None:
            hit = prepare_cases(cases)
            self._cache[key] = hit
            if len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return hit

    def run(
        self, case: Mapping[str, Any], config: Mapping[str, Any], seed: int | None = None
    ) -> RunResult:
        frame = self.run_batch(pd.DataFrame([dict(case)]), config)
        return RunResult(**frame.iloc[0].to_dict())

    def run_batch(
        self,
        cases: pd.DataFrame,
        config: Mapping[str, Any],
        seeds: Sequence[int] | None = None,
        case_timeout_s: float | None = None,
    ) -> pd.DataFrame:
        start = time.perf_counter()
        cfg = resolve_config(config)
        p = self.prepared(cases)
        c = run_core(p, cfg)
        return result_frame(p, c, start)


def reference_harness() -> SupportDeskHarness:
    """Factory for `load_harness("contextos_lab.harness.reference:reference_harness")`."""
    return SupportDeskHarness()
