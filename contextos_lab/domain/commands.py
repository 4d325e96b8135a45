"""`contextos-lab project`: what the active domain project declares (and whether it loads).

Prints the folder, decision keys with their bundles, reason classes (core and the project's),
the compiler table and which of the layout's files are present, so a new user can check their
project before running the loop on it. Exit 2 (one line) when the project does not load.
"""

from __future__ import annotations

import argparse
import json
import sys

from contextos_lab.cli_conventions import add_command
from contextos_lab.domain.active import active_project
from contextos_lab.domain.config import DomainConfig
from contextos_lab.evaluators.policy_coverage import (
    project_intents,
    unruled_intents,
    unruled_warning,
)
from contextos_lab.schemas.reason_classes import core_reason_classes


def _project(args: argparse.Namespace) -> int:
    project = active_project()  # `main` has loaded and activated it (or exited 2)
    files = {
        "reason-classes.json": project.registry_path,
        "compilers.yaml": project.compilers_path,
        "bundles/": project.bundles_dir,
        "goldens/": project.goldens_dir,
        "replay/": project.replay_dir,
        "data/": project.data_dir,
    }
    if args.json:
        print(json.dumps(project.model_dump(mode="json"), indent=2, sort_keys=True))
        return 0
    if args.check:
        return _check(project)
    print(f"project {project.name}: {project.root}")
    if project.description:
        print(f"  {project.description}")
    print("decision keys:")
    for key, spec in sorted(project.decision_keys.items()):
        bundle = spec.bundle or "(no policy bundle)"
        print(f"  {key:32} {bundle:28} stem {spec.rule_stem}  intent {spec.intent or '-'}")
    core = core_reason_classes()
    print(f"reason classes: {len(project.reason_classes)} own + {len(core)} core")
    for reason in sorted(project.reason_classes):
        row = project.compilers.get(reason)
        shape = (
            (row.layer.value if row.shape == "layer" and row.layer else row.shape) if row else "-"
        )
        print(f"  {reason:32} compiles to: {shape}")
    print(f"replay safety rules: {len(project.replay_safety) or 'none (replay safety is 1)'}")
    for rule in project.replay_safety:
        keys = ", ".join(rule.decision_keys) or "every key"
        print(f"  approve with {rule.input} > {rule.above:g} needs {rule.requires}  ({keys})")
    print("layout:")
    for name, path in files.items():
        print(f"  {name:22} {'present' if path.exists() else 'absent '}  {path}")
    print(
        "next: contextos-lab ingest decisions FILE --project DIR  (then feedback, cluster, propose)"
    )
    return 0


def _check(project: DomainConfig) -> int:
    """Warnings about what the project leaves unjudged (exit 0: warnings, not errors)."""
    unruled = unruled_intents(project_intents(project), project.policy_evaluation)
    if unruled:
        print(unruled_warning(unruled, f"project {project.name}"), file=sys.stderr)
    print(
        f"project {project.name}: {len(project.policy_evaluation)} policy rule(s), "
        f"{len(unruled)} intent(s) without one"
    )
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    p = add_command(
        subparsers,
        "project",
        help="show the domain project every command reads (--project DIR)",
        example=[
            "contextos-lab project --project examples/coding_agent",
            "CONTEXTOS_PROJECT=examples/coding_agent contextos-lab project --json",
        ],
    )
    p.add_argument("--json", action="store_true", help="the loaded configuration as JSON")
    p.add_argument(
        "--check",
        action="store_true",
        help="warn about intents with no policy_evaluation rule (policy cannot judge them)",
    )
    p.set_defaults(func=_project)
