"""What the true feasible front costs in case evaluations: full-set trials against racing.

On the reference harness and its 684-case search set, every config of the spec's grid is
scored once (`search_efficiency.enumerate_grid`: cached under benchmarks/results/cache/, and a
seeded sample of 200 configs re-scored through `score_config` must match bit for bit), giving
the true feasible front with the studies' own rules. Then, per sampler, fidelity and seed (run
one after another: the machine is shared), a study runs through the real trial path
(in-memory storage, baseline as trial 0) and every trial's case evaluations are counted:
the whole set for a full-set trial, the cases of the stages it reached for a racing trial. The table
is the feasible hypervolume found divided by the true one, as a function of case evaluations
spent (median and minimum over seeds).

Full-fidelity trials read their scores from the enumerated grid (bit-identical to
`score_config`, ~30x faster); racing trials run the harness on their subsets
(`autotune.racing.racing.race` -> `objective.evaluate_cases`), which is the point being measured.

Goals (issue 16), in `benchmarks/results/search_cost.json`:
  racing_share_of_calls_to_0.95   case evaluations racing needs to reach 0.95 of the true
                                  feasible hypervolume / those full-set kit TPE needs (<= 0.25)
  racing_ratio_at_100_trial_calls racing's median ratio after 100 x 684 case evaluations
                                  (>= 0.99)
  full_ratio_at_200               kit default (full fidelity) median ratio at 200 trials
                                  (>= 0.99: the plateau fixed)
Beside them, not a goal: what a clairvoyant racer (full set only for the trials that raise the
hypervolume, smoke stage for the rest) would spend on full-set TPE's own proposals, the floor
under any racing rule that drops on evidence.

    .venv/bin/python benchmarks/search_cost.py            # 5 seeds
    .venv/bin/python benchmarks/search_cost.py --seeds 2  # quicker
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import math
import multiprocessing
import os
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import optuna
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

import peer_samplers as ps  # noqa: E402
import search_efficiency as se  # noqa: E402

from contextos_lab.api import (  # noqa: E402
    RunContext,
    SamplerConfig,
    case_evaluations,
    ensure_baseline,
    hypervolume_history,
    load_spec,
    open_storage,
    open_study,
    prepare,
    run_one_trial,
    score_config,
    trials_frame,
)

RESULTS = REPO / "benchmarks" / "results"
EVALUATORS = ("policy", "safety", "utility", "latency", "economics")
#: (name, sampler config, fidelity). `kit_default/racing` is what a spec gets with no
#: `sampler:`, `fidelity:` or `racing:` (tpe with its front local search, racing with the
#: spec's schedule); the peers are Optuna's samplers on full-set trials (peer_samplers.py).
RUNS: list[tuple[str, dict[str, Any], str]] = [
    ("kit_default", {"kind": "tpe"}, "racing"),
    ("kit_default", {"kind": "tpe"}, "full"),
    ("gp", {"kind": "gp"}, "full"),
    ("botorch", {"kind": "botorch"}, "full"),
    ("optuna_default", {"kind": "optuna_default"}, "full"),
    ("nsgaii", {"kind": "nsgaii"}, "full"),
    ("random", {"kind": "random"}, "full"),
]
DEFAULT = "kit_default/racing"
PEERS = ["gp/full", "botorch/full", "optuna_default/full", "nsgaii/full", "random/full"]
FULL_TRIALS = 200  # full-fidelity budget, trials (baseline included)
#: Optuna's GPSampler refits its GP every trial (~12 s a trial at 100 trials, issue 33), so on
#: 2 cores shared with other jobs (load 10) its studies stop at this many trials; its columns
#: past it are left out of the best peer.
GP_TRIALS = {"value": 25}
GP_SEEDS = 3  # and run on the first seeds only (each study took 15-30 min at load 10-14)
#: The Bayesian-optimisation peers, capped alike: Optuna's GPSampler and BoTorch's qNEHVI
#: (optuna-integration's BoTorchSampler; ~10 s a trial on one thread from its 11th trial).
BAYES = ("gp", "botorch")
#: Racing's budget, in full-set trials' worth of case evaluations (a racing study's wall is
#: mostly TPE over its many cheap trials). Past it a racing run's column holds the ratio it
#: had reached: a lower bound, marked in the table. 100 since issue 33's fourth pass (ten seeds
#: of 187-373 s, two at a time on 2 cores): ratio@100 is measured, ratio@200 a lower bound.
RACING_CALLS_IN_TRIALS = 100
TRIAL_BUDGETS = [10, 25, 50, 100, 200]  # columns of the table, in full-set trials' worth
#: `--cached-only`: assemble the table from the studies in the results cache, run none.
CACHED_ONLY = {"value": False}
#: `--reuse-committed`: per harness ("reference", "standin"), (run, seed) -> the row the
#: committed JSON holds for a study whose code this branch did not change (peers and the kit's
#: full-set TPE: racing's modules are not on their path). Each run label's first seed is run
#: again and must give the same figures before any of its rows is reused.
REUSE: dict[str, dict[tuple[str, int], dict[str, Any]]] = {}
REUSED_FROM = {"value": ""}
#: `--reuse-checked`: an earlier invocation on this code already re-ran each label's first seed.
REUSE_CHECKED = {"value": False}
#: Racing's promotion rule (`--promotion`, tuning only): None = the spec's own default.
PROMOTION: dict[str, str | None] = {"value": None}


def run_one(
    ctx: RunContext, cfg: SamplerConfig, fidelity: str, max_calls: int, max_trials: int
) -> pd.DataFrame:
    """One study until `max_calls` case evaluations or `max_trials` trials; per trial: number,
    cumulative case evaluations, feasible hypervolume so far."""
    racing = ctx.spec.racing
    if PROMOTION["value"] is not None:
        racing = racing.model_copy(update={"promotion": PROMOTION["value"]})
    ctx = RunContext(
        spec=ctx.spec.model_copy(update={"fidelity": fidelity, "sampler": cfg, "racing": racing}),
        harness=ctx.harness,
        space=ctx.space,
        search=ctx.search,
        evaluate=ctx.evaluate,
        score_config=ctx.score_config,
    )
    study = open_study(ctx, open_storage("memory"), sampler=cfg)
    timed = ps.TimedSampler(study.sampler)
    study.sampler = timed  # the sampler's own seconds (Optuna's BaseSampler API)
    baseline = ensure_baseline(ctx, study)
    calls = case_evaluations(study.trials[0])
    while calls < max_calls and len(study.trials) < max_trials:
        # the trial path run_study's workers take (ask, run_trial, tell), one trial at a time
        frozen = run_one_trial(ctx, study, baseline)
        calls += case_evaluations(frozen)
    frame = trials_frame(study)
    hist = hypervolume_history(frame, ctx.spec)
    per_trial = frame.set_index("number")["case_evaluations"].fillna(0).astype(int)
    hist["calls"] = hist["number"].map(per_trial).cumsum()
    hist["state"] = hist["number"].map(frame.set_index("number")["state"])
    hist["spent_on"] = hist["number"].map(spend_kind(frame, ctx))
    hist.attrs["sampler_s"] = timed.seconds
    return hist


def spend_kind(frame: pd.DataFrame, ctx: RunContext) -> pd.Series:
    """What each trial's case evaluations bought: a completed trial that is new, one that ties
    an earlier completed trial's objective values exactly, or is infeasible; a trial dropped on
    evidence, or one not promoted (racing_promotion)."""
    objectives = [e.value for e in ctx.spec.objectives]
    seen: set[tuple[float, ...]] = set()
    kind = {}
    for row in frame.sort_values("number").to_dict(orient="records"):
        if row["state"] == "PRUNED":
            kind[row["number"]] = "not promoted" if row.get("not_promoted") else "dropped"
            continue
        if row["state"] != "COMPLETE":
            kind[row["number"]] = "failed"
            continue
        values = tuple(round(float(row[o]), 12) for o in objectives)
        if not row["feasible"]:
            kind[row["number"]] = "completed infeasible"
        elif values in seen:
            kind[row["number"]] = "completed tie"
        else:
            kind[row["number"]] = "completed new"
        seen.add(values)
    return pd.Series(kind)


def _key(params: dict[str, Any], names: list[str]) -> tuple[Any, ...]:
    return tuple(round(params[n], 9) if isinstance(params[n], float) else params[n] for n in names)


def lookup_table(ctx: RunContext, grid: pd.DataFrame) -> dict[tuple[Any, ...], dict[str, float]]:
    """Config -> its enumerated scores (and error rate, when the grid records one)."""
    names = list(ctx.space.names)
    cols = [c for c in (*EVALUATORS, "error_rate") if c in grid]
    return {
        _key(row, names): {c: float(row[c]) for c in cols}
        for row in grid[names + cols].to_dict(orient="records")
    }


@contextlib.contextmanager
def grid_lookup(ctx: RunContext, table: dict[tuple[Any, ...], dict[str, float]]) -> Iterator[None]:
    """Full-set trials of `ctx` read their scores from the enumerated grid instead of running
    the harness (bit-identical: each grid is checked against `score_config`), through the run
    context's `score_config` extension point; the context's own scorer is restored after."""
    names = list(ctx.space.names)
    previous = ctx.score_config

    def lookup(_ctx: RunContext, params: Mapping[str, Any]) -> dict[str, Any]:
        row = table[_key(params, names)]
        return {
            "scores": {e: row[e] for e in EVALUATORS},
            "n_case_errors": 0,
            "error_rate": row.get("error_rate", 0.0),
            "harness_s": 0.0,
        }

    ctx.score_config = lookup
    try:
        yield
    finally:
        ctx.score_config = previous


# -- the slow stand-in harness (examples/standin_llm) ---------------------------------------------

STANDIN_SPEC = REPO / "examples" / "standin_llm" / "spec.yaml"
STANDIN_RUNS = RUNS  # the same samplers, budgets and caps on both harnesses
STANDIN_FULL_TRIALS = FULL_TRIALS
#: Racing's stand-in budget, in full-set trials' worth (38,800 case evaluations): every column
#: of the table is measured. Racing runs the real stand-in harness at time_scale 0 (no sleeps;
#: every run seeded per config, case and repeat), without any result cache: 370-880 s a seed
#: (about 1,100 racing trials), two seeds at a time.
STANDIN_RACING_CALLS_IN_TRIALS = 200
STANDIN_BUDGETS = TRIAL_BUDGETS
#: `--racing`'s schedule override (tuning), applied to both harnesses' specs.
RACING_OVERRIDE: dict[str, Any] = {}
N_STANDIN_CHECK = 3  # grid configs re-scored with the spec's own (sleeping) time scale
N_STANDIN_RECHECK = 30  # and re-scored without sleeps by the code that runs the benchmark


def standin_ctx(time_scale: float | None = 0.0) -> RunContext:
    """The stand-in's spec without sleeps (time_scale 0) and without its money budget.

    Its scores do not depend on the sleeps: latency is the seeded draw it reports, and every
    run is seeded per (case, repeat); `enumerate_standin` checks that on a few configs."""
    spec = load_spec(STANDIN_SPEC)
    if RACING_OVERRIDE:
        racing = {**spec.racing.model_dump(), **RACING_OVERRIDE}
        spec = spec.model_copy(update={"racing": type(spec.racing).model_validate(racing)})
    kwargs = dict(spec.harness_kwargs)
    if time_scale is not None:
        kwargs["time_scale"] = time_scale
    return prepare(spec.model_copy(update={"harness_kwargs": kwargs, "budget": None}))


def enumerate_standin(
    ctx: RunContext, sleeping: RunContext | None = None
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Every config of the stand-in's grid through `score_config` (in this process; cached).

    `sleeping` re-scores a few configs with real sleeps: by default the spec's own time scale
    (another tier of the stand-in passes its own)."""
    h = hashlib.sha256()
    for path in [
        STANDIN_SPEC.parent / "standin_llm.py",
        *sorted((REPO / "contextos_lab" / "evaluators").glob("*.py")),
        *sorted((REPO / "contextos_lab" / "harness").glob("*.py")),
    ]:
        h.update(path.read_bytes())
    h.update(ctx.search.digest.encode())
    # what scores a config; not how the search runs (racing, sampler), so tuning those keeps it
    h.update(ctx.spec.model_dump_json(exclude={"racing", "sampler", "fidelity"}).encode())
    cache = RESULTS / "cache" / f"standin_grid_{h.hexdigest()[:16]}.parquet"
    configs = list(ctx.space.enumerate())
    info: dict[str, Any] = {"cache": str(cache.relative_to(REPO)), "n_configs": len(configs)}
    if cache.exists():
        frame = pd.read_parquet(cache)
        info["from_cache"] = True
    else:
        t0 = time.perf_counter()
        rows = []
        for i, config in enumerate(configs):
            out = score_config(ctx, config)
            rows.append({**config, **out["scores"], "error_rate": out["error_rate"]})
            if i % 200 == 0:
                print(f"  stand-in enumerated {i}/{len(configs)} "
                      f"({time.perf_counter() - t0:.0f} s)", flush=True)  # fmt: skip
        frame = pd.DataFrame(rows)
        cache.parent.mkdir(parents=True, exist_ok=True)
        frame.to_parquet(cache)
        info["enumeration_s"] = round(time.perf_counter() - t0, 1)
        info["from_cache"] = False
    info["max_error_rate_in_grid"] = float(frame["error_rate"].max())
    rng = np.random.default_rng(20261123)
    for i in rng.choice(len(configs), size=N_STANDIN_RECHECK, replace=False):
        again = score_config(ctx, configs[int(i)])["scores"]  # this code, no sleeps
        row = frame.iloc[int(i)]
        if {e: float(row[e]) for e in EVALUATORS} != again:
            raise SystemExit(f"stand-in grid mismatch at {configs[int(i)]}: {again}")
    info["verified_without_sleeps"] = N_STANDIN_RECHECK
    sleeping = sleeping or standin_ctx(time_scale=None)  # the spec's own time scale: sleeps
    for i in rng.choice(len(configs), size=N_STANDIN_CHECK, replace=False):
        again = score_config(sleeping, configs[int(i)])["scores"]
        row = frame.iloc[int(i)]
        if {e: float(row[e]) for e in EVALUATORS} != again:
            raise SystemExit(f"stand-in grid mismatch at {configs[int(i)]}: {again}")
    info["verified_with_sleeps"] = N_STANDIN_CHECK
    print(f"  stand-in grid: {len(configs)} configs; {N_STANDIN_RECHECK} re-scored, "
          f"{N_STANDIN_CHECK} with the spec's sleeps: identical", flush=True)  # fmt: skip
    return frame, info


