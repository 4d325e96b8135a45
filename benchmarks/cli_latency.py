"""How long `contextos-lab` takes before it does anything (issue 40), beside `optuna --help`.

Times, in fresh processes, `contextos-lab --help`, every `contextos-lab COMMAND --help` and the
light commands (`project --check`, `project`, `store verify` on an empty store the kit created
and on one holding the bundled example's 60 decisions, `runs tail` of a one-record file,
`schema`), each `--runs` times (>= 5), interleaved round by round with `optuna --help` so a busy
machine slows every row alike; the median of each row is its figure (as hyperfine reports). A
light command that exits non-zero stops the run: its figure would time an error path.
`--compare-tree DIR` times the same rows on another checkout (e.g. the code before this change)
in the same rounds.

The goals are wall-clock, and on a shared machine the wall clock measures the queue for a core as
much as the command. So beside each wall median the table shows the median CPU time (user +
system of the child, `resource.getrusage(RUSAGE_CHILDREN)`), which load inflates far less, and
the JSON records the load average sampled every round, the process's nice value and its
scheduler autogroup's (`/proc/self/autogroup`): a figure is read against the machine that made
it. Every tree is byte-compiled first (`compileall`), as an installed package is: the runs set
PYTHONDONTWRITEBYTECODE, and a tree without `__pycache__` would time the compiler.

Goals (issue 40): `help_median_s` <= 0.5 (the slowest median among `--help` and every
`COMMAND --help`), `light_commands_max_median_s` <= 0.8 (the slowest light command's median),
`help_vs_optuna_ratio` <= 1.5 (`help_median_s` over `optuna --help`'s median, same rounds).

    python benchmarks/cli_latency.py                 # 5 runs, writes results/cli_latency.json
    python benchmarks/cli_latency.py --runs 7 --compare-tree /tmp/old-checkout
    echo -15 > /proc/$$/autogroup   # (root) a shell's larger share of a busy machine, first
"""

from __future__ import annotations

import argparse
import compileall
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
#: The bundled example project, whose decisions fill the store with rows (a path, not an import).
BUNDLED = ROOT / "contextos_lab" / "harness" / "reference" / "project"
#: The key the store with rows is written and verified with (a scratch store's, nothing else's).
SCRATCH_KEY = "cli-latency-scratch-key"
LIGHT = (
    "project --check",
    "project",
    "store verify (empty store)",
    "store verify (60 rows)",
    "runs tail",
    "schema",
)
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


def _light(scratch: Path) -> dict[str, tuple[list[str], dict[str, str]]]:
    """Each light command's argv and the environment it needs beyond the run's own."""
    store = scratch / "empty.db"
    subprocess.run(  # a store as the kit creates it, holding nothing (verify: "empty", exit 0)
        [sys.executable, "-c", CREATE_STORE, f"sqlite:///{store}"], env=_env(ROOT), check=True
    )
    keyed = {"CONTEXTOS_HOME": str(scratch / "keyed"), "CONTEXTOS_SIGNING_KEY": SCRATCH_KEY}
    full = f"sqlite:///{scratch / 'full.db'}"
    decisions = BUNDLED / "data" / "decisions.jsonl"
    ingest = ["ingest", "decisions", str(decisions), "--store", full, "--project", str(BUNDLED)]
    subprocess.run(  # 60 rows and the project they were written for
        [sys.executable, "-c", ENTRY, *ingest],
        env={**_env(ROOT), **keyed},
        check=True,
        capture_output=True,
    )
    records = scratch / "runs.jsonl"
    records.write_text(json.dumps(RECORD) + "\n", encoding="utf-8")
    return {
        "project --check": (["project", "--check"], {}),
        "project": (["project"], {}),
        "store verify (empty store)": (["store", "verify", "--store", f"sqlite:///{store}"], {}),
        "store verify (60 rows)": (["store", "verify", "--store", full], keyed),
        "runs tail": (["runs", "tail", str(records)], {}),
        "schema": (["schema", "--out", str(scratch / "schemas")], {}),
    }


def _priority() -> dict[str, object]:
    """This process's nice value and its autogroup's (Linux): what share of a busy CPU it got."""
    try:
        group = Path("/proc/self/autogroup").read_text(encoding="utf-8").split()
        autogroup: object = int(group[-1]) if group[-2:-1] == ["nice"] else None
    except (OSError, ValueError, IndexError):
        autogroup = None
    return {"nice": os.nice(0), "autogroup_nice": autogroup}


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


