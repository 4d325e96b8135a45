"""The handful of calls a notebook user needs, as `import contextos_lab as cl`.

Each loader returns a pandas DataFrame (nested values stay Python objects in object columns);
each takes what the CLI wrote, so `cl.load_trials("out/demo")` reads the study a `demo` or
`sweep` run left in that folder. Heavy imports happen inside the calls: `import contextos_lab`
stays cheap for the CLI.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from contextos_lab.errors import UserError


def _file(path: str | Path, default_name: str) -> Path:
    """`path` itself, or `path/<default_name>` when `path` is a folder."""
    p = Path(path)
    p = p / default_name if p.is_dir() else p
    if not p.is_file():
        raise UserError(f"no such file: {p}")
    return p


def load_insights(path: str | Path) -> pd.DataFrame:
    """Insights from `insights.json` (a `cluster` run's folder or the file), one row each.

    Nested fields are flattened with `pd.json_normalize` (`evidence.trace_ids`, ...).
    """
    data = json.loads(_file(path, "insights.json").read_text(encoding="utf-8"))
    return pd.json_normalize(data.get("insights", []))


def load_trials(run: str | Path, study: str | None = None) -> pd.DataFrame:
    """Every trial of a run's study (a folder holding `study.db`, or any Optuna storage URL):
    state, params, scores, feasibility, the change from the baseline."""
    import optuna

    from contextos_lab.autotune.pareto import trials_frame
    from contextos_lab.autotune.study.storage import open_storage

    url = str(run)
    if "://" not in url and not url.endswith((".log", ".journal")):
        url = f"sqlite:///{_file(run, 'study.db').resolve()}"
    storage = open_storage(url)
    names = optuna.get_all_study_names(storage)
    if study is None:
        if len(names) != 1:
            raise UserError(f"{run} holds studies {names}: pass study=NAME")
        study = names[0]
    return trials_frame(optuna.load_study(study_name=study, storage=storage))


def load_gate(path: str | Path) -> pd.DataFrame:
    """The gate table of a `gate.json` (a run's folder or the file): candidate × metric with
    delta, 95% interval, p-value and Holm-adjusted p-value, and each candidate's verdict."""
    from contextos_lab.gate.run_gate import load_gate_run

    return load_gate_run(_file(path, "gate.json")).table()


def load_feedback(source: str | Path) -> pd.DataFrame:
    """Feedback entries from a file (JSONL, JSON, CSV, Parquet; bad rows are left out, see
    `contextos-lab ingest` for the quarantine) or from an experience store URL."""
    text = str(source)
    if "://" in text:
        from contextos_lab.store.experience_store import ExperienceStore

        return ExperienceStore(text).frame("FeedbackEntry")
    from contextos_lab.loaders.readers import UnreadableSource
    from contextos_lab.loaders.records import load_records

    try:
        return load_records("feedback", Path(text)).records.to_frame()
    except UnreadableSource as exc:
        raise UserError(f"{exc.path}: {exc.reason}") from exc


def load_proposals(folder: str | Path) -> pd.DataFrame:
    """Every proposal file (TuningProposal `at_*`, ResearchTask, ...) in a run's `proposals/`
    folder (or the run folder), flattened with `pd.json_normalize`; `file` is its path."""
    p = Path(folder)
    p = p / "proposals" if (p / "proposals").is_dir() else p
    if not p.is_dir():
        raise UserError(f"no such folder: {p}")
    rows = []
    for f in sorted(p.glob("*.json")):
        data = json.loads(f.read_text(encoding="utf-8"))
        data["file"] = str(f)
        rows.append(data)
    return pd.json_normalize(rows)


def run_sweep(
    spec: str | Path,
    out: str | Path,
    *,
    n_trials: int | None = None,
    sources: Sequence[str] = ("synthetic",),
    **kwargs: Any,
) -> Any:
    """The scheduled job (`contextos-lab sweep`): notebook 02 (search), notebook 03 (held-out
    gate), their HTML reports and the proposal files. Returns the `SweepJob` (run id, report
    paths, what was emitted); raises `UserError`/`JobError` with a one-line reason."""
    from contextos_lab.jobs.sweep import run_sweep as _run_sweep

    return _run_sweep(spec, out, n_trials=n_trials, sources=sources, **kwargs)


@dataclass(frozen=True)
class Report:
    """A rendered reviewer report; shows itself inline in Jupyter."""

    path: Path
    html: str
    sha256: str

    def _repr_html_(self) -> str:
        return (
            f'<iframe srcdoc="{html.escape(self.html, quote=True)}" '
            'style="width:100%;height:640px;border:1px solid #ddd"></iframe>'
        )


def read_report(path: str | Path, name: str = "03_heldout_gate") -> Report:
    """A report's HTML: the file, or the newest `<name>.html` under a run's `reports/`."""
    from contextos_lab.proposals.files.emit import sha256_file

    p = Path(path)
    if p.is_dir():
        found = sorted(p.glob(f"**/{name}.html"), key=lambda f: f.stat().st_mtime)
        if not found:
            raise UserError(f"no {name}.html under {p}")
        p = found[-1]
    if not p.is_file():
        raise UserError(f"no such file: {p}")
    return Report(path=p, html=p.read_text(encoding="utf-8"), sha256=sha256_file(p))


# -- the research surface ----------------------------------------------------------------------
#: The names a script that drives a study, a gate or an analysis by hand (every benchmark in
#: `benchmarks/`) imports from here, each from the module that defines it: `from
#: contextos_lab.api import run_study, decide`. Loaded on first use (PEP 562), so importing the
#: API stays cheap; a test checks every entry resolves and the benchmarks import nothing else.
RESEARCH: dict[str, str] = {
    # schemas
    "ErrorBudget": "contextos_lab.schemas.error_budget",
    "ChangeClass": "contextos_lab.schemas.surface",
    "SurfaceLayer": "contextos_lab.schemas.surface",
    "TunableSurface": "contextos_lab.schemas.surface",
    # store
    "ExperienceStore": "contextos_lab.store.experience_store",
    "LocalPostgres": "contextos_lab.store.local_postgres",
    # loaders
    "files_of": "contextos_lab.loaders.detect",
    "group_by_kind": "contextos_lab.loaders.detect",
    "load_who_and_when": "contextos_lab.loaders.who_and_when",
    # evaluators
    "evaluate": "contextos_lab.evaluators.scorecard",
    # memory
    "carries_directive": "contextos_lab.memory.instructions",
    # harness
    "convert": "contextos_lab.harness.case_format",
    "INPUTS_FILE": "contextos_lab.harness.case_inputs",
    "ExecutionPolicy": "contextos_lab.harness.execution",
    "execute": "contextos_lab.harness.execution",
    "RESULT_COLUMNS": "contextos_lab.harness.protocol",
    "baseline_config": "contextos_lab.harness.protocol",
    "redact_argv": "contextos_lab.harness.redaction",
    "redact_text": "contextos_lab.harness.redaction",
    "reference_harness": "contextos_lab.harness.reference",
    "EVALUATOR_ORDER": "contextos_lab.harness.reference.scoring",
    "GridScorer": "contextos_lab.harness.reference.scoring",
    "feedback_frame_fast": "contextos_lab.harness.reference.synthetic_feedback",
    "score_execution": "contextos_lab.harness.repeat_scores",
    "load_replay_set": "contextos_lab.harness.replay_sets",
    "NO_CACHE_ENV": "contextos_lab.harness.result_cache",
    "read_records": "contextos_lab.harness.runner",
    # insights
    "DEFAULT_WEIGHTS": "contextos_lab.insights.attribution.default_weights",
    "LastActorBeforeErrorRule": "contextos_lab.insights.attribution.linear",
    "LinearAttributor": "contextos_lab.insights.attribution.linear",
    "cross_validated": "contextos_lab.insights.attribution.fitting",
    "fit_weights": "contextos_lab.insights.attribution.fitting",
    "fit_model": "contextos_lab.insights.attribution.fitting",
    "GRID": "contextos_lab.insights.attribution.fitting",
    "PRIOR_WEIGHTS": "contextos_lab.insights.attribution.fitting",
    "run_rows": "contextos_lab.insights.attribution.linear",
    "run_system_rows": "contextos_lab.insights.attribution.linear",
    "SYSTEM_FAMILIES": "contextos_lab.insights.attribution.system_features",
    "temperature_for": "contextos_lab.insights.attribution.fitting",
    "STEP_FEATURES": "contextos_lab.insights.attribution.features",
    "PRIOR_STRENGTH": "contextos_lab.insights.attribution.calibrate",
    "calibrate_parts": "contextos_lab.insights.attribution.calibrate",
    "calibrate_chosen": "contextos_lab.insights.attribution.calibrate",
    "STRENGTHS": "contextos_lab.insights.attribution.calibrate",
    "KEEP_RANKING": "contextos_lab.insights.attribution.calibrate",
    "LOW_CONFIDENCE": "contextos_lab.insights.attribution.ranking",
    "TEMPERATURE_BOUNDS": "contextos_lab.insights.attribution.ranking",
    "TOP_K": "contextos_lab.insights.attribution.ranking",
    "Annotated": "contextos_lab.insights.attribution.scoring",
    "annotated_runs": "contextos_lab.insights.attribution.scoring",
    "reliability": "contextos_lab.insights.attribution.scoring",
    "top_k_agreement": "contextos_lab.insights.attribution.scoring",
    "trivial_baselines": "contextos_lab.insights.attribution.scoring",
    "Attribution": "contextos_lab.insights.attribution.protocol",
    "attribute_runs": "contextos_lab.insights.attribution.runs",
    "RunTrace": "contextos_lab.insights.attribution.turns",
    "agent_key": "contextos_lab.insights.attribution.turns",
    "run_trace": "contextos_lab.insights.attribution.turns",
    "below_fdr_shown_as_findings": "contextos_lab.insights.findings.checks",
    "overlapping_pairs": "contextos_lab.insights.findings.checks",
    "tau_class_consistency": "contextos_lab.insights.findings.checks",
    "MERGE_AT": "contextos_lab.insights.findings.overlap",
    "containment": "contextos_lab.insights.findings.overlap",
    "cluster_parquet": "contextos_lab.insights.out_of_core",
    "ClusterReport": "contextos_lab.insights.pipeline",
    "analyse": "contextos_lab.insights.pipeline",
    "load_sources": "contextos_lab.insights.sources",
    "write_report": "contextos_lab.insights.pipeline",
    "agent_phase_purity": "contextos_lab.insights.quality",
    "coverage": "contextos_lab.insights.quality",
    "duplicates": "contextos_lab.insights.quality",
    "member_runs": "contextos_lab.insights.quality",
    "tau_action_diff_agreement": "contextos_lab.insights.quality",
    "runs_frame": "contextos_lab.insights.runs.columns",
    "run_insight_candidates": "contextos_lab.insights.runs.insights",
    "SEARCH": "contextos_lab.insights.split",
    "synthesize_insights": "contextos_lab.insights.synthesize",
    # autotune
    "Prices": "contextos_lab.autotune.budget",
    "spend_frame": "contextos_lab.autotune.budget",
    "spend_total": "contextos_lab.autotune.budget",
    "case_set_from_frame": "contextos_lab.autotune.cases",
    "overlap": "contextos_lab.autotune.cases",
    "RunContext": "contextos_lab.autotune.context",
    "prepare": "contextos_lab.autotune.context",
    "rebuild": "contextos_lab.autotune.context",
    "constraint_values": "contextos_lab.autotune.objective",
    "score_config": "contextos_lab.autotune.objective",
    "hypervolume": "contextos_lab.autotune.pareto",
    "hypervolume_history": "contextos_lab.autotune.pareto",
    "normalised_losses": "contextos_lab.autotune.pareto",
    "trials_frame": "contextos_lab.autotune.pareto",
    "case_evaluations": "contextos_lab.autotune.racing.racing",
    "SamplerConfig": "contextos_lab.autotune.sampling.config",
    "load_spec": "contextos_lab.autotune.spec.load",
    "parse_spec": "contextos_lab.autotune.spec.load",
    "Tier": "contextos_lab.autotune.spec.tiers",
    "Tiers": "contextos_lab.autotune.spec.tiers",
    "tier_report": "contextos_lab.autotune.tiers.report",
    "ensure_baseline": "contextos_lab.autotune.study.baseline",
    "enqueue": "contextos_lab.autotune.study.enqueue",
    "layout_for": "contextos_lab.autotune.study.enqueue",
    "open_study": "contextos_lab.autotune.study.open",
    "run_study": "contextos_lab.autotune.study.run",
    "open_storage": "contextos_lab.autotune.study.storage",
    "counted_trials": "contextos_lab.autotune.study.trial_count",
    "run_one_trial": "contextos_lab.autotune.study.trial_run",
    "sweep": "contextos_lab.autotune.sweep",
    # gate
    "simulate_null": "contextos_lab.gate.calibration",
    "simulate_reuse": "contextos_lab.gate.heldout.reuse_simulation",
    "guardrails_of": "contextos_lab.gate.run_gate",
    "decide": "contextos_lab.gate.verdict",
    # secrets (benchmarks/leak_corpus.py compares the layers one by one)
    "credsweeper_hit": "contextos_lab.harness.credsweeper_scan",
    "scanner_hit": "contextos_lab.harness.secret_scan",
    "prefixed_token_hit": "contextos_lab.harness.token_shapes",
    # the post-release monitor (benchmarks/monitor_sequential.py drives it through the store)
    "FIELDS": "contextos_lab.proposals.monitor.evidence",
    "fixed_look_worse": "contextos_lab.proposals.monitor.fixed_look",
    "monitor_window": "contextos_lab.proposals.monitor.monitor",
    "T0": "contextos_lab.proposals.monitor.simulate",
    "bare_rule": "contextos_lab.proposals.monitor.simulate",
    "draw": "contextos_lab.proposals.monitor.simulate",
    "scorecards": "contextos_lab.proposals.monitor.simulate",
    "open_window": "contextos_lab.proposals.monitor.windows",
    "slices": "contextos_lab.proposals.monitor.windows",
    # near copies in what is scored (benchmarks/near_copies.py)
    "overlap_details": "contextos_lab.autotune.cases",
    "default_set_checker": "contextos_lab.autotune.spec.check",
    "SimpleCase": "contextos_lab.harness.case_format",
    "case_row": "contextos_lab.harness.case_format",
    # the CLI in-process (benchmarks/cluster_reruns.py runs the real commands daily)
    "main": "contextos_lab.cli.app",
}


#: What a domain's own scripts build from Python (issue 40): goldens, policy bundles and
#: patches, replay cases (packets and replay sets), envelopes, loaders. Stable names: an
#: internal move changes the right-hand side here, never a user's `from contextos_lab.api
#: import ...`. "module:attribute" where the public name differs from the module's.
BUILDERS: dict[str, str] = {
    # goldens: what a patch must (not) change, and recording them from replay cases
    "GoldenCase": "contextos_lab.proposals.replay.goldens",
    "ExpectedOutcome": "contextos_lab.proposals.replay.goldens",
    "load_goldens": "contextos_lab.proposals.replay.goldens",
    "dump_goldens": "contextos_lab.proposals.replay.goldens",
    "bundled_goldens": "contextos_lab.proposals.replay.goldens",
    "outputs_hash": "contextos_lab.proposals.replay.goldens",
    "GoldensTarget": "contextos_lab.proposals.replay.golden_recording:Target",
    "record_goldens": "contextos_lab.proposals.replay.golden_recording",
    # policy bundles and patches
    "PolicyBundle": "contextos_lab.proposals.policy.bundle",
    "PolicyRule": "contextos_lab.proposals.policy.bundle",
    "PolicyDecision": "contextos_lab.proposals.policy.bundle",
    "evaluate_policy": "contextos_lab.proposals.policy.bundle:evaluate",
    "apply_patch": "contextos_lab.proposals.policy.bundle",
    "BundleRegistry": "contextos_lab.proposals.policy.registry",
    "Patch": "contextos_lab.schemas.strategy",
    "PatchOp": "contextos_lab.schemas.strategy",
    # replay cases and the replay gate
    "ReplayPacket": "contextos_lab.schemas.replay",
    "write_replay_set": "contextos_lab.harness.replay_sets",
    "read_packets": "contextos_lab.harness.replay_sets",
    "packet_content_hash": "contextos_lab.harness.replay_sets",
    "replay_decision_record": "contextos_lab.proposals.replay.replay",
    "run_replay_gate": "contextos_lab.proposals.replay.replay",
    # envelopes
    "Envelope": "contextos_lab.schemas.base",
    "DecisionRecord": "contextos_lab.schemas.decision",
    "FeedbackEntry": "contextos_lab.schemas.feedback",
    "InsightCluster": "contextos_lab.schemas.insight",
    "Scorecard": "contextos_lab.schemas.scorecard",
    "StrategyProposal": "contextos_lab.schemas.strategy",
    "StrategyRule": "contextos_lab.schemas.strategy",
    # loaders and attributors
    "load_records": "contextos_lab.loaders.records",
    "ingest_file": "contextos_lab.loaders.ingest",
    "get_attributor": "contextos_lab.insights.attribution.registry",
    "register_attributor": "contextos_lab.insights.attribution.registry:register",
}


#: The seams a user extends (issue 41): a harness, an evaluator, a loader or an attributor of
#: their own is written against these, imported from here, never from a deep path.
EXTENSIONS: dict[str, str] = {
    "Harness": "contextos_lab.harness.protocol",
    "BatchHarness": "contextos_lab.harness.protocol",
    "RunResult": "contextos_lab.harness.protocol",
    "load_harness": "contextos_lab.harness.protocol",
    "SubprocessHarness": "contextos_lab.harness.subprocess_harness",
    "HarnessFailure": "contextos_lab.harness.subprocess_harness",
    "Evaluator": "contextos_lab.evaluators.protocol",
    "Loader": "contextos_lab.loaders.readers",
    "Attributor": "contextos_lab.insights.attribution.protocol",
    "Candidate": "contextos_lab.insights.attribution.protocol",
    "ContextosError": "contextos_lab.errors",
    "UserError": "contextos_lab.errors",
}


def __getattr__(name: str) -> Any:
    import importlib

    target = RESEARCH.get(name) or BUILDERS.get(name) or EXTENSIONS.get(name)
    if target is None:
        raise AttributeError(f"module 'contextos_lab.api' has no attribute {name!r}")
    module, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module), attribute or name)


