"""`contextos-lab cluster SOURCE... --out DIR`: notebook 01 without the notebook.

With `--store URL` and no SOURCE the decisions and feedback `ingest` stored are clustered, and
the InsightClusters and insights are written back to the store (upstream: the feedback, the
cluster, the decision records cited), so `propose --reason-class` finds them.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from contextos_lab.cli.conventions import add_command, iso_datetime
from contextos_lab.cli.store import open_store
from contextos_lab.errors import UserError, one_line
from contextos_lab.schemas.vocabulary import MIN_CLUSTER_SIZE

if TYPE_CHECKING:  # the synthesiser (pandas, SciPy, statsmodels, scikit-learn) loads in _run
    from contextos_lab.loaders.quarantine import QuarantinedRow


def _run(args: argparse.Namespace) -> int:
    with _attribution_weights(args.attribution_weights):
        return _cluster(args)


def _pool_workers(attributor: Any, workers: int) -> int:
    """`insights.corpus.pool_workers`, its note said on stderr."""
    from contextos_lab.insights.corpus import pool_workers

    n, note = pool_workers(attributor, workers)
    if note:
        print(f"note: {note}", file=sys.stderr)
    return n


def _cluster(args: argparse.Namespace) -> int:
    # the synthesiser and the corpus reader (pandas, SciPy, statsmodels, scikit-learn) load here
    from contextos_lab.insights.attribution.registry import get_attributor
    from contextos_lab.insights.corpus import default_workers, load_corpus
    from contextos_lab.insights.pipeline import write_report
    from contextos_lab.insights.split import SplitSpec
    from contextos_lab.insights.stored import loaded_from_store

    if args.workers is None:
        args.workers = default_workers()
    _check_arguments(args)
    _system_arrow_pool()
    attributor = get_attributor(args.attributor)  # an unknown name: one line, before loading
    if _out_of_core(args):
        if args.out is None:
            raise UserError("the DuckDB engine writes insight_clusters.jsonl: give --out DIR")
        return _run_duckdb(args)
    out = Path(args.out) if args.out else None
    try:
        # streamed: each file summarised (failed runs attributed) and its traces dropped
        split = SplitSpec(args.heldout_fraction)
        workers = _pool_workers(attributor, args.workers)
        loaded = load_corpus(
            args.sources, split, attributor=attributor, workers=workers, loader=args.loader
        )
        store = None
        if args.store:
            store = open_store(args.store)
            if store is None:
                return 2
            if not args.sources:
                loaded = loaded_from_store(store)
        quarantine = _write_quarantine(out, loaded.quarantined) if out else None
        if not loaded.records and not loaded.feedback:
            reasons = f" (reasons: {quarantine})" if quarantine else ""
            raise UserError(
                f"no decisions or feedback in {' '.join(args.sources)} "
                f"({len(loaded.quarantined)} rows quarantined{reasons}); nothing to cluster"
            )
        report = _analysed(args, loaded, attributor, store)
    except (ValueError, FileNotFoundError) as exc:
        # input the user can fix; a kit error (a text backend not installed: 2) reaches
        # `cli.app.main` with its class's exit status, any other RuntimeError is a bug
        print(f"error: {one_line(exc)}", file=sys.stderr)
        return 2
    where = write_report(report, out) if out else None
    _print_summary(args, report, loaded, quarantine, where)
    if store is not None:
        _print_stored(args, report, loaded, store)
    else:
        print(f"next: open {where or out}; contextos-lab cluster --store URL stores the clusters")
    return 0


def _system_arrow_pool() -> None:
    """Arrow buffers (the corpus' record blocks, pandas' `str` columns) from the C allocator:
    pyarrow's default pool (mimalloc) keeps the pages the analysis' frame copies free, so the
    peak grew with the corpus (docs/scale.md, "Flat in the analysis"). The same results."""
    import pyarrow as pa

    pa.set_memory_pool(pa.system_memory_pool())


def _analysed(args: argparse.Namespace, loaded: Any, attributor: Any, store: Any) -> Any:
    """The analysis of what was loaded; against a store, each insight's standing is decided
    at this look of it (daily re-runs on a growing store must not make findings)."""
    from contextos_lab.insights.pipeline import analyse
    from contextos_lab.schemas.base import EnvelopeList
    from contextos_lab.schemas.insight import Insight

    report = analyse(
        loaded,
        since=args.since,  # parsed (with its zone) by argparse: `iso_datetime`
        min_cluster_size=args.min_cluster_size,
        heldout_fraction=args.heldout_fraction,
        text_backend=None if args.text_backend == "none" else args.text_backend,
        attributor=attributor,
    )
    if store is not None:
        report.insights = EnvelopeList(held_across_reruns(report.insights, store), Insight)
    return report


def _check_arguments(args: argparse.Namespace) -> None:
    """Every argument `cluster` can refuse, refused before anything is read (one line each);
    a trace loader named is looked up now, so an unknown one is too."""
    if not args.sources and not args.store:
        raise UserError("name SOURCE files/folders, or --store URL to cluster what was ingested")
    if args.out is None and not args.store:
        raise UserError("--out DIR is required unless --store URL is given")
    if args.workers < 1:
        raise UserError(f"--workers must be at least 1, got {args.workers}")
    missing = [s for s in args.sources if not s.startswith("synthetic") and not Path(s).exists()]
    if missing:
        raise UserError(f"no such file or folder: {', '.join(missing)}")
    if args.loader is not None:
        from contextos_lab.loaders.registry import get_loader

        get_loader(args.loader)


def _print_summary(
    args: argparse.Namespace, report: Any, loaded: Any, quarantine: Path | None, where: Any
) -> None:
    """What `cluster` found: counts, what was held out, findings against exploratory ones."""
    print(
        f"{len(loaded.records)} decisions, {len(loaded.feedback)} feedback, "
        f"{len(loaded.quarantined)} quarantined; {len(report.clusters)} typed clusters, "
        f"{len(report.insights)} insights, {len(report.candidates)} research candidates"
        + (f" -> {where}" if where else "")
    )
    if quarantine is not None:
        print(f"quarantined rows and reasons: {quarantine}")
    held = report.heldout
    print(
        f"held out for the gate: {held.get('runs', 0)} runs and {held.get('feedback', 0)} "
        f"feedback (split {report.split.heldout_fraction:g} by trace id); they are not shown "
        "here so the gate can confirm these patterns on data that did not suggest them"
    )
    from contextos_lab.insights.under_minimum import under_minimum

    for row in under_minimum(loaded.feedback, report.split, args.min_cluster_size):
        print(f"no cluster: {row.describe(args.min_cluster_size)}")
    if held.get("feedback_folded_into_failed_runs"):
        print(
            f"{held['feedback_folded_into_failed_runs']} corrections of failed runs were "
            "counted with their run (one observation per failed run)"
        )
    standing = [i.support.get("standing") for i in report.insights]
    print(
        f"{standing.count('finding')} findings (Benjamini-Hochberg q <= 0.05 among each "
        f"source's tests, against successful runs), {standing.count('exploratory')} "
        "exploratory (no successful baseline, no test, or q above the threshold)"
    )
    looks = [i.support["rerun"] for i in report.insights if "rerun" in i.support]
    if looks:
        print(
            f"look {looks[0]['look']} of this store: a finding needs q <= "
            f"{looks[0]['threshold']:.3g} (the error rate is spent over re-runs on growing data; "
            "earlier findings stand)"
        )
    if not report.routing.empty:
        shown = report.routing.sort_values("standing", key=lambda s: s != "finding", kind="stable")
        print(shown[["standing", "kind", "signal", "rule", "pattern"]].to_string(index=False))


def _print_stored(args: argparse.Namespace, report: Any, loaded: Any, store: Any) -> None:
    """What went into the store, and the next command."""
    from contextos_lab.insights.stored import store_report

    print(f"stored in {args.store}: {store_report(report, loaded, store)}")
    for c in report.clusters:
        print(f"  {c.insight_id}  {c.count:>3} x {c.override_reason_class} on {c.decision_key}")
    from contextos_lab.cli.common import next_step

    if report.clusters:
        next_step(
            f"contextos-lab propose --reason-class {report.clusters[0].override_reason_class}"
        )
    else:
        next_step("contextos-lab ingest feedback FILE   (no cluster reached the minimum yet)")


@contextmanager
def _attribution_weights(path: str | None) -> Iterator[None]:
    """Checked first (a bad file is one line, before any loading), then named in the
    environment so every process that attributes, workers included, reads the same weights;
    the environment is restored afterwards."""
    if path is None:
        yield
        return
    from contextos_lab.insights.attribution.registry import WEIGHTS_ENV
    from contextos_lab.insights.attribution.weights_file import read_weights

    read_weights(path)
    saved = os.environ.get(WEIGHTS_ENV)
    os.environ[WEIGHTS_ENV] = str(Path(path).resolve())
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop(WEIGHTS_ENV, None)
        else:
            os.environ[WEIGHTS_ENV] = saved


def held_across_reruns(insights: list[Any], store: Any) -> list[Any]:
    """The run's insights with their standing decided at this look of the store
    (`insights.findings.reruns`)."""
    from contextos_lab.insights.findings.reruns import hold_across_reruns
    from contextos_lab.schemas.insight import Insight

    return hold_across_reruns(insights, list(store.list(Insight)))


def _out_of_core(args: argparse.Namespace) -> bool:
    """DuckDB when asked, or (auto) for one Parquet file/folder past the size threshold."""
    parquet = len(args.sources) == 1 and (
        args.sources[0].endswith(".parquet") or any(Path(args.sources[0]).rglob("*.parquet"))
    )
    if args.engine == "duckdb" and (not parquet or args.loader is not None):
        raise UserError(
            "--engine duckdb reads one Parquet feedback file or folder of them, without --loader"
        )
    if args.engine != "auto" or not parquet or args.loader is not None:
        return args.engine == "duckdb"
    from contextos_lab.insights.out_of_core import DUCKDB_THRESHOLD_BYTES, choose_engine

    mb = args.duckdb_threshold_mb
    threshold = DUCKDB_THRESHOLD_BYTES if mb is None else int(mb * 1024**2)
    return choose_engine(args.sources[0], "auto", threshold) == "duckdb"


def _run_duckdb(args: argparse.Namespace) -> int:
    """Typed feedback clusters only (seed 000 step 2), out of core; other stages need pandas."""
    from contextos_lab.insights.out_of_core import synthesize_parquet

    try:
        clusters = synthesize_parquet(
            args.sources[0], args.since, min_cluster_size=args.min_cluster_size, engine="duckdb"
        )
    except (ValueError, FileNotFoundError) as exc:
        raise UserError(one_line(exc)) from exc
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "insight_clusters.jsonl"
    path.write_text("".join(c.canonical() + "\n" for c in clusters), encoding="utf-8")
    entries = sum(c.count for c in clusters)
    print(f"duckdb: {len(clusters)} typed clusters over {entries} clustered entries -> {path}")
    return 0


def _write_quarantine(out: Path, rows: list[QuarantinedRow]) -> Path | None:
    from contextos_lab.loaders.quarantine import write_quarantine

    out.mkdir(parents=True, exist_ok=True)
    return write_quarantine(out / "insights.json", rows)


def register(subparsers: argparse._SubParsersAction) -> None:
    p = add_command(
        subparsers,
        "cluster",
        example=[
            "contextos-lab cluster synthetic --out out/clusters",
            "contextos-lab cluster traces/ --since 2026-04-01T00:00:00+00:00 --out out/clusters",
            "contextos-lab cluster --store sqlite:///.contextos/experience.db",
        ],
    )
    p.add_argument(
        "sources",
        nargs="*",
        help="trace/feedback files or folders, or synthetic (none with --store: what was ingested)",
    )
    p.add_argument("--out", default=None, help="directory for insights.json")
    p.add_argument(
        "--store",
        default=None,
        help="SQLAlchemy URL: write clusters and insights there (and read ingested data "
        "when no SOURCE is given)",
    )
    p.add_argument(
        "--since",
        type=iso_datetime,
        default=None,
        help="ISO time with zone, e.g. 2026-04-01T00:00:00+00:00; older data is ignored",
    )
    _add_analysis_options(p)
    p.set_defaults(func=_run)


def _add_analysis_options(p: argparse.ArgumentParser) -> None:
    """How `cluster` reads and analyses: cluster size, split, engine, workers, the loader
    and the attributor."""
    p.add_argument("--min-cluster-size", type=int, default=MIN_CLUSTER_SIZE)
    p.add_argument("--heldout-fraction", type=float, default=0.3)
    p.add_argument(
        "--engine",
        choices=["auto", "pandas", "duckdb"],
        default="auto",
        help="duckdb: typed clusters over Parquet out of core (auto: past the threshold)",
    )
    p.add_argument(
        "--duckdb-threshold-mb",
        type=float,
        default=None,
        help="Parquet size past which auto picks duckdb (default: 256)",
    )
    p.add_argument("--text-backend", choices=["tfidf", "embeddings", "none"], default="tfidf")
    p.add_argument(
        "--workers",
        type=int,
        default=None,
        help="processes reading trace files (default: every core; 1: in this process)",
    )
    p.add_argument(
        "--attributor",
        default="default",
        metavar="NAME",
        help="who-failed attributor: a registered name (default, last-actor-before-error, "
        "llm-judge), an installed plug-in's name, or package.module:factory; llm-judge reads "
        "an OpenAI-compatible endpoint from CONTEXTOS_JUDGE_BASE_URL, CONTEXTOS_JUDGE_MODEL "
        "and CONTEXTOS_JUDGE_API_KEY (docs: failure_attribution.md, 'An LLM judge')",
    )
    p.add_argument(
        "--loader",
        default=None,
        metavar="NAME",
        help="read every file with this trace loader instead of the one its content calls for: "
        "a format (tau-bench, who-and-when, otlp, inspect, langfuse, ...), an installed "
        "plug-in's name, or package.module:function",
    )
    p.add_argument(
        "--attribution-weights",
        default=None,
        metavar="WEIGHTS",
        help="attribute failed runs with weights from `contextos-lab attribution calibrate`",
    )
