"""Insights from runs (seed 001's five kinds), each derived from DecisionRecords by a stated rule.

Every rule names a *stratum* (the records the pattern is about), a *baseline* (what it is
compared with) and an *outcome*; `support` then tests the outcome rate in the stratum against
the baseline. A pattern is a JSON-serialisable spec `{rule, kind, key}`, so the gate can
recount it on the held-out split with `measure(spec, heldout_frame)`.

A record is *failed* when its status is FAILED or DENIED, or its inputs say `failed: true`
(tau-bench: reward < 1, including runs that escalated). Its reason class is `inputs.reason_class`,
else the class of a correction on it, else `unclassified`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import pandas as pd

from contextos_lab.insights.split import SEARCH, SplitSpec
from contextos_lab.insights.support import Counts, share_of_failures, support_for
from contextos_lab.insights.synthesize import check_min_cluster_size, feedback_frame
from contextos_lab.schemas.base import EnvelopeList, canonical_json
from contextos_lab.schemas.clock import NO_CLOCK
from contextos_lab.schemas.decision import DecisionRecord, TerminalStatus
from contextos_lab.schemas.feedback import FeedbackEntry
from contextos_lab.schemas.ids import new_id
from contextos_lab.schemas.insight import MIN_CLUSTER_SIZE, Insight, InsightKind

UNCLASSIFIED = "unclassified"
_FAILED = {TerminalStatus.failed.value, TerminalStatus.denied.value}
_SHOULD_FINISH = {"complete", "approve", "completed", "COMPLETED"}


def runs_frame(
    records: Sequence[DecisionRecord] | pd.DataFrame,
    feedback: pd.DataFrame | Sequence[FeedbackEntry] | None = None,
    split: SplitSpec | None = None,
) -> pd.DataFrame:
    """One row per decision with the derived columns the rules read (failed, reason_class,
    over_escalated, split)."""
    df = (
        records.copy()
        if isinstance(records, pd.DataFrame)
        else EnvelopeList(records, DecisionRecord).to_frame()
    )
    inputs = df["inputs"].map(lambda d: d if isinstance(d, dict) else {})
    fb = feedback_frame(feedback) if feedback is not None else None
    fb_class: pd.Series = pd.Series(dtype="string")
    fb_approve: pd.Series = pd.Series(dtype=bool)
    if fb is not None and not fb.empty:
        first = fb.sort_values("signed_at").drop_duplicates("decision_record_id")
        fb_class = first.set_index("decision_record_id")["override_reason_class"]
        approve = (fb["override_kind"] == "approve") | (
            fb["override_reason_class"] == "over_escalation"
        )
        fb_approve = approve.groupby(fb["decision_record_id"]).any()
    flagged = inputs.map(lambda d: d.get("failed") is True)
    df["failed"] = df["status"].isin(_FAILED) | flagged.astype(bool)
    reason = inputs.map(lambda d: d.get("reason_class")).astype("string")
    reason = reason.fillna(df["record_id"].map(fb_class).astype("string"))
    df["reason_class"] = reason.where(~df["failed"], reason.fillna(UNCLASSIFIED))
    expected = inputs.map(lambda d: str(d.get("expected_decision", "")))
    approved = df["record_id"].map(fb_approve).fillna(False).astype(bool)
    df["over_escalated"] = (df["status"] == TerminalStatus.escalated.value) & (
        expected.isin(_SHOULD_FINISH) | approved
    )
    df["mistake_agent"] = inputs.map(lambda d: d.get("mistake_agent")).astype("string")
    df["phase"] = inputs.map(lambda d: d.get("phase")).astype("string")
    df["timed"] = pd.to_datetime(df["decided_at"], utc=True) != pd.Timestamp(NO_CLOCK)
    df["tool_calls"] = df["tool_calls"].map(tuple)
    df["evidence_refs_missing"] = df["evidence_refs_missing"].map(tuple)
    df["split"] = (split or SplitSpec(0.0)).assign(df["trace_id"]).to_numpy()
    return df


def failure_table(frame: pd.DataFrame, min_cluster_size: int = MIN_CLUSTER_SIZE) -> pd.DataFrame:
    """Every failed run in exactly one (decision_key, reason_class) row: counts add up to the
    failed runs; `meets_min` marks the rows that become failure_cluster insights."""
    failed = frame[frame["failed"]]
    table = (
        failed.groupby(["decision_key", "reason_class"], observed=True)
        .size()
        .rename("count")
        .reset_index()
        .sort_values(["count", "decision_key", "reason_class"], ascending=[False, True, True])
        .reset_index(drop=True)
    )
    table["share_of_failures"] = table["count"] / max(1, len(failed))
    table["meets_min"] = table["count"] >= min_cluster_size
    return table


# -- rules -----------------------------------------------------------------------------------

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


@dataclass(frozen=True)
class Measured:
    counts: Counts
    member_ids: list[str]
    times: pd.Series

    @property
    def occurrences(self) -> int:
        return len(self.member_ids)


def measure(spec: dict[str, Any], frame: pd.DataFrame) -> Measured:
    """Recount a pattern spec on any frame (the search split here, held-out in the gate)."""
    rule = RULES[spec["rule"]]
    stratum, baseline, outcome = rule.masks(frame, spec["key"])
    members = stratum & outcome if rule.occurrence == "hits" else stratum
    counts = Counts(
        hits_in=int((stratum & outcome).sum()),
        n_in=int(stratum.sum()),
        hits_out=int((baseline & outcome).sum()),
        n_out=int(baseline.sum()),
    )
    chosen = frame[members]
    return Measured(counts, chosen["record_id"].tolist(), chosen["decided_at"])


def find_run_insights(
    frame: pd.DataFrame,
    *,
    min_cluster_size: int = MIN_CLUSTER_SIZE,
    rules: Sequence[str] | None = None,
    split: SplitSpec | None = None,
    window: tuple[datetime, datetime] | None = None,
) -> EnvelopeList[Insight]:
    """Apply each rule to the search split of `frame` and emit one Insight per pattern.

    `support` carries the rule text, the spec, the search-split counts and the split
    declaration, which is what the gate needs to recount the pattern on held-out.
    """
    m = check_min_cluster_size(min_cluster_size)
    search = frame[frame["split"] == SEARCH] if "split" in frame else frame
    if search.empty:
        return EnvelopeList([], Insight)
    start, end = window or (search["decided_at"].min(), search["decided_at"].max())
    out: list[Insight] = []
    for name in rules or list(RULES):
        rule = RULES[name]
        for key in rule.candidates(search, m):
            spec = {"rule": rule.name, "kind": rule.kind.value, "key": key}
            got = measure(spec, search)
            if got.occurrences < m:
                continue
            confidence, support = support_for(got.counts, got.times, start, end)
            if not _has_baseline(search, key):
                share = share_of_failures(got.occurrences, int(search["failed"].sum()))
                support = {**support, **share, "baseline_rate": None}
                confidence = share["share_ci95"][0]
            intent = key.get("decision_key") or _modal_key(search, got.member_ids)
            out.append(
                Insight(
                    insight_id=new_id("ins", at=got.times.max(), seed=canonical_json(spec)),
                    kind=rule.kind,
                    intent=intent,
                    pattern=rule.describe(key, got.occurrences),
                    occurrences=got.occurrences,
                    first_seen=got.times.min(),
                    last_seen=got.times.max(),
                    evidence_refs=tuple(got.member_ids[:50]),
                    confidence=confidence,
                    support={
                        **support,
                        "rule": rule.text,
                        "source": "runs",
                        "spec": spec,
                        "key": key,
                        "split": {
                            "discovered_on": SEARCH,
                            **(split.to_dict() if split else {"heldout_fraction": 0.0}),
                        },
                    },
                )
            )
    return EnvelopeList(out, Insight)


def _has_baseline(frame: pd.DataFrame, key: dict[str, Any]) -> bool:
    """A successful run to contrast with: of the same decision key when the pattern has one,
    else anywhere in the frame."""
    scope = (
        _key_eq(frame, key["decision_key"]) if "decision_key" in key else frame["failed"].notna()
    )
    return bool((scope & ~frame["failed"].astype(bool)).any())


def _modal_key(frame: pd.DataFrame, ids: list[str]) -> str:
    keys = frame.loc[frame["record_id"].isin(ids), "decision_key"]
    return str(keys.mode().iloc[0]) if len(keys) else "unknown"


__all__ = [
    "RULES",
    "Measured",
    "Rule",
    "failure_table",
    "find_run_insights",
    "measure",
    "modal_path",
    "runs_frame",
]
