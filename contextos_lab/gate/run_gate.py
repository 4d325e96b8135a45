"""One gate run: a study's feasible front re-run on held-out beside the baseline, then verdicts.

Reads the study from its storage by name (it must have been created from this spec: same
problem hash), takes the feasible Pareto front in the seed's ranking, evaluates baseline and
candidates on the held-out set (`gate.heldout`, the only reader), applies `verdict.decide` with
the spec's target and guardrails, optionally confirms ResearchTask candidates on the held-out
split of the traces, and writes `gate.json`. Nothing is emitted or applied here.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import optuna
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

from contextos_lab.autotune.artifacts import recorded_case_hashes
from contextos_lab.autotune.context import RunContext, prepare
from contextos_lab.autotune.pareto import (
    feasible_front,
    promotable,
    rank_candidates,
    trials_frame,
)
from contextos_lab.autotune.spec import TuningRunSpec, load_spec
from contextos_lab.autotune.study import (
    StorageUnreachable,
    StudyMismatch,
    default_storage_url,
    open_storage,
    problem_hash,
    redact,
)
from contextos_lab.gate import ledger
from contextos_lab.gate.error_budget import GateBudget, advice, sweep_p_value
from contextos_lab.gate.heldout import HeldoutSet, open_heldout, paired_frames
from contextos_lab.gate.research import ResearchConfirmation
from contextos_lab.gate.verdict import GateDecision, GateGuardrails, decide
from contextos_lab.schemas.base import canonical_json, sha256_hex
from contextos_lab.schemas.ids import new_id

GATE_FILE = "gate.json"


class StudyNotFound(LookupError):
    """No study of that name in the storage (run the sweep first)."""


class GateCandidate(BaseModel):
    """A feasible front member as the gate tested it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    candidate_id: str
    trial_number: int
    rank: int
    params: dict[str, Any]
    config_diff: dict[str, dict[str, Any]]
    layers: list[str] = Field(default_factory=list)
    #: Provenance of an outside proposal (`contextos-lab enqueue`); None for sampler trials.
    proposer: dict[str, Any] | None = None
    n_changed: int = 0
    #: Blast radius and explainability as the search ranked them (seed 001's order).
    n_control_flow: int = 0
    diff_size: float = 0.0
    search_scores: dict[str, float]
    heldout_means: dict[str, float]


