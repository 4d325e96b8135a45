"""Tuning a slow, noisy, paid harness: concurrency, the result cache, repeats in the gate.

The bundled stand-in LLM harness (examples/standin_llm, real sleeps, median ~0.3 s per case)
on 200 cases per trial. Prints a table and writes benchmarks/results/slow_harness.json:

- wall seconds per trial at concurrency 1 / 8 / 32 (speedup at 32 over 1). At concurrency 1
  only the first `--c1-cases` cases are run (200 sequential calls take over a minute); the
  per-trial figure is projected from them by the ratio of the harness's seeded latencies
  (the same sleeps as in the 32 run), and the table says so.
- harness calls paid by a 20-trial sweep and by a re-run of the same sweep (the study deleted,
  its result cache kept), and the calls the cache saved inside the first sweep;
- the kit's overhead share of a concurrency-32 trial: (trial wall - ideal makespan) / trial
  wall, where the ideal makespan schedules the trial's actual sleeps on 32 slots in case order;
  plus the kit's CPU seconds per trial;
- the A/A promote rate of the gate with repeats 3 (and 1, on half as many runs, for contrast):
  the candidate differs from the baseline only in a knob that changes nothing scored (`tone`),
  each replicate with fresh noise; statistics only, so these runs do not sleep (time_scale 0).

    .venv/bin/python benchmarks/slow_harness.py [--trials 20] [--aa-runs 200]
"""

from __future__ import annotations

import argparse
import heapq
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import optuna
import pandas as pd
import yaml

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "standin_llm"
OUT = Path(__file__).resolve().parent / "results" / "slow_harness.json"
sys.path.insert(0, str(EXAMPLE))

from standin_llm import StandInLLM, make_cases  # noqa: E402

from contextos_lab.api import (  # noqa: E402
    ExecutionPolicy,
    convert,
    decide,
    execute,
    guardrails_of,
    load_spec,
    prepare,
    score_config,
    score_execution,
    spend_frame,
    spend_total,
    sweep,
)


