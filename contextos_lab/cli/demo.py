"""`contextos-lab demo [--out DIR]`: the whole loop on the bundled data.

1. Ingest the bundled sample history (decisions and signed operator feedback from the generator
   in `harness.reference.synthetic_feedback`) through the loaders into an experience store in
   `DIR/store.db`.
   The signing key is created in the user's configuration folder (`store.locations`: never
   beside the database, random, never in the code) unless one exists or the environment
   provides it, and the authorised-overrider list in `DIR/.contextos/authorised_overriders.json`.
2. Notebook 01 (failure clusters) on the same history: patterns found on the search split of
   the traces, ResearchTask candidates with their specs.
3. The sweep: notebook 02 (Pareto search on `search_sets/`) and notebook 03 (held-out gate on
   `heldout/`, which also confirms the research candidates on the held-out trace split).
   Its held-out read ledger is per output folder, `DIR/.contextos/heldout_ledger.jsonl` (not the
   `gate` / `sweep` default of `.contextos/` in the current directory), so each demo folder
   counts its own reads.
4. Emission: TuningProposal files for promoted candidates, ResearchTask files for confirmed
   patterns, each citing the rendered HTML report by hash. Nothing is applied to a harness.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import sys
import time
from pathlib import Path

from contextos_lab.bundled import bundled_dir
from contextos_lab.cli.conventions import add_command, add_progress_flag, show_progress

#: its `search_set`/`heldout_test_set` resolve beside it: the bundled `search_sets/`, `heldout/`
DEMO_SPEC = bundled_dir("specs") / "reference_refund.yaml"
#: The bundled history: `synthetic:<runs>:<seed>` (the same source notebook 01 reads).
DEMO_SOURCE = "synthetic:2000:7"
SMOKE_ENV = "CONTEXTOS_LAB_DEMO_SMOKE"


def _state_files(out: Path) -> dict[str, str]:
    """Key file (the user's, created if absent) and DIR/.contextos; env vars to use them."""
    from contextos_lab.store.locations import default_key_file

    state = out / ".contextos"
    state.mkdir(parents=True, exist_ok=True)
    env: dict[str, str] = {}
    if not os.environ.get("CONTEXTOS_SIGNING_KEY"):
        key = default_key_file()
        if not key.exists():
            key.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as fh:
                fh.write(secrets.token_hex(32) + "\n")
        env["CONTEXTOS_SIGNING_KEY_FILE"] = str(key.resolve())
    return env


def ingest_sample(out: Path, source: str) -> str:
    """Write the sample history as JSON lines and ingest it through the loaders into the store."""
    from contextos_lab.domain.active import active_project, use_project
    from contextos_lab.insights.sources import load_sources
    from contextos_lab.loaders.ingest import store_loaded
    from contextos_lab.loaders.records import load_records
    from contextos_lab.store.anchor import retire_anchor
    from contextos_lab.store.experience_store import ExperienceStore

    loaded = load_sources([source])
    data = out / "data"
    data.mkdir(parents=True, exist_ok=True)
    files = {"decisions": data / "decisions.jsonl", "feedback": data / "feedback.jsonl"}
    for kind, items in (("decisions", loaded.records), ("feedback", loaded.feedback)):
        with files[kind].open("w", encoding="utf-8") as fh:
            for item in items:
                fh.write(item.model_dump_json(exclude={"signature"}) + "\n")
    operators = sorted({f.signed_by for f in loaded.feedback})
    overriders = out / ".contextos" / "authorised_overriders.json"
    if not overriders.exists():
        overriders.write_text(json.dumps(operators, indent=1) + "\n", encoding="utf-8")
    allowed = json.loads(overriders.read_text(encoding="utf-8"))
    url = f"sqlite:///{(out / 'store.db').resolve()}"
    if not (out / "store.db").exists():  # a new demo store where the user removed an old one
        retired = retire_anchor(url)
        if retired is not None:
            print(f"      a store deleted earlier at this path had an anchor; kept as {retired}")
    store = ExperienceStore(url, create=True, authorised_overriders=allowed)
    # the demo's own store belongs to the project the demo runs (the bundled one by default):
    # the one first write that may bind a store nobody named a project for
    use_project(active_project())
    lines = []
    for kind, path in files.items():
        report = store_loaded(kind, load_records(kind, path), store)
        lines.append(f"{kind}: {report.summary()}")
    return "; ".join(lines)


def run_demo(out: Path, *, smoke: bool = False, progress: bool = False) -> int:
    from contextos_lab.cli.gate import print_emitted
    from contextos_lab.errors import JobError
    from contextos_lab.jobs.sweep import run_sweep
    from contextos_lab.proposals.files.emit import report_matches
    from contextos_lab.reports.render import NotebookFailed, run_report
    from contextos_lab.schemas.ids import new_id

    t0 = time.perf_counter()
    out.mkdir(parents=True, exist_ok=True)
    env = _state_files(out)
    os.environ.update(env)  # the notebooks' kernels inherit it
    source = "synthetic:400:7" if smoke else DEMO_SOURCE
    print(f"[1/4] ingest sample history ({source}) -> {out / 'store.db'}")
    print(f"      {ingest_sample(out, source)}")
    run_id = new_id("eval")
    print("[2/4] notebook 01: failure clusters on the search split of the traces")
    clusters = out / "01_failure_clusters"
    try:
        run_report(
            "01_failure_clusters",
            {"sources": [source], "out_dir": str(clusters.resolve())},
            out,
            run_id,
            progress=progress,
        )
    except NotebookFailed as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 6
    print("[3/4] sweep: notebook 02 (search set) and notebook 03 (held-out gate)")
    try:
        job = run_sweep(
            DEMO_SPEC,
            out,
            n_trials=60 if smoke else None,
            ledger=str(out / ".contextos" / "heldout_ledger.jsonl"),
            insights=str(clusters / "insights.json"),
            sources=[source],
            max_candidates=4 if smoke else None,
            run_id=run_id,
            progress=progress,
        )
    except JobError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.code
    print("[4/4] emission")
    print_emitted(job.emitted, job.gate_report)
    for path in job.emitted.tuning_proposals:
        status = "matches" if report_matches(path) else "DOES NOT MATCH"
        print(f"  report hash {status} for {Path(path).name}")
    print(f"reports: {job.gate_report.parent}")
    print(f"proposal files: {out / 'proposals'}")
    print(f"verify the store: contextos-lab store verify --store sqlite:///{out / 'store.db'}")
    print(f"demo finished in {time.perf_counter() - t0:.0f} s (nothing was applied to a harness)")
    return 0


def _run(args: argparse.Namespace) -> int:
    return run_demo(
        Path(args.out),
        smoke=args.smoke or os.environ.get(SMOKE_ENV) == "1",
        progress=show_progress(args),
    )


def register(subparsers: argparse._SubParsersAction) -> None:
    p = add_command(
        subparsers,
        "demo",
        example="contextos-lab demo --out out/demo",
    )
    p.add_argument("--out", default="out/demo", help="where proposal files and reports go")
    p.add_argument("--smoke", action="store_true", help="tiny budget (tests); not the real demo")
    add_progress_flag(p)
    p.set_defaults(func=_run)
