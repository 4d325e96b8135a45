"""Win rates from pairwise preferences: Bradley-Terry strengths with bootstrap intervals.

Each PreferenceEntry is one comparison between two subjects (configs, trials, decision keys).
Strengths come from `choix` (iterative Luce spectral ranking on the dense win matrix, a
maintained Bradley-Terry implementation) with a small ridge (`alpha`) so that a subject that
won or lost everything keeps a finite strength. A tie counts as half a win each way (the
usual Bradley-Terry treatment, Rao-Kupper's tie parameter aside). Each subject's *win rate* is
its modelled chance of beating a subject drawn at random from the others; its 95 % interval is
a percentile bootstrap over the judgements (resampled with replacement), so it widens where few
judgements exist.
"""

from __future__ import annotations

from collections.abc import Sequence

import choix
import numpy as np
import pandas as pd

from contextos_lab.schemas.preference import PreferenceEntry

COLUMNS = (
    "subject", "comparisons", "wins", "ties", "losses", "strength", "win_rate", "ci_low",
    "ci_high",
)  # fmt: skip


def preference_frame(
    entries: Sequence[PreferenceEntry], criterion: str | None = None
) -> pd.DataFrame:
    """One row per judgement (optionally of one criterion): a, b, preferred. Ordered by
    preference id, so the bootstrap draws (and intervals) do not depend on the input order."""
    rows = [
        {"a": e.a_subject, "b": e.b_subject, "preferred": e.preferred.value,
         "criterion": e.criterion, "decision_key": e.decision_key}
        for e in sorted(entries, key=lambda e: e.preference_id)
        if criterion is None or e.criterion == criterion
    ]  # fmt: skip
    return pd.DataFrame(rows, columns=["a", "b", "preferred", "criterion", "decision_key"])


def _wins(a: np.ndarray, b: np.ndarray, pref: np.ndarray, n: int) -> np.ndarray:
    """`m[i, j]` = times i beat j, a tie counting half a win each way (choix's dense input)."""
    m = np.zeros((n, n))
    np.add.at(m, (a[pref == "a"], b[pref == "a"]), 1.0)
    np.add.at(m, (b[pref == "b"], a[pref == "b"]), 1.0)
    tie = pref == "tie"
    np.add.at(m, (a[tie], b[tie]), 0.5)
    np.add.at(m, (b[tie], a[tie]), 0.5)
    return m


def _win_rates(params: np.ndarray) -> np.ndarray:
    """Chance of beating a random other subject under Bradley-Terry strengths."""
    diff = params[:, None] - params[None, :]
    p = 1.0 / (1.0 + np.exp(-diff))
    np.fill_diagonal(p, np.nan)
    return np.nanmean(p, axis=1)


def bradley_terry(
    frame: pd.DataFrame, *, n_boot: int = 200, alpha: float = 0.01, seed: int = 0
) -> pd.DataFrame:
    """Per subject: counts, BT strength, win rate and its 95 % bootstrap interval."""
    subjects = sorted(set(frame["a"]) | set(frame["b"]))
    if len(subjects) < 2:
        return pd.DataFrame(columns=list(COLUMNS))
    index = {s: i for i, s in enumerate(subjects)}
    n = len(index)
    a = frame["a"].map(index).to_numpy()
    b = frame["b"].map(index).to_numpy()
    pref = frame["preferred"].to_numpy(dtype=str)
    params = choix.ilsr_pairwise_dense(_wins(a, b, pref, n), alpha=alpha)
    rates = _win_rates(params)
    rng = np.random.default_rng(seed)
    boots = np.empty((n_boot, n))
    for k in range(n_boot):
        pick = rng.integers(0, len(frame), len(frame))
        boots[k] = _win_rates(
            choix.ilsr_pairwise_dense(_wins(a[pick], b[pick], pref[pick], n), alpha=alpha)
        )
    low, high = np.percentile(boots, [2.5, 97.5], axis=0)
    out = []
    for s, i in index.items():
        as_a, as_b = frame[frame["a"] == s], frame[frame["b"] == s]
        wins = int((as_a["preferred"] == "a").sum() + (as_b["preferred"] == "b").sum())
        losses = int((as_a["preferred"] == "b").sum() + (as_b["preferred"] == "a").sum())
        ties = int((as_a["preferred"] == "tie").sum() + (as_b["preferred"] == "tie").sum())
        out.append(
            (s, wins + losses + ties, wins, ties, losses, float(params[i]), float(rates[i]),
             float(low[i]), float(high[i]))
        )  # fmt: skip
    table = pd.DataFrame(out, columns=list(COLUMNS))
    return table.sort_values("win_rate", ascending=False, ignore_index=True)


def win_rates(
    entries: Sequence[PreferenceEntry],
    *,
    criterion: str | None = None,
    by: str = "subject",
    n_boot: int = 200,
    seed: int = 0,
) -> pd.DataFrame:
    """Bradley-Terry win rates per subject, or per decision key (`by="decision_key"`: each
    decision key's judgements ranked separately, a `decision_key` column added)."""
    frame = preference_frame(entries, criterion)
    if by == "subject":
        return bradley_terry(frame, n_boot=n_boot, seed=seed)
    if by != "decision_key":
        raise ValueError(f"by must be 'subject' or 'decision_key', not {by!r}")
    parts = [
        bradley_terry(group, n_boot=n_boot, seed=seed).assign(decision_key=key)
        for key, group in frame.groupby("decision_key", dropna=False)
    ]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=list(COLUMNS))
