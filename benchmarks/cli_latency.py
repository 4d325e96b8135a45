"""How long `contextos-lab` takes before it does anything (issue 40), beside `optuna --help`.

Times, in fresh processes, `contextos-lab --help`, every `contextos-lab COMMAND --help` and the
light commands (`project --check`, `project`, `store verify` on an empty store the kit created,
`runs tail` of a one-record file, `schema`), each `--runs` times (>= 5), interleaved round by
round with `optuna --help` so a busy machine slows every row alike; the median of each row is
its figure (as hyperfine reports). A light command that exits non-zero stops the run: its
figure would time an error path. Beside each wall-clock median the table shows the median
CPU time (user + system) of the same runs, which a loaded machine inflates far less.
`--compare-tree DIR` times the same rows on another checkout (e.g. the code before this
change) in the same rounds.

Goals (issue 40): `help_median_s` <= 0.5 (the slowest median among `--help` and every
`COMMAND --help`), `light_commands_max_median_s` <= 0.8 (the slowest light command's median),
`help_vs_optuna_ratio` <= 1.5 (`help_median_s` over `optuna --help`'s median, same rounds).

    python benchmarks/cli_latency.py                 # 5 runs, writes results/cli_latency.json
    python benchmarks/cli_latency.py --runs 7 --compare-tree /tmp/old-checkout
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "cli_latency.json"
#: What `contextos-lab` runs (its console script is `contextos_lab.cli.app:main`).
ENTRY = "import sys; from contextos_lab.cli.app import main; sys.exit(main())"
#: Makes the empty store `store verify` checks (benchmarks reach the kit via `api` only).
CREATE_STORE = (
    "import sys; from contextos_lab.api import ExperienceStore; "
    "ExperienceStore(sys.argv[1], create=True)"
)
#: One command record as `runs tail` reads it (seed 003's feedback record).
RECORD = {
    "command_id": "cmd_1",
    "command": ["true"],
    "cwd": "/tmp",
    "started_at": "2026-01-01T00:00:00+00:00",
    "duration_ms": 1.0,
    "exit_code": 0,
    "stdout_tail": "",
    "stderr_tail": "",
    "stdout_lines": 0,
    "stderr_lines": 0,
}
GOALS = {"help_median_s": 0.5, "light_commands_max_median_s": 0.8, "help_vs_optuna_ratio": 1.5}


def _commands(tree: Path) -> list[str]:
    """The command names of a checkout, asked of that checkout (its `--help` lists them)."""
    out = subprocess.run(
        [sys.executable, "-c", ENTRY, "--help"],
        env=_env(tree),
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    listed = out.split("positional arguments:", 1)[1].split("options:", 1)[0]
    # a command's line is indented 4; its wrapped help continues further in
    lines = [ln for ln in listed.splitlines() if ln.startswith("    ") and ln[4:5].strip()]
    return [ln.split()[0] for ln in lines if not ln.split()[0].startswith("{")]


def _env(tree: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(tree), "PYTHONDONTWRITEBYTECODE": "1"}


def _light(scratch: Path) -> dict[str, list[str]]:
    store = scratch / "empty.db"
    subprocess.run(  # a store as the kit creates it, holding nothing (verify: "empty", exit 0)
        [sys.executable, "-c", CREATE_STORE, f"sqlite:///{store}"], env=_env(ROOT), check=True
    )
    records = scratch / "runs.jsonl"
    records.write_text(json.dumps(RECORD) + "\n", encoding="utf-8")
    return {
        "project --check": ["project", "--check"],
        "project": ["project"],
        "store verify (empty store)": ["store", "verify", "--store", f"sqlite:///{store}"],
        "runs tail": ["runs", "tail", str(records)],
        "schema": ["schema", "--out", str(scratch / "schemas")],
    }


def _time(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds of the child: user + system, exit status) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(
        argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu, done.returncode


def measure(runs: int, compare: Path | None) -> tuple[dict, dict]:
    """Median wall seconds and median CPU seconds of each (tree, row)."""
    optuna = Path(sys.executable).with_name("optuna")
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        home = scratch / "home"  # no signing key: `store verify` of an empty store needs none
        rows: dict[tuple[str, str], list[str]] = {}
        trees = {"this": ROOT, **({"compared": compare} if compare else {})}
        for label, tree in trees.items():
            rows[(label, "--help")] = ["--help"]
            for name in _commands(tree):
                rows[(label, f"{name} --help")] = [name, "--help"]
            for name, argv in _light(scratch).items():
                rows[(label, name)] = argv
        times: dict[tuple[str, str], list[float]] = {key: [] for key in rows}
        cpus: dict[tuple[str, str], list[float]] = {key: [] for key in rows}
        optuna_key = ("optuna", "optuna --help")
        times[optuna_key], cpus[optuna_key] = [], []
        for _ in range(runs):  # round robin: load on the machine hits every row alike
            wall, cpu, _code = _time([str(optuna), "--help"], dict(os.environ), scratch)
            times[optuna_key].append(wall)
            cpus[optuna_key].append(cpu)
            for (label, name), argv in rows.items():
                env = {**_env(trees[label]), "CONTEXTOS_HOME": str(home)}
                env.pop("CONTEXTOS_SIGNING_KEY", None)
                wall, cpu, code = _time([sys.executable, "-c", ENTRY, *argv], env, scratch)
                if code != 0:
                    raise SystemExit(f"`contextos-lab {' '.join(argv)}` ({label}) exited {code}")
                times[(label, name)].append(wall)
                cpus[(label, name)].append(cpu)
    median = statistics.median
    return {k: median(v) for k, v in times.items()}, {k: median(v) for k, v in cpus.items()}


def report(medians: dict, cpu: dict, runs: int, compare: Path | None) -> dict:
    light = {"project --check", "project", "store verify (empty store)", "runs tail", "schema"}

    def figures(label: str) -> dict[str, float]:
        mine = {name: s for (lab, name), s in medians.items() if lab == label}
        helps = {n: s for n, s in mine.items() if n.endswith("--help")}
        return {
            "help_median_s": max(helps.values()),
            "top_help_median_s": mine["--help"],
            "slowest_help": max(helps, key=helps.get),  # type: ignore[arg-type]
            "light_commands_max_median_s": max(mine[n] for n in light),
            "light": {n: round(mine[n], 3) for n in sorted(light)},
        }

    optuna = medians[("optuna", "optuna --help")]
    now = figures("this")
    ratio = now["help_median_s"] / optuna
    measured = {
        "help_median_s": now["help_median_s"],
        "light_commands_max_median_s": now["light_commands_max_median_s"],
        "help_vs_optuna_ratio": ratio,
    }
    head = f"{'row':<34}{'this tree':>11}{'cpu':>9}"
    print(head + (f"{'compared':>11}{'cpu':>9}" if compare else ""))
    names = sorted({name for (lab, name) in medians if lab == "this"})
    for name in names:
        line = f"{name:<34}{medians[('this', name)]:>10.3f}s{cpu[('this', name)]:>8.3f}s"
        if compare and ("compared", name) in medians:
            line += f"{medians[('compared', name)]:>10.3f}s{cpu[('compared', name)]:>8.3f}s"
        print(line)
    print(f"{'optuna --help':<34}{optuna:>10.3f}s{cpu[('optuna', 'optuna --help')]:>8.3f}s")
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print()
    for goal, limit in GOALS.items():
        ok = measured[goal] <= limit
        print(f"{goal:<30} {measured[goal]:8.3f}  goal <= {limit}  {'met' if ok else 'NOT met'}")
    out = {
        "goals": {
            g: {"goal": f"<= {lim}", "measured": round(measured[g], 3), "met": measured[g] <= lim}
            for g, lim in GOALS.items()
        },
        "runs_per_row": runs,
        "optuna_help_median_s": round(optuna, 3),
        "slowest_help": now["slowest_help"],
        "top_help_median_s": round(now["top_help_median_s"], 3),
        "light_commands_median_s": now["light"],
        "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
        "rows_median_s": {name: round(medians[("this", name)], 3) for name in names},
        # CPU seconds (user + system) of the same runs: what a loaded machine inflates least
        "optuna_help_cpu_median_s": round(cpu[("optuna", "optuna --help")], 3),
        "rows_cpu_median_s": {name: round(cpu[("this", name)], 3) for name in names},
    }
    if compare:
        before = figures("compared")
        out["compared_tree"] = {
            "help_median_s": round(before["help_median_s"], 3),
            "top_help_median_s": round(before["top_help_median_s"], 3),
            "slowest_help": before["slowest_help"],
            "light_commands_max_median_s": round(before["light_commands_max_median_s"], 3),
            "help_vs_optuna_ratio": round(before["help_median_s"] / optuna, 3),
            "light_commands_median_s": before["light"],
            "rows_median_s": {
                n: round(s, 3) for (lab, n), s in medians.items() if lab == "compared"
            },
            "rows_cpu_median_s": {
                n: round(s, 3) for (lab, n), s in cpu.items() if lab == "compared"
            },
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="runs per row (>= 5 for the goals)")
    parser.add_argument("--compare-tree", type=Path, default=None, help="another checkout")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()
    medians, cpu = measure(args.runs, args.compare_tree)
    out = report(medians, cpu, args.runs, args.compare_tree)
    if not args.no_write and args.runs >= 5:
        RESULTS.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
        print(f"-> {RESULTS}")


if __name__ == "__main__":
    main()