class GateRun(BaseModel):
    """What `gate.json` holds: provenance, the held-out read count and every verdict."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    run_id: str
    created_at: datetime
    study: str
    storage: str
    spec_name: str
    spec_path: str
    spec_hash: str
    target: dict[str, Any]
    guardrails: dict[str, Any]
    guardrail_strings: list[str]
    baseline_tuple: dict[str, Any]
    tunable_surfaces: list[str]
    rollback_target: str
    search_set: dict[str, Any]
    heldout: dict[str, Any]
    #: The study's baseline trial (preference evidence compares the change against it).
    baseline_trial: int | None = None
    prior_heldout_reads: int
    reads_warning: str | None
    alpha: float
    n_boot: int
    baseline_heldout_means: dict[str, float]
    candidates: list[GateCandidate]
    decisions: list[GateDecision]
    research: list[ResearchConfirmation] = Field(default_factory=list)
    #: Earlier reads of the held-out *trace* split the research candidates were confirmed on
    #: (its own ledger entry, `traces:<hash>`); None when no candidates were confirmed.
    research_prior_heldout_reads: int | None = None
    research_reads_warning: str | None = None
    #: This gate's share of the held-out set's error budget (LORD++ across gates).
    error_budget: GateBudget | None = None

    @property
    def promoted(self) -> list[GateDecision]:
        return [d for d in self.decisions if d.verdict == "promote"]

    def candidate(self, candidate_id: str) -> GateCandidate:
        return next(c for c in self.candidates if c.candidate_id == candidate_id)

    def table(self) -> pd.DataFrame:
        """Candidate × metric: delta, 95% CI, p, Holm-adjusted p, verdict.

        `p_holm` is Holm across the tested candidates for every metric (each metric its own
        family); on the target metric it equals the decision's `target_p_adjusted`.
        """
        from contextos_lab.gate.paired_tests import holm_adjust

        rows = []
        for d in self.decisions:
            for t in d.tests:
                rows.append(
                    {
                        "candidate": d.candidate_id,
                        "verdict": d.verdict,
                        "metric": t.metric,
                        "is_target": t.metric == d.target_metric,
                        "test": t.test,
                        "n": t.n,
                        "baseline": t.baseline_mean,
                        "candidate_mean": t.candidate_mean,
                        "delta": t.delta,
                        "ci_low": t.ci_low,
                        "ci_high": t.ci_high,
                        "p_value": t.p_value,
                    }
                )
        frame = pd.DataFrame(rows)
        if frame.empty:
            return frame.assign(p_holm=pd.Series(dtype=float))
        frame["p_holm"] = frame.groupby("metric", sort=False)["p_value"].transform(
            lambda p: pd.Series(holm_adjust(list(p)), index=p.index)
        )
        return frame

@dataclass
class GateResult:
    run: GateRun
    baseline: pd.DataFrame
    frames: dict[str, pd.DataFrame]
    path: Path | None = None
    ranked: pd.DataFrame = field(default_factory=pd.DataFrame)

    def differences(self, metric: str) -> pd.DataFrame:
        """Per-case candidate − baseline differences of one metric (for the paired plots)."""
        return pd.DataFrame(
            {cid: f[metric] - self.baseline[metric] for cid, f in self.frames.items()}
        )


def spec_hash(spec: TuningRunSpec) -> str:
    return sha256_hex(canonical_json(spec.model_dump(mode="json")))


def guardrails_of(spec: TuningRunSpec) -> GateGuardrails:
    deltas = {
        k: v for k, v in spec.guardrails.accepted_deltas.model_dump().items() if v is not None
    }
    floors = spec.guardrails.floors
    return GateGuardrails(
        policy_floor=floors.policy, safety_floor=floors.safety, accepted_delta=deltas
    )


def load_study(name: str, storage: str) -> optuna.Study:
    store = open_storage(storage)
    try:
        return optuna.load_study(study_name=name, storage=store)
    except KeyError as exc:
        raise StudyNotFound(
            f"no study named {name!r} in {redact(storage)} (run `contextos-lab sweep` first)"
        ) from exc


def front_candidates(
    study: optuna.Study, spec: TuningRunSpec, max_candidates: int | None = None
) -> pd.DataFrame:
    """The feasible front in the seed's ranking, promotable members only (`pareto.promotable`:
    no baseline config, a positive target gain on the search set)."""
    frame = trials_frame(study)
    if frame.empty:
        return frame
    front = feasible_front(frame, spec)
    if front.empty:
        return front
    front = front[front["config_diff"].map(bool)]
    # An outside proposal is always judged by the gate when feasible, on the front or not.
    outside = frame[
        frame["feasible"]
        & frame["proposer"].map(lambda p: isinstance(p, dict) and p.get("kind") == "outside")
        & frame["config_diff"].map(bool)
        & ~frame["number"].isin(front["number"])
    ]
    front = pd.concat([front, outside], ignore_index=True) if len(outside) else front
    baseline = dict(study.user_attrs.get("baseline_scores", {}))
    ranked = (
        promotable(rank_candidates(front.reset_index(drop=True), spec, baseline))
        if baseline
        else front
    )
    return ranked.head(max_candidates) if max_candidates else ranked


def _write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(tmp, path)


def run_gate(
    spec: str | Path | TuningRunSpec,
    *,
    storage: str | None = None,
    out_dir: str | Path,
    study_name: str | None = None,
    run_id: str | None = None,
    ledger_file: str | Path | None = None,
    alpha: float = 0.05,
    n_boot: int = 2000,
    seed: int = 0,
    max_candidates: int | None = None,
    insights: str | Path | None = None,
    sources: Sequence[str] = ("synthetic",),
    ctx: RunContext | None = None,
) -> GateResult:
    """Run the held-out gate for a study and write `out_dir/gate.json`.

    Raises SpecError (bad spec), StorageUnreachable, StudyNotFound, StudyMismatch (the study
    was built from another spec), HeldoutOverlapError (refused before any case runs).
    """
    spec_path = str(spec) if not isinstance(spec, TuningRunSpec) else ""
    spec_obj = spec if isinstance(spec, TuningRunSpec) else load_spec(spec)
    ctx = ctx or prepare(spec_obj)
    out = Path(out_dir)
    url = storage or default_storage_url(out)
    if ctx.cache is None:  # the study's paid results: the baseline re-run reads them, and a
        # gate re-run on the same study and held-out set gets the same runs, hence its verdicts
        from contextos_lab.harness.result_cache import open_for_study

        ctx.cache = open_for_study(url)
    name = study_name or ctx.spec.name
    study = load_study(name, url)
    recorded = study.user_attrs.get("problem_hash")
    if recorded is not None and recorded != problem_hash(ctx):
        raise StudyMismatch(
            f"study {name!r} was created from a different spec than {spec_path or 'this one'}"
        )
    ranked = front_candidates(study, ctx.spec, max_candidates)
    run_id = run_id or new_id("eval")
    s_hash = spec_hash(ctx.spec)
    heldout = open_heldout(
        ctx,
        run_id=run_id,
        study=name,
        spec_hash=s_hash,
        n_candidates=len(ranked),
        recorded_search_hashes=recorded_case_hashes(study, url),
        ledger_file=ledger_file,
        budget=ctx.spec.heldout_budget,
    )
    cands: list[GateCandidate] = []
    for row in ranked.to_dict(orient="records"):
        cands.append(
            GateCandidate(
                candidate_id=f"trial_{int(row['number'])}",
                trial_number=int(row["number"]),
                rank=int(row.get("rank", len(cands) + 1)),
                params=dict(row["params"]),
                config_diff=dict(row["config_diff"]),
                layers=list(row.get("layers") or []),
                proposer=row.get("proposer") if isinstance(row.get("proposer"), dict) else None,
                n_changed=int(row.get("n_changed") or len(row["config_diff"])),
                n_control_flow=int(row.get("n_control_flow") or 0),
                diff_size=float(row.get("diff_size") or 0.0),
                search_scores={
                    k: float(row[k])
                    for k in ("policy", "safety", "utility", "latency", "economics")
                },
                heldout_means={},
            )
        )
    baseline, frames = paired_frames(ctx, heldout, {c.candidate_id: c.params for c in cands})
    decisions = (
        decide(
            baseline,
            frames,
            target_metric=ctx.spec.target.metric.value,
            target_direction=ctx.spec.target.direction.value,
            guardrails=guardrails_of(ctx.spec),
            alpha=alpha,
            seed=seed,
            n_boot=n_boot,
            promote_alpha=heldout.budget.next_level,
        )
        if frames
        else []
    )
    budget = _settle_budget(heldout, decisions, run_id, ledger_file)
    cands = [c.model_copy(update={"heldout_means": _means(frames[c.candidate_id])}) for c in cands]
    research: list[ResearchConfirmation] = []
    research_reads: int | None = None
    if insights is not None:
        research_reads, research = _confirm_research(
            insights,
            sources,
            alpha=alpha,
            closed=any(d.verdict == "promote" for d in decisions),
            intent=ctx.spec.target.intent,
            run_id=run_id,
            study=name,
            s_hash=s_hash,
            ledger_file=ledger_file,
        )
    run = GateRun(
        run_id=run_id,
        created_at=datetime.now(UTC),
        study=name,
        storage=redact(url),
        spec_name=ctx.spec.name,
        spec_path=spec_path,
        spec_hash=s_hash,
        target=ctx.spec.tuning_target().model_dump(mode="json"),
        guardrails=ctx.spec.guardrails.model_dump(mode="json"),
        guardrail_strings=list(ctx.spec.guardrails.as_strings()),
        baseline_tuple=ctx.spec.baseline_tuple.model_dump(mode="json"),
        tunable_surfaces=[s.name for s in ctx.spec.surface_specs],
        rollback_target=ctx.spec.rollback_target,
        search_set={
            "path": ctx.spec.search_set,
            "manifest_hash": ctx.search.manifest_hash,
            "n_cases": len(ctx.search),
        },
        heldout={
            "path": ctx.spec.heldout_test_set,
            "manifest_hash": heldout.manifest_hash,
            "n_cases": len(heldout.cases),
        },
        baseline_trial=study.user_attrs.get("baseline_trial"),
        prior_heldout_reads=heldout.prior_reads,
        reads_warning=ledger.reads_warning(heldout.prior_reads),
        alpha=alpha,
        n_boot=n_boot,
        baseline_heldout_means=_means(baseline),
        candidates=cands,
        decisions=decisions,
        research=research,
        research_prior_heldout_reads=research_reads,
        research_reads_warning=(
            ledger.reads_warning(research_reads) if research_reads is not None else None
        ),
        error_budget=budget,
    )
    path = out / GATE_FILE
    _write_atomic(path, run.model_dump_json(indent=1) + "\n")
    return GateResult(run=run, baseline=baseline, frames=frames, path=path, ranked=ranked)


def _settle_budget(
    heldout: HeldoutSet,
    decisions: Sequence[GateDecision],
    run_id: str,
    ledger_file: str | Path | None,
) -> GateBudget:
    """Record whether this gate promoted (a promotion earns LORD++ budget back) and say where
    the held-out set's budget stands afterwards."""
    eligible = [d.target_p_adjusted for d in decisions if d.verdict in ("promote", "underpowered")]
    p_value = sweep_p_value(eligible)
    promoted = any(d.verdict == "promote" for d in decisions)
    before = heldout.budget
    ledger.record_outcome(
        manifest_hash=heldout.manifest_hash,
        run_id=run_id,
        index=before.next_index,
        p_value=p_value,
        promoted=promoted,
        path=ledger_file,
    )
    after, _ = ledger.budget_state(heldout.manifest_hash, path=ledger_file)
    return GateBudget(
        method=before.method,
        alpha_total=before.alpha,
        horizon=before.horizon,
        index=before.next_index,
        alpha_tested=before.next_level,
        p_value=p_value,
        promoted=promoted,
        spent_before=before.spent,
        after=after,
        advice=advice(after, str(heldout.path)),
    )


