"""Tables and labels a person reads in a JupyterLab pane: rounded numbers with their units,
one row per thing, long text split out of wide tables.

Why not pandas Styler: the same frames go into the reviewer's HTML, into tests and into
`print`; plain strings and rounded floats read the same in all three.
"""

from __future__ import annotations

import math
import textwrap
from typing import Any

import pandas as pd

from contextos_lab.gate.run_gate import GateRun
from contextos_lab.reports.gate_summary import METRIC_ORDER, change_text, effects, fmt_p

#: What each metric's number is in (the evaluators' docstrings): axis labels and table headers.
METRIC_UNITS: dict[str, str] = {
    "utility": "mean score, 0-1",
    "utility_correct": "share of cases fully correct",
    "latency": "modelled ms per case",
    "economics": "cents per decision",
    "policy": "share of cases compliant",
    "safety": "share of cases safe",
}


def with_unit(metric: str) -> str:
    """`latency (modelled ms per case)`: an axis label or a column header."""
    unit = METRIC_UNITS.get(metric)
    return f"{metric} ({unit})" if unit else metric


def rounded(x: Any, digits: int = 4) -> Any:
    """`x` to `digits` significant digits (0.10000000000000012 -> 0.1); others as they are."""
    if isinstance(x, bool) or not isinstance(x, int | float):
        return x
    if x == 0 or not math.isfinite(x):
        return x
    return float(f"{x:.{digits}g}")


def cases_needed(n: float | None) -> str:
    """Held-out cases a significant result would need: a count, or why there is none."""
    if n is None or n != n:
        return "— (not underpowered)"
    return f"{int(n):,}"


def wrap(text: str, width: int = 60) -> str:
    """Long text with real line breaks (shown in `<pre>`-like cells or printed)."""
    return "\n".join(textwrap.wrap(str(text), width)) if text else ""


def gate_metrics(run: GateRun) -> pd.DataFrame:
    """Candidate × metric, each number rounded, the unit in the metric's name; the verdict
    lives once per candidate in the verdicts table, not on every metric row."""
    table = effects(run)
    if table.empty:
        return table
    out = pd.DataFrame(
        {
            "candidate": table["candidate"],
            "metric": table["metric"].map(with_unit),
            "target": table["is_target"].map({True: "target", False: ""}),
            "n": table["n"],
            "baseline": table["baseline"].map(rounded),
            "candidate mean": table["candidate_mean"].map(rounded),
            "delta [95% CI]": [
                f"{rounded(d):+g} [{rounded(lo):g}, {rounded(hi):g}]"
                for d, lo, hi in zip(table["delta"], table["ci_low"], table["ci_high"], strict=True)
            ],
            "test": table["test"],
            "p_value": table["p_value"].map(fmt_p),
            "p_holm": table["p_holm"].map(fmt_p),
        }
    )
    return out.set_index(["candidate", "metric"])


def verdicts(run: GateRun) -> pd.DataFrame:
    """One row per tested candidate: the change, the verdict, p-values and cases needed; the
    reasons, long, go to `reasons` (printed below the table)."""
    rows = []
    for d in run.decisions:
        cand = run.candidate(d.candidate_id)
        rows.append(
            {
                "candidate": d.candidate_id,
                "search rank": cand.rank,
                "proposed by": (cand.proposer or {}).get("by", "sampler"),
                "verdict": d.verdict,
                "what changes (from → to)": wrap(change_text(cand.config_diff), 40),
                "target Holm p": fmt_p(d.target_p_adjusted),
                "held-out cases needed": cases_needed(d.required_n),
            }
        )
    return pd.DataFrame(rows).set_index("candidate") if rows else pd.DataFrame()


def reasons(run: GateRun) -> str:
    """Each candidate's verdict and why, as wrapped text."""
    return "\n\n".join(
        f"{d.candidate_id} — {d.verdict}:\n" + "\n".join(wrap(f"• {r}", 96) for r in d.reasons)
        for d in run.decisions
    )


def metric_order(metrics: list[str]) -> list[str]:
    order = {m: i for i, m in enumerate(METRIC_ORDER)}
    return sorted(metrics, key=lambda m: order.get(m, 99))


def flat(frame: pd.DataFrame, digits: int = 4) -> pd.DataFrame:
    """Dict cells spread into `column.key` columns, lists joined, floats rounded: no raw dicts
    or 16-digit floats in a table."""
    if frame.empty:
        return frame
    out = frame.copy()
    for column in list(out.columns):
        values = out[column]
        if values.map(lambda v: isinstance(v, dict)).any():
            spread = pd.json_normalize(
                values.map(lambda v: v if isinstance(v, dict) else {}).tolist()
            ).set_axis(out.index)
            spread.columns = [f"{column}.{c}" for c in spread.columns]
            at = out.columns.get_loc(column)
            out = pd.concat([out.iloc[:, :at], spread, out.iloc[:, at + 1 :]], axis=1)
        elif values.map(lambda v: isinstance(v, list | tuple)).any():
            out[column] = values.map(
                lambda v: ", ".join(map(str, v)) if isinstance(v, list | tuple) else v
            )
    return out.apply(lambda col: col.map(lambda v: rounded(v, digits)))


#: The classes that keep MathJax 3 (JupyterLab 4) and MathJax 2 (classic front ends) off a table.
NO_MATHJAX = "tex2jax_ignore mathjax_ignore"


def text_view(frame: pd.DataFrame) -> Any:
    """A table of trace text as text: real line breaks, wrapped, left-aligned, `$` left alone
    by MathJax (`mathjax_ignore`, the class JupyterLab 4's MathJax 3 honours, as the browser
    test found: tests/notebooks/test_in_browser.py; `tex2jax_ignore` for MathJax 2 front ends)."""
    return (
        frame.style.set_table_attributes(f'class="{NO_MATHJAX}"')
        .set_properties(
            **{"white-space": "pre-wrap", "text-align": "left", "overflow-wrap": "anywhere"}
        )
        .format(precision=4)
    )
