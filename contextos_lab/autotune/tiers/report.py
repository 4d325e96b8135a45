"""What a tiered study's report shows: per config which tier decided what, the agreement with
its interval, and the calls and money each tier took (docs/tiers.md, "Reading the report")."""

from __future__ import annotations

from typing import Any

import optuna
import pandas as pd

from contextos_lab.autotune.tiers.agreement import TIERS_ATTR, study_agreement, target_scores
from contextos_lab.autotune.tiers.pool import PICK_ATTR


def tier_frame(study: optuna.Study, objectives: list[str]) -> pd.DataFrame:
    """One row per tiered trial: state, decided by, why, screen and target scores, spend."""
    rows = []
    for t in study.get_trials(deepcopy=False):
        tiers = t.user_attrs.get(TIERS_ATTR)
        if not isinstance(tiers, dict):
            continue
        screen = tiers.get("screen") or {}
        pool = tiers.get("pool") or {}  # configs screened wide for the surrogate steer
        spend = t.user_attrs.get("spend") or {}
        target = target_scores(t, objectives)
        calls = int(screen.get("calls", 0)) + int(pool.get("calls", 0))
        usd = float(screen.get("usd", 0.0)) + float(pool.get("usd", 0.0))
        row: dict[str, Any] = {
            "number": t.number,
            "state": t.state.name,
            "decided_by": tiers.get("decided_by"),
            "stance": tiers.get("stance"),
            "picked": PICK_ATTR in t.user_attrs,
            "why": tiers.get("why") or tiers.get("stance_why"),
            "screen_calls": calls,
            "screen_usd": usd,
            "target_calls": int(spend.get("calls", 0)) - calls,
            "target_usd": float(spend.get("usd", 0.0)) - usd,
        }
        for i, name in enumerate(objectives):
            row[f"screen_{name}"] = (screen.get("scores") or {}).get(name)
            row[f"target_{name}"] = None if target is None else target[i]
        rows.append(row)
    return pd.DataFrame(rows)


def disagreements(frame: pd.DataFrame, objective: str, top: int = 5) -> pd.DataFrame:
    """Configs run on both tiers whose rank on `objective` differs most between them."""
    both = frame.dropna(subset=[f"screen_{objective}", f"target_{objective}"]).copy()
    if both.empty:
        return both
    both["screen_rank"] = both[f"screen_{objective}"].rank(pct=True)
    both["target_rank"] = both[f"target_{objective}"].rank(pct=True)
    both["rank_gap"] = (both["screen_rank"] - both["target_rank"]).abs()
    cols = ["number", f"screen_{objective}", f"target_{objective}", "rank_gap"]
    return both.sort_values("rank_gap", ascending=False)[cols].head(top)


def tier_report(study: optuna.Study, objectives: list[str], level: float = 0.9) -> dict[str, Any]:
    """Agreement (interval), decisions per tier, calls and money per tier, the configs the
    tiers disagree on most; empty for an untiered study."""
    frame = tier_frame(study, objectives)
    if frame.empty:
        return {}
    agreement = study_agreement(study, objectives, level)
    per_tier = {
        "screen": {"calls": int(frame["screen_calls"].sum()),
                   "usd": round(float(frame["screen_usd"].sum()), 6)},
        "target": {"calls": int(frame["target_calls"].sum()),
                   "usd": round(float(frame["target_usd"].sum()), 6)},
    }  # fmt: skip
    worst = agreement.objective or objectives[0]
    return {
        "agreement": agreement.as_dict(),
        "decided_by": {str(k): int(v) for k, v in frame["decided_by"].value_counts().items()},
        "surrogate_picks": int(frame["picked"].sum()),
        "spend": per_tier,
        "disagreements": disagreements(frame, worst).to_dict(orient="records"),
        "trials": frame[["number", "state", "decided_by", "why"]].to_dict(orient="records"),
    }


def format_tier_report(report: dict[str, Any]) -> str:
    """The tier section of the sweep summary, as text."""
    if not report:
        return ""
    a, s = report["agreement"], report["spend"]
    interval = (
        "not measured yet"
        if a["rho"] is None
        else (
            f"{a['rho']:.3f} [{a['low']:.3f}, {a['high']:.3f}] ({a['level']:.0%}) "
            f"on {a['objective']}"
        )
    )
    lines = [
        f"tiers: screen -> target agreement {interval}, {a['n']} configs on both",
        f"  decided by: {report['decided_by']}; surrogate picks: {report['surrogate_picks']}",
        f"  screen: {s['screen']['calls']} calls, ${s['screen']['usd']:.4f}; "
        f"target: {s['target']['calls']} calls, ${s['target']['usd']:.4f}",
    ]
    for d in report["disagreements"]:
        lines.append(f"  disagree: trial #{d['number']} rank gap {d['rank_gap']:.2f}")
    return "\n".join(lines)
