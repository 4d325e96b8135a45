"""The order a racing trial meets the search set in: every prefix a stratified sample.

Kept apart from the racing engine: a reference prefix is only comparable within one order, so
`order_key` names it (set, seed and the schedule fields that decide it).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from contextos_lab.autotune.cases import CaseSet
from contextos_lab.autotune.context import RunContext
from contextos_lab.autotune.spec.fidelity import RacingSchedule
from contextos_lab.schemas.base import sha256_hex

_ORDERS: dict[tuple[str, int, str], np.ndarray] = {}


def racing_seed(ctx: RunContext) -> int:
    if ctx.spec.racing.seed is not None:
        return ctx.spec.racing.seed
    return ctx.spec.sampler.seed if ctx.spec.sampler.seed is not None else 0


def case_order(search: CaseSet, schedule: RacingSchedule, seed: int) -> np.ndarray:
    """Row positions of the search set in racing order; every prefix is a stratified sample.

    Keyed on case content hashes (not row order), so every worker of a study, and a rerun with
    the same seed, races on the same subsets. Within each stratum cases are shuffled by hash;
    case i of a stratum of size m sits at (i + 0.5) / m, so any prefix holds each stratum in
    proportion to its size.
    """
    keys = np.array([int(sha256_hex(f"{seed}:{h}")[:15], 16) for h in search.case_hashes])
    cols = list(schedule.stratify_by)
    if cols:
        strata = search.cases[cols].astype(str).agg("\x1f".join, axis=1).to_numpy()
    else:
        strata = np.zeros(len(keys), dtype=object)
    position = np.empty(len(keys))
    for stratum in pd.unique(strata):
        members = np.flatnonzero(strata == stratum)
        ranked = members[np.argsort(keys[members], kind="stable")]
        position[ranked] = (np.arange(len(ranked)) + 0.5) / len(ranked)
    return np.lexsort((keys, position))


def racing_order(ctx: RunContext) -> np.ndarray:
    """This study's racing order (computed once per set, seed and schedule)."""
    seed = racing_seed(ctx)
    key = (ctx.search.digest, seed, _schedule_json(ctx))
    if key not in _ORDERS:
        _ORDERS[key] = case_order(ctx.search, ctx.spec.racing, seed)
    return _ORDERS[key]


def _schedule_json(ctx: RunContext) -> str:
    """The schedule fields that decide the racing order (promotion, its least gain and z, rounds
    do not), so a study resumed under another promotion rule or round count keeps pairing with
    its references."""
    return ctx.spec.racing.model_dump_json(
        exclude={"promotion", "promotion_min_gain", "promotion_patience", "promotion_z", "rounds"}
    )


def order_key(ctx: RunContext) -> str:
    """Which racing order a reference prefix was taken in (set, seed and schedule)."""
    seed = racing_seed(ctx)
    return sha256_hex(f"{ctx.search.digest}:{seed}:{_schedule_json(ctx)}")[:16]