def run_standin(
    seeds: list[int], processes: int = 1, only: list[str] | None = None
) -> dict[str, Any]:
    """The same measurement on the stand-in LLM harness (194 cases x 3 repeats)."""
    t0 = time.perf_counter()
    ctx = standin_ctx()
    n_cases = len(ctx.search)
    grid, info = enumerate_standin(ctx)
    truth = se.true_front(ctx, grid)
    sizes = ctx.spec.racing.sizes(n_cases)
    print(
        f"\nstand-in harness: true feasible front {truth['n_front_points']} points, HV "
        f"{truth['hypervolume']:.6f}; {n_cases} cases x {ctx.spec.repeats} repeats; "
        f"racing stages {sizes}"
    )
    frame, _ = run_matrix(
        ctx, STANDIN_RUNS, seeds, lookup_table(ctx, grid), STANDIN_FULL_TRIALS,
        STANDIN_RACING_CALLS_IN_TRIALS, STANDIN_BUDGETS, truth["hypervolume"], only or [],
        processes,
    )  # fmt: skip
    unit = f"case evaluations (each {ctx.spec.repeats} harness calls)"
    out = summarise(frame, STANDIN_RUNS, STANDIN_BUDGETS, n_cases, len(seeds), unit)
    if only:
        return {}
    cost = out["cost"]
    full_to = cost.loc["kit_default/full", "calls_to_0.95"]
    racing_to = cost.loc["kit_default/racing", "calls_to_0.95"]
    med = out["med"]
    never_below = bool(
        all(med.loc["kit_default/full", c] >= med.loc["random/full", c] for c in out["cols"])
    )
    print(f"stand-in: kit default (full) median never below random at any budget: {never_below}")
    return {
        "kit_default_full_never_below_random": never_below,
        "spec": str(STANDIN_SPEC.relative_to(REPO)),
        "harness_kwargs": ctx.spec.harness_kwargs,
        "n_cases": n_cases,
        "repeats": ctx.spec.repeats,
        "racing": ctx.spec.racing.model_dump(mode="json"),
        "racing_stage_sizes": sizes,
        "budgets": {
            "full_trials": STANDIN_FULL_TRIALS,
            "racing_case_evaluations": STANDIN_RACING_CALLS_IN_TRIALS * n_cases,
            "racing_harness": "the real stand-in harness (time_scale 0: no sleeps, seeded "
            "per config, case and repeat) on every racing trial; no per-case result cache",
        },
        "truth": truth,
        "enumeration": info,
        "printed": out["printed"],
        "median_ratio": json.loads(out["med"].to_json(orient="index")),
        "min_ratio": json.loads(out["low"].to_json(orient="index")),
        "default_minus_best_peer": json.loads(out["margin"].to_json()),
        "sampler_s_per_trial": json.loads(cost["sampler_s_per_trial"].to_json()),
        "calls_to_0.95_median": json.loads(cost["calls_to_0.95"].to_json()),
        "seeds_per_run": json.loads(cost["seeds"].to_json()),
        "racing_share_of_calls_to_0.95": float(racing_to / full_to)
        if np.isfinite(full_to)
        else None,
        "per_seed": json.loads(frame.to_json(orient="records")),
        **ps.run_conditions(frame),
        "seconds": round(time.perf_counter() - t0, 1),
    }


