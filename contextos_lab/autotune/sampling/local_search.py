"""Pareto local search around the feasible front, interleaved with a model-based sampler.

Why it exists (benchmarks/search_cost.py): on the reference grid TPE stalled at 0.9863 of the
true feasible hypervolume from 100 to 200 trials. The one true-front point it missed (1.4 % of
the hypervolume) is a point it found with `min_confidence` 0.6 instead of 0.3 / 0.45; 0.6 makes
98 % of configs infeasible, so TPE's l(x)/g(x) ratio never proposes it in the one context
where it pays. Optuna has no local-search sampler, so this wrapper (a few lines over Optuna's
BaseSampler) does what Pareto local search does on discrete grids: every `every`-th trial, and
whenever the base sampler proposes a config already tried, it proposes an untried one-knob
neighbour of a feasible front member instead. Moves are ranked per (knob, value) and per front
group: a value never tried from a group goes first, so a knob whose other values tied there is
not ranked last at its last value (a per-knob weight did exactly that and kept the plateau).
Everything else (start-up, independent sampling, constraints) is the base sampler's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from optuna._hypervolume import compute_hypervolume  # exact; also used by autotune.pareto
from optuna.distributions import (
    BaseDistribution,
    CategoricalDistribution,
    FloatDistribution,
    IntDistribution,
)
from optuna.samplers import BaseSampler
from optuna.study import Study
from optuna.trial import FrozenTrial, TrialState

from contextos_lab.autotune.sampling.trial_rows import TrialRows


def grid_values(dist: BaseDistribution) -> list[Any] | None:
    """Every value a discrete distribution allows (None for a continuous one)."""
    if isinstance(dist, CategoricalDistribution):
        return list(dist.choices)
    if isinstance(dist, IntDistribution):
        return list(range(dist.low, dist.high + 1, dist.step))
    if isinstance(dist, FloatDistribution) and dist.step is not None:
        n = round((dist.high - dist.low) / dist.step)
        return [round(dist.low + i * dist.step, 10) for i in range(n + 1)]
    return None


def _key(params: dict[str, Any], names: Sequence[str]) -> tuple[Any, ...]:
    return tuple(
        round(params[n], 9) if isinstance(params.get(n), float) else params.get(n) for n in names
    )


def feasible_front(study: Study, trials: Sequence[FrozenTrial]) -> list[FrozenTrial]:
    """Complete, feasible trials no other such trial dominates (study directions)."""
    ok = [
        t
        for t in trials
        if t.state == TrialState.COMPLETE
        and t.values is not None
        and all(v <= 0 for v in t.constraints.values())
    ]
    if not ok:
        return []
    sign = np.array([-1.0 if d.name == "MAXIMIZE" else 1.0 for d in study.directions])
    losses = np.array([t.values for t in ok]) * sign
    keep = []
    for i, row in enumerate(losses):
        dominated = np.all(losses <= row, axis=1) & np.any(losses < row, axis=1)
        if not dominated.any():
            keep.append(ok[i])
    return keep


def _contributions(study: Study, members: Sequence[FrozenTrial]) -> np.ndarray:
    """Each front member's exclusive share of the front's hypervolume (objectives scaled to
    the front's own range; the nadir a step beyond it), so extremes and knees come first."""
    sign = np.array([-1.0 if d.name == "MAXIMIZE" else 1.0 for d in study.directions])
    losses = np.array([m.values for m in members], dtype=float) * sign
    lo, hi = losses.min(axis=0), losses.max(axis=0)
    scaled = (losses - lo) / np.where(hi > lo, hi - lo, 1.0)
    ref = np.full(scaled.shape[1], 1.1)
    total = compute_hypervolume(scaled, ref)
    out = np.array(
        [total - compute_hypervolume(np.delete(scaled, i, axis=0), ref) for i in range(len(scaled))]
    )
    return np.maximum(out, 1e-12)


def _outcome(trial: FrozenTrial) -> tuple[Any, ...]:
    """What a trial came to: state, objective values and whether it met every constraint."""
    values = tuple(round(v, 12) for v in trial.values or ())
    feasible = all(v <= 0 for v in trial.constraints.values())
    return (trial.state.name, values, feasible)


def _moves(
    members: Sequence[FrozenTrial],
    names: list[str],
    grid: list[list[tuple[Any, Any, tuple[int, str]]]],
    done: set[tuple[int, str]],
    tried: set[tuple[Any, ...]],
    weight: Callable[[tuple[int, str]], float],
) -> list[tuple[float, dict[str, Any]]]:
    """Every untried one-knob child of the group's members, weighted, skipping the moves in
    `done` (those already tried from the group)."""
    moves: list[tuple[float, dict[str, Any]]] = []
    queued: set[tuple[Any, ...]] = set()
    for parent in members:
        own = _key(parent.params, names)  # a child's key differs at one place
        for k, name in enumerate(names):
            for value, place, move in grid[k]:
                if move in done:
                    continue
                key = (*own[:k], place, *own[k + 1 :])
                if value != parent.params[name] and key not in tried and key not in queued:
                    queued.add(key)
                    moves.append((weight(move), {**parent.params, name: value}))
    return moves


class FrontLocalSearchSampler(BaseSampler):
    """`base`, except that some trials are an untried one-knob neighbour of the front."""

    def __init__(
        self, base: BaseSampler, *, seed: int | None, every: int = 2, n_startup_trials: int = 10
    ) -> None:
        self._base = base
        self._rng = np.random.RandomState(seed)
        self._every = every
        self._n_startup = n_startup_trials
        self._rows = TrialRows(_key, _outcome)  # finished trials, encoded once

    def reseed_rng(self) -> None:
        self._base.reseed_rng()
        self._rng = np.random.RandomState()

    def infer_relative_search_space(
        self, study: Study, trial: FrozenTrial
    ) -> dict[str, BaseDistribution]:
        return self._base.infer_relative_search_space(study, trial)

    def sample_relative(
        self, study: Study, trial: FrozenTrial, search_space: dict[str, BaseDistribution]
    ) -> dict[str, Any]:
        params = self._base.sample_relative(study, trial, search_space)
        if not search_space or any(grid_values(d) is None for d in search_space.values()):
            return params
        trials = study._get_trials(deepcopy=False, use_cache=True)  # the base samplers' read
        finished = [t for t in trials if t.state.is_finished()]
        if len(finished) < self._n_startup:
            return params
        names = sorted(search_space)
        self._rows.sync(study, names, finished)
        tried = self._rows.tried | {
            _key(t.params, names)
            for t in trials
            if not t.state.is_finished() and t.number != trial.number
        }
        repeat = len(params) == len(names) and _key(params, names) in tried
        if not repeat and trial.number % self._every != 0:
            return params
        move = self._neighbour(study, finished, search_space, names, tried)
        return move if move is not None else params

    def _neighbour(
        self,
        study: Study,
        finished: Sequence[FrozenTrial],
        space: dict[str, BaseDistribution],
        names: list[str],
        tried: set[tuple[Any, ...]],
    ) -> dict[str, Any] | None:
        """An untried one-knob move from a front member, on the move most likely to matter.

        Front members are grouped by objective vector (ties differ only in knobs that do not
        matter there, but a tie is where a second knob starts to matter); a group is drawn in
        proportion to its exclusive share of the front's hypervolume, and its (knob, value)
        moves never tried from any of its members come first. Among those, a move's weight is
        how often that (knob, value) change from a front member to a tried config changed the
        outcome (values, feasibility or state), untested moves counting as mattering.
        """
        groups: dict[tuple[float, ...], list[FrozenTrial]] = {}
        for t in self._rows.front_of(finished, lambda pool: feasible_front(study, pool)):
            if set(t.params) == set(names):
                groups.setdefault(tuple(round(v, 12) for v in t.values or ()), []).append(t)
        if not groups:
            return None
        changed, seen, explored = self._history(finished, groups)

        def weight(move: tuple[int, str]) -> float:
            return (changed.get(move, 0) + 1.0) / (seen.get(move, 0) + 1.0)

        # each knob's grid once: (value, its place in a config key, its move)
        grid = [
            [(v, _key({n: v}, [n])[0], (k, str(_key({n: v}, [n])[0])))
             for v in grid_values(space[n]) or []]
            for k, n in enumerate(names)
        ]  # fmt: skip
        vectors = list(groups)
        order = self._group_order(study, groups, vectors)
        for fresh_only in (True, False):
            for i in order:
                done = explored.get(vectors[i], set()) if fresh_only else set()
                moves = _moves(groups[vectors[i]], names, grid, done, tried, weight)
                if moves:
                    best = max(w for w, _ in moves)
                    top = [child for w, child in moves if w >= best - 1e-12]
                    return top[int(self._rng.randint(len(top)))]
        return None

    def _history(
        self, finished: Sequence[FrozenTrial], groups: dict[tuple[float, ...], list[FrozenTrial]]
    ) -> tuple[
        dict[tuple[int, str], int], dict[tuple[int, str], int], dict[Any, set[tuple[int, str]]]
    ]:
        """Per (knob, value) move from a front member to a tried config one knob away: how
        often it changed the outcome, how often it was seen, and each group's moves tried.
        Knob values are per-knob integer codes of their string form (cached per trial):
        comparing codes is comparing those strings, without building them again."""
        rows = [(t.number, self._rows.rows[t.number]) for t in finished]
        rows = [(n, r) for n, r in rows if r.codes is not None]
        index = {n: i for i, (n, _) in enumerate(rows)}
        keys = np.array([r.codes for _, r in rows], dtype=np.int64)
        outcome = np.array([r.outcome for _, r in rows], dtype=np.int64)
        strs = self._rows.strs
        changed: dict[tuple[int, str], int] = {}
        seen: dict[tuple[int, str], int] = {}
        explored: dict[Any, set[tuple[int, str]]] = {}
        for vector, members in groups.items():
            for parent in members:
                p = index[parent.number]
                diff = keys != keys[p]
                one = np.flatnonzero(diff.sum(axis=1) == 1)
                ks = diff[one].argmax(axis=1)
                moved = zip(
                    ks.tolist(), keys[one, ks].tolist(), (outcome[one] != outcome[p]), strict=True
                )
                for k, code, differs in moved:
                    move = (k, strs[k][code])
                    seen[move] = seen.get(move, 0) + 1
                    changed[move] = changed.get(move, 0) + bool(differs)
                    explored.setdefault(vector, set()).add(move)
        return changed, seen, explored

    def _group_order(
        self,
        study: Study,
        groups: dict[tuple[float, ...], list[FrozenTrial]],
        vectors: list[tuple[float, ...]],
    ) -> list[int]:
        """Groups in the order they are tried: one drawn in proportion to its exclusive share
        of the front's hypervolume first, then the rest by share (ties in random order)."""
        heads = [groups[v][0] for v in vectors]
        share = self._rows.shares(
            (tuple(d.name for d in study.directions), tuple(tuple(m.values) for m in heads)),
            lambda: _contributions(study, heads),
        )
        order = sorted(self._rng.permutation(len(vectors)), key=lambda i: -share[i])
        draw = self._rng.random_sample() * share.sum()
        first = next((i for i in order if (draw := draw - share[i]) <= 0), order[0])
        return [first, *[j for j in order if j != first]]

    def sample_independent(
        self,
        study: Study,
        trial: FrozenTrial,
        param_name: str,
        param_distribution: BaseDistribution,
    ) -> Any:
        return self._base.sample_independent(study, trial, param_name, param_distribution)

    def before_trial(self, study: Study, trial: FrozenTrial) -> None:
        self._base.before_trial(study, trial)

    def after_trial(
        self,
        study: Study,
        trial: FrozenTrial,
        state: TrialState,
        values: Sequence[float] | None,
    ) -> None:
        self._base.after_trial(study, trial, state, values)


__all__ = ["FrontLocalSearchSampler", "grid_values"]