def write_project(folder: Path, n_cases: int, concurrency: int, repeats: int) -> Path:
    """The example spec with real latency (time_scale 1), its own cases, no budget."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = make_cases(2 * n_cases + 40, seed=7)
    src = folder / "cases.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    convert(src, folder / "sets", heldout_share=0.5)
    for name in ("search", "heldout"):  # exactly n_cases per set
        path = folder / "sets" / f"{name}.jsonl"
        lines = path.read_text(encoding="utf-8").splitlines()[:n_cases]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    spec = yaml.safe_load((EXAMPLE / "spec.yaml").read_text(encoding="utf-8"))
    spec.update(
        harness_kwargs={"time_scale": 1.0},
        max_concurrency=concurrency,
        repeats=repeats,
        budget=None,
        n_trials=20,
    )
    (folder / "standin_llm.py").write_text(
        (EXAMPLE / "standin_llm.py").read_text(encoding="utf-8"), encoding="utf-8"
    )
    path = folder / "spec.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    return path


def ideal_makespan(latencies_s: list[float], slots: int) -> float:
    """Sleeps scheduled in case order on `slots` slots, each case on the first free slot."""
    free = [0.0] * slots
    for d in latencies_s:
        start = heapq.heappop(free)
        heapq.heappush(free, start + d)
    return max(free)


def concurrency_runs(spec_path: Path, c1_cases: int) -> dict[str, Any]:
    spec = load_spec(spec_path)
    ctx = prepare(spec)
    cases, hashes = ctx.search.cases, list(ctx.search.case_hashes)
    config = ctx.space.config(ctx.space.baseline_params())
    out: dict[str, Any] = {}
    for c in (32, 8, 1):
        sub, sub_h = (cases.head(c1_cases), hashes[:c1_cases]) if c == 1 else (cases, hashes)
        cpu0, t0 = time.process_time(), time.perf_counter()
        ex = execute(ctx.harness, sub, sub_h, config, ExecutionPolicy(max_concurrency=c))
        wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
        sleeps = (ex.results["latency_ms"] / 1000.0).tolist()
        out[c] = {"cases": len(sub), "wall_s": wall, "cpu_s": cpu, "sleeps": sleeps}
    full = sum(out[32]["sleeps"])
    part = sum(out[1]["sleeps"])
    out[1]["projected_wall_s"] = out[1]["wall_s"] * full / part
    return out


def overhead(spec_path: Path) -> dict[str, float]:
    """A full objective trial (execute, evaluate, score, spend) at concurrency 32, fresh calls."""
    spec = load_spec(spec_path)
    ctx = prepare(spec)
    ctx.read_cache = False
    params = ctx.space.baseline_params()
    cpu0, t0 = time.process_time(), time.perf_counter()
    score_config(ctx, params)
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    cfg = ctx.space.config(params)
    ex = execute(
        StandInLLM(time_scale=0.0),
        ctx.search.cases,
        ctx.search.case_hashes,
        cfg,
        ExecutionPolicy(),
    )  # same seeds, no sleeps: the latencies the trial slept
    ideal = ideal_makespan((ex.results["latency_ms"] / 1000.0).tolist(), 32)
    assert ctx.meter.as_dict()["calls"] == len(ctx.search)
    return {"trial_wall_s": wall, "ideal_makespan_s": ideal, "kit_cpu_s": cpu}


def sweeps(spec_path: Path, trials: int, out: Path) -> dict[str, Any]:
    spec = load_spec(spec_path)
    t0 = time.perf_counter()
    first = sweep(spec, out_dir=out, n_trials=trials, progress=False, fidelity="racing")
    first_s = time.perf_counter() - t0
    paid_first = spend_total(first.study)
    params_first = [t.params for t in first.study.trials]
    optuna.delete_study(study_name=spec.name, storage=first.storage)
    t0 = time.perf_counter()
    again = sweep(
        load_spec(spec_path), out_dir=out, n_trials=trials, progress=False, fidelity="racing"
    )
    again_s = time.perf_counter() - t0
    paid_again = spend_total(again.study)
    frame = spend_frame(first.study)
    return {
        "trials": trials,
        "first_calls": paid_first["calls"],
        "first_cache_hits": paid_first["cache_hits"],
        "first_wall_s": first_s,
        "first_distinct_configs": len({json.dumps(p, sort_keys=True) for p in params_first}),
        "rerun_calls": paid_again["calls"],
        "rerun_cache_hits": paid_again["cache_hits"],
        "rerun_wall_s": again_s,
        "same_trials": params_first == [t.params for t in again.study.trials],
        "paid_trial_wall_s_median": float(frame.loc[frame["calls"] > 0, "wall_s"].median()),
    }


def aa_rate(spec_path: Path, runs: int, repeats: int, n_boot: int) -> dict[str, Any]:
    """Baseline vs a config that differs only in an unscored knob, fresh noise per replicate."""
    spec = load_spec(spec_path)
    ctx = prepare(spec)
    cases = ctx.search.cases  # any 200 cases: the candidate has no true effect on them
    hashes = list(ctx.search.case_hashes)
    harness = StandInLLM(time_scale=0.0)
    base = ctx.space.config(ctx.space.baseline_params())
    cand = {**base, "tone": "friendly"}
    promoted = 0
    for r in range(runs):
        policy = ExecutionPolicy(max_concurrency=1, repeats=repeats, seed=1000 + r)
        frames = [
            score_execution(ctx.evaluate, cases, execute(harness, cases, hashes, cfg, policy))
            for cfg in (base, cand)
        ]
        (d,) = decide(
            frames[0].per_case,
            {"aa": frames[1].per_case},
            target_metric="utility",
            target_direction="increase",
            guardrails=guardrails_of(spec),
            seed=r,
            n_boot=n_boot,
        )
        promoted += d.verdict == "promote"
    return {"runs": runs, "repeats": repeats, "promoted": promoted, "rate": promoted / runs}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=200)
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--c1-cases", type=int, default=40)
    ap.add_argument("--aa-runs", type=int, default=200)
    ap.add_argument("--n-boot", type=int, default=1000)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    load0 = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        spec_path = write_project(Path(tmp) / "project", args.cases, 32, 1)
        conc = concurrency_runs(spec_path, args.c1_cases)
        done = {c: round(conc[c]["wall_s"], 2) for c in conc}
        print(f"[phase] concurrency walls {done}", flush=True)
        ovh = overhead(spec_path)
        print(f"[phase] overhead {ovh}", flush=True)
        sw = sweeps(spec_path, args.trials, Path(tmp) / "out")
        print(f"[phase] sweeps {sw}", flush=True)
        aa3 = aa_rate(spec_path, args.aa_runs, 3, args.n_boot)
        print(f"[phase] A/A {aa3}", flush=True)
        aa1 = aa_rate(spec_path, max(50, args.aa_runs // 2), 1, args.n_boot)
    load1 = os.getloadavg()
    wall = {c: conc[c].get("projected_wall_s", conc[c]["wall_s"]) for c in (1, 8, 32)}
    speedup = wall[1] / wall[32]
    share = (ovh["trial_wall_s"] - ovh["ideal_makespan_s"]) / ovh["trial_wall_s"]
    print(f"stand-in LLM harness, {args.cases} cases/trial, load {load0[0]:.1f} -> {load1[0]:.1f}")
    print(f"{'concurrency':>11} {'cases run':>9} {'wall s':>8} {'s/trial':>8} {'speedup':>8}")
    for c in (1, 8, 32):
        note = " (projected from the cases run)" if c == 1 else ""
        print(
            f"{c:>11} {conc[c]['cases']:>9} {conc[c]['wall_s']:>8.2f} {wall[c]:>8.2f} "
            f"{wall[1] / wall[c]:>8.1f}{note}"
        )
    print(
        f"trial at 32: wall {ovh['trial_wall_s']:.3f}s, ideal makespan "
        f"{ovh['ideal_makespan_s']:.3f}s, kit overhead share {share:.3f}, "
        f"kit CPU {ovh['kit_cpu_s']:.3f}s"
    )
    print(
        f"sweep of {sw['trials']} trials: paid {sw['first_calls']} calls, cache saved "
        f"{sw['first_cache_hits']} ({sw['first_distinct_configs']} distinct configs), "
        f"{sw['first_wall_s']:.1f}s; re-run paid {sw['rerun_calls']} calls "
        f"({sw['rerun_cache_hits']} cache hits, {sw['rerun_wall_s']:.1f}s, "
        f"same trials: {sw['same_trials']})"
    )
    for aa in (aa3, aa1):
        print(
            f"A/A repeats={aa['repeats']}: {aa['promoted']} of {aa['runs']} promoted "
            f"({aa['rate']:.3f})"
        )
    goals = {
        "speedup_concurrency_32": {"goal": ">= 20", "measured": round(speedup, 2)},
        "rerun_paid_calls": {"goal": "== 0", "measured": sw["rerun_calls"]},
        "aa_promote_rate_repeats_3": {"goal": "<= 0.05", "measured": aa3["rate"]},
        "overhead_share_0.3s_harness": {"goal": "<= 0.10", "measured": round(share, 4)},
    }
    goals["speedup_concurrency_32"]["met"] = speedup >= 20
    goals["rerun_paid_calls"]["met"] = sw["rerun_calls"] == 0
    goals["aa_promote_rate_repeats_3"]["met"] = aa3["rate"] <= 0.05
    goals["overhead_share_0.3s_harness"]["met"] = share <= 0.10
    result = {
        "benchmark": "slow, noisy, paid harness (stand-in LLM, real sleeps)",
        "goals": goals,
        "cases_per_trial": args.cases,
        "wall_s_per_trial": {str(c): round(wall[c], 3) for c in (1, 8, 32)},
        "concurrency_1_cases_run": conc[1]["cases"],
        "concurrency_1_note": "per-trial wall projected from the cases run, scaled by the "
        "ratio of their seeded latencies to the full trial's (same sleeps as at 32)",
        "kit_cpu_s": {str(c): round(conc[c]["cpu_s"], 3) for c in (1, 8, 32)},
        "overhead": {k: round(v, 4) for k, v in ovh.items()},
        "sweep": sw,
        "cache_saved_calls_within_first_sweep": sw["first_cache_hits"],
        "aa": {"repeats_3": aa3, "repeats_1": aa1, "n_boot": args.n_boot},
        "loadavg_before_after": [round(load0[0], 2), round(load1[0], 2)],
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
    }
    if args.out.is_file():  # keep what other scripts merged in (benchmarks/node_harness.py)
        previous = json.loads(args.out.read_text(encoding="utf-8"))
        result["goals"] = {**previous.get("goals", {}), **goals}
        if "node_harness" in previous:
            result["node_harness"] = previous["node_harness"]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(f"-> {args.out}")
    print(pd.DataFrame(goals).T.to_string())


if __name__ == "__main__":
    main()