def measure(runs: int, compare: Path | None) -> tuple[dict, dict, list[float]]:
    """Median wall seconds and median CPU seconds of each (tree, row), and the 1-minute load
    average sampled before each round and at the end."""
    optuna = Path(sys.executable).with_name("optuna")
    trees = {"this": ROOT, **({"compared": compare} if compare else {})}
    for tree in trees.values():  # as installed: the runs read bytecode, they do not compile it
        compileall.compile_dir(tree / "contextos_lab", quiet=1)
    loads: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        home = scratch / "home"  # no signing key: `store verify` of an empty store needs none
        rows: dict[tuple[str, str], tuple[list[str], dict[str, str]]] = {}
        light = _light(scratch)
        for label, tree in trees.items():
            rows[(label, "--help")] = (["--help"], {})
            for name in _commands(tree):
                rows[(label, f"{name} --help")] = ([name, "--help"], {})
            for name, argv_env in light.items():
                rows[(label, name)] = argv_env
        times: dict[tuple[str, str], list[float]] = {key: [] for key in rows}
        cpus: dict[tuple[str, str], list[float]] = {key: [] for key in rows}
        optuna_key = ("optuna", "optuna --help")
        times[optuna_key], cpus[optuna_key] = [], []
        for _ in range(runs):  # round robin: load on the machine hits every row alike
            loads.append(os.getloadavg()[0])
            wall, cpu, _code = _time([str(optuna), "--help"], dict(os.environ), scratch)
            times[optuna_key].append(wall)
            cpus[optuna_key].append(cpu)
            for (label, name), (argv, extra) in rows.items():
                env = {**_env(trees[label]), "CONTEXTOS_HOME": str(home)}
                env.pop("CONTEXTOS_SIGNING_KEY", None)
                env.pop("CONTEXTOS_PROJECT", None)
                env.update(extra)
                wall, cpu, code = _time([sys.executable, "-c", ENTRY, *argv], env, scratch)
                if code != 0:
                    raise SystemExit(f"`contextos-lab {' '.join(argv)}` ({label}) exited {code}")
                times[(label, name)].append(wall)
                cpus[(label, name)].append(cpu)
        loads.append(os.getloadavg()[0])
    median = statistics.median
    medians = {k: median(v) for k, v in times.items()}
    return medians, {k: median(v) for k, v in cpus.items()}, loads


def report(medians: dict, cpu: dict, loads: list[float], runs: int, compare: Path | None) -> dict:
    def figures(label: str, of: dict) -> dict:
        mine = {name: s for (lab, name), s in of.items() if lab == label}
        helps = {n: s for n, s in mine.items() if n.endswith("--help")}
        return {
            "help_median_s": max(helps.values()),
            "top_help_median_s": mine["--help"],
            "slowest_help": max(helps, key=helps.get),  # type: ignore[arg-type]
            "light_commands_max_median_s": max(mine[n] for n in LIGHT),
            "slowest_light": max(LIGHT, key=mine.get),  # type: ignore[arg-type]
            "light": {n: round(mine[n], 3) for n in sorted(LIGHT)},
        }

    optuna = medians[("optuna", "optuna --help")]
    optuna_cpu = cpu[("optuna", "optuna --help")]
    now, now_cpu = figures("this", medians), figures("this", cpu)
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
    print(f"{'optuna --help':<34}{optuna:>10.3f}s{optuna_cpu:>8.3f}s")
    priority = _priority()
    print(
        f"load average (1 min) over the run: min {min(loads):.2f} max {max(loads):.2f} "
        f"mean {statistics.mean(loads):.2f}; nice {priority['nice']}, "
        f"autogroup nice {priority['autogroup_nice']}"
    )
    print()
    for goal, limit in GOALS.items():
        ok = measured[goal] <= limit
        print(f"{goal:<30} {measured[goal]:8.3f}  goal <= {limit}  {'met' if ok else 'NOT met'}")
    cpu_view = {
        "help_cpu_max_median_s": round(now_cpu["help_median_s"], 3),
        "slowest_help_cpu": now_cpu["slowest_help"],
        "light_commands_cpu_max_median_s": round(now_cpu["light_commands_max_median_s"], 3),
        "slowest_light_cpu": now_cpu["slowest_light"],
        "help_vs_optuna_cpu_ratio": round(now_cpu["help_median_s"] / optuna_cpu, 3),
    }
    print(
        f"CPU view (user+sys): slowest --help {cpu_view['help_cpu_max_median_s']:.3f}s, "
        f"slowest light command {cpu_view['light_commands_cpu_max_median_s']:.3f}s "
        f"({cpu_view['slowest_light_cpu']}), optuna --help {optuna_cpu:.3f}s"
    )
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
        # the machine the figures were made on: a loaded one inflates wall times, not CPU times
        "load_average_1min": {
            "min": round(min(loads), 2),
            "max": round(max(loads), 2),
            "mean": round(statistics.mean(loads), 2),
            "per_round": [round(x, 2) for x in loads],
        },
        "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
        "priority": priority,
        "rows_median_s": {name: round(medians[("this", name)], 3) for name in names},
        # CPU seconds (user + system) of the same runs: what a loaded machine inflates least
        "cpu_view": cpu_view,
        "optuna_help_cpu_median_s": round(optuna_cpu, 3),
        "light_commands_cpu_median_s": now_cpu["light"],
        "rows_cpu_median_s": {name: round(cpu[("this", name)], 3) for name in names},
    }
    if compare:
        before, before_cpu = figures("compared", medians), figures("compared", cpu)
        out["compared_tree"] = {
            "help_median_s": round(before["help_median_s"], 3),
            "top_help_median_s": round(before["top_help_median_s"], 3),
            "slowest_help": before["slowest_help"],
            "light_commands_max_median_s": round(before["light_commands_max_median_s"], 3),
            "help_vs_optuna_ratio": round(before["help_median_s"] / optuna, 3),
            "light_commands_median_s": before["light"],
            "light_commands_cpu_median_s": before_cpu["light"],
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
    medians, cpu, loads = measure(args.runs, args.compare_tree)
    out = report(medians, cpu, loads, args.runs, args.compare_tree)
    if not args.no_write and args.runs >= 5:
        RESULTS.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
        print(f"-> {RESULTS}")


if __name__ == "__main__":
    main()