def _means(frame: pd.DataFrame) -> dict[str, float]:
    return {k: float(v) for k, v in frame.mean().items()}


def _confirm_research(
    insights: str | Path,
    sources: Sequence[str],
    *,
    alpha: float,
    closed: bool,
    intent: str,
    run_id: str,
    study: str,
    s_hash: str,
    ledger_file: str | Path | None,
) -> tuple[int | None, list[ResearchConfirmation]]:
    """(earlier reads of the held-out trace split, confirmations); (None, []) with no candidates."""
    from contextos_lab.gate.research import confirm, heldout_runs, load_candidates, split_of

    candidates = load_candidates(insights)
    if not candidates:
        return None, []
    split = split_of(candidates)
    runs = heldout_runs(sources, split)
    # The held-out split of the traces is a held-out set too: its reads are counted.
    prior = ledger.record_read(
        manifest_hash="traces:"
        + sha256_hex(canonical_json({"sources": list(sources), "split": split.to_dict()})),
        run_id=run_id,
        study=study,
        spec_hash=s_hash,
        heldout_path=",".join(sources),
        n_cases=len(runs),
        n_candidates=len(candidates),
        path=ledger_file,
    )
    return prior, confirm(
        candidates, runs, alpha=alpha, tuning_closed_gap=closed, target_intent=intent
    )


def load_gate_run(path: str | Path) -> GateRun:
    return GateRun.model_validate(json.loads(Path(path).read_text(encoding="utf-8")))


__all__ = [
    "GateCandidate",
    "GateResult",
    "GateRun",
    "StorageUnreachable",
    "StudyNotFound",
    "load_gate_run",
    "run_gate",
]
