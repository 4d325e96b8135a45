"""Which module builds each `contextos-lab` command, and the one line `--help` shows for it.

The table is data, not imports: `contextos-lab --help` lists every command from it without
importing any command module, and `contextos-lab X ...` imports only X's module (see
`cli.app.build_parser`). So no command pays for another's dependencies (issue 40).

Adding a command is one line here, in the order `--help` should list it::

    "attribution": ("contextos_lab.cli.attribution:register", "score what failed, by source"),

where `register(subparsers)` calls `add_command(subparsers, "attribution", example=...)`
(the summary comes from this table) and imports its heavy libraries inside the command's
function, not at the top of the module: `tests/cli/test_startup.py` checks that `--help` of
every command imports no pandas, SciPy, scikit-learn, statsmodels or Optuna.
A module may register several commands; list each name with the same target. A command that
reads no domain project sets `loads_project=False` in its defaults (`runs tail`, `schema`): `main`
then loads none unless `--project` is given.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any, NamedTuple


class Command(NamedTuple):
    #: "package.module:function": the function adds the command's parser to a subparsers action
    target: str
    #: the line under `contextos-lab --help` (and the command's own description by default)
    summary: str


COMMANDS: dict[str, Command] = {
    name: Command(*spec)
    for name, spec in {
        "project": (
            "contextos_lab.cli.project:register",
            "show the domain project every command reads (--project DIR)",
        ),
        "schema": ("contextos_lab.cli.schemas:register", "write one JSON Schema per envelope"),
        "store": ("contextos_lab.cli.store:register", "inspect and verify the experience store"),
        "ingest": (
            "contextos_lab.cli.loaders:register",
            "load decisions, feedback or scorecards (JSONL, JSON, CSV, Parquet) into the store",
        ),
        "cluster": (
            "contextos_lab.cli.insights:register",
            "cluster failures and corrections into insights",
        ),
        "attribution": (
            "contextos_lab.cli.attribution:register",
            "calibrate the failure attributor on your annotated runs, and score it",
        ),
        "preferences": (
            "contextos_lab.cli.preferences:register",
            "win rates with intervals from pairwise preference judgements (JSONL/CSV)",
        ),
        "runs": ("contextos_lab.cli.runs:register", "command feedback records (seed 003)"),
        "cases": ("contextos_lab.cli.cases:register", "convert hand-written cases into case sets"),
        "search": (
            "contextos_lab.cli.autotune:register",
            "constrained Pareto search over a harness's tunable surfaces (writes DIR/front.json)",
        ),
        "enqueue": (
            "contextos_lab.cli.enqueue:register",
            "add a person's or an agent's config to a study, with who, why and cited traces",
        ),
        "dashboard": (
            "contextos_lab.cli.dashboard:register",
            "open optuna-dashboard on a run's study (feasible trials marked; extra: dashboard)",
        ),
        "gate": (
            "contextos_lab.cli.gate:register",
            "held-out gate for a study: notebook 03, HTML report, proposal files",
        ),
        "heldout": (
            "contextos_lab.cli.heldout:register",
            "a held-out set's error budget across gates, and refreshing a spent set",
        ),
        "sweep": (
            "contextos_lab.cli.sweep:register",
            "notebooks 02 (search) and 03 (held-out gate) with papermill, then emit proposals",
        ),
        "propose": (
            "contextos_lab.cli.proposals:register",
            "compile a StrategyProposal from an insight",
        ),
        "replay": (
            "contextos_lab.cli.proposals:register",
            "run the replay gate on a proposal or a layer rule (exit 1 unless clean)",
        ),
        "lineage": (
            "contextos_lab.cli.proposals:register",
            "why does this rule exist? (its corrections)",
        ),
        "metrics": (
            "contextos_lab.cli.proposals:register",
            "the improvement loop's metrics from the store",
        ),
        "review": (
            "contextos_lab.cli.release:register",
            "record a signed compliance / reliability / security verdict",
        ),
        "release": (
            "contextos_lab.cli.release:register",
            "release a replay-clean proposal or a layer rule with signed reviews",
        ),
        "rollback": (
            "contextos_lab.cli.release:register",
            "restore a rule's pinned baseline (bundle or layer version)",
        ),
        "monitor": (
            "contextos_lab.cli.monitor:register",
            "compare production scorecards after release with the baseline slice",
        ),
        "close": (
            "contextos_lab.cli.monitor:register",
            "mark source pressure fixed / still_failing / invalid / superseded",
        ),
        "bundle": (
            "contextos_lab.cli.bundle:register",
            "write the change-control bundle (manifest + one file per proposal)",
        ),
        "goldens": (
            "contextos_lab.cli.goldens:register",
            "record, diff and re-record the project's goldens from the CLI",
        ),
        "notes": (
            "contextos_lab.cli.loop:register",
            "Chief-of-Staff notes: emit within the daily budget, list, act on, dismiss",
        ),
        "research": (
            "contextos_lab.cli.loop:register",
            "ResearchQueue: queue tasks from knowledge-gap insights, record their outcome",
        ),
        "demo": ("contextos_lab.cli.demo:register", "run the whole loop on the bundled data"),
    }.items()
}


def summary(name: str) -> str:
    """The one-line help of top-level command `name` (KeyError: not a registered command)."""
    return COMMANDS[name].summary


def load(target: str) -> Callable[[Any], None]:
    """The register function named by a "module:function" target (imports that module only)."""
    module, _, function = target.partition(":")
    return getattr(importlib.import_module(module), function)


def modules() -> tuple[str, ...]:
    """Every command module, once each, in table order."""
    return tuple(dict.fromkeys(c.target.partition(":")[0] for c in COMMANDS.values()))
