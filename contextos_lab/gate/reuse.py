"""A gate asked the same question again answers from its record: no held-out read, no write.

Every held-out read spends a level of the set's error budget
(docs/design.md, "Gate semantics"), so a notebook's second Run All must not read the set again
to print what the first printed. `inputs_hash` names everything a verdict and its figures
depend on: the study and its front (each candidate's params and diff), the baseline, the spec
(target, guardrails, thresholds, repeats), the search and held-out case sets by content, the
harness and its version, and the test settings (alpha, bootstrap resamples, seed, candidate
cap, research inputs). `gate.json` records it, and `gate_cases.json` beside it keeps the
per-case scores the paired tests and figures were drawn from, so a reused gate renders the
same tables and figures. Anything changed, and the gate runs (and spends) again.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from contextos_lab.autotune.context import RunContext
from contextos_lab.gate.gate_record import GATE_FILE, GateCandidate, GateRun, load_gate_run
from contextos_lab.schemas.base import canonical_json, sha256_hex

#: Per-case held-out scores of the baseline and every candidate, beside `gate.json`.
CASES_FILE = "gate_cases.json"
#: Bump when what `inputs_hash` covers changes on purpose.
INPUTS_VERSION = "gate-inputs/1"
_BASELINE = "baseline"


def inputs_hash(
    ctx: RunContext,
    *,
    study: str,
    spec_hash: str,
    heldout_manifest: str,
    candidates: Sequence[GateCandidate],
    settings: Mapping[str, Any],
) -> str:
    """One hash over what the gate's answer depends on (`settings`: alpha, n_boot, seed,
    max_candidates and the research inputs, as the caller passed them)."""
    from contextos_lab.harness.base import as_base_harness
    from contextos_lab.harness.execution import harness_key

    base = as_base_harness(ctx.harness)
    base.describe()  # a program states its version before it is keyed (as execute does)
    harness = harness_key(base)
    payload = {
        "version": INPUTS_VERSION,
        "study": study,
        "spec_hash": spec_hash,
        "search_manifest": ctx.search.manifest_hash,
        "heldout_manifest": heldout_manifest,
        "harness": [harness.name, harness.version],
        "baseline": ctx.space.baseline_params(),
        "candidates": [[c.candidate_id, c.params, c.config_diff] for c in candidates],
        "settings": dict(settings),
    }
    return sha256_hex(json.dumps(payload, sort_keys=True, default=str))


def file_digest(path: str | Path | None) -> str | None:
    """A research input by content (an edited insights file is another question)."""
    return None if path is None else sha256_hex(Path(path).read_bytes())


def write_atomic(path: Path, text: str) -> None:
    """Replace `path` in one step: a reader never sees half a record."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(tmp, path)


def scores_json(frame: pd.DataFrame) -> dict[str, Any]:
    """A per-case score frame as JSON, every float exactly as computed."""
    # the stdlib's float repr round-trips exactly (pandas' to_json keeps 15 digits at most);
    # NaN (a metric not scored on a case) is stored as null
    rows = [[None if math.isnan(v) else v for v in map(float, r)] for r in frame.to_numpy()]
    return {"index": [str(i) for i in frame.index], "columns": list(frame.columns), "data": rows}


def scores_frame(data: Mapping[str, Any]) -> pd.DataFrame:
    """The frame `scores_json` kept (index `case_id`, one float column per evaluator)."""
    index = pd.Index([str(i) for i in data["index"]], name="case_id")
    rows = [[math.nan if v is None else v for v in r] for r in data["data"]]
    return pd.DataFrame(rows, index=index, columns=list(data["columns"]), dtype=float)


def write_cases(
    out: Path,
    *,
    run_id: str,
    inputs: str,
    baseline: pd.DataFrame,
    frames: Mapping[str, pd.DataFrame],
) -> Path:
    """Keep the per-case scores of one gate run (written before its `gate.json`)."""
    body = {
        "run_id": run_id,
        "inputs_hash": inputs,
        "frames": {_BASELINE: scores_json(baseline)}
        | {cid: scores_json(f) for cid, f in frames.items()},
    }
    path = out / CASES_FILE
    write_atomic(path, canonical_json(body) + "\n")
    return path


def reusable(
    out: Path, inputs: str, run_id: str | None
) -> tuple[GateRun, pd.DataFrame, dict[str, pd.DataFrame]] | None:
    """The gate run in `out` that answered exactly this question, with its per-case scores;
    None when there is none, it answered another question, or a record is unreadable or
    incomplete (then the gate runs again). A caller naming another run id asks for a new run."""
    try:
        run = load_gate_run(out / GATE_FILE)
        kept = json.loads((out / CASES_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if run.inputs_hash != inputs or (run_id is not None and run_id != run.run_id):
        return None
    if kept.get("inputs_hash") != inputs or kept.get("run_id") != run.run_id:
        return None
    stored = kept.get("frames", {})
    wanted = [c.candidate_id for c in run.candidates]
    if _BASELINE not in stored or any(cid not in stored for cid in wanted):
        return None
    try:
        frames = {cid: scores_frame(stored[cid]) for cid in wanted}
        return run, scores_frame(stored[_BASELINE]), frames
    except (KeyError, TypeError, ValueError):
        return None
