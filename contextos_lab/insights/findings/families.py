"""Which source a run belongs to, so each source's statistics use that source's runs only.

A folder may hold tau-bench runs beside Who&When runs; a baseline, a trend window or an FDR
family that spanned both would let one source's files change another's figures (Who&When's
share-of-failures bound went 0.297 → 0.104 once tau-bench files sat beside them). Every loader
stamps `inputs.source`; records without one (the bundled generator, ingested records) form one
family of their own.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pandas as pd

DEFAULT_FAMILY = "records"


def family_of_inputs(inputs: Any) -> str:
    """The source family named by a record's `inputs` (`inputs.source`), else the default."""
    if isinstance(inputs, Mapping) and isinstance(inputs.get("source"), str) and inputs["source"]:
        return str(inputs["source"])
    return DEFAULT_FAMILY


def family_column(frame: pd.DataFrame) -> pd.Series:
    """Per row of a runs frame, its source family."""
    if "inputs" not in frame:
        return pd.Series(DEFAULT_FAMILY, index=frame.index, dtype="string")
    return frame["inputs"].map(family_of_inputs).astype("string")


def families(frame: pd.DataFrame) -> Iterator[tuple[str, pd.DataFrame]]:
    """(family, its rows) in name order; a frame of one source yields itself."""
    column = family_column(frame)
    for name in sorted(column.unique()):
        yield str(name), frame[column == name]
