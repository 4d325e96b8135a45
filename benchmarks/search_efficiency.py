"""How much of the true feasible Pareto front each sampler finds, per trial budget.

Set: the reference harness's search set as every run sees it, scoped to the spec's target
intent (`support.refund`: 684 of the 2,000 cases in search_sets/, `autotune.cases.
scope_to_intent`; `--cases N` takes a seeded subset of those instead, used identically by the
enumeration and by every study). Fidelity: **full-set trials** (`fidelity: full`, set here
explicitly: the spec default is racing, whose cost in case evaluations search_cost.py measures),
so a budget here is a number of trials that each paid the whole set.

Every one of the 124,416 configs of the spec's grid is scored once (exhaustive enumeration,
cached under benchmarks/results/cache/), the true feasible front and its normalised
hypervolume are computed with the studies' own rules (floors and accepted deltas via
`constraint_values`, `normalised_losses`, `hypervolume`; the front with Optuna's public
`Study.best_trials`), then studies are run through the real trial path (`run_study`, the real
harness, in-memory storage, baseline enqueued as trial 0) for each sampler and seed, and the
hypervolume of the feasible front found within 25/50/100/200 trials is divided by the true one.
One run compares the kit's default sampler, random search, and Optuna's plain default
(TPESampler()). Nothing is patched: `--tune` runs its variants through the same real path.

The enumeration scores configs with `harness.reference.scoring.GridScorer` (the harness's own
array core, scored without building frames: ~2 ms instead of ~27 ms a config). It is equal to
run_batch + evaluate by tests/evaluators/test_grid_scorer.py, and this script re-scores a seeded
sample of 200 configs through `score_config` (the path every trial takes) and stops unless all
match exactly.

Goal (issue 7): median ratio >= 0.97 at 100 trials for the kit's default, and never below
random search at any budget.

    .venv/bin/python benchmarks/search_efficiency.py            # full: 5 seeds, up to 200
    .venv/bin/python benchmarks/search_efficiency.py --quick    # 2 seeds, up to 100
"""

from __future__ import annotations

import argparse
import hashlib
import json
import multiprocessing as mp
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import optuna
import pandas as pd
from pydantic import Field

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from contextos_lab.api import (  # noqa: E402
    EVALUATOR_ORDER,
    GridScorer,
    RunContext,
    SamplerConfig,
    case_set_from_frame,
    constraint_values,
    hypervolume,
    hypervolume_history,
    load_spec,
    normalised_losses,
    prepare,
    rebuild,
    run_study,
    score_config,
    trials_frame,
)

RESULTS = REPO / "benchmarks" / "results"
SAMPLERS: dict[str, dict[str, Any]] = {
    "kit_default": {"kind": "tpe"},
    "random": {"kind": "random"},
    "optuna_default": {"kind": "optuna_default"},
}

_CTX: RunContext | None = None
_SCORER: GridScorer | None = None
#: Configs re-scored through the full trial path (run_batch + evaluate) to check the grid.
N_VERIFY = 200


def _init_worker(payload: dict[str, Any]) -> None:
    global _CTX, _SCORER
    _CTX = rebuild(payload)
    _SCORER = GridScorer(_CTX.harness, _CTX.search.cases)  # type: ignore[arg-type]


def _score_chunk(chunk: list[dict[str, Any]]) -> np.ndarray:
    assert _CTX is not None and _SCORER is not None
    out = np.empty((len(chunk), len(EVALUATOR_ORDER)))
    for i, params in enumerate(chunk):
        s = _SCORER.scores(_CTX.space.config(params))
        out[i] = [s[e] for e in EVALUATOR_ORDER]
    return out


def grid_key(ctx: RunContext) -> str:
    """Changes whenever the harness, evaluators, cases or surfaces change."""
    h = hashlib.sha256()
    for folder in ("contextos_lab/harness/reference", "contextos_lab/evaluators"):
        for path in sorted((REPO / folder).glob("*.py")):
            h.update(path.read_bytes())
    h.update(ctx.search.manifest_hash.encode())
    h.update(ctx.search.digest.encode())
    h.update(json.dumps([s.model_dump(mode="json") for s in ctx.space.surfaces]).encode())
    return h.hexdigest()[:16]


