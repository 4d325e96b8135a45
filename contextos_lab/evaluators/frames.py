"""Aligning a results frame to its cases frame, and the case facts as a frame."""

from __future__ import annotations

import numpy as np
import pandas as pd


def aligned(cases: pd.DataFrame, results: pd.DataFrame) -> pd.DataFrame:
    """Results in the cases' order, indexed by case_id; a missing result is an error."""
    ids = cases["case_id"].to_numpy()
    res_ids = results["case_id"].to_numpy()
    if len(ids) == len(res_ids) and (ids == res_ids).all():
        return results.set_index("case_id", drop=False)
    res = results.set_index("case_id", drop=False)
    missing = pd.Index(ids).difference(res.index)
    if len(missing):
        raise KeyError(f"no result for cases: {', '.join(map(str, missing[:10]))}")
    return res.loc[ids]


def facts_frame(cases: pd.DataFrame, names: tuple[str, ...] = ()) -> pd.DataFrame:
    """One column per fact the cases carry (their `facts` dicts) plus each scalar numeric case
    column (a numeric input), indexed like `cases`; boolean facts missing on a case are False, and
    `names` not present at all are added as all-False columns."""
    raw = pd.DataFrame(list(cases["facts"]), index=cases.index) if "facts" in cases else None
    frame = pd.DataFrame(index=cases.index) if raw is None else raw
    for col in frame.columns:
        values = frame[col]
        if values.map(lambda v: isinstance(v, bool) or v is None or v != v).all():
            frame[col] = values.fillna(False).astype(bool)
    for col in cases.columns:
        if col not in frame and pd.api.types.is_numeric_dtype(cases[col]):
            frame[col] = cases[col].to_numpy(dtype=np.float64)
    for name in names:
        if name not in frame:
            frame[name] = np.zeros(len(cases), dtype=bool)
    return frame
