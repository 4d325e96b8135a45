"""Clusters of failure mechanisms: runs grouped by what the decisive step did and how the run
went, never by an annotation.

A run's mechanism is read off its attribution row: the blamed speaker's role, what the step
does (`act`), the orchestrator's loop/stall flags, how the run ended and, where ground truth
exists, the action diff's shape. Runs are grouped on the full mechanism; a group smaller than
`min_size` falls back to role and act alone, and what is still too small is "other". The error
family that follows the step describes a cluster (when it is most of it) rather than splits it.
The same agent under another spelling (`Websurfer`/`WebSurfer`) is one agent. A title reads like
the mechanism, naming the agent when one agent is most of the cluster.
"""

from __future__ import annotations

from collections import Counter

import pandas as pd

#: Mechanism columns, finest first; each level drops detail from the one before.
LEVELS: tuple[tuple[str, ...], ...] = (
    ("role", "act", "loop", "stall", "ending", "diff"),
    ("role", "act"),
)
ROLE_WORDS = {"agent": "an agent", "orchestrator": "the orchestrator", "user": "the user"}


def display_names(attributions: pd.DataFrame) -> dict[str, str]:
    """agent_key → the most common spelling among the runs (ties: alphabetical)."""
    out: dict[str, str] = {}
    for key, names in attributions.groupby("agent_key")["agent"]:
        counts = Counter(names)
        out[str(key)] = sorted(counts, key=lambda n: (-counts[n], n))[0]
    return out


def _key(row: pd.Series, columns: tuple[str, ...]) -> tuple:
    return tuple(None if pd.isna(row[c]) else row[c] for c in columns)


def assign(attributions: pd.DataFrame, min_size: int) -> pd.Series:
    """Mechanism level and key per run (index aligned with `attributions`)."""
    pending = attributions.index
    chosen: dict[object, tuple[int, tuple]] = {}
    for level, columns in enumerate(LEVELS):
        keys = attributions.loc[pending].apply(lambda r, c=columns: _key(r, c), axis=1)
        sizes = keys.map(keys.value_counts())
        keep = sizes >= min_size
        for idx in keys.index[keep]:
            chosen[idx] = (level, keys[idx])
        pending = keys.index[~keep]
        if pending.empty:
            break
    for idx in pending:
        chosen[idx] = (len(LEVELS), ("other",))
    return pd.Series(chosen, dtype=object).reindex(attributions.index)


def title(members: pd.DataFrame, level: int, names: dict[str, str]) -> str:
    """A mechanism in words, with the cluster's size."""
    n = len(members)
    if level >= len(LEVELS):
        return f"other mechanisms, each too rare to cluster ({n} runs)"
    first = members.iloc[0]
    top_key, top_n = Counter(members["agent_key"]).most_common(1)[0]
    who = names[top_key] if top_n * 2 > n else ROLE_WORDS.get(first["role"], str(first["role"]))
    text = f"{who} {first['act']}"
    columns = LEVELS[level]
    errors = Counter(e for e in members["error"] if isinstance(e, str))
    if errors:
        family, k = errors.most_common(1)[0]
        if k * 2 > n:
            text += f", then {family} ({k} of {n})"
    if "diff" in columns and isinstance(first["diff"], str):
        text += f"; the run {first['diff']}"
    flags = []
    if "loop" in columns and first["loop"]:
        flags.append("the orchestrator says it is looping")
    if "stall" in columns and first["stall"]:
        flags.append("it stalls and replans")
    if flags:
        text += ", " + " and ".join(flags)
    if "ending" in columns:
        text += f", and the run ends {first['ending']}"
    else:
        endings = Counter(members["ending"])
        ending, k = endings.most_common(1)[0]
        text += f", runs ending variously (most {ending}, {k} of {n})"
    return f"{text} ({n} runs)"


def mechanism_clusters(attributions: pd.DataFrame, min_size: int = 3) -> pd.DataFrame:
    """One row per cluster (largest first): id, title, size, level, the mechanism, the most
    common agent and its share, member record ids, and how many members rest on a
    low-confidence attribution."""
    columns = [
        "cluster",
        "title",
        "size",
        "level",
        "mechanism",
        "agent",
        "agent_share",
        "members",
        "low_confidence",
    ]
    if attributions.empty:
        return pd.DataFrame(columns=columns)
    names = display_names(attributions)
    keys = assign(attributions, min_size)
    rows = []
    for (level, key), idx in _groups(keys):
        members = attributions.loc[idx]
        top_key, top_n = Counter(members["agent_key"]).most_common(1)[0]
        rows.append(
            {
                "title": title(members, level, names),
                "size": len(members),
                "level": level,
                "mechanism": dict(zip(LEVELS[level], key, strict=True))
                if level < len(LEVELS)
                else {},
                "agent": names[top_key],
                "agent_share": top_n / len(members),
                "members": members["record_id"].tolist(),
                # members whose attribution is below the attributor's confidence threshold
                "low_confidence": int(
                    members.get("low_confidence", pd.Series(dtype=bool)).fillna(False).sum()
                ),
            }
        )
    rows.sort(key=lambda r: (-r["size"], r["level"], r["title"]))
    for i, row in enumerate(rows):
        row["cluster"] = f"m{i + 1}"
    return pd.DataFrame(rows, columns=columns)


def _groups(keys: pd.Series) -> list[tuple[tuple[int, tuple], list]]:
    groups: dict[tuple[int, tuple], list] = {}
    for idx, value in keys.items():
        groups.setdefault(value, []).append(idx)
    return list(groups.items())


def label_runs(attributions: pd.DataFrame, clusters: pd.DataFrame) -> pd.Series:
    """Cluster id per attribution row."""
    of = {
        rid: c
        for c, members in zip(clusters["cluster"], clusters["members"], strict=True)
        for rid in members
    }
    return attributions["record_id"].map(of)


__all__ = ["LEVELS", "assign", "display_names", "label_runs", "mechanism_clusters", "title"]
