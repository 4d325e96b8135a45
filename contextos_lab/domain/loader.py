"""`load_project(path) -> DomainConfig`: the one reader of a project folder.

Every file is optional except that a folder must look like a project (a manifest or a
reason-class registry). A bad file is a `ProjectError` naming the file and the field, never a
traceback, so a CLI can print it on one line.
"""

from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from contextos_lab.domain.config import DomainConfig, ProjectError

MANIFEST = "contextos-project.yaml"
REGISTRY = Path("harness") / "feedback" / "reason-classes.json"
COMPILERS = Path("harness") / "compilers.yaml"
SURFACES = Path("harness") / "tunable-surfaces.json"
#: The bundled example domain (the reference refund desk), beside its reference harness.
#: (Found from the package root, not this file, so the module may move within the package.)
BUNDLED_PROJECT = (
    Path(str(files("contextos_lab"))).resolve() / "harness" / "reference" / "project"
)


def is_project(path: Path | str) -> bool:
    """A folder with a manifest or a reason-class registry (seed 000's place) is a project."""
    root = Path(path)
    return (root / MANIFEST).is_file() or (root / REGISTRY).is_file()


def _read(path: Path, kind: str) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ProjectError(f"{path}: cannot read ({exc.strerror or exc})") from None
    try:
        return yaml.safe_load(text) if kind == "yaml" else json.loads(text)
    except (yaml.YAMLError, json.JSONDecodeError) as exc:
        raise ProjectError(f"{path}: not valid {kind.upper()} ({exc})".replace("\n", " ")) from None


def _mapping(path: Path, data: Any, field: str | None = None) -> dict[str, Any]:
    if data is None:
        return {}
    if not isinstance(data, dict):
        where = f" field {field}" if field else ""
        raise ProjectError(f"{path}:{where} expected a mapping, got {type(data).__name__}")
    return data


def _where(exc: ValidationError, files: dict[str, Path], default: Path) -> str:
    err = exc.errors(include_url=False)[0]
    loc = [str(p) for p in err["loc"]]
    path = files.get(loc[0], default) if loc else default
    return f"{path}: field {'.'.join(loc) or '(file)'}: {err['msg']}"


def load_project(path: Path | str) -> DomainConfig:
    """Read and validate a project folder (see `contextos_lab.domain` for the layout)."""
    root = Path(path).expanduser().resolve()
    if not root.is_dir():
        raise ProjectError(f"{root}: project folder does not exist")
    if not is_project(root):
        raise ProjectError(f"{root}: not a project folder (no {MANIFEST} and no {REGISTRY})")
    manifest_path = root / MANIFEST
    manifest = (
        _mapping(manifest_path, _read(manifest_path, "yaml")) if manifest_path.is_file() else {}
    )
    registry = {}
    if (root / REGISTRY).is_file():
        raw = _mapping(root / REGISTRY, _read(root / REGISTRY, "json"))
        registry = _mapping(root / REGISTRY, raw.get("classes"), "classes")
    compilers: dict[str, Any] = {}
    if (root / COMPILERS).is_file():
        raw = _mapping(root / COMPILERS, _read(root / COMPILERS, "yaml"))
        compilers = _mapping(root / COMPILERS, raw.get("compilers"), "compilers")
    surfaces: Any = []
    if (root / SURFACES).is_file():
        surfaces = _read(root / SURFACES, "json")
    fields = {
        "name",
        "description",
        "decision_keys",
        "policy_evaluation",
        "case_intents",
        "replay_safety",
    }
    unknown = sorted(set(manifest) - fields)
    if unknown:
        raise ProjectError(f"{manifest_path}: unknown field {unknown[0]}")
    files = {
        "reason_classes": root / REGISTRY,
        "compilers": root / COMPILERS,
        "tunable_surfaces": root / SURFACES,
    }
    try:
        config = DomainConfig(
            root=root,
            name=manifest.get("name") or root.name,
            description=manifest.get("description") or "",
            decision_keys=manifest.get("decision_keys") or {},
            reason_classes=registry,
            compilers=compilers,
            tunable_surfaces=surfaces,
            policy_evaluation=manifest.get("policy_evaluation") or {},
            case_intents=manifest.get("case_intents") or {},
            replay_safety=manifest.get("replay_safety") or (),
        )
    except ValidationError as exc:
        raise ProjectError(_where(exc, files, manifest_path)) from None
    _check_references(config)
    return config


def _check_references(config: DomainConfig) -> None:
    """Compilers name known reason classes; registry keys name declared decision keys."""
    from contextos_lab.schemas.reason_registry import core_reason_classes

    known = set(config.reason_classes) | set(core_reason_classes())
    for reason in config.compilers:
        if reason not in known:
            raise ProjectError(
                f"{config.compilers_path}: compilers.{reason}: not a reason class in "
                f"{config.registry_path} (or the core registry)"
            )
    if config.decision_keys:
        for n, rule in enumerate(config.replay_safety):
            for key in rule.decision_keys:
                if key not in config.decision_keys:
                    raise ProjectError(
                        f"{config.root / MANIFEST}: replay_safety.{n}.decision_keys: {key} is "
                        "not declared in decision_keys"
                    )
        for reason, info in config.reason_classes.items():
            for key in info.decision_keys:
                if key not in config.decision_keys:
                    raise ProjectError(
                        f"{config.registry_path}: classes.{reason}.decision_keys: {key} is not "
                        f"declared in {config.root / MANIFEST} decision_keys"
                    )
