"""Python compilers a project names in its table (`entry: module:function`).

The module is looked up inside the project folder first (`<root>/module.py`, then
`<root>/harness/module.py`, dots as folders), else imported normally, so a project's own
compilers need no installation. The function is called as
`fn(insight, live=PolicyBundle | None, records=[...], context={...}, project=DomainConfig)` and
returns a StrategyProposal, a StrategyRule, or the parts of a policy patch: a mapping with
`proposal_class`, `op`, `body`, `rationale` (or that 4-tuple).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

from contextos_lab.domain.config import CompilerSpec, DomainConfig
from contextos_lab.proposals.compile.table import Arm, CompileError
from contextos_lab.schemas.strategy import PatchOp, ProposalClass, StrategyProposal, StrategyRule


def _module(name: str, root: Path) -> ModuleType:
    rel = Path(*name.split("."))
    for base in (root, root / "harness"):
        path = base / rel.with_suffix(".py")
        if path.is_file():
            tag = hashlib.sha256(str(path).encode()).hexdigest()[:12]
            unique = f"contextos_project_{tag}_{name.replace('.', '_')}"
            if unique in sys.modules:
                return sys.modules[unique]
            spec = importlib.util.spec_from_file_location(unique, path)
            if spec is None or spec.loader is None:
                break
            module = importlib.util.module_from_spec(spec)
            sys.modules[unique] = module
            try:
                spec.loader.exec_module(module)
            except Exception as exc:
                del sys.modules[unique]
                raise CompileError(f"{path}: cannot load compiler module: {exc}") from None
            return module
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise CompileError(
            f"compiler module {name!r} is neither in {root} nor importable ({exc})"
        ) from None


def resolve_entry(entry: str, root: Path) -> Callable[..., Any]:
    module_name, _, attr = entry.partition(":")
    fn = getattr(_module(module_name, root), attr, None)
    if not callable(fn):
        raise CompileError(f"compiler entry {entry!r}: {module_name} has no function {attr}")
    return fn


def call_entry(
    spec: CompilerSpec, project: DomainConfig, **kwargs: Any
) -> Arm | StrategyProposal | StrategyRule:
    assert spec.entry is not None
    fn = resolve_entry(spec.entry, project.root)
    insight = kwargs.pop("insight")
    try:
        made = fn(insight, project=project, **kwargs)
    except CompileError:
        raise
    except (ValueError, KeyError, TypeError) as exc:
        raise CompileError(f"compiler {spec.entry} failed: {exc}") from None
    if isinstance(made, (StrategyProposal, StrategyRule)):
        return made
    if isinstance(made, tuple) and len(made) == 4:
        made = dict(zip(("proposal_class", "op", "body", "rationale"), made, strict=True))
    if not isinstance(made, Mapping):
        raise CompileError(
            f"compiler {spec.entry} returned {type(made).__name__}; expected a StrategyProposal, "
            "a StrategyRule or {proposal_class, op, body, rationale}"
        )
    try:
        return Arm(
            ProposalClass(made["proposal_class"]),
            PatchOp(made["op"]),
            dict(made["body"]),
            str(made["rationale"]),
        )
    except (KeyError, ValueError, TypeError) as exc:
        raise CompileError(f"compiler {spec.entry} returned a malformed patch: {exc}") from None