def enumerate_grid(ctx: RunContext, processes: int) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Scores of every config in the grid (cached: the harness is deterministic).

    Scored by `GridScorer` (the harness's array core, scored without frames; equal to
    run_batch + evaluate by tests/evaluators/test_grid_scorer.py), then a seeded sample of
    `N_VERIFY` configs is re-scored through `score_config` (the path every trial takes) and
    must match exactly, or the benchmark stops.
    """
    cache = RESULTS / "cache" / f"grid_{grid_key(ctx)}.parquet"
    configs = list(ctx.space.enumerate())
    info: dict[str, Any] = {"cache": str(cache.relative_to(REPO))}
    meta = cache.with_suffix(".json")
    if cache.exists():
        frame = pd.read_parquet(cache)
        if meta.exists():
            info.update(json.loads(meta.read_text()))  # how the cached grid was made
        info["from_cache"] = True
    else:
        chunks = [configs[i : i + 2048] for i in range(0, len(configs), 2048)]
        t0 = time.perf_counter()
        with mp.get_context("spawn").Pool(
            processes, initializer=_init_worker, initargs=(ctx.worker_payload(),)
        ) as pool:
            parts: list[np.ndarray] = []
            for i, part in enumerate(pool.imap(_score_chunk, chunks)):
                parts.append(part)
                if i % 10 == 0:
                    done = sum(len(x) for x in parts)
                    print(
                        f"  enumerated {done}/{len(configs)} ({time.perf_counter() - t0:.0f} s)",
                        flush=True,
                    )
        elapsed = time.perf_counter() - t0
        scores = pd.DataFrame(np.vstack(parts), columns=list(EVALUATOR_ORDER))
        frame = pd.concat([pd.DataFrame(configs), scores], axis=1)
        cache.parent.mkdir(parents=True, exist_ok=True)
        frame.to_parquet(cache)
        made = {
            "enumeration_s": round(elapsed, 1),
            "processes": processes,
            "ms_per_config_per_process": round(elapsed * processes / len(configs) * 1000, 2),
            "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
        }
        meta.write_text(json.dumps(made, indent=1) + "\n")
        info.update(made)
        info["from_cache"] = False
        print(f"  enumeration: {elapsed:.1f} s on {processes} processes", flush=True)
    # the check: a seeded sample through the full trial path must agree bit for bit
    rng = np.random.default_rng(20260504)
    picks = sorted(rng.choice(len(configs), size=min(N_VERIFY, len(configs)), replace=False))
    t1 = time.perf_counter()
    for i in picks:
        full = score_config(ctx, configs[i])["scores"]
        row = frame.iloc[int(i)]
        assert all(row[k] == configs[i][k] for k in configs[i]), "grid rows out of order"
        fast = {e: float(row[e]) for e in EVALUATOR_ORDER}
        if fast != full:
            raise SystemExit(f"grid score mismatch at config {configs[i]}: {fast} != {full}")
    info["verified_configs"] = len(picks)
    info["verified_against"] = "autotune.objective.score_config (run_batch + evaluate)"
    info["full_path_ms_per_config"] = round((time.perf_counter() - t1) / len(picks) * 1000, 1)
    print(f"  verified {len(picks)} configs against the full trial path: identical", flush=True)
    return frame, info


def true_front(ctx: RunContext, grid: pd.DataFrame) -> dict[str, Any]:
    names = list(ctx.space.names)
    base = grid.loc[(grid[names] == pd.Series(ctx.space.baseline_params())).all(axis=1)]
    baseline = base.iloc[0].to_dict()
    scores = grid.to_dict(orient="records")
    feasible = np.array(
        [all(v <= 0 for v in constraint_values(ctx, s, baseline).values()) for s in scores]
    )
    losses = normalised_losses(grid.loc[feasible], ctx.spec)
    front = pareto_front(np.unique(losses, axis=0))
    return {
        "n_configs": len(grid),
        "n_feasible": int(feasible.sum()),
        "n_front_points": len(front),
        "hypervolume": hypervolume(front),
        "baseline": {
            k: baseline[k] for k in ("policy", "safety", "utility", "latency", "economics")
        },
    }


def pareto_front(losses: np.ndarray) -> np.ndarray:
    """The non-dominated rows of `losses` (all minimised), by Optuna's public Pareto helper:
    each row a completed trial of an in-memory study, the front its `best_trials`."""
    study = optuna.create_study(directions=["minimize"] * losses.shape[1])
    study.add_trials([optuna.trial.create_trial(values=row.tolist()) for row in losses])
    return np.array(sorted(t.values for t in study.best_trials))


def _run_job(job: tuple[str, dict[str, Any], int, int]) -> dict[str, Any]:
    """One study (in a pool worker): the real trial path, in-memory storage."""
    assert _CTX is not None
    name, kw, seed, budget = job
    t0 = time.perf_counter()
    study = run_study(
        _CTX, "memory", n_trials=budget, sampler=SamplerConfig(seed=seed, **kw), progress=False
    )
    hist = hypervolume_history(trials_frame(study), _CTX.spec)
    return {
        "sampler": name,
        "seed": seed,
        "hist": hist[["number", "hypervolume"]].to_numpy().tolist(),
        "seconds": time.perf_counter() - t0,
    }


# -- sampler tuning (--tune): Optuna-native TPE variants on held-out seeds ----------------------

#: Candidates for the kit's default, as TPESampler keyword arguments (all public, none
#: deprecated in Optuna 5). "kit_default" must match SamplerConfig(kind="tpe").build().
TUNING_VARIANTS: dict[str, dict[str, Any]] = {
    "kit_default": {"multivariate": True, "n_startup_trials": 10, "n_ei_candidates": 48},
    "startup_5": {"multivariate": True, "n_startup_trials": 5, "n_ei_candidates": 48},
    "startup_20": {"multivariate": True, "n_startup_trials": 20, "n_ei_candidates": 48},
    "ei_24": {"multivariate": True, "n_startup_trials": 10, "n_ei_candidates": 24},
    "ei_128": {"multivariate": True, "n_startup_trials": 10, "n_ei_candidates": 128},
    "independent": {"multivariate": False, "n_startup_trials": 10, "n_ei_candidates": 48},
}
TUNING_SEEDS = list(range(10, 30))  # disjoint from the reported seeds 0..4


class _TPEVariant(SamplerConfig):
    """A SamplerConfig building a TPESampler with explicit keyword arguments (tuning only)."""

    tpe: dict[str, Any] = Field(default_factory=dict)

    def build(self, worker_index: int = 0) -> optuna.samplers.BaseSampler:
        seed = None if self.seed is None else self.seed + worker_index
        return optuna.samplers.TPESampler(seed=seed, constant_liar=True, **self.tpe)


def _tune_job(job: tuple[str, int, int]) -> dict[str, Any]:
    assert _CTX is not None
    name, seed, budget = job
    cfg = _TPEVariant(seed=seed, tpe=TUNING_VARIANTS[name])
    study = run_study(_CTX, "memory", n_trials=budget, sampler=cfg, progress=False)
    hist = hypervolume_history(trials_frame(study), _CTX.spec)
    return {"variant": name, "seed": seed, "hist": hist.to_numpy().tolist()}


def tune(ctx: RunContext, truth: dict[str, Any], processes: int, budgets: list[int]) -> dict:
    jobs = [(name, seed, max(budgets)) for name in TUNING_VARIANTS for seed in TUNING_SEEDS]
    rows = []
    with mp.get_context("spawn").Pool(
        processes, initializer=_init_worker, initargs=(ctx.worker_payload(),)
    ) as pool:
        for out in pool.imap(_tune_job, jobs):
            hist = pd.DataFrame(out["hist"], columns=["number", "hypervolume"])
            for b in budgets:
                hv = float(hist.loc[hist["number"] < b, "hypervolume"].max())
                rows.append(
                    {
                        "variant": out["variant"],
                        "seed": out["seed"],
                        "budget": b,
                        "ratio": hv / truth["hypervolume"],
                    }
                )
    frame = pd.DataFrame(rows)
    stats = frame.groupby(["variant", "budget"])["ratio"].agg(["median", "min", "mean"])
    printed = {}
    for stat in ("median", "min", "mean"):
        table = stats[stat].unstack("budget").reindex(list(TUNING_VARIANTS)).round(4)
        printed[stat] = table.to_string()
        print(f"\ntuning, {stat} ratio over seeds {TUNING_SEEDS[0]}..{TUNING_SEEDS[-1]}")
        print(printed[stat])
    return {
        "seeds": TUNING_SEEDS,
        "variants": TUNING_VARIANTS,
        "scores_from": "the real trial path (run_study on the harness), as the main table",
        "printed": printed,
        "stats": {
            v: {
                str(b): {k: float(stats.loc[(v, b), k]) for k in ("median", "min", "mean")}
                for b in budgets
            }
            for v in TUNING_VARIANTS
        },
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--spec", default=str(REPO / "specs" / "reference_refund.yaml"))
    parser.add_argument("--quick", action="store_true", help="2 seeds, budgets up to 100")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--processes", type=int, default=2, help="enumeration and studies")
    parser.add_argument(
        "--cases",
        type=int,
        default=None,
        help="a seeded N-case subset of the search set (same for grid and studies); default all",
    )
    parser.add_argument("--out", default=str(RESULTS / "search_efficiency.json"))
    parser.add_argument("--enumerate-only", action="store_true", help="grid and true front only")
    parser.add_argument(
        "--tune",
        action="store_true",
        help="also compare TPE variants on held-out seeds 10..29 (the real trial path)",
    )
    args = parser.parse_args(argv)
    budgets = [25, 50, 100] if args.quick else [25, 50, 100, 200]
    seeds = list(range(2 if args.quick else args.seeds))
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    load_before = os.getloadavg()

    spec = load_spec(args.spec)
    ctx = prepare(spec.model_copy(update={"fidelity": "full"}))  # full-set trials, stated
    if args.cases:
        sub = ctx.search.cases.sample(args.cases, random_state=20260504).sort_index()
        ctx.search = case_set_from_frame(sub, ctx.search.path + f"[seeded {args.cases}]")
    print(
        f"grid: {ctx.space.size()} configs over {len(ctx.space.names)} surfaces; "
        f"search set {len(ctx.search)} cases (intent {spec.target.intent!r}); "
        "fidelity: full-set trials"
    )
    t0 = time.perf_counter()
    grid, enum_info = enumerate_grid(ctx, args.processes)
    truth = true_front(ctx, grid)
    print(
        f"true feasible front: {truth['n_front_points']} points, "
        f"{truth['n_feasible']}/{truth['n_configs']} feasible, "
        f"HV {truth['hypervolume']:.6f} ({time.perf_counter() - t0:.0f} s)"
    )
    if args.enumerate_only:
        return 0
    tuning = (
        tune(ctx, truth, args.processes, [b for b in budgets if b <= 100]) if args.tune else None
    )

    jobs = [(name, kw, seed, max(budgets)) for name, kw in SAMPLERS.items() for seed in seeds]
    t1 = time.perf_counter()
    runs: list[dict[str, Any]] = []
    with mp.get_context("spawn").Pool(
        args.processes, initializer=_init_worker, initargs=(ctx.worker_payload(),)
    ) as pool:
        for out in pool.imap(_run_job, jobs):
            hist = pd.DataFrame(out["hist"], columns=["number", "hypervolume"])
            for b in budgets:
                hv = float(hist.loc[hist["number"] < b, "hypervolume"].max())
                runs.append(
                    {
                        "sampler": out["sampler"],
                        "seed": out["seed"],
                        "budget": b,
                        "hv": hv,
                        "ratio": hv / truth["hypervolume"],
                    }
                )
            print(
                f"  {out['sampler']:15s} seed {out['seed']}: ratio@{max(budgets)} "
                f"{runs[-1]['ratio']:.4f} ({out['seconds']:.1f} s)",
                flush=True,
            )
    studies_s = time.perf_counter() - t1

    table = (
        pd.DataFrame(runs)
        .groupby(["sampler", "budget"])["ratio"]
        .agg(["median", "min", "max"])
        .reset_index()
    )
    printed = {
        stat: table.pivot(index="sampler", columns="budget", values=stat)
        .round(4)
        .reindex(list(SAMPLERS))
        .to_string()
        for stat in ("median", "min")
    }
    print("\nfeasible hypervolume found / true feasible hypervolume (median over seeds)")
    print(printed["median"])
    print("\nminimum over seeds")
    print(printed["min"])
    med = table.set_index(["sampler", "budget"])["median"]
    goal_097 = bool(med[("kit_default", 100)] >= 0.97)
    never_below_random = bool(all(med[("kit_default", b)] >= med[("random", b)] for b in budgets))
    print(
        f"\nkit default median @100 >= 0.97: {goal_097}; "
        f"never below random (median): {never_below_random}"
    )
    result = {
        "spec": str(Path(args.spec).relative_to(REPO))
        if args.spec.startswith(str(REPO))
        else args.spec,
        "mode": "quick" if args.quick else "full",
        "fidelity": "full: every trial pays the whole (intent-scoped) search set",
        "case_set": {
            "path": str(Path(ctx.search.path).relative_to(REPO))
            if ctx.search.path.startswith(str(REPO))
            else ctx.search.path,
            "n_cases": len(ctx.search),
            "intent": spec.target.intent,
            "subset": f"seeded {args.cases}-case sample (random_state 20260504)"
            if args.cases
            else "none: the intent-scoped search set, for the enumeration and every study",
            "manifest_hash": ctx.search.manifest_hash,
            "digest": ctx.search.digest,
        },
        "optuna": optuna.__version__,
        "samplers": {k: SamplerConfig(**v).model_dump() for k, v in SAMPLERS.items()},
        "budgets": budgets,
        "budget_counts": "trials including the baseline (trial 0), as run_study counts them",
        "seeds": seeds,
        "enumeration": enum_info,
        "truth": truth,
        "studies_s": round(studies_s, 1),
        "processes": args.processes,
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "median_ratio": {s: {str(b): float(med[(s, b)]) for b in budgets} for s in SAMPLERS},
        "min_ratio": {
            s: {
                str(b): float(table.set_index(["sampler", "budget"])["min"][(s, b)])
                for b in budgets
            }
            for s in SAMPLERS
        },
        "printed_median_table": printed["median"],
        "goals": {
            "kit_default_median_at_100": {
                "goal": ">= 0.97",
                "measured": round(float(med[("kit_default", 100)]), 4),
                "met": goal_097,
            },
            "kit_default_never_below_random": {
                "goal": "median >= random's at every budget",
                "measured": never_below_random,
                "met": never_below_random,
            },
        },
        "runs": runs,
    }
    if tuning is not None:
        result["sampler_tuning"] = tuning
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
