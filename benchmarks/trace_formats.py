"""Trace exports as researchers' tools write them, through `load_sources` and `cluster`.

Every fixture under tests/loaders/exports/ (each shaped as its tool documents its export; see
make_fixtures.py there) is copied to a file named `export` with no extension, so nothing but
its content can tell its format, then detected, loaded (`load_sources`), analysed with no
held-out split (`analyse`, what `cluster` runs) and run through `contextos-lab cluster` itself.

    .venv/bin/python benchmarks/trace_formats.py

Goals (issue 45): formats_recognised (of OTLP/JSON, OTel SDK JSON, Phoenix spans Parquet,
Langfuse, LangSmith, MLflow, Inspect: detected by content), fixture_runs_lost (a run neither
loaded nor quarantined with a reason; a file quarantined whole with its reason accounts for
its runs), failed_runs_attributed_share (failed runs loaded that get an attribution with
evidence), partially_annotated_runs_quarantined. Nothing is tuned: one set-up, no knobs.
Inspect logs need the optional inspect-ai extra; without it a log is recognised but
quarantined with the install hint, and `formats_loaded` says so.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.results_file import write_result  # noqa: E402
from contextos_lab.api import analyse, group_by_kind, load_sources  # noqa: E402

FIXTURES = ROOT / "tests" / "loaders" / "exports"
OUT = ROOT / "benchmarks" / "results" / "trace_formats.json"
#: fixture → (format counted by the goal, kind detect must say, runs in it, failing runs,
#: runs with a partial annotation). Counts come from make_fixtures.py, not from the loaders.
EXPECTED: dict[str, tuple[str, str, int, int, int]] = {
    "otlp_openinference.json": ("OTLP/JSON", "otlp", 4, 2, 0),
    "otel_sdk_spans.json": ("OTel SDK JSON", "otel-sdk", 4, 2, 0),
    "otel_sdk_spans.jsonl": ("OTel SDK JSON", "otel-sdk", 4, 2, 0),
    "otel_sdk_console.json": ("OTel SDK JSON", "otel-sdk", 4, 2, 0),
    "phoenix_spans.parquet": ("Phoenix spans Parquet", "phoenix", 4, 2, 0),
    "phoenix_spans.csv": ("Phoenix spans CSV", "phoenix", 4, 2, 0),
    "phoenix_spans_nested.json": ("Phoenix spans JSON", "phoenix", 4, 2, 0),
    "langfuse_traces.json": ("Langfuse", "langfuse", 4, 2, 0),
    "langsmith_runs.jsonl": ("LangSmith", "langsmith", 4, 2, 0),
    "mlflow_traces.json": ("MLflow", "mlflow", 4, 2, 0),
    "inspect_eval_log.json": ("Inspect", "inspect", 2, 1, 0),
    # a LangSmith run, an OTel SDK run, a Langfuse observation, and one row that is none
    "mixed_shapes.jsonl": ("mixed", "mixed", 4, 2, 0),
    "who_and_when_partial.json": ("Who&When", "who-and-when", 6, 6, 6),
}
GOAL_FORMATS = (
    "OTLP/JSON",
    "OTel SDK JSON",
    "Phoenix spans Parquet",
    "Langfuse",
    "LangSmith",
    "MLflow",
    "Inspect",
)


def _one(name: str, work: Path) -> dict:
    fmt, kind, runs, failing, partial = EXPECTED[name]
    copy = work / name.replace(".", "_") / "export"
    copy.parent.mkdir()
    shutil.copy(FIXTURES / name, copy)
    (detected,) = group_by_kind([copy])
    loaded = load_sources([str(copy)])
    # a file quarantined whole (no row read, one reason for the file) accounts for its runs
    whole = not loaded.records and any(q.field is None for q in loaded.quarantined)
    accounted = len(loaded.records) + (runs if whole else len(loaded.quarantined))
    report = analyse(loaded, heldout_fraction=0.0, text_backend=None)
    failed = set(report.runs.loc[report.runs["failed"], "record_id"]) if len(report.runs) else set()
    attributed = {
        row["record_id"]
        for row in report.attributions.to_dict("records")
        if row["signal"] and row["n_steps"]
    }
    missing = Counter(
        f"{field}: {why.split(':')[0]}"
        for r in loaded.records
        for field, why in (r.inputs.get("annotation_missing") or {}).items()
    )
    command = [sys.executable, "-m", "contextos_lab.cli", "cluster", str(copy), "--out"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    code = subprocess.run(
        [*command, str(copy.parent / "out")], env=env, capture_output=True, check=False
    ).returncode
    return {
        "fixture": name,
        "format": fmt,
        "expected_kind": kind,
        "detected": detected,
        "runs": runs,
        "loaded": len(loaded.records),
        "quarantined_rows": len(loaded.quarantined),
        "lost": max(0, runs - accounted),
        "failed_expected": failing,
        "failed_loaded": len(failed),
        "failed_attributed": len(failed & attributed),
        "partial_annotated": partial,
        "partial_quarantined": partial - len(loaded.records) if partial else 0,
        "annotation_missing": dict(missing),
        "cluster_exit": code,
        "reasons": sorted({q.message[:100] for q in loaded.quarantined}),
    }


def main() -> None:
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        rows = [_one(name, Path(tmp)) for name in EXPECTED]
    elapsed = time.perf_counter() - started
    print(
        f"{'fixture':28} {'detected':13} {'runs':>4} {'load':>4} {'quar':>4} {'lost':>4} "
        f"{'fail':>4} {'attr':>4} cluster"
    )
    for r in rows:
        print(
            f"{r['fixture']:28} {r['detected']:13} {r['runs']:4} {r['loaded']:4} "
            f"{r['quarantined_rows']:4} {r['lost']:4} {r['failed_loaded']:4} "
            f"{r['failed_attributed']:4} {r['cluster_exit']}"
        )
    recognised = sorted(
        {
            r["format"]
            for r in rows
            if r["format"] in GOAL_FORMATS
            and all(x["detected"] == x["expected_kind"] for x in rows if x["format"] == r["format"])
        }
    )
    loaded_formats = sorted(
        {r["format"] for r in rows if r["format"] in GOAL_FORMATS and r["loaded"] == r["runs"]}
    )
    lost = sum(r["lost"] for r in rows)
    failed = sum(r["failed_loaded"] for r in rows)
    attributed = sum(r["failed_attributed"] for r in rows)
    share = attributed / failed if failed else 0.0
    partial_q = sum(r["partial_quarantined"] for r in rows)
    missing: Counter[str] = Counter()
    for r in rows:
        missing.update(r["annotation_missing"])
    goals = {
        "formats_recognised": {
            "goal": ">= 7",
            "measured": len(recognised),
            "met": len(recognised) >= 7,
        },
        "fixture_runs_lost": {"goal": 0, "measured": lost, "met": lost == 0},
        "failed_runs_attributed_share": {
            "goal": 1.0,
            "measured": round(share, 4),
            "met": share == 1.0,
        },
        "partially_annotated_runs_quarantined": {
            "goal": 0,
            "measured": partial_q,
            "met": partial_q == 0,
        },
    }
    for name, g in goals.items():
        print(f"{name:38} goal {g['goal']!s:>6}  measured {g['measured']!s:>6}  met {g['met']}")
    print(f"recognised: {', '.join(recognised)}")
    print(f"loaded:     {', '.join(loaded_formats)}")
    print(f"annotation fields missing: {dict(missing)}")
    write_result(
        OUT,
        {
            "benchmark": "trace_formats",
            "goals": goals,
            "formats_recognised": recognised,
            "formats_loaded": loaded_formats,
            "inspect_extra_installed": importlib.util.find_spec("inspect_ai") is not None,
            "failed_runs_loaded": failed,
            "failed_runs_attributed": attributed,
            "annotation_fields_missing": dict(missing),
            "fixtures": rows,
            "setups_compared": 1,
        },
        elapsed,
    )


if __name__ == "__main__":
    main()