def __dir__() -> list[str]:
    return sorted({*globals(), *RESEARCH, *BUILDERS, *EXTENSIONS})


if TYPE_CHECKING:  # what a user's type checker reads; at run time `__getattr__` loads on use
    from contextos_lab.autotune.budget import Prices, spend_frame, spend_total
    from contextos_lab.autotune.cases import case_set_from_frame, overlap, overlap_details
    from contextos_lab.autotune.context import RunContext, prepare, rebuild
    from contextos_lab.autotune.objective import constraint_values, score_config
    from contextos_lab.autotune.pareto import (
        hypervolume,
        hypervolume_history,
        normalised_losses,
        trials_frame,
    )
    from contextos_lab.autotune.racing.racing import case_evaluations
    from contextos_lab.autotune.sampling.config import SamplerConfig
    from contextos_lab.autotune.spec.check import default_set_checker
    from contextos_lab.autotune.spec.load import load_spec, parse_spec
    from contextos_lab.autotune.spec.tiers import Tier, Tiers
    from contextos_lab.autotune.study.baseline import ensure_baseline
    from contextos_lab.autotune.study.enqueue import enqueue, layout_for
    from contextos_lab.autotune.study.open import open_study
    from contextos_lab.autotune.study.run import run_study
    from contextos_lab.autotune.study.storage import open_storage
    from contextos_lab.autotune.study.trial_count import counted_trials
    from contextos_lab.autotune.study.trial_run import run_one_trial
    from contextos_lab.autotune.sweep import sweep
    from contextos_lab.autotune.tiers.report import tier_report
    from contextos_lab.cli.app import main
    from contextos_lab.errors import ContextosError, UserError
    from contextos_lab.evaluators.protocol import Evaluator
    from contextos_lab.evaluators.scorecard import evaluate
    from contextos_lab.gate.calibration import simulate_null
    from contextos_lab.gate.heldout.reuse_simulation import simulate_reuse
    from contextos_lab.gate.run_gate import guardrails_of
    from contextos_lab.gate.verdict import decide
    from contextos_lab.harness.case_format import SimpleCase, case_row, convert
    from contextos_lab.harness.case_inputs import INPUTS_FILE
    from contextos_lab.harness.credsweeper_scan import credsweeper_hit
    from contextos_lab.harness.execution import ExecutionPolicy, execute
    from contextos_lab.harness.protocol import (
        RESULT_COLUMNS,
        BatchHarness,
        Harness,
        RunResult,
        baseline_config,
        load_harness,
    )
    from contextos_lab.harness.redaction import redact_argv, redact_text
    from contextos_lab.harness.reference import reference_harness
    from contextos_lab.harness.reference.scoring import EVALUATOR_ORDER, GridScorer
    from contextos_lab.harness.reference.synthetic_feedback import (
        feedback_frame_fast as feedback_frame_fast,
    )
    from contextos_lab.harness.repeat_scores import score_execution
    from contextos_lab.harness.replay_sets import (
        load_replay_set,
        packet_content_hash,
        read_packets,
        write_replay_set,
    )
    from contextos_lab.harness.result_cache import NO_CACHE_ENV
    from contextos_lab.harness.runner import read_records
    from contextos_lab.harness.secret_scan import scanner_hit
    from contextos_lab.harness.subprocess_harness import HarnessFailure, SubprocessHarness
    from contextos_lab.harness.token_shapes import prefixed_token_hit
    from contextos_lab.insights.attribution.calibrate import (
        KEEP_RANKING,
        PRIOR_STRENGTH,
        STRENGTHS,
        calibrate_chosen,
        calibrate_parts,
    )
    from contextos_lab.insights.attribution.default_weights import (
        DEFAULT_WEIGHTS as DEFAULT_WEIGHTS,
    )
    from contextos_lab.insights.attribution.features import STEP_FEATURES
    from contextos_lab.insights.attribution.fitting import (
        GRID,
        PRIOR_WEIGHTS,
        cross_validated,
        fit_model,
        fit_weights,
        temperature_for,
    )
    from contextos_lab.insights.attribution.linear import (
        LastActorBeforeErrorRule as LastActorBeforeErrorRule,
    )
    from contextos_lab.insights.attribution.linear import (
        LinearAttributor,
        run_rows,
        run_system_rows,
    )
    from contextos_lab.insights.attribution.protocol import Attribution, Attributor, Candidate
    from contextos_lab.insights.attribution.ranking import LOW_CONFIDENCE, TEMPERATURE_BOUNDS, TOP_K
    from contextos_lab.insights.attribution.registry import get_attributor
    from contextos_lab.insights.attribution.registry import register as register_attributor
    from contextos_lab.insights.attribution.runs import attribute_runs
    from contextos_lab.insights.attribution.scoring import (
        Annotated,
        annotated_runs,
        reliability,
        top_k_agreement,
        trivial_baselines,
    )
    from contextos_lab.insights.attribution.system_features import SYSTEM_FAMILIES
    from contextos_lab.insights.attribution.turns import RunTrace, agent_key, run_trace
    from contextos_lab.insights.findings.checks import (
        below_fdr_shown_as_findings as below_fdr_shown_as_findings,
    )
    from contextos_lab.insights.findings.checks import overlapping_pairs
    from contextos_lab.insights.findings.checks import (
        tau_class_consistency as tau_class_consistency,
    )
    from contextos_lab.insights.findings.overlap import MERGE_AT, containment
    from contextos_lab.insights.out_of_core import cluster_parquet
    from contextos_lab.insights.pipeline import ClusterReport, analyse, write_report
    from contextos_lab.insights.quality import agent_phase_purity, coverage, duplicates, member_runs
    from contextos_lab.insights.quality import (
        tau_action_diff_agreement as tau_action_diff_agreement,
    )
    from contextos_lab.insights.runs.columns import runs_frame
    from contextos_lab.insights.runs.insights import (
        run_insight_candidates as run_insight_candidates,
    )
    from contextos_lab.insights.sources import load_sources
    from contextos_lab.insights.split import SEARCH
    from contextos_lab.insights.synthesize import synthesize_insights
    from contextos_lab.loaders.detect import files_of, group_by_kind
    from contextos_lab.loaders.ingest import ingest_file
    from contextos_lab.loaders.readers import Loader
    from contextos_lab.loaders.records import load_records
    from contextos_lab.loaders.who_and_when import load_who_and_when
    from contextos_lab.memory.instructions import carries_directive
    from contextos_lab.proposals.monitor.evidence import FIELDS
    from contextos_lab.proposals.monitor.fixed_look import fixed_look_worse
    from contextos_lab.proposals.monitor.monitor import monitor_window
    from contextos_lab.proposals.monitor.simulate import T0, bare_rule, draw, scorecards
    from contextos_lab.proposals.monitor.windows import open_window, slices
    from contextos_lab.proposals.policy.bundle import (
        PolicyBundle,
        PolicyDecision,
        PolicyRule,
        apply_patch,
    )
    from contextos_lab.proposals.policy.bundle import evaluate as evaluate_policy
    from contextos_lab.proposals.policy.registry import BundleRegistry
    from contextos_lab.proposals.replay.golden_recording import Target as GoldensTarget
    from contextos_lab.proposals.replay.golden_recording import record_goldens
    from contextos_lab.proposals.replay.goldens import (
        ExpectedOutcome,
        GoldenCase,
        bundled_goldens,
        dump_goldens,
        load_goldens,
        outputs_hash,
    )
    from contextos_lab.proposals.replay.replay import (
        replay_decision_record as replay_decision_record,
    )
    from contextos_lab.proposals.replay.replay import run_replay_gate
    from contextos_lab.schemas.base import Envelope
    from contextos_lab.schemas.decision import DecisionRecord
    from contextos_lab.schemas.error_budget import ErrorBudget
    from contextos_lab.schemas.feedback import FeedbackEntry
    from contextos_lab.schemas.insight import InsightCluster
    from contextos_lab.schemas.replay import ReplayPacket
    from contextos_lab.schemas.scorecard import Scorecard
    from contextos_lab.schemas.strategy import Patch, PatchOp, StrategyProposal, StrategyRule
    from contextos_lab.schemas.surface import ChangeClass, SurfaceLayer, TunableSurface
    from contextos_lab.store.experience_store import ExperienceStore
    from contextos_lab.store.local_postgres import LocalPostgres

