"""The top of the sweep report (notebook 02): what was searched, what the front holds, and the
candidates that go to the held-out gate, as Markdown and plain frames (no dict reprs)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from contextos_lab.autotune.sweep import SweepResult
from contextos_lab.reports.gate_summary import change_text, fmt_num

SCORES = ("policy", "safety", "utility", "latency", "economics")


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
                f"| {m} | {base[m]:.4g} | {float(top[m]):.4g} | "
                f"{fmt_num(float(top[m]) - base[m])} |"
                for m in SCORES
                if m in base
            ],
        ]
    return "\n".join(lines) + "\n"
