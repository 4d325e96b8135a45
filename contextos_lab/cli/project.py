"""`contextos-lab project`: what the active domain project declares (and whether it loads).

Prints the folder, decision keys with their bundles, reason classes (core and the project's),
the compiler table and which of the layout's files are present, so a new user can check their
project before running the loop on it. Exit 2 (one line) when the project does not load.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from contextos_lab.cli.conventions import add_command

if TYPE_CHECKING:  # the project (pydantic, schemas) loads when the command runs: not for --help
    from contextos_lab.domain.config import DomainConfig


def _init(args: argparse.Namespace) -> int:
    from pathlib import Path

    from contextos_lab.cli.next_steps import complete_command
    from contextos_lab.cli.project_init import init_project
    from contextos_lab.errors import UserError

    if not args.dir:
        raise UserError("project init needs a folder: contextos-lab project init DIR")
    root = init_project(Path(args.dir))
    print(f"wrote a project skeleton to {root} (guide: docs/own_domain.md)")
    print(f"next: {complete_command(f'contextos-lab project --check --project {root}')}")
    return 0


def _project(args: argparse.Namespace) -> int:
    if args.action == "init":
        return _init(args)
    from contextos_lab.domain.active import active_project
    from contextos_lab.schemas.reason_registry import core_reason_classes

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
    from contextos_lab.cli.next_steps import complete

    decisions = project.data_dir / "decisions.jsonl"
    where = decisions if decisions.is_file() else "FILE"
    print(f"next: {complete(f'contextos-lab ingest decisions {where}')}   (then feedback, cluster)")
    return 0


def _check(project: DomainConfig) -> int:
    """Every file the declaration names exists and reads; one error line (exit 2) if not."""
    from contextos_lab.cli.project_check import check_project
    from contextos_lab.evaluators.policy_coverage import (
        project_intents,
        unruled_intents,
        unruled_warning,
    )

    problems, notes = check_project(project)
    for note in notes:
        print(f"note: {note}")
    for problem in problems:
        print(f"problem: {problem}")
    if problems:
        more = f" (and {len(problems) - 1} more, listed above)" if len(problems) > 1 else ""
        print(f"error: project {project.name}: {problems[0]}{more}", file=sys.stderr)
        return 2
    print(f"project {project.name} ({project.root}): every declared file is present and reads")
    # what the project leaves unjudged: a warning, once its files read (exit 0)
    unruled = unruled_intents(project_intents(project), project.policy_evaluation)
    if unruled:
        print(unruled_warning(unruled, f"project {project.name}"), file=sys.stderr)
    print(
        f"project {project.name}: {len(project.policy_evaluation)} policy rule(s), "
        f"{len(unruled)} intent(s) without one"
    )
    from contextos_lab.cli.next_steps import complete

    decisions = project.data_dir / "decisions.jsonl"
    if decisions.is_file():
        print(f"next: {complete(f'contextos-lab ingest decisions {decisions}')}")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    p = add_command(
        subparsers,
        "project",
        example=[
            "contextos-lab project --project examples/coding_agent",
            "CONTEXTOS_PROJECT=examples/coding_agent contextos-lab project --json",
            "contextos-lab project init my-domain   (a skeleton that passes --check)",
        ],
    )
    p.add_argument("action", nargs="?", choices=["init"], help="init DIR: write a skeleton")
    p.add_argument("dir", nargs="?", help="init: the folder to write")
    p.add_argument("--json", action="store_true", help="the loaded configuration as JSON")
    p.add_argument(
        "--check",
        action="store_true",
        help="check that every file the declaration names exists and reads (exit 2 if not), "
        "and warn about intents with no policy_evaluation rule (policy cannot judge them)",
    )
    p.set_defaults(func=_project)
