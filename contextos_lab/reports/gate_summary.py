"""What a reviewer reads first in the gate report: the decision, the operating points, every
metric's effect, the guardrails and the held-out reads, as Markdown and plain frames.

Pure functions of a `GateRun` (what `gate.json` holds), so the report, the proposal and a test
all read the same numbers. p-values are printed in scientific notation (a Holm-adjusted p of
3e-12 is not "0"); a p-value that underflowed to 0.0 is printed as "< 1e-300".
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from contextos_lab.gate.family import OperatingPoint, promoted_family
from contextos_lab.gate.run_gate import GateRun
from contextos_lab.gate.verdict import BETTER, GateDecision

#: Metric order in every table: floors, then the objectives, then the extra utility view.
METRIC_ORDER = ("policy", "safety", "utility", "latency", "economics", "utility_correct")


def fmt_p(p: float | None) -> str:
    if p is None or p != p:
        return "n/a"
    return "< 1e-300" if p == 0.0 else f"{p:.2e}"


def fmt_num(x: float) -> str:
    return f"{x:+.4g}"


def change_text(diff: dict[str, dict[str, Any]]) -> str:
    """`knob: from → to; ...` (no Python dict reprs in a report)."""
    if not diff:
        return "(no change: the baseline config)"
    return "; ".join(f"{k}: {v.get('from')!r} → {v.get('to')!r}" for k, v in sorted(diff.items()))


def effects(run: GateRun) -> pd.DataFrame:
    """Candidate × metric with the interval and both p-values, metrics in a fixed order."""
    table = run.table()
    if table.empty:
        return table
    order = {m: i for i, m in enumerate(METRIC_ORDER)}
    table = table.assign(_o=table["metric"].map(lambda m: order.get(m, 99)))
    return table.sort_values(["candidate", "_o"], kind="stable").drop(columns="_o")


def effect_cell(row: pd.Series) -> str:
    return (
        f"{fmt_num(row['delta'])} [{row['ci_low']:.4g}, {row['ci_high']:.4g}], "
        f"Holm p {fmt_p(row['p_holm'])}"
    )


def guardrail_status(run: GateRun, decision: GateDecision) -> pd.DataFrame:
    """Each floor and accepted delta: held or breached, with what was measured on held-out."""
    rows = []
    floors = run.guardrails.get("floors", {})
    cand = run.candidate(decision.candidate_id)
    for metric, floor in floors.items():
        mean = cand.heldout_means.get(metric)
        if mean is None or mean != mean:  # policy with no rule for any case's intent
            rows.append(
                {
                    "guardrail": f"{metric}>={floor}",
                    "status": "not scored",
                    "measured on held-out": "no case scored (see the notes)",
                }
            )
            continue
        scored = next((n for n in decision.notes if n.startswith(f"{metric} not scored")), None)
        rows.append(
            {
                "guardrail": f"{metric}>={floor}",
                "status": "holds" if mean >= floor else "BREACHED",
                "measured on held-out": f"mean {mean:.4f}"
                + (" over the scored cases" if scored else ""),
            }
        )
    for metric, allowed in (run.guardrails.get("accepted_deltas") or {}).items():
        if allowed is None:
            continue
        t = decision.test_for(metric)
        worse = -t.delta if BETTER[metric] == "increase" else t.delta
        sign = "-" if BETTER[metric] == "increase" else "+"
        rows.append(
            {
                # the spec's own string (`guardrail_strings`): the same name the check used
                "guardrail": f"{metric}{'>=' if sign == '-' else '<='}baseline{sign}{allowed}",
                "status": "holds" if worse <= allowed else "BREACHED",
                "measured on held-out": (
                    f"delta {fmt_num(t.delta)} (95% CI [{t.ci_low:.4g}, {t.ci_high:.4g}])"
                ),
            }
        )
    return pd.DataFrame(rows)


def family_table(run: GateRun, family: list[OperatingPoint]) -> pd.DataFrame:
    """One row per operating point: what changes and its effect on every metric."""
    table = effects(run)
    rows = []
    for p in family:
        mine = table[table["candidate"] == p.candidate.candidate_id]
        row: dict[str, Any] = {
            "rank": p.rank,
            "candidate": p.candidate.candidate_id,
            "what changes (from → to)": change_text(p.candidate.config_diff),
        }
        for _, r in mine.iterrows():
            row[r["metric"]] = effect_cell(r)
        rows.append(row)
    return pd.DataFrame(rows)


def _point_sections(run: GateRun, top: OperatingPoint, *, recommended: bool) -> list[str]:
    """What the point changes, its effect on every metric, its guardrails and why."""
    title = "recommended operating point" if recommended else "best-ranked candidate tested"
    lines = [
        f"### What changes — {title} `{top.candidate.candidate_id}` ({top.decision.verdict})",
        "",
        "| knob | from | to |",
        "|---|---|---|",
        *[
            f"| {k} | {v.get('from')!r} | {v.get('to')!r} |"
            for k, v in sorted(top.candidate.config_diff.items())
        ],
        "",
        "### Effect on every metric (held-out, candidate − baseline)",
        "",
        "| metric | baseline | candidate | delta | 95% CI | test | p | Holm p |",
        "|---|---|---|---|---|---|---|---|",
    ]
    table = effects(run)
    for _, r in table[table["candidate"] == top.candidate.candidate_id].iterrows():
        star = " (target)" if r["is_target"] else ""
        lines.append(
            f"| {r['metric']}{star} | {r['baseline']:.4g} | {r['candidate_mean']:.4g} | "
            f"{fmt_num(r['delta'])} | [{r['ci_low']:.4g}, {r['ci_high']:.4g}] | "
            f"{r['test']} | {fmt_p(r['p_value'])} | {fmt_p(r['p_holm'])} |"
        )
    lines += ["", "### Guardrails", "", "| guardrail | status | measured on held-out |"]
    lines.append("|---|---|---|")
    for _, g in guardrail_status(run, top.decision).iterrows():
        lines.append(f"| `{g['guardrail']}` | {g['status']} | {g['measured on held-out']} |")
    lines += ["", "Why: " + " ".join(top.decision.reasons)]
    return lines + [f"Not scored: {note}" for note in top.decision.notes]


def summary_markdown(run: GateRun) -> str:
    """The top of the gate report."""
    family = promoted_family(run)
    target = run.target
    counts = pd.Series([d.verdict for d in run.decisions]).value_counts().to_dict()
    lines = ["## Summary", ""]
    if family:
        lines.append(
            f"**Verdict: promote** — {len(family)} operating point(s) on the Pareto front, one "
            "TuningProposal; the operator picks a point (rank 1 is recommended: target gain, "
            "then blast radius, then explainability)."
        )
    else:
        lines.append(
            f"**Verdict: nothing promoted** — {len(run.decisions)} candidate(s) tested; no "
            "TuningProposal."
        )
    lines += [
        "",
        f"- target: **{target.get('metric')} {target.get('direction')}** "
        f"(intent `{target.get('intent')}`); guardrails: "
        + ", ".join(f"`{g}`" for g in run.guardrail_strings),
        "- verdicts: " + ", ".join(f"{v} {n}" for v, n in sorted(counts.items()))
        if counts
        else "- verdicts: no feasible candidate with a target gain to test",
        f"- held-out: {run.heldout.get('n_cases')} cases (manifest "
        f"`{str(run.heldout.get('manifest_hash'))[:12]}`); **read {run.prior_heldout_reads} "
        "time(s) before this run**" + (f" — {run.reads_warning}" if run.reads_warning else ""),
        f"- study `{run.study}`, evaluation run `{run.run_id}`, alpha {run.alpha}, Holm across "
        f"{len(run.decisions)} candidate(s) per metric",
    ]
    budget = getattr(run, "error_budget", None)
    if budget is not None:  # the held-out set's error budget across gates (LORD++)
        lines += [
            f"- error budget: gate {budget.index} on this held-out set, promotions tested at "
            f"alpha_t = {budget.alpha_tested:.3g} (lifetime alpha {budget.alpha_total}, spent "
            f"before {budget.spent_before:.3g}); after it: {budget.after.summary()}",
            f"- {budget.advice}",
        ]
    lines.append("")
    shown = family or [
        OperatingPoint(i, run.candidate(d.candidate_id), d)
        for i, d in enumerate(run.decisions[:3], start=1)
    ]
    if shown:
        lines += _point_sections(run, shown[0], recommended=bool(family))
    return "\n".join(lines) + "\n"
