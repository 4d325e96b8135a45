"""The generalisation protocol of benchmarks/failure_attribution.py (issue 39), kept apart so
the script stays a table: the frozen set-up's check and hash, in-set and out-of-system scores
with top-1/top-3 and calibration, and the learning curve of `attribution calibrate`."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path
from typing import Any

import numpy as np

from contextos_lab.api import (
    GRID,
    LOW_CONFIDENCE,
    PRIOR_WEIGHTS,
    STEP_FEATURES,
    STRENGTHS,
    SYSTEM_FAMILIES,
    TEMPERATURE_BOUNDS,
    TOP_K,
    Annotated,
    LinearAttributor,
    agent_key,
    calibrate_chosen,
    cross_validated,
    fit_model,
    reliability,
    run_rows,
    run_system_rows,
    top_k_agreement,
    trivial_baselines,
)

ROOT = Path(__file__).resolve().parents[1]
SETUP = ROOT / "benchmarks" / "failure_attribution_setup.json"


def frozen_setup() -> dict[str, Any]:
    """The committed set-up with its sha256 and commit; SystemExit when the code's constants
    are not the ones it froze (a changed set-up must be re-frozen, visibly, before a run)."""
    raw = SETUP.read_bytes()
    setup = json.loads(raw)
    code = {
        "grid": [list(pc) for pc in GRID],
        "prior_weights": dict(PRIOR_WEIGHTS),
        "top_k": TOP_K,
        "low_confidence_below": LOW_CONFIDENCE,
        "temperature_bounds": list(TEMPERATURE_BOUNDS),
        "prior_strengths": list(STRENGTHS),
        "system_features": list(SYSTEM_FAMILIES),
        "features": len(STEP_FEATURES),
    }
    frozen = {
        "grid": setup["fit"]["grid"],
        "prior_weights": setup["fit"]["prior_weights"],
        "top_k": setup["ranking"]["top_k"],
        "low_confidence_below": setup["ranking"]["low_confidence_below"],
        "temperature_bounds": setup["ranking"]["temperature_bounds"],
        "prior_strengths": setup["calibration"]["prior_strengths"],
        "system_features": setup["calibration"]["system_features"],
        "features": 44,
    }
    if code != frozen:
        changed = sorted(k for k in code if code[k] != frozen[k])
        raise SystemExit(f"the code's set-up differs from {SETUP.name} in {changed}: re-freeze")
    commit = subprocess.run(
        ["git", "log", "-1", "--format=%H", "--", str(SETUP)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    return {
        "file": str(SETUP.relative_to(ROOT)),
        "sha256": hashlib.sha256(raw).hexdigest(),
        "frozen_in_commit": commit or None,
        "setup": setup,
    }


def summed_agent_top1(atts: list[Any], key: list[Annotated]) -> float | None:
    """Agent top-1 read as the agent with the largest summed step probability: report only
    (the frozen reading is the agent the attribution names; both were compared on these data)."""
    pairs = [(a, str(k.agent)) for a, k in zip(atts, key, strict=True) if k.agent is not None]
    hits = [
        a is not None and bool(a.agents) and agent_key(a.agents[0][0]) == agent_key(g)
        for a, g in pairs
    ]
    return sum(hits) / len(pairs) if pairs else None


def scored(atts: list[Any], key: list[Annotated]) -> dict[str, Any]:
    rel = reliability(atts, key)
    return {
        "runs": len(key),
        **top_k_agreement(atts, key),
        "agent_top1_by_summed_probability": summed_agent_top1(atts, key),
        "ece": rel["ece"],
        "reliability": rel["bins"],
        "low_confidence_share": float(np.mean([a is None or a.low_confidence for a in atts])),
        # agent top-3 cannot miss where a run has at most three candidate agents
        "runs_with_at_most_3_candidate_agents": float(
            np.mean([a is not None and len(a.agents) <= 3 for a in atts])
        ),
    }


def fitted(key: list[Annotated]) -> LinearAttributor:
    """The frozen fitting procedure on every run of `key` (weights, then their temperature on
    the inner folds' out-of-fold scores)."""
    parts = [run_rows(k.run, k.step) for k in key]
    weights, temperature = fit_model(parts, range(len(parts)))
    return LinearAttributor(weights, "fitted", temperature)


def in_set(key: list[Annotated], folds: int, seed: int = 0) -> dict[str, Any]:
    runs, steps = [k.run for k in key], [k.step for k in key]
    return scored(cross_validated(runs, steps, folds=folds, seed=seed), key)


def out_of_system(model: LinearAttributor, key: list[Annotated]) -> dict[str, Any]:
    return {
        **scored([model.attribute(k.run) for k in key], key),
        "trivial": trivial_baselines(key),
        "answer_is_a_candidate": float(np.mean([run_rows(k.run, k.step)[1].any() for k in key])),
    }


def _top1(
    weights: dict[str, float],
    part: tuple[np.ndarray, np.ndarray, list[int]],
    own: list[dict[str, float]],
) -> int:
    """1 when the best candidate under `weights` (generic and per-system) is the answer."""
    x, y, _ = part
    if not len(y):
        return 0
    generic = x @ np.array([weights[f] for f in STEP_FEATURES])
    extra = np.array([sum(weights.get(k, 0.0) * v for k, v in row.items()) for row in own])
    return int(y[int(np.argmax(generic + extra))])


def learning_curve(
    key: list[Annotated], prior: LinearAttributor, ks: list[int], splits: int, seed: int
) -> dict[str, Any]:
    """Step top-1 on each split's test runs (those not among its first max(ks)) with k labelled
    runs calibrated toward `prior` (k = 0: the prior alone); nested prefixes per split."""
    parts = [run_rows(k.run, k.step) for k in key]
    own = [run_system_rows(k.run) for k in key]
    rng = np.random.default_rng(seed)
    largest = max(ks)
    per_k: dict[int, list[float]] = {k: [] for k in ks}
    kept = dict.fromkeys(ks, 0)  # splits whose leave-one-out choice kept the prior's ranking
    for _ in range(splits):
        order = rng.permutation(len(parts))
        test = order[largest:]
        for k in ks:
            labelled = [parts[i] for i in order[:k]]
            system = [own[i] for i in order[:k]]
            fit, strength = calibrate_chosen(labelled, prior.weights, prior.temperature, system)
            per_k[k].append(sum(_top1(fit.weights, parts[i], own[i]) for i in test) / len(test))
            kept[k] += int(not np.isfinite(strength))
    return {
        "test_runs": len(parts) - largest,
        "step_top1": {
            str(k): {
                "median": float(np.median(v)),
                "mean": float(np.mean(v)),
                "q25": float(np.quantile(v, 0.25)),
                "q75": float(np.quantile(v, 0.75)),
            }
            for k, v in per_k.items()
        },
        "gain_over_k0": {
            str(k): float(np.median(np.array(per_k[k]) - np.array(per_k[0]))) for k in ks if k
        },
        "splits_worse_than_k0": {
            str(k): int(np.sum(np.array(per_k[k]) < np.array(per_k[0]))) for k in ks if k
        },
        "splits_better_than_k0": {
            str(k): int(np.sum(np.array(per_k[k]) > np.array(per_k[0]))) for k in ks if k
        },
        "splits_keeping_the_prior_ranking": {str(k): kept[k] for k in ks if k},
    }


def reliability_figure(rows: dict[str, list[dict[str, Any]]], path: Path) -> Path:
    """Stated probability vs share correct, one line per evaluation."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 5))
    ax.plot([0, 1], [0, 1], color="grey", linestyle=":", label="perfectly calibrated")
    for label, bins in rows.items():
        ax.plot([b["stated"] for b in bins], [b["observed"] for b in bins], marker="o", label=label)
    ax.set_xlabel("stated probability of the top step")
    ax.set_ylabel("share of runs where it is the annotated step")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


__all__ = [
    "direction",
    "frozen_setup",
    "generalisation",
    "in_set",
    "learning_curve",
    "out_of_system",
    "print_generalisation",
    "reliability_figure",
    "scored",
]


def direction(train: list[Annotated], test: list[Annotated], curve: dict[str, Any]) -> dict:
    """Fit on every run of `train`, score `test` (out of system), and `test`'s learning curve
    with the `train` fit as its prior."""
    model = fitted(train)
    return {
        "temperature": model.temperature,
        "out_of_system": out_of_system(model, test),
        "learning_curve": learning_curve(test, model, **curve),
    }


def generalisation(
    ag: list[Annotated], tau: list[Annotated], setup: dict[str, Any], ag_folds: int
) -> dict[str, Any]:
    """In-set CV of each source, both out-of-system directions and both learning curves
    (frozen set-up), as four independent pieces on two processes."""
    from concurrent.futures import ProcessPoolExecutor

    proto = setup["setup"]["protocol"]["learning_curve"]
    curve = {"ks": proto["k"], "splits": proto["splits"], "seed": proto["seed"]}
    with ProcessPoolExecutor(max_workers=2) as pool:
        ag_in = pool.submit(in_set, ag, ag_folds)
        if not tau:
            return {"in_set": {"algorithm_generated": ag_in.result()}}
        to_tau = pool.submit(direction, ag, tau, curve)
        to_ag = pool.submit(direction, tau, ag, curve)
        tau_in = pool.submit(in_set, tau, 10)
        a, b = to_tau.result(), to_ag.result()
        return {
            "fitted_temperature": {
                "algorithm_generated": a["temperature"],
                "tau_bench": b["temperature"],
            },
            "in_set": {"algorithm_generated": ag_in.result(), "tau_bench_10fold": tau_in.result()},
            "out_of_system": {
                "algorithm_generated_to_tau_bench": a["out_of_system"],
                "tau_bench_to_algorithm_generated": b["out_of_system"],
            },
            "learning_curve": {
                "tau_bench (prior: fitted on Algorithm-Generated)": a["learning_curve"],
                "algorithm_generated (prior: fitted on tau-bench)": b["learning_curve"],
            },
        }


def print_generalisation(g: dict[str, Any], ag_protocol: str) -> None:
    if "out_of_system" not in g:
        return
    rows = {
        f"in set: Algorithm-Generated, {ag_protocol}": g["in_set"]["algorithm_generated"],
        "in set: tau-bench, 10-fold": g["in_set"]["tau_bench_10fold"],
        "out of system: Algorithm-Generated -> tau-bench": g["out_of_system"][
            "algorithm_generated_to_tau_bench"
        ],
        "out of system: tau-bench -> Algorithm-Generated": g["out_of_system"][
            "tau_bench_to_algorithm_generated"
        ],
    }
    print(
        f"\n{'generalisation':<50}{'agent@1':>8}{'agent@3':>8}{'step@1':>8}{'step@3':>8}"
        f"{'ECE':>7}{'low':>6}"
    )
    for label, r in rows.items():
        cells = [r["agent"]["top1"], r["agent"]["top3"], r["step"]["top1"], r["step"]["top3"]]
        print(
            f"{label:<50}"
            + "".join(f"{'-' if c is None else format(c, '.3f'):>8}" for c in cells)
            + f"{r['ece']:>7.3f}{r['low_confidence_share']:>6.2f}"
        )
    summed = ", ".join(f"{r['agent_top1_by_summed_probability']:.3f}" for r in rows.values())
    print(f"agent@1 read as the largest summed step probability (report only): {summed}")
    for label, curve in g["learning_curve"].items():
        meds = "  ".join(
            f"k={k}: {v['median']:.3f} [{v['q25']:.3f}, {v['q75']:.3f}]"
            for k, v in curve["step_top1"].items()
        )
        print(f"learning curve, {label}, step@1 median [IQR] on {curve['test_runs']} runs:")
        print(f"  {meds}")
        print(
            f"  median gain over k=0: {curve['gain_over_k0']}; splits worse / better than "
            f"k=0: {curve['splits_worse_than_k0']} / {curve['splits_better_than_k0']}; "
            f"prior's ranking kept: {curve['splits_keeping_the_prior_ranking']}"
        )
