"""The top of the sweep report (notebook 02): what was searched, what the front holds, and the
candidates that go to the held-out gate, as Markdown and plain frames (no dict reprs)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from contextos_lab.autotune.sweep import SweepResult
from contextos_lab.reports.gate_summary import change_text, fmt_num

SCORES = ("policy", "safety", "utility", "latency", "economics")


def _missing(x: Any) -> bool:
    return x is None or float(x) != float(x)


def _score(x: Any) -> str:
    """A mean, or "not scored" (policy when no search case's intent has a rule)."""
    return "not scored" if _missing(x) else f"{float(x):.4g}"


def _delta(x: Any, base: Any) -> str:
    return "n/a" if _missing(x) or _missing(base) else fmt_num(float(x) - float(base))


def candidates_table(result: SweepResult) -> pd.DataFrame:
    """Every promotable front member (no baseline, positive target gain), best first."""
    c = result.candidates
    if c.empty:
        return pd.DataFrame(columns=["rank", "trial", "what changes (from → to)"])
    out = pd.DataFrame(
        {
            "rank": c["rank"],
            "trial": c["number"],
            "target gain": c["target_gain"].map(fmt_num),
            "what changes (from → to)": c["config_diff"].map(change_text),
            "surfaces changed": c["n_changed"],
            "control-flow changes": c["n_control_flow"],
        }
    )
    for name in SCORES:
        if f"delta_{name}" in c:
            out[f"Δ {name}"] = c[f"delta_{name}"].map(fmt_num)
    return out


def stage_text(row: pd.Series) -> str:
    """Where a trial's evaluation ended: the full search set, or the racing stage it was
    dropped at, or was not promoted past (stage k of n, the cases it paid for)."""
    if row.get("state") == "FAIL":
        return "failed"
    stage, n_stages = row.get("stage"), row.get("n_stages")
    if stage is None or stage != stage:  # full fidelity (or a trial from before racing)
        return "full set" if row.get("state") == "COMPLETE" else str(row.get("state")).lower()
    cases = row.get("case_evaluations")
    if isinstance(row.get("drop_reason"), str):
        flag = row.get("not_promoted")
        if flag is not None and pd.notna(flag) and bool(flag):
            return f"not promoted past stage {int(stage)}/{int(n_stages)} ({int(cases)} cases)"
        return f"dropped at stage {int(stage)}/{int(n_stages)} ({int(cases)} cases)"
    return f"stage {int(n_stages)}/{int(n_stages)}: full set ({int(cases)} cases)"


def trials_table(result: SweepResult) -> pd.DataFrame:
    """Every trial: its state, the racing stage it reached (or `full set`), why racing dropped
    it, feasibility and its objective values (NaN where it never completed)."""
    t = result.trials
    out = pd.DataFrame(
        {
            "trial": t["number"],
            "state": t["state"],
            "stage": t.apply(stage_text, axis=1) if len(t) else pd.Series(dtype=str),
            "dropped because": t["drop_reason"].fillna(""),
            "feasible": t["feasible"],
        }
    )
    for name in (e.value for e in result.spec.objectives):
        out[name] = t[name].map(lambda x: "" if x != x else f"{x:.4g}")
    tiered = {r["number"]: r for r in (result.report.get("tiers") or {}).get("trials", [])}
    if tiered:  # a tiered study: which tier decided each config, and why
        decided = [tiered.get(n, {}) for n in t["number"]]
        out["tier decided"] = [d.get("decided_by") or "" for d in decided]
        out["why (tiers)"] = [d.get("why") or "" for d in decided]
    return out


def summary_markdown(result: SweepResult) -> str:
    rep: dict[str, Any] = result.report
    target = rep["target"]
    trials = rep["trials"]
    lines = [
        "## Summary",
        "",
        f"**Verdict: none yet** — this is the search; the held-out gate (notebook 03) decides. "
        f"{len(result.candidates)} candidate(s) go to it.",
        "",
        f"- target: **{target['metric']} {target['direction']}** (intent `{target['intent']}`); "
        "floors and accepted deltas are constraints, never objectives",
        f"- {trials['total']} trials ("
        + ", ".join(f"{k.lower()} {v}" for k, v in trials.items() if k != "total")
        + f"), {rep['n_feasible']} feasible, {rep.get('front_size', len(result.front))} on the "
        f"feasible Pareto front; normalised hypervolume {result.hypervolume:.4f}",
        "- candidates: front members that change the baseline config and gain on the target "
        "(the baseline and members that only win on another objective are left out)",
        "- the search set only: no held-out case was read here",
        "",
    ]
    if rep.get("tiers"):  # agreement with its interval, decisions, calls and money per tier
        from contextos_lab.autotune.tiers.report import format_tier_report

        lines += ["### Fidelity tiers", "", "```text", format_tier_report(rep["tiers"]), "```", ""]
    if not result.candidates.empty:
        top = result.candidates.iloc[0]
        base = rep["baseline_scores"]
        lines += [
            f"### Top-ranked candidate: trial {int(top['number'])}",
            "",
            "| knob | from | to |",
            "|---|---|---|",
            *[
                f"| {k} | {v.get('from')!r} | {v.get('to')!r} |"
                for k, v in sorted(top["config_diff"].items())
            ],
            "",
            "| metric | baseline (search set) | candidate | delta |",
            "|---|---|---|---|",
            *[
                f"| {m} | {_score(base[m])} | {_score(top[m])} | {_delta(top[m], base[m])} |"
                for m in SCORES
                if m in base
            ],
        ]
    return "\n".join(lines) + "\n"
