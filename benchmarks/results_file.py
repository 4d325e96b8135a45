"""Not a benchmark: how a benchmark writes benchmarks/results/NAME.json.

Its own fields first (`goals` among them), then the facts of the run every result records
(seconds, load average, Python), so a figure is read against the machine that made it. Shared
here so the benchmarks write those facts one way (kept out of the package: the library has no
benchmarks; it imports nothing from contextos_lab).
"""

from __future__ import annotations

import json
import os
import platform
from pathlib import Path
from typing import Any


def write_result(out: Path, fields: dict[str, Any], seconds: float) -> None:
    """Write `fields` and the run's facts to `out` as indented JSON, and say so."""
    out.parent.mkdir(parents=True, exist_ok=True)
    facts = {
        "seconds": round(seconds, 1),
        "load_average": os.getloadavg()[0],
        "python": platform.python_version(),
    }
    out.write_text(json.dumps({**fields, **facts}, indent=2) + "\n")
    print(f"wrote {out}")