def spend_until(hist: pd.DataFrame, level: float, truth: float) -> dict[str, int]:
    """Case evaluations by what they bought, up to the trial that first reached `level`."""
    hit = hist.index[hist["hypervolume"] / truth >= level]
    upto = hist.loc[: hit[0]] if len(hit) else hist
    per_trial = upto["calls"].diff().fillna(upto["calls"].iloc[0])
    return {str(k): int(v) for k, v in per_trial.groupby(upto["spent_on"]).sum().items()}


def ratio_at(hist: pd.DataFrame, calls: int, truth: float) -> float:
    seen = hist.loc[hist["calls"] <= calls, "hypervolume"]
    return float(seen.max() / truth) if len(seen) else 0.0


def calls_to(hist: pd.DataFrame, level: float, truth: float) -> float:
    hit = hist.loc[hist["hypervolume"] / truth >= level, "calls"]
    return float(hit.iloc[0]) if len(hit) else float("inf")


def clairvoyant_calls_to(
    hist: pd.DataFrame, level: float, truth: float, n_cases: int, smoke: int
) -> float:
    """What a racer that knew every config's full-set outcome would have spent on this run's
    own proposals: the full set for the baseline and each trial that raised the hypervolume,
    the smoke stage for every other. No racing rule that drops on evidence can spend less on
    the same proposals, so it bounds the share racing can reach."""
    hv = hist["hypervolume"].to_numpy()
    hit = np.flatnonzero(hv / truth >= level)
    if not len(hit):
        return float("inf")
    before = np.r_[-np.inf, np.maximum.accumulate(hv)[:-1]]
    raised = hv[: hit[0] + 1] > before[: hit[0] + 1]
    return float(np.where(raised, n_cases, smoke).sum())


