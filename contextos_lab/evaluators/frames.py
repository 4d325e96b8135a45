"""Aligning a results frame to its cases frame, and the case facts as boolean arrays."""

from __future__ import annotations

import numpy as np
import pandas as pd

_FACTS = ("within_window", "has_proof", "repeat_customer", "shipped", "idv_passed")


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


def facts_frame(cases: pd.DataFrame) -> dict[str, np.ndarray]:
    """Each fact as a bool array (absent facts are False)."""
    frame = pd.DataFrame(list(cases["facts"]))
    return {
        f: frame[f].fillna(False).to_numpy(dtype=bool) if f in frame else np.zeros(len(cases), bool)
        for f in _FACTS
    }
