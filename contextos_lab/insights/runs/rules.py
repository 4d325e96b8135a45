"""The run rules: per pattern kind, the runs it is about, their comparison runs, the outcome."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from contextos_lab.schemas.decision import TerminalStatus
from contextos_lab.schemas.insight import InsightKind

Masks = tuple[pd.Series, pd.Series, pd.Series]  # stratum, baseline, outcome


@dataclass(frozen=True)
class Rule:
    name: str
    kind: InsightKind
    text: str
    #: "hits": occurrences are stratum ∧ outcome; "stratum": every stratum record is one.
    occurrence: str
    candidates: Callable[[pd.DataFrame, int], list[dict[str, Any]]]
    masks: Callable[[pd.DataFrame, dict[str, Any]], Masks]
    describe: Callable[[dict[str, Any], int], str]
    #: What the outcome rate is tested against, in words (shown with every insight's test).
    baseline: str = "the rule's comparison runs of the same source"


def _key_eq(frame: pd.DataFrame, key: str) -> pd.Series:
    return frame["decision_key"] == key


def _groups_at_least(series: pd.DataFrame, by: list[str], m: int) -> list[dict[str, Any]]:
    sizes = series.groupby(by, observed=True).size()
    return [
        dict(zip(by, k if isinstance(k, tuple) else (k,), strict=True))
        for k in sizes[sizes >= m].index
    ]


def _failure_candidates(frame: pd.DataFrame, m: int) -> list[dict[str, Any]]:
    return _groups_at_least(frame[frame["failed"]], ["decision_key", "reason_class"], m)


def _failure_masks(frame: pd.DataFrame, key: dict[str, Any]) -> Masks:
    stratum = _key_eq(frame, key["decision_key"])
    outcome = frame["failed"] & (frame["reason_class"] == key["reason_class"]).fillna(False)
    return stratum, ~stratum, outcome.astype(bool)


def _missing(frame: pd.DataFrame, ref: str) -> pd.Series:
    return frame["evidence_refs_missing"].map(lambda refs: ref in refs).astype(bool)


def _gap_candidates(frame: pd.DataFrame, m: int) -> list[dict[str, Any]]:
    refs = frame["evidence_refs_missing"].map(lambda t: sorted(set(t))).explode().dropna()
    counts = refs.value_counts()
    return [{"ref": str(r)} for r in sorted(counts[counts >= m].index)]


def _gap_masks(frame: pd.DataFrame, key: dict[str, Any]) -> Masks:
    stratum = _missing(frame, key["ref"])
    return stratum, ~stratum, frame["failed"].astype(bool)


def _blocked_candidates(frame: pd.DataFrame, m: int) -> list[dict[str, Any]]:
    blocked = frame[frame["status"] == TerminalStatus.blocked.value]
    return _groups_at_least(blocked, ["decision_key"], m)


def _blocked_masks(frame: pd.DataFrame, key: dict[str, Any]) -> Masks:
    stratum = _key_eq(frame, key["decision_key"])
    return stratum, ~stratum, frame["status"] == TerminalStatus.blocked.value


def task_column(frame: pd.DataFrame) -> pd.Series:
    """The task each run attempted: `<decision_key>#<inputs.task_id>` where the data names its
    tasks (tau-bench), else the decision key (then a key is one task). A corpus' frame holds
    the task id as a column of its own (`insights.compact_rows.TASK_ID`), not in the inputs."""
    key = frame["decision_key"].astype(str)
    if "task_id" in frame:
        tid = frame["task_id"]
    elif "inputs" in frame:
        tid = frame["inputs"].map(lambda d: d.get("task_id") if isinstance(d, Mapping) else None)
    else:
        return key
    return key.where(tid.isna(), key + "#" + tid.map(str))


def modal_path(frame: pd.DataFrame, task: str) -> tuple[str, ...] | None:
    """Most common tool sequence of the task's own successful runs; ties go to the shortest,
    then the lexically smallest. None when no run of the task succeeded: there is no path to
    deviate from, a failed run's path is no baseline, and another task's success is none either
    (a key groups tasks that need different paths)."""
    rows = frame[task_column(frame) == task]
    return _modal(Counter(rows[~rows["failed"].astype(bool)]["tool_calls"]))


def _modal(paths: Counter[tuple[str, ...]]) -> tuple[str, ...] | None:
    if not paths:
        return None
    return min(paths, key=lambda p: (-paths[p], len(p), p))


def modal_paths(frame: pd.DataFrame, tasks: pd.Series) -> dict[str, tuple[str, ...] | None]:
    """`modal_path` of every task at once (`tasks`: `task_column(frame)`); one pass, where
    asking task by task made a corpus of distinct tasks quadratic."""
    ok = ~frame["failed"].astype(bool)
    found: dict[str, Counter[tuple[str, ...]]] = {t: Counter() for t in tasks.unique()}
    for task, path in zip(tasks[ok], frame.loc[ok, "tool_calls"], strict=True):
        found[task][path] += 1
    return {t: _modal(paths) for t, paths in found.items()}


def _extra_calls(path: tuple[str, ...], modal: Counter[str], tool: str) -> bool:
    return path.count(tool) > modal.get(tool, 0)


def _detour_candidates(frame: pd.DataFrame, m: int) -> list[dict[str, Any]]:
    out = []
    tasks = task_column(frame)
    every = modal_paths(frame, tasks)
    for key in sorted(frame["decision_key"].unique()):
        same = _key_eq(frame, key)
        paths = {t: every[t] for t in sorted(tasks[same].unique())}
        modal = {t: list(p) for t, p in paths.items() if p is not None}
        if not modal:
            continue
        extra: Counter[str] = Counter()
        for task, path in zip(tasks[same], frame.loc[same, "tool_calls"], strict=True):
            if task in modal:
                base = Counter(modal[task])
                extra.update(t for t in set(path) if _extra_calls(path, base, t))
        for tool, n in sorted(extra.items()):
            spec = {"decision_key": key, "tool": tool, "modal_paths": modal}
            detour, rest, failed = _detour_masks(frame, spec)
            # A detour is a finding only if detouring runs fail more often than the same tasks'
            # other runs; a longer path that ends as well is a style, not a failure pattern.
            if n >= m and _rate(failed, detour) > _rate(failed, rest):
                out.append(spec)
    return out


def _rate(outcome: pd.Series, mask: pd.Series) -> float:
    n = int(mask.sum())
    return float((outcome & mask).sum()) / n if n else 0.0


def _detour_masks(frame: pd.DataFrame, key: dict[str, Any]) -> Masks:
    """Runs of tasks with a modal successful path only; each is compared with its own task's
    path, so one task's success never sets another task's baseline."""
    tool = key["tool"]
    # `_extra_calls` against each task's modal path, as the count of the one tool it asks
    # about: no Counter per task (a corpus of distinct tasks has one per run)
    allowed = {t: p.count(tool) for t, p in key["modal_paths"].items()}
    tasks = task_column(frame)
    same = _key_eq(frame, key["decision_key"]) & tasks.isin(list(allowed))
    detour = pd.Series(
        [
            t in allowed and p.count(tool) > allowed[t]
            for t, p in zip(tasks, frame["tool_calls"], strict=True)
        ],
        index=frame.index,
        dtype=bool,
    )
    return same & detour, same & ~detour, frame["failed"].astype(bool)


def _describe_detour(k: dict[str, Any], n: int) -> str:
    paths = sorted({" > ".join(p) or "(no tool)" for p in k["modal_paths"].values()})
    shown = paths[0] if len(paths) == 1 else f"{len(paths)} distinct paths"
    tasks = len(k["modal_paths"])
    return (
        f"{n} runs on {k['decision_key']} repeat {k['tool']} beyond their own task's modal "
        f"successful path ({tasks} task{'s' if tasks != 1 else ''} with a success; {shown})"
    )


def annotation_flagged(frame: pd.DataFrame) -> pd.Series:
    """Runs whose annotation contradicts the trace (the annotated step is spoken by another
    agent, or lies outside the run): `inputs.annotation_flag`, computed by the loader."""
    if "inputs" not in frame:
        return pd.Series(False, index=frame.index, dtype=bool)
    inputs = frame["inputs"]
    flagged = inputs.map(lambda d: isinstance(d, Mapping) and bool(d.get("annotation_flag")))
    return flagged.astype(bool)


def _agent_phase_candidates(frame: pd.DataFrame, m: int) -> list[dict[str, Any]]:
    usable = frame["mistake_agent"].notna() & frame["phase"].notna() & ~annotation_flagged(frame)
    return _groups_at_least(frame[frame["failed"] & usable], ["mistake_agent", "phase"], m)


def _agent_phase_masks(frame: pd.DataFrame, key: dict[str, Any]) -> Masks:
    """Flagged annotations are counted apart (`support.flagged_runs`), never in a cluster."""
    annotated = (
        frame["mistake_agent"].notna() & frame["phase"].notna() & ~annotation_flagged(frame)
    ).astype(bool)
    stratum = (
        ((frame["mistake_agent"] == key["mistake_agent"]) & (frame["phase"] == key["phase"]))
        .fillna(False)
        .astype(bool)
    )
    return stratum & annotated, annotated & ~stratum, frame["failed"].astype(bool)


def _escalation_candidates(frame: pd.DataFrame, m: int) -> list[dict[str, Any]]:
    return _groups_at_least(frame[frame["over_escalated"]], ["decision_key"], m)


def _escalation_masks(frame: pd.DataFrame, key: dict[str, Any]) -> Masks:
    stratum = _key_eq(frame, key["decision_key"])
    return stratum, ~stratum, frame["over_escalated"].astype(bool)


RULES: dict[str, Rule] = {
    r.name: r
    for r in (
        Rule(
            "failure_cluster",
            InsightKind.failure_cluster,
            "failed runs (FAILED/DENIED or inputs.failed) grouped by (decision_key, "
            "reason_class), kept at count >= min_cluster_size; rate = that failure among the "
            "key's runs vs among other keys' runs",
            "hits",
            _failure_candidates,
            _failure_masks,
            lambda k, n: f"{n} {k['reason_class']} failures on {k['decision_key']}",
            "runs of the source's other decision keys",
        ),
        Rule(
            "gap_detected",
            InsightKind.gap_detected,
            "the same ref in evidence_refs_missing of >= min_cluster_size decisions; rate = "
            "failure rate of decisions missing it vs of decisions not missing it",
            "stratum",
            _gap_candidates,
            _gap_masks,
            lambda k, n: f"evidence {k['ref']} missing in {n} decisions",
            "decisions of the source not missing that evidence",
        ),
        Rule(
            "blocked_decision",
            InsightKind.blocked_decision,
            "status BLOCKED grouped by decision_key, kept at count >= min_cluster_size; rate = "
            "blocked share of the key's runs vs of other keys' runs",
            "hits",
            _blocked_candidates,
            _blocked_masks,
            lambda k, n: f"{n} blocked decisions on {k['decision_key']}",
            "runs of the source's other decision keys",
        ),
        Rule(
            "common_detour",
            InsightKind.common_detour,
            "runs calling a tool more often than the modal tool path of their own task's "
            "successful runs (tasks with no successful run have no path and no detour), "
            "grouped by (decision_key, tool), kept at count >= min_cluster_size; rate = "
            "failure rate of detouring runs vs the same tasks' other runs",
            "stratum",
            _detour_candidates,
            _detour_masks,
            _describe_detour,
            "the same tasks' runs that do not repeat the tool",
        ),
        Rule(
            "agent_phase",
            InsightKind.failure_cluster,
            "failed runs whose annotation names the mistaken agent and the step, grouped by "
            "(mistake_agent, phase = first/middle/last third of the run's steps), kept at count "
            ">= min_cluster_size; rate = failure rate of those runs vs other annotated runs",
            "hits",
            _agent_phase_candidates,
            _agent_phase_masks,
            lambda k, n: (
                f"{n} failures where {k['mistake_agent']} erred in the "
                f"{str(k['phase']).replace('_', ' ')} of the run"
            ),
            "other annotated runs of the source (step-speaker mismatches left out)",
        ),
        Rule(
            "over_escalation",
            InsightKind.over_escalation,
            "status ESCALATED where the expected decision (inputs.expected_decision, or a "
            "correction approving it / classed over_escalation) was to finish, grouped by "
            "decision_key, kept at count >= min_cluster_size; rate vs other keys",
            "hits",
            _escalation_candidates,
            _escalation_masks,
            lambda k, n: f"{n} escalations on {k['decision_key']} that should have finished",
            "runs of the source's other decision keys",
        ),
    )
}