#: What every study of one `run_matrix` call shares; set before the pool forks its workers.
_MATRIX: dict[str, Any] = {}


def run_matrix(
    ctx: RunContext,
    runs: list[tuple[str, dict[str, Any], str]],
    seeds: list[int],
    table: dict[tuple[Any, ...], dict[str, float]],
    full_trials: int,
    racing_calls_in_trials: int,
    budgets: list[int],
    truth: float,
    only: list[str],
    processes: int = 1,
) -> tuple[pd.DataFrame, dict[str, list[list[float]]]]:
    """Every (run, seed) study, a row per study and the HV curves. Each study is seeded and
    in memory, so running them in `processes` forked workers changes no figure, only the
    wall time (racing studies, the longest, are started first)."""
    jobs = [
        (f"{name}/{fidelity}", kw, fidelity, seed)
        for name, kw, fidelity in runs
        for seed in seeds
        if (not only or f"{name}/{fidelity}" in only)
        and (kw.get("kind") not in BAYES or seed < seeds[0] + GP_SEEDS)
    ]
    standin = ctx.spec.harness == load_spec(STANDIN_SPEC).harness
    _MATRIX["tag"] = "standin" if standin else "reference"
    _MATRIX.update(ctx=ctx, table=table, full_trials=full_trials, budgets=budgets,
                   racing_calls=racing_calls_in_trials, truth=truth)  # fmt: skip
    _MATRIX["key"] = {
        "harness": ctx.spec.harness, "search": ctx.search.digest, "truth": round(truth, 12),
        "spec": ctx.spec.model_dump(mode="json", exclude={"base_dir"}),
        "promotion": PROMOTION["value"], "full_trials": full_trials,
        "racing_calls": racing_calls_in_trials, "budgets": budgets,
    }  # fmt: skip
    if not REUSE_CHECKED["value"]:
        verify_reuse(jobs)
    if CACHED_ONLY["value"]:  # assemble what earlier (partial, parallel) runs left in the cache
        jobs = [j for j in jobs if _cache_file(j).exists()]
    order = sorted(range(len(jobs)), key=lambda i: jobs[i][2] != "racing")
    if processes > 1:
        # fork: the workers inherit the prepared harness, case set and grid table as they are
        with multiprocessing.get_context("fork").Pool(processes) as pool:
            done = pool.map(_study_row, [jobs[i] for i in order], chunksize=1)
    else:
        done = [_study_row(jobs[i]) for i in order]
    by_job = dict(zip(order, done, strict=True))
    rows: list[dict[str, Any]] = []
    curves: dict[str, list[list[float]]] = {}
    for i in range(len(jobs)):
        row, curve = by_job[i]
        rows.append(row)
        curves.setdefault(row["run"], []).append(curve)
    return pd.DataFrame(rows), curves


def load_reuse(path: Path) -> None:
    """Fill `REUSE` from a committed search_cost.json (its per-seed rows, both harnesses); the
    default's rows only where its racing schedule is still the spec's."""
    got = json.loads(path.read_text())
    standin = got["slow_standin_harness"]
    parts = {
        "reference": (got, REPO / got["spec"], RACING_CALLS_IN_TRIALS),
        "standin": (standin, STANDIN_SPEC, STANDIN_RACING_CALLS_IN_TRIALS),
    }
    for tag, (part, spec_path, worth) in parts.items():
        rows, racing = part["per_seed"], part["racing"]
        # the default's rows only where both its schedule and its racing budget are today's
        budget = part["budgets"]["racing_case_evaluations"] == worth * part["n_cases"]
        same = budget and racing == load_spec(spec_path).racing.model_dump(mode="json")
        REUSE[tag] = {(r["run"], int(r["seed"])): r for r in rows if r["run"] != DEFAULT or same}
    REUSED_FROM["value"] = f"{path.relative_to(REPO)} at commit {_head_commit()}"


