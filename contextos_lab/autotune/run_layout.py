"""The experience layout an outside proposer reads: every trial's config, scores and cases.

    runs/<study>/
      study.json                   target, objectives, floors, tunable surfaces and their grids
      index.jsonl                  one line per finished trial: number, state, scores, proposer
      trial_<n>/config.json        params, full config, diff from the baseline, proposer
      trial_<n>/scores.json        state, mean scores, constraints, racing stage, failing cases
      trial_<n>/cases/<id>.json    one case: its inputs, the harness's full result and trace,
                                   per-evaluator scores, and which evaluators it failed
      baseline_failures/<id>.json  the baseline's failing cases (copies)

Plain files so that `grep`, `cat` and `jq` navigate it, as a person or an LLM agent with shell
access would (Meta-Harness's proposers read full traces, not summaries). It holds **search-set
runs only**: the held-out gate never writes here, so a proposer cannot fit the held-out set.
Written as the study runs: `execute_and_score` hands each evaluated batch (a racing round) to
`record`, and the trial's files are written when the trial is told (complete, pruned by racing,
or failed).
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

#: Evaluators whose per-case score below 1 makes the case a failing one.
PASS_AT_ONE = ("policy", "safety", "utility")
_UNSAFE = re.compile(r"[^A-Za-z0-9._=-]+")


def safe_name(case_id: str) -> str:
    """A file name for a case id (anything outside [A-Za-z0-9._=-] becomes '_'), never a path."""
    name = _UNSAFE.sub("_", str(case_id)).strip(".") or "_"
    return name[:180]


def trial_dir_name(number: int) -> str:
    return f"trial_{number}"


def _plain(value: Any) -> Any:
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _default(value: Any) -> Any:
    return value.tolist() if hasattr(value, "tolist") else str(value)


def _encode(obj: Any) -> str:
    """Compact JSON through the C encoder (indentation would force the pure-Python one, ~10x
    slower: a 2,000-case trial took 9 s); non-finite floats become null (valid JSON)."""
    try:
        return json.dumps(obj, ensure_ascii=False, allow_nan=False, default=_default)
    except ValueError:
        return json.dumps(_plain(obj), ensure_ascii=False, allow_nan=False, default=_default)


def _write_json(path: Path, obj: Any, *, atomic: bool = True) -> None:
    """One JSON document; atomic (temp file + rename) for files that are rewritten."""
    text = _encode(obj) + "\n"
    if not atomic:  # a new file in a trial's own folder: nobody reads it half-written
        path.write_text(text, encoding="utf-8")
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(tmp, path)


def describe(ctx: Any) -> dict[str, Any]:
    """What a proposer needs to know about the problem (written once as study.json)."""
    spec = ctx.spec
    return {
        "target": spec.target.model_dump(mode="json"),
        "objectives": [e.value for e in spec.objectives],
        "floors": spec.guardrails.floors.model_dump(mode="json"),
        "surfaces": [
            {
                "name": s.name,
                "layer": s.layer.value,
                "kind": s.kind,
                "baseline": s.baseline,
                "grid": list(s.grid()),
            }
            for s in ctx.space.surfaces
        ],
    }


def for_context(ctx: Any, root: str | Path) -> RunLayout:
    return RunLayout(root, ctx.spec.name, describe(ctx))


def failed_evaluators(scores: Mapping[str, float], error: Any) -> list[str]:
    failed = [m for m in PASS_AT_ONE if m in scores and not float(scores[m]) >= 1.0]
    if error not in (None, "") and not (isinstance(error, float) and error != error):
        failed.append("error")
    return failed


class RunLayout:
    """Writes one study's runs under `root/<study>/`; one per process, one trial at a time."""

    def __init__(
        self, root: str | Path, study: str, about: Mapping[str, Any] | None = None
    ) -> None:
        self.root = Path(root)
        self.study = study
        self.about = dict(about or {})
        self._pending: list[dict[str, Any]] = []

    @property
    def study_dir(self) -> Path:
        return self.root / safe_name(self.study)

    def record(self, cases: pd.DataFrame, results: pd.DataFrame, per_case: pd.DataFrame) -> None:
        """Keep one evaluated batch until the trial is told: `results` holds each case's runs
        case-major (k repeats each), `per_case` one row per case (repeat means)."""
        n = len(cases)
        k = max(1, len(results) // n) if n else 1
        runs = results.to_dict(orient="records")
        for i, (case, scores) in enumerate(
            zip(cases.to_dict(orient="records"), per_case.to_dict(orient="records"), strict=True)
        ):
            mine = runs[i * k : (i + 1) * k]
            errors = [r.get("error") for r in mine]
            first_error = next((e for e in errors if failed_evaluators({}, e)), None)
            entry = {
                "case_id": str(case.get("case_id", mine[0].get("case_id") if mine else i)),
                "case": case,
                "result": mine[0] if mine else {},
                "scores": scores,
                "failed": failed_evaluators(scores, first_error),
            }
            if k > 1:
                entry["repeats"] = mine
            self._pending.append(entry)

    def discard(self) -> None:
        self._pending = []

    def finish(self, trial: Any, *, config: Mapping[str, Any] | None = None) -> Path:
        """Write the told trial's folder from its FrozenTrial and the recorded cases."""
        ua = trial.user_attrs
        if self.about and not (self.study_dir / "study.json").exists():
            _write_json(self.study_dir / "study.json", {"study": self.study, **self.about})
        folder = self.study_dir / trial_dir_name(trial.number)
        cases_dir = folder / "cases"
        failing = []
        if self._pending:
            cases_dir.mkdir(parents=True, exist_ok=True)
        for entry in self._pending:
            name = safe_name(entry["case_id"])
            _write_json(cases_dir / f"{name}.json", {"trial": trial.number, **entry}, atomic=False)
            if entry["failed"]:
                failing.append(entry["case_id"])
        self._pending = []
        proposer = ua.get("proposer") or {"by": "sampler", "kind": "sampler"}
        _write_json(
            folder / "config.json",
            {
                "study": self.study,
                "trial": trial.number,
                "params": dict(trial.params),
                "config": dict(config or {}),
                "diff": (ua.get("change") or {}).get("diff", {}),
                "is_baseline": bool(ua.get("is_baseline")),
                "proposer": proposer,
            },
        )
        scores = {
            "trial": trial.number,
            "state": trial.state.name,
            "scores": ua.get("scores"),
            "constraints": dict(trial.constraints or {}),
            "feasible": bool(trial.constraints) and all(v <= 0 for v in trial.constraints.values()),
            "fail_reason": ua.get("fail_reason"),
            "racing": ua.get("racing"),
            "n_cases_run": len(list(cases_dir.glob("*.json"))) if cases_dir.exists() else 0,
            "failing_cases": failing,
        }
        _write_json(folder / "scores.json", scores)
        with (self.study_dir / "index.jsonl").open("a", encoding="utf-8") as fh:
            line = {k: scores[k] for k in ("trial", "state", "scores", "feasible")}
            fh.write(json.dumps(_plain({**line, "proposer": proposer["by"]})) + "\n")
        if ua.get("is_baseline"):
            self._copy_baseline_failures(cases_dir, failing)
        return folder

    def _copy_baseline_failures(self, cases_dir: Path, failing: list[str]) -> None:
        target = self.study_dir / "baseline_failures"
        target.mkdir(parents=True, exist_ok=True)
        for case_id in failing:
            name = f"{safe_name(case_id)}.json"
            shutil.copyfile(cases_dir / name, target / name)
