"""What `contextos-lab cluster` printed and wrote on fixed inputs, reduced to digests.

The streaming, process-pool `cluster` must give the same results as the in-memory one it
replaced; `test_cluster_pinned` compares against the digests stored in
`cluster_pins.json` beside it, taken from the in-memory code before the change. Regenerate them
only when a change is meant to alter the output (say so in the commit):
`CONTEXTOS_EXTERNAL=/path/to/external python -m tests.insights.cluster_pins --update`.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from contextos_lab.cli.app import main

FIXTURES = Path(__file__).parent / "fixtures"
PINS = Path(__file__).parent / "cluster_pins.json"
#: Case name -> sources (`{external}` is the shared external folder). Bundled cases first.
CASES: dict[str, list[str]] = {
    "synthetic": ["synthetic"],
    "fixtures": [str(FIXTURES)],
    "tau_bench": ["{external}/tau-bench/historical_trajectories/gpt-4o-airline.json"],
    "who_and_when": ["{external}/who-and-when/Algorithm-Generated"],
    "both": [
        "{external}/tau-bench/historical_trajectories",
        "{external}/who-and-when/Algorithm-Generated",
    ],
}
EXTERNAL_CASES = frozenset(k for k, v in CASES.items() if any("{external}" in s for s in v))


def _digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def run_case(name: str, external: Path | None, *extra: str) -> dict[str, Any]:
    """Run `cluster` on a case; digests of stdout and of each top-level key of insights.json."""
    sources = [s.format(external=external) for s in CASES[name]]
    with tempfile.TemporaryDirectory() as tmp:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = main(["cluster", *sources, "--out", tmp, *extra])
        report = json.loads((Path(tmp) / "insights.json").read_text(encoding="utf-8"))
        stdout = out.getvalue().replace(tmp, "OUT")
    return {
        "exit": code,
        "stdout": _digest(stdout),
        "insights.json": {key: _digest(value) for key, value in sorted(report.items())},
        "counts": {
            k: len(report[k])
            for k in ("attributions", "insights", "insight_clusters", "mechanism_clusters")
        },
    }


def _update(external: Path) -> None:
    pins = {name: run_case(name, external) for name in CASES}
    PINS.write_text(json.dumps(pins, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {PINS}")


if __name__ == "__main__":
    if "--update" not in sys.argv:
        raise SystemExit("usage: python -m tests.insights.cluster_pins --update")
    import os

    _update(Path(os.environ.get("CONTEXTOS_EXTERNAL", "../shared/external")))
