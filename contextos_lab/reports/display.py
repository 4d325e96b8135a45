"""Notebook display defaults for reviewer reports: whole tables, figures inline.

Called once at the top of each report notebook. Tables are never cut with `...` (the HTML makes
long or wide tables scroll instead, see `render`); figures use the kernel's inline backend
(never `matplotlib.use("Agg")`, which would silently drop every figure from the report).
"""

from __future__ import annotations

import pandas as pd


def report_defaults() -> None:
    pd.set_option("display.max_rows", None)
    pd.set_option("display.max_columns", None)
    pd.set_option("display.max_colwidth", None)
    pd.set_option("display.width", None)
    pd.set_option("display.precision", 4)  # 0.10000000000000012 reads 0.1
    pd.set_option("display.html.use_mathjax", False)  # `$255 ... $305` in text stays text
