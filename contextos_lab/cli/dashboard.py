"""`contextos-lab dashboard --out DIR`: optuna-dashboard on a run's study, feasibility included.

The kit records Policy/Safety floors and accepted deltas with Optuna 5's named constraints
(`trial.set_constraint(name, value)`, stored as `constraints:<name>` trial system attributes);
`study.best_trials` and `optuna.visualization` read them. optuna-dashboard 0.21 does not: its
serializer reads only the pre-5 list attribute `constraints`, and its multi-objective "Best
trials" are the Pareto front of *all* complete trials, so it would mark infeasible trials Best.

Writing the old list as well would make Optuna count every constraint twice (its samplers read
both formats), so instead this command serves optuna-dashboard with two adapters:
`best_trials` are Optuna's own feasible front (`consider_constraint=True`, what
`study.best_trials` returns) and each trial's `constraints` are its named values in order.
The kit's front (`pareto.feasible_front`) then agrees with the dashboard's Best trials, except
that the kit keeps one trial per distinct config (a repeated config is one candidate) where
Optuna lists every trial on the front. The stock `optuna-dashboard` CLI still shows named
objectives (`study.set_metric_names`) but not feasibility.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from contextos_lab.cli.conventions import add_command
from contextos_lab.errors import UserError

if TYPE_CHECKING:  # Optuna loads when the dashboard starts, not for `dashboard --help`
    from optuna.study import StudyDirection
    from optuna.trial import FrozenTrial

INSTALL_HINT = "pip install 'contextos-lab[dashboard]'"


def feasible_best_trials(
    trials: Sequence[FrozenTrial], directions: Sequence[StudyDirection]
) -> list[FrozenTrial]:
    """What `study.best_trials` returns: the Pareto front of complete, feasible trials."""
    from optuna.study._multi_objective import _get_pareto_front_trials_by_trials

    return _get_pareto_front_trials_by_trials(list(trials), directions, consider_constraint=True)


def adapt_dashboard() -> None:
    """Make the installed optuna-dashboard read Optuna 5's named constraints (idempotent)."""
    try:
        from optuna_dashboard import _app, _serializer
    except ImportError as exc:
        raise UserError(f"optuna-dashboard is not installed ({INSTALL_HINT})") from exc
    if getattr(_serializer, "_contextos_adapted", False):
        return
    original = _serializer.serialize_frozen_trial

    def serialize_frozen_trial(
        study_id: int, trial: FrozenTrial, study_system_attrs: dict[str, Any]
    ) -> dict[str, Any]:
        out = original(study_id, trial, study_system_attrs)
        out["constraints"] = list(trial.constraints.values())
        return out

    _serializer.serialize_frozen_trial = serialize_frozen_trial
    _app.get_pareto_front_trials = feasible_best_trials
    _serializer._contextos_adapted = True


def storage_for(args: argparse.Namespace) -> str:
    if args.storage:
        scheme, _, local = args.storage.partition("sqlite:///")
        if not scheme and local and not Path(local).is_file():  # opening would create it
            raise UserError(f"no study storage at {local}")
        return args.storage
    db = Path(args.out) / "study.db"
    if not db.is_file():
        raise UserError(f"no study storage at {db} (run `contextos-lab sweep` or `search` first)")
    return f"sqlite:///{db.resolve()}"


def _run(args: argparse.Namespace) -> int:
    adapt_dashboard()
    from optuna_dashboard import run_server

    from contextos_lab.autotune.study.artifacts import artifact_store
    from contextos_lab.autotune.study.storage import open_storage, redact

    url = storage_for(args)
    storage = open_storage(url)  # StorageUnreachable: one line, exit 2 or 3 (cli.main)
    if not storage.get_all_studies():
        raise UserError(f"no study in {redact(url)} (run `contextos-lab sweep` or `search` first)")
    print(f"optuna-dashboard on http://{args.host}:{args.port}/ (Ctrl-C stops it)")
    run_server(storage, host=args.host, port=args.port, artifact_store=artifact_store(url))
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    p = add_command(
        subparsers,
        "dashboard",
        example=[
            "contextos-lab dashboard --out out/demo",
            "contextos-lab dashboard --storage sqlite:///out/sweep/study.db --port 8081",
        ],
    )
    p.add_argument("--out", default="out/demo", help="run folder holding study.db")
    p.add_argument("--storage", default=None, help="Optuna storage URL (overrides --out)")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8080)
    p.set_defaults(func=_run)
