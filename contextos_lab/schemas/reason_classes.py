"""The override_reason_class registry (seed 000: a typed enum that grows under change control).

Two layers of data, no code: the core registry beside this module holds only domain-free classes
(trace-derived failures, generic evidence / escalation / policy classes); the active project's
`harness/feedback/reason-classes.json` (seed 000's place) adds its own and may override a core
entry. An unknown class is a validation error that names both registries.
"""

from __future__ import annotations

from pathlib import Path

from contextos_lab.schemas.reason_registry import REGISTRY_PATH, core_reason_classes


def _project():
    from contextos_lab.domain.active import active_project  # the domain layer sits above

    return active_project()


_merged: tuple[object, dict[str, dict[str, object]]] | None = None


def reason_classes() -> dict[str, dict[str, object]]:
    """Core classes plus the active project's (the project's entry wins on a clash)."""
    global _merged
    project = _project()
    if _merged is None or _merged[0] is not project:
        own = {k: v.model_dump(mode="json") for k, v in project.reason_classes.items()}
        _merged = (project, {**core_reason_classes(), **own})
    return _merged[1]


def registry_paths() -> tuple[Path, Path]:
    """(core registry, active project's registry)."""
    return REGISTRY_PATH, _project().registry_path


def check_reason_class(value: str) -> str:
    known = reason_classes()
    if value not in known:
        project = _project()
        raise ValueError(
            f"unknown override_reason_class {value!r}: not in the registry of project "
            f"{project.name} ({project.registry_path}) nor the core registry "
            f"{REGISTRY_PATH.name}; known classes: {', '.join(sorted(known))}"
        )
    return value
