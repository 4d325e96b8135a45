"""Outside proposals: a person or an agent puts a config into the study, with provenance.

The config is checked against the spec's declared tunable surfaces (a knob outside them, or a
value off a knob's grid, is refused naming the knob), then enqueued into the same Optuna study
with a `proposer` user attribute: who proposed it, why, and which trial/case files of the run
layout they cite. The study evaluates it on the search set like any trial (the next `search`,
`sweep`, or `enqueue --evaluate` run takes waiting trials first; racing drops it only when it is
proved infeasible, never for being off the front), the gate tests it on held-out
like any candidate, and the TuningProposal names its proposer. Nothing skips the gate.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import optuna
from optuna.trial import TrialState

from contextos_lab.autotune.context import RunContext
from contextos_lab.autotune.run_layout import RunLayout, safe_name
from contextos_lab.autotune.spec.search_space import on_grid
from contextos_lab.errors import UserError

#: `trial_<n>` or `trial_<n>/<case_id>`: what a proposer may cite from the run layout.
CITE = re.compile(r"^trial_(\d+)(?:/(.+))?\Z")


@dataclass(frozen=True)
class Enqueued:
    study: str
    params: dict[str, Any]
    proposer: dict[str, Any]
    waiting: int
    #: False when the same proposer had already enqueued this config: nothing was added.
    new: bool = True
    #: The trial holding the proposal (numbered when enqueued; it keeps the number when run).
    trial_number: int | None = None


def check_config(ctx: RunContext, config: Mapping[str, Any]) -> dict[str, Any]:
    """Full params for the study: the proposed knobs, the baseline for the rest; every
    problem named in one UserError."""
    surfaces = {s.name: s for s in ctx.space.surfaces}
    problems = []
    for name, value in config.items():
        surface = surfaces.get(name)
        if surface is None:
            known = ", ".join(sorted(surfaces))
            problems.append(f"{name!r} is not a declared tunable surface of this spec ({known})")
        elif not _valid(surface, value):
            problems.append(f"{name}={value!r} is not on its grid {list(surface.grid())}")
    if problems:
        raise UserError("config refused: " + "; ".join(problems))
    params = ctx.space.baseline_params()
    params.update({k: _typed(surfaces[k], v) for k, v in config.items()})
    return params


def _valid(surface: Any, value: Any) -> bool:
    if surface.kind == "bool":
        return isinstance(value, bool)
    numeric = isinstance(value, int | float) and not isinstance(value, bool)
    if surface.kind in ("int", "float") and not numeric:
        return False
    try:
        return on_grid(surface, value)
    except (TypeError, ValueError):
        return False


def _typed(surface: Any, value: Any) -> Any:
    if surface.kind == "int":
        return int(value)
    if surface.kind == "float":
        return float(value)
    return value


def check_cites(layout: RunLayout | None, cites: Sequence[str]) -> list[str]:
    """Cited trials/cases must exist in the run layout (when there is one)."""
    problems = []
    for cite in cites:
        m = CITE.match(cite)
        if m is None:
            problems.append(f"{cite!r} is not trial_<n> or trial_<n>/<case_id>")
            continue
        if layout is None:
            continue
        folder = layout.study_dir / f"trial_{m.group(1)}"
        target = folder / "cases" / f"{safe_name(m.group(2))}.json" if m.group(2) else folder
        if not target.exists():
            problems.append(f"{cite!r} is not in the run layout ({target} missing)")
    if problems:
        raise UserError("cites refused: " + "; ".join(problems))
    return list(cites)


def enqueue(
    ctx: RunContext,
    study: optuna.Study,
    *,
    config: Mapping[str, Any],
    by: str,
    rationale: str,
    cites: Sequence[str] = (),
    layout: RunLayout | None = None,
) -> Enqueued:
    """Validate and enqueue one outside config into `study` with its provenance.

    Idempotent: when the same proposer already put the same config into the study (waiting,
    running or evaluated), nothing is added and that trial is returned with `new=False`, so a
    notebook run twice (or a retried job) evaluates and judges one trial, not two."""
    if not by.strip() or not rationale.strip():
        raise UserError("a proposal needs --by (who) and --rationale (why)")
    params = check_config(ctx, config)
    waiting_states = (TrialState.WAITING,)
    for trial in study.get_trials(deepcopy=False):
        earlier = trial.user_attrs.get("proposer")
        if (
            isinstance(earlier, dict)
            and earlier.get("kind") == "outside"
            and earlier.get("by") == by.strip()
            # a waiting trial has no params yet: Optuna keeps the enqueued ones aside
            and (trial.params or trial.system_attrs.get("fixed_params")) == params
        ):
            return Enqueued(
                study=study.study_name,
                params=params,
                proposer=dict(earlier),
                waiting=len(study.get_trials(deepcopy=False, states=waiting_states)),
                new=False,
                trial_number=trial.number,
            )
    proposer = {
        "kind": "outside",
        "by": by.strip(),
        "rationale": rationale.strip(),
        "cites": check_cites(layout, cites),
        "at": datetime.now(UTC).isoformat(),
        "config": dict(config),
    }
    study.enqueue_trial(params, user_attrs={"proposer": proposer}, skip_if_exists=False)
    waiting = study.get_trials(deepcopy=False, states=waiting_states)
    # Optuna numbers a waiting trial when it is enqueued and keeps that number when it runs
    number = max(t.number for t in waiting if t.user_attrs.get("proposer") == proposer)
    return Enqueued(
        study=study.study_name,
        params=params,
        proposer=proposer,
        waiting=len(waiting),
        trial_number=number,
    )


def is_outside(proposer: Any) -> bool:
    """Whether a trial's `proposer` attribute (a trials-frame cell) names an outside proposal."""
    return isinstance(proposer, dict) and proposer.get("kind") == "outside"


def layout_for(out_dir: str | Path, study: str) -> RunLayout | None:
    layout = RunLayout(Path(out_dir) / "runs", study)
    return layout if layout.study_dir.exists() else None