def _head_commit() -> str:
    import subprocess

    out = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
                         capture_output=True, text=True, check=False)  # fmt: skip
    return out.stdout.strip() or "unknown"


def verify_reuse(jobs: list[tuple[str, dict[str, Any], str, int]]) -> None:
    """Run each reused label's first seed again on this code; a label whose figures differ
    from the committed row's is run afresh (GPSampler is not re-run: ~15 min a study; its
    full-set path is the one the other peers check, only Optuna's sampler differs)."""
    committed = REUSE.get(_MATRIX["tag"], {})
    checked: set[str] = set()
    for job in jobs:
        label, kw, _, seed = job
        if (label, seed) not in committed or label in checked:
            continue
        checked.add(label)
        if kw.get("kind") in BAYES:
            continue
        again, _ = _study_row_run(job)
        old = committed[(label, seed)]
        keys = [k for k in again if k.startswith(("ratio@", "calls_to_")) or k == "trials"]
        diff = {k: (old.get(k), again[k]) for k in keys if not _same(old.get(k), again[k])}
        if diff:
            for key in [k for k in committed if k[0] == label]:
                del committed[key]
            print(f"  reuse check: {label} seed {seed} differs on this code {diff}: run afresh")
        else:
            print(f"  reuse check: {label} seed {seed} re-run on this code, same figures")


def _same(old: Any, new: Any) -> bool:
    """Equal up to the 10 digits the committed JSON keeps (pandas' to_json, which also writes
    an infinite 'calls to' as null)."""
    if old is None and isinstance(new, float) and math.isinf(new):
        return True
    if isinstance(old, int | float) and isinstance(new, int | float):
        return old == new or abs(float(old) - float(new)) <= 1e-9 * max(1.0, abs(float(new)))
    return old == new


def _job_key(job: tuple[str, dict[str, Any], str, int]) -> dict[str, Any]:
    label, kw, fidelity, seed = job
    key = {**_MATRIX["key"], "label": label, "sampler": kw, "fidelity": fidelity, "seed": seed}
    if kw.get("kind") in BAYES:
        key["gp_trials"] = GP_TRIALS["value"]
    return key


def _cache_file(job: tuple[str, dict[str, Any], str, int]) -> Path:
    return ps.cache_path(_job_key(job), job[1].get("kind") == "tpe")


def _study_row(job: tuple[str, dict[str, Any], str, int]) -> tuple[dict[str, Any], list[Any]]:
    label, kw, _fidelity, seed = job
    kit = kw.get("kind") == "tpe"
    committed = REUSE.get(_MATRIX["tag"], {})
    if (label, seed) in committed:
        row, curve = dict(committed[(label, seed)]), []  # no curve kept: left out of the plot
        for key in ("calls_to_0.95", "calls_to_0.99", "clairvoyant_to_0.95"):
            if row.get(key) is None:  # the JSON writes an infinite 'calls to' as null
                row[key] = float("inf")
        row.update(from_cache=True, reused_from=REUSED_FROM["value"])
    else:
        row, curve = ps.cached(_job_key(job), kit, lambda: _study_row_run(job))
    top = max(b for b in _MATRIX["budgets"] if row[f"ratio@{b}"] is not None)
    print(
        f"  {label:32s} seed {seed}: {row['trials']} trials ({row['pruned']} pruned, "
        f"{row['not_promoted']} of them not promoted), "
        f"{row['calls']} case evaluations, ratio@{top} {row[f'ratio@{top}']:.4f}, "
        f"calls to 0.95 {row['calls_to_0.95']:.0f}, sampler {row['sampler_s']:.1f} s "
        f"({row['seconds']} s{', cached' if row['from_cache'] else ''})",
        flush=True,
    )
    return row, curve


def _study_row_run(job: tuple[str, dict[str, Any], str, int]) -> tuple[dict[str, Any], list[Any]]:
    label, kw, fidelity, seed = job
    ctx, table, budgets, truth = (_MATRIX[k] for k in ("ctx", "table", "budgets", "truth"))
    n_cases = len(ctx.search)
    t1 = time.perf_counter()
    cfg = SamplerConfig(seed=seed, **kw)
    max_trials = GP_TRIALS["value"] if kw.get("kind") in BAYES else _MATRIX["full_trials"]
    if fidelity == "full":
        with grid_lookup(ctx, table):
            hist = run_one(ctx, cfg, "full", 10**12, max_trials)
        spent = max_trials * n_cases  # what the study was allowed, in case evaluations
    else:
        spent = _MATRIX["racing_calls"] * n_cases
        hist = run_one(ctx, cfg, "racing", spent, 10**6)
    row: dict[str, Any] = {
        "run": label,
        "seed": seed,
        "trials": len(hist),
        "pruned": int((hist["state"] == "PRUNED").sum()),
        "not_promoted": int((hist["spent_on"] == "not promoted").sum()),
        "calls": int(hist["calls"].iloc[-1]),
        "calls_to_0.95": calls_to(hist, 0.95, truth),
        "calls_to_0.99": calls_to(hist, 0.99, truth),
        "spend_to_0.95": spend_until(hist, 0.95, truth),
        "clairvoyant_to_0.95": clairvoyant_calls_to(
            hist, 0.95, truth, n_cases, ctx.spec.racing.sizes(n_cases)[0]
        ),
        "seconds": round(time.perf_counter() - t1, 1),
        "sampler_s": round(float(hist.attrs["sampler_s"]), 3),
    }
    for b in budgets:
        # past what a full-set study was allowed (GP's trial cap) there is no figure; a racing
        # study keeps what it reached, a lower bound (`lower_bound_from`)
        within = b * n_cases <= spent or fidelity == "racing"
        row[f"ratio@{b}"] = ratio_at(hist, b * n_cases, truth) if within else None
    row["lower_bound_from"] = min(
        (b for b in budgets if b * n_cases > spent and fidelity == "racing"), default=None
    )
    return row, hist[["calls", "hypervolume"]].to_numpy().tolist()