#: Every public name: the notebook calls above and the three tables' names.
__all__ = [  # noqa: RUF022 (grouped as the tables are)
    "Annotated",
    "Attribution",
    "Attributor",
    "BatchHarness",
    "BundleRegistry",
    "Candidate",
    "ChangeClass",
    "ClusterReport",
    "ContextosError",
    "DEFAULT_WEIGHTS",
    "DecisionRecord",
    "EVALUATOR_ORDER",
    "Envelope",
    "ErrorBudget",
    "Evaluator",
    "ExecutionPolicy",
    "ExpectedOutcome",
    "ExperienceStore",
    "FIELDS",
    "FeedbackEntry",
    "GRID",
    "GoldenCase",
    "GoldensTarget",
    "GridScorer",
    "Harness",
    "HarnessFailure",
    "INPUTS_FILE",
    "InsightCluster",
    "LOW_CONFIDENCE",
    "LastActorBeforeErrorRule",
    "LinearAttributor",
    "Loader",
    "LocalPostgres",
    "MERGE_AT",
    "NO_CACHE_ENV",
    "PRIOR_STRENGTH",
    "PRIOR_WEIGHTS",
    "Patch",
    "PatchOp",
    "PolicyBundle",
    "PolicyDecision",
    "PolicyRule",
    "RESULT_COLUMNS",
    "ReplayPacket",
    "Report",
    "RunContext",
    "RunResult",
    "RunTrace",
    "SEARCH",
    "STEP_FEATURES",
    "SamplerConfig",
    "Scorecard",
    "SimpleCase",
    "StrategyProposal",
    "StrategyRule",
    "SubprocessHarness",
    "SurfaceLayer",
    "T0",
    "TEMPERATURE_BOUNDS",
    "TOP_K",
    "TunableSurface",
    "UserError",
    "agent_key",
    "agent_phase_purity",
    "analyse",
    "annotated_runs",
    "apply_patch",
    "attribute_runs",
    "bare_rule",
    "baseline_config",
    "below_fdr_shown_as_findings",
    "bundled_goldens",
    "calibrate_parts",
    "carries_directive",
    "case_evaluations",
    "case_row",
    "case_set_from_frame",
    "cluster_parquet",
    "constraint_values",
    "containment",
    "convert",
    "counted_trials",
    "coverage",
    "credsweeper_hit",
    "cross_validated",
    "decide",
    "default_set_checker",
    "draw",
    "dump_goldens",
    "duplicates",
    "enqueue",
    "ensure_baseline",
    "evaluate",
    "evaluate_policy",
    "execute",
    "feedback_frame_fast",
    "files_of",
    "fit_weights",
    "fixed_look_worse",
    "get_attributor",
    "group_by_kind",
    "guardrails_of",
    "hypervolume",
    "hypervolume_history",
    "ingest_file",
    "layout_for",
    "load_feedback",
    "load_gate",
    "load_goldens",
    "load_harness",
    "load_insights",
    "load_proposals",
    "load_records",
    "load_replay_set",
    "load_sources",
    "load_spec",
    "load_trials",
    "load_who_and_when",
    "main",
    "member_runs",
    "monitor_window",
    "normalised_losses",
    "open_storage",
    "open_study",
    "open_window",
    "outputs_hash",
    "overlap",
    "overlap_details",
    "overlapping_pairs",
    "packet_content_hash",
    "parse_spec",
    "prefixed_token_hit",
    "prepare",
    "read_packets",
    "read_records",
    "read_report",
    "rebuild",
    "record_goldens",
    "redact_argv",
    "redact_text",
    "reference_harness",
    "register_attributor",
    "reliability",
    "replay_decision_record",
    "run_insight_candidates",
    "run_one_trial",
    "run_replay_gate",
    "run_rows",
    "run_system_rows",
    "run_study",
    "run_sweep",
    "run_trace",
    "runs_frame",
    "scanner_hit",
    "score_config",
    "score_execution",
    "scorecards",
    "simulate_null",
    "simulate_reuse",
    "slices",
    "spend_frame",
    "spend_total",
    "Prices",
    "Tier",
    "Tiers",
    "tier_report",
    "STRENGTHS",
    "KEEP_RANKING",
    "SYSTEM_FAMILIES",
    "calibrate_chosen",
    "fit_model",
    "sweep",
    "synthesize_insights",
    "tau_action_diff_agreement",
    "tau_class_consistency",
    "temperature_for",
    "top_k_agreement",
    "trials_frame",
    "trivial_baselines",
    "write_replay_set",
    "write_report",
]  # fmt: skip
