"""The run rules: per pattern kind, the runs it is about, their comparison runs, the outcome."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
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


def modal_path(frame: pd.DataFrame, decision_key: str) -> tuple[str, ...] | None:
    """Most common tool sequence of the key's successful runs; ties go to the shortest, then
    the lexically smallest. None when no run of the key succeeded: there is no path to
    deviate from, and a failed run's path is no baseline."""
    rows = frame[_key_eq(frame, decision_key)]
    paths = Counter(rows[~rows["failed"]]["tool_calls"])
    if not paths:
        return None
    return min(paths, key=lambda p: (-paths[p], len(p), p))


def _extra_calls(path: tuple[str, ...], modal: Counter[str], tool: str) -> bool:
    return path.count(tool) > modal.get(tool, 0)


def _detour_candidates(frame: pd.DataFrame, m: int) -> list[dict[str, Any]]:
    out = []
    for key in sorted(frame["decision_key"].unique()):
        modal = modal_path(frame, key)
        if modal is None:
            continue
        base = Counter(modal)
        rows = frame[_key_eq(frame, key)]
        extra: Counter[str] = Counter()
        for path in rows["tool_calls"]:
            extra.update(t for t in set(path) if _extra_calls(path, base, t))
        for tool, n in sorted(extra.items()):
            spec = {"decision_key": key, "tool": tool, "modal_path": list(modal)}
            detour, rest, failed = _detour_masks(frame, spec)
            # A detour is a finding only if detouring runs fail more often than the key's
            # other runs; a longer path that ends as well is a style, not a failure pattern.
            if n >= m and _rate(failed, detour) > _rate(failed, rest):
                out.append(spec)
    return out


def _rate(outcome: pd.Series, mask: pd.Series) -> float:
    n = int(mask.sum())
    return float((outcome & mask).sum()) / n if n else 0.0


def _detour_masks(frame: pd.DataFrame, key: dict[str, Any]) -> Masks:
    same = _key_eq(frame, key["decision_key"])
    base = Counter(key["modal_path"])
    detour = frame["tool_calls"].map(lambda p: _extra_calls(p, base, key["tool"])).astype(bool)
    return same & detour, same & ~detour, frame["failed"].astype(bool)


def _agent_phase_candidates(frame: pd.DataFrame, m: int) -> list[dict[str, Any]]:
    annotated = frame[frame["failed"] & frame["mistake_agent"].notna() & frame["phase"].notna()]
    return _groups_at_least(annotated, ["mistake_agent", "phase"], m)


def _agent_phase_masks(frame: pd.DataFrame, key: dict[str, Any]) -> Masks:
    annotated = (frame["mistake_agent"].notna() & frame["phase"].notna()).astype(bool)
    stratum = (
        ((frame["mistake_agent"] == key["mistake_agent"]) & (frame["phase"] == key["phase"]))
        .fillna(False)
        .astype(bool)
    )
    return stratum, annotated & ~stratum, frame["failed"].astype(bool)


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
        ),
        Rule(
            "common_detour",
            InsightKind.common_detour,
            "runs of a decision_key calling a tool more often than the key's modal successful "
            "tool path does (keys with no successful run have no path and no detour), grouped "
            "by (decision_key, tool), kept at count >= min_cluster_size; rate = failure rate "
            "of detouring runs vs the key's other runs",
            "stratum",
            _detour_candidates,
            _detour_masks,
            lambda k, n: (
                f"{n} runs on {k['decision_key']} repeat {k['tool']} beyond the successful "
                f"runs' modal path {' > '.join(k['modal_path']) or '(no tool)'}"
            ),
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
        ),
    )
}