def spend_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Median case evaluations per kind of trial up to 0.95, per run (0 where none)."""
    rows = [{"run": r["run"], **r["spend_to_0.95"]} for r in frame.to_dict(orient="records")]
    table = pd.DataFrame(rows).fillna(0).groupby("run").median()
    return table.reindex(columns=sorted(table.columns)).astype(int)


def summarise(
    frame: pd.DataFrame, runs: list[tuple[str, dict[str, Any], str]], budgets: list[int],
    n_cases: int, n_seeds: int, unit: str,
) -> dict[str, Any]:  # fmt: skip
    """Median and minimum ratio per run and budget, and the median cost to 0.95 / 0.99."""
    cols = [f"ratio@{b}" for b in budgets]
    order = [f"{n}/{f}" for n, _, f in runs]
    med = frame.groupby("run")[cols].median().reindex(order)
    low = frame.groupby("run")[cols].min().reindex(order)
    cost = frame.groupby("run")[["calls_to_0.95", "calls_to_0.99", "trials", "pruned"]].median()
    cost["sampler_s_per_trial"] = ps.seconds_per_trial(frame).round(4)
    cost["seeds"] = frame.groupby("run")["seed"].count()
    cost = cost.reindex(order)
    margin, best = ps.margins(med, DEFAULT, PEERS)
    peer = pd.DataFrame({"margin": margin, "best peer": best}).T
    header = f"columns: {unit}, in full-set trials' worth (x {n_cases})"
    bounds = frame.dropna(subset=["lower_bound_from"]).groupby("run")["lower_bound_from"].min()
    for run, b in bounds.items():
        header += f"; {run} from {int(b)} on: the ratio reached at its budget (a lower bound)"
    printed = {
        "median": med.round(4).to_string(),
        "min": low.round(4).to_string(),
        "cost": cost.to_string(),
        "margin": peer.to_string(),
    }
    print(
        f"\nfeasible hypervolume found / true (median over up to {n_seeds} seeds: the cost "
        f"table gives each run's); {header}"
    )
    print(printed["median"])
    print("\nminimum over seeds")
    print(printed["min"])
    print(f"\n{unit} to reach 0.95 / 0.99 of the true hypervolume (median); sampler seconds "
          "per trial (median over seeds)")  # fmt: skip
    print(printed["cost"])
    print(f"\n{DEFAULT} median minus the best peer's ({', '.join(PEERS)}; gp only up to "
          f"{GP_TRIALS['value']} trials)")  # fmt: skip
    print(printed["margin"])
    return {"med": med, "low": low, "cost": cost, "cols": cols, "printed": printed,
            "margin": margin}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    global STANDIN_RACING_CALLS_IN_TRIALS, RACING_CALLS_IN_TRIALS
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--spec", default=str(REPO / "specs" / "reference_refund.yaml"))
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument(
        "--gp-trials", type=int, default=GP_TRIALS["value"], help="GPSampler's trial cap"
    )
    parser.add_argument("--out", default=str(RESULTS / "search_cost.json"))
    parser.add_argument("--first-seed", type=int, default=0, help="tuning uses seeds 10..")
    parser.add_argument(
        "--racing", default="", help="JSON overriding the spec's racing schedule (tuning)"
    )
    parser.add_argument(
        "--only",
        default="",
        help="comma-separated run labels (e.g. kit_default/racing): a "
        "partial run for tuning; prints its table, writes nothing",
    )
    parser.add_argument("--no-standin", action="store_true", help="skip the stand-in harness")
    parser.add_argument(
        "--cached-only",
        action="store_true",
        help="run no study: the table from the studies earlier runs cached (seeds per run shown)",
    )
    parser.add_argument(
        "--promotion",
        default=None,
        choices=["estimated_gain", "possible"],
        help="override racing's promotion rule (tuning only; default: the spec's own)",
    )
    parser.add_argument(
        "--processes", type=int, default=1, help="studies run at once (figures are unchanged)"
    )
    parser.add_argument(
        "--reuse-committed",
        action="store_true",
        help="take the peers' and the kit's full-set rows from the committed --out JSON "
        "(after re-running each label's first seed to check them); run racing afresh",
    )
    parser.add_argument(
        "--reuse-checked",
        action="store_true",
        help="with --reuse-committed: skip the first-seed re-runs (an earlier invocation on "
        "the same code printed them identical)",
    )
    parser.add_argument(
        "--standin-only",
        action="store_true",
        help="run only the stand-in part and store it in the existing --out JSON",
    )
    parser.add_argument(
        "--standin-racing-trials",
        type=int,
        default=STANDIN_RACING_CALLS_IN_TRIALS,
        help="the stand-in racing budget in full-set trials' worth of case evaluations",
    )
    parser.add_argument(
        "--racing-trials",
        type=int,
        default=RACING_CALLS_IN_TRIALS,
        help="the reference racing budget in full-set trials' worth of case evaluations",
    )
    args = parser.parse_args(argv)
    STANDIN_RACING_CALLS_IN_TRIALS = args.standin_racing_trials
    RACING_CALLS_IN_TRIALS = args.racing_trials
    RACING_OVERRIDE.update(json.loads(args.racing) if args.racing else {})
    PROMOTION["value"] = args.promotion
    GP_TRIALS["value"] = args.gp_trials
    CACHED_ONLY["value"] = args.cached_only
    if args.reuse_committed:
        load_reuse(Path(args.out))
        REUSE_CHECKED["value"] = args.reuse_checked
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    if args.standin_only:
        out = Path(args.out)
        result = json.loads(out.read_text())
        load = [round(x, 2) for x in os.getloadavg()]
        only = [x for x in args.only.split(",") if x]
        standin = run_standin(
            list(range(args.first_seed, args.first_seed + args.seeds)), args.processes, only
        )
        if only:
            return 0  # a partial run: printed, not stored
        standin["load_average_before"] = load
        standin["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
        result = json.loads(out.read_text())  # again: a reference run may have written it since
        result["slow_standin_harness"] = standin
        margin = pd.Series(result["default_minus_best_peer"], dtype=float)
        result["goals"] = {
            k: v for k, v in result["goals"].items() if k not in ISSUE_33_STANDIN_GOALS
        }
        result["goals"].update(issue_33_goals(margin, standin))
        out.write_text(json.dumps(result, indent=1) + "\n")
        print(f"wrote the stand-in section of {out} and the goals that read it")
        for k, v in result["goals"].items():
            print(f"{k}: {v['measured']} (goal {v['goal']}): {'met' if v['met'] else 'NOT met'}")
        return 0
    load_before = os.getloadavg()
    spec = load_spec(args.spec)
    if args.racing:
        racing = {**spec.racing.model_dump(), **json.loads(args.racing)}
        spec = spec.model_copy(update={"racing": type(spec.racing).model_validate(racing)})
    ctx = prepare(spec)
    n_cases = len(ctx.search)
    grid, enum_info = se.enumerate_grid(ctx, processes=2)
    truth = se.true_front(ctx, grid)
    true_hv = truth["hypervolume"]
    print(
        f"true feasible front: {truth['n_front_points']} points, HV {true_hv:.6f}; "
        f"search set {n_cases} cases; racing stages {spec.racing.sizes(n_cases)}, "
        f"promotion {PROMOTION['value'] or spec.racing.promotion}"
    )
    seeds = list(range(args.first_seed, args.first_seed + args.seeds))
    only = [x for x in args.only.split(",") if x]
    t0 = time.perf_counter()
    frame, curves = run_matrix(
        ctx, RUNS, seeds, lookup_table(ctx, grid), FULL_TRIALS, RACING_CALLS_IN_TRIALS,
        TRIAL_BUDGETS, true_hv, only, args.processes,
    )  # fmt: skip
    ref = summarise(frame, RUNS, TRIAL_BUDGETS, n_cases, len(seeds), "case evaluations")
    if only:
        if not args.no_standin:
            run_standin(seeds, args.processes, only)
        return 0
    med, cols, cost = ref["med"], ref["cols"], ref["cost"]
    full_to = cost.loc["kit_default/full", "calls_to_0.95"]
    racing_to = cost.loc["kit_default/racing", "calls_to_0.95"]
    share = float(racing_to / full_to) if np.isfinite(full_to) else float("nan")
    racing_at_100 = float(med.loc["kit_default/racing", "ratio@100"])
    full_at_200 = float(med.loc["kit_default/full", "ratio@200"])
    never_below = {
        other: bool(
            all(med.loc["kit_default/full", c] >= med.loc[f"{other}/full", c] for c in cols)
        )
        for other in ("random", "optuna_default")
    }
    spend = spend_table(frame)
    print("\ncase evaluations up to the trial that reached 0.95, by what they bought (median)")
    print(spend.to_string())
    kit_full = frame[frame["run"] == "kit_default/full"]
    clairvoyant_to = float(kit_full["clairvoyant_to_0.95"].median())
    clairvoyant = {
        "calls_to_0.95_median": clairvoyant_to,
        "share_of_full": round(clairvoyant_to / full_to, 4) if np.isfinite(full_to) else None,
        "per_seed_share": [
            round(c / f, 4)
            for c, f in zip(kit_full["clairvoyant_to_0.95"], kit_full["calls_to_0.95"], strict=True)
        ],
    }
    print(
        f"\na clairvoyant racer on full-set TPE's own proposals (the full set only for trials "
        f"that raise the hypervolume, the smoke stage for the rest) needs a median "
        f"{clairvoyant_to:.0f} case evaluations to 0.95: {clairvoyant['share_of_full']} of "
        f"full-set TPE (per seed {clairvoyant['per_seed_share']})"
    )
    goals = {
        "racing_share_of_calls_to_0.95": {
            "goal": "<= 0.25",
            "measured": round(share, 4),
            "met": bool(share <= 0.25),
            "seeds": {
                r: int(cost.loc[r, "seeds"]) for r in ("kit_default/racing", "kit_default/full")
            },
        },
        "racing_ratio_at_100_trial_calls": {
            "goal": ">= 0.99",
            "measured": round(racing_at_100, 4),
            "met": bool(racing_at_100 >= 0.99),
            "note": f"a lower bound: racing ran to {RACING_CALLS_IN_TRIALS} trials' worth"
            if RACING_CALLS_IN_TRIALS < 100
            else "",
        },
        "full_ratio_at_200": {
            "goal": ">= 0.99",
            "measured": round(full_at_200, 4),
            "met": bool(full_at_200 >= 0.99),
        },
    }
    standin = None if args.no_standin else run_standin(seeds, args.processes)
    if standin is None and Path(args.out).exists():  # keep a stand-in section run apart
        kept = json.loads(Path(args.out).read_text()).get("slow_standin_harness")
        standin = kept if isinstance(kept, dict) else None
    goals.update(issue_33_goals(ref["margin"], standin))
    print()
    for k, v in goals.items():
        print(f"{k}: {v['measured']} (goal {v['goal']}): {'met' if v['met'] else 'NOT met'}")
    print(
        f"kit default (full) median never below random / optuna default, any budget: {never_below}"
    )
    result = {
        "spec": str(Path(args.spec).resolve().relative_to(REPO)),
        "harness": spec.harness,
        "n_cases": n_cases,
        "racing": {
            **spec.racing.model_dump(mode="json"),
            "promotion": PROMOTION["value"] or spec.racing.promotion,
        },
        "gp_trials": GP_TRIALS["value"],
        "racing_stage_sizes": spec.racing.sizes(n_cases),
        "optuna": optuna.__version__,
        "runs": [{"name": n, "sampler": kw, "fidelity": f} for n, kw, f in RUNS],
        "budgets": {
            "full_trials": FULL_TRIALS,
            "racing_case_evaluations": RACING_CALLS_IN_TRIALS * n_cases,
            "table_columns": f"case evaluations in full-set trials' worth (x {n_cases})",
        },
        "seeds": seeds,
        "truth": truth,
        "enumeration": enum_info,
        "slow_standin_harness": standin if standin is not None else "not run (--no-standin)",
        "seconds": round(time.perf_counter() - t0, 1),
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "printed": ref["printed"],
        "median_ratio": json.loads(med.to_json(orient="index")),
        "min_ratio": json.loads(ref["low"].to_json(orient="index")),
        "default_minus_best_peer": json.loads(ref["margin"].to_json()),
        "sampler_s_per_trial": json.loads(cost["sampler_s_per_trial"].to_json()),
        "calls_to_0.95_median": json.loads(cost["calls_to_0.95"].to_json()),
        "seeds_per_run": json.loads(cost["seeds"].to_json()),
        **ps.run_conditions(frame),
        "kit_default_full_never_below": never_below,
        "spend_to_0.95_median": json.loads(spend.to_json(orient="index")),
        "clairvoyant_racing_on_full_proposals": clairvoyant,
        "goals": goals,
        "per_seed": json.loads(frame.to_json(orient="records")),
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    plot(curves, true_hv, n_cases, out.with_suffix(".png"))
    print(f"wrote {out} and {out.with_suffix('.png')}")
    return 0


#: Goals `issue_33_goals` sets (a stand-in-only run recomputes them).
ISSUE_33_STANDIN_GOALS = (
    "default_vs_best_peer_min_margin",
    "standin_racing_share_of_calls_to_0.95",
    "sampler_overhead_share_standin_trial",
)


def issue_33_goals(margin: pd.Series, standin: dict[str, Any] | None) -> dict[str, Any]:
    """The default against its best peer on both harnesses, racing's share on the stand-in,
    and the sampler's share of a real stand-in trial (peer_samplers.py --overhead)."""
    goals: dict[str, Any] = {}
    if standin is None:
        return goals
    both = [*margin.tolist(), *standin["default_minus_best_peer"].values()]
    seen = [v for v in both if v is not None and v == v]
    worst = min(seen) if seen else float("nan")
    goals["default_vs_best_peer_min_margin"] = {
        "goal": ">= 0.0",
        "measured": round(worst, 4),
        # a budget with no figure for the default or every peer is not a margin met
        "met": bool(len(seen) == len(both) and worst >= 0.0),
        "budgets_without_a_margin": len(both) - len(seen),
        "gp": f"{GP_TRIALS['value']} trials, first {GP_SEEDS} seeds (GPSampler and BoTorch qNEHVI)",
    }
    share = standin["racing_share_of_calls_to_0.95"]
    goals["standin_racing_share_of_calls_to_0.95"] = {
        "goal": "<= 0.5",
        "measured": None if share is None else round(share, 4),
        "met": bool(share is not None and share <= 0.5),
        "seeds": standin["seeds_per_run"],
    }
    over = json.loads(ps.OVERHEAD_OUT.read_text()) if ps.OVERHEAD_OUT.exists() else None
    current = over is not None and over["code"] == ps.code_digest(kit=True)
    goals["sampler_overhead_share_standin_trial"] = {
        "goal": "<= 0.05",
        "measured": over["share"] if current else None,
        "met": bool(current and over["share"] <= 0.05),
        "source": str(ps.OVERHEAD_OUT.relative_to(REPO))
        + ("" if current else ": missing or measured on other code; run peer_samplers.py"),
    }
    return goals


