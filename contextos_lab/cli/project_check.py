"""`check_project`: every file a project's declaration names exists and reads.

`load_project` reads the manifest, the registry, the compiler table and the surfaces. The loop
later opens more files the declaration names: each decision key's policy bundle and its goldens,
the layer replayer and each layer's goldens for `layer` rows, a `python` row's entry, the replay
cases. A new user finds a missing or broken one here, named with its file, instead of mid-loop.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # a type only: callers hold a loaded project already
    from contextos_lab.domain.config import DomainConfig


def _try(problems: list[str], where: Path | str, fn: Callable[[], object]) -> None:
    try:
        fn()
    except Exception as exc:  # whatever a user file raises becomes a named problem
        text = " ".join(str(exc).split()) or type(exc).__name__
        problems.append(text if str(where) in text else f"{where}: {text}")


def _replay_set(directory: Path) -> None:
    """The packets read and match their manifest's per-case content hashes."""
    import json

    from contextos_lab.harness.replay_sets import packet_content_hash, read_packets

    packets = {p.packet_id: packet_content_hash(p) for p in read_packets(directory)}
    manifest = json.loads((directory / "manifest.json").read_text(encoding="utf-8"))
    cases = manifest.get("cases") if isinstance(manifest, dict) else None
    if not isinstance(cases, dict):
        raise ValueError(f"{directory / 'manifest.json'}: field cases: expected a mapping")
    drift = sorted(k for k in cases.keys() | packets.keys() if cases.get(k) != packets.get(k))
    if drift:
        raise ValueError(f"{directory}: cases differ from manifest.json: {', '.join(drift[:5])}")


def check_project(project: DomainConfig) -> tuple[list[str], list[str]]:
    """(problems, notes): problems make `project --check` exit 2; notes are worth knowing."""
    problems: list[str] = []
    _check_bundles(project, problems)
    _check_layers(project, problems)
    _check_compilers(project, problems)
    _check_goldens_and_replay(project, problems)
    notes: list[str] = []
    unrouted = sorted(set(project.reason_classes) - set(project.compilers))
    if unrouted:
        notes.append(
            f"reason classes with no row in {project.compilers_path} (propose refuses them): "
            + ", ".join(unrouted)
        )
    return problems, notes


def _check_bundles(project: DomainConfig, problems: list[str]) -> None:
    """Every decision key's policy bundle exists, parses and has its goldens."""
    from contextos_lab.proposals.policy.bundle import PolicyBundle

    manifest = project.root / "contextos-project.yaml"
    for key, spec in sorted(project.decision_keys.items()):
        if spec.bundle is None:
            continue
        path = project.bundle_path(spec.bundle)
        if not path.is_file():
            problems.append(
                f"{manifest}: decision_keys.{key}.bundle names {spec.bundle}, but {path} "
                "does not exist"
            )
            continue
        _try(problems, path, partial(PolicyBundle.from_file, path))
        goldens = project.goldens_path(spec.bundle)
        if not goldens.is_file():
            problems.append(
                f"{manifest}: decision_keys.{key}: no goldens for {spec.bundle} ({goldens} "
                "does not exist; `contextos-lab goldens record` writes them)"
            )


def _check_layers(project: DomainConfig, problems: list[str]) -> None:
    """Layer rows need the project's replayer and each layer's goldens."""
    from contextos_lab.proposals.compile.entry import resolve_entry
    from contextos_lab.proposals.replay.layers import REPLAYER_ENTRY, layer_goldens_id

    layers = {row.layer.value for row in project.compilers.values() if row.layer is not None}
    if not layers:
        return
    replayer = project.root / "harness" / "layer_replay.py"
    if not replayer.is_file():
        problems.append(
            f"{project.compilers_path}: layer rows ({', '.join(sorted(layers))}) need "
            f"{replayer} with replay(record, adjustments)"
        )
    else:
        _try(problems, replayer, lambda: resolve_entry(REPLAYER_ENTRY, project.root))
    for layer in sorted(layers):
        path = project.goldens_path(layer_goldens_id(layer))
        if not path.is_file():
            problems.append(f"{project.compilers_path}: a {layer} row needs goldens at {path}")


def _check_compilers(project: DomainConfig, problems: list[str]) -> None:
    """A rubric row needs goldens per decision key; a python row an entry that resolves."""
    from contextos_lab.proposals.compile.entry import resolve_entry

    for reason, row in sorted(project.compilers.items()):
        if row.shape == "adjust_intent_rubric":
            keys = (
                project.reason_classes[reason].decision_keys
                if reason in project.reason_classes
                else ()
            )
            for key in keys:
                path = project.goldens_path(f"RUBRIC_{project.intent_of(key) or key}")
                if not path.is_file():
                    problems.append(
                        f"{project.compilers_path}: compilers.{reason} (a rubric row) needs "
                        f"goldens at {path}"
                    )
        if row.shape == "python" and row.entry:
            where = f"{project.compilers_path}: compilers.{reason}.entry"
            _try(problems, where, partial(resolve_entry, row.entry, project.root))


def _check_goldens_and_replay(project: DomainConfig, problems: list[str]) -> None:
    """Every goldens file loads; a replay set has its cases and a manifest that matches."""
    from contextos_lab.proposals.replay.goldens import load_goldens

    for path in sorted(project.goldens_dir.glob("*.jsonl")) if project.goldens_dir.is_dir() else ():
        _try(problems, path, partial(load_goldens, path))
    if project.replay_dir.is_dir():
        for name in ("cases.jsonl", "manifest.json"):
            if not (project.replay_dir / name).is_file():
                problems.append(f"{project.replay_dir}: {name} is missing")
        if (project.replay_dir / "cases.jsonl").is_file():
            _try(problems, project.replay_dir, lambda: _replay_set(project.replay_dir))