def plot(curves: dict[str, list[list[float]]], truth: float, n_cases: int, path: Path) -> None:
    """Median (line) and minimum (dotted) ratio over seeds against case evaluations."""
    import matplotlib

    matplotlib.use("Agg")  # a script writing a file, not a notebook
    import matplotlib.pyplot as plt

    grid = np.linspace(0, 200 * n_cases, 401)
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for label, runs in curves.items():
        ys = []
        for run in [r for r in runs if r]:  # a reused row has no curve
            arr = np.asarray(run)  # (cumulative calls, hypervolume so far), non-decreasing
            idx = np.searchsorted(arr[:, 0], grid, side="right") - 1
            y = np.where(idx >= 0, arr[np.maximum(idx, 0), 1] / truth, 0.0)
            ys.append(np.where(grid > arr[-1, 0], np.nan, y))  # past the run's budget
        if not ys:
            continue
        stack = np.vstack(ys)
        (line,) = ax.plot(grid / n_cases, np.nanmedian(stack, axis=0), label=label)
        ax.plot(grid / n_cases, np.nanmin(stack, axis=0), ":", color=line.get_color())
    ax.axhline(0.99, color="grey", lw=0.8)
    ax.axhline(0.95, color="grey", lw=0.8, ls="--")
    ax.set_xlabel(f"case evaluations (full-set trials' worth, x {n_cases} cases)")
    ax.set_ylabel("feasible HV found / true")
    ax.set_ylim(0.8, 1.002)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    sys.exit(main())
