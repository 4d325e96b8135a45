"""Read a run spec file and validate its fields, every problem reported in one `SpecError`."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from contextos_lab.autotune.spec.run_spec import TuningRunSpec
from contextos_lab.errors import EXIT_HELDOUT, EXIT_USAGE, ContextosError


class OverlapProblem(str):
    """A spec problem that is a search / held-out overlap: the CLI exits 7 for it, the status
    the gate uses for the same refusal (docs/loop.md, CLI conventions)."""


class SpecError(ContextosError, ValueError):
    """A run spec that cannot start; `problems` holds every reason, one line each."""

    def __init__(self, problems: Sequence[str], source: str = "run spec") -> None:
        self.problems = list(problems)
        lines = "\n".join(f"  - {p}" for p in self.problems)
        # exit status: 7 when the sets overlap (whatever else is wrong), else 2
        overlap = any(isinstance(p, OverlapProblem) for p in self.problems)
        super().__init__(
            f"{source} refused ({len(self.problems)} problem(s)):\n{lines}",
            code=EXIT_HELDOUT if overlap else EXIT_USAGE,
        )


def read_spec_file(path: str | Path) -> dict[str, Any]:
    """Raw mapping from a YAML or JSON file (YAML is a superset, but JSON errors read better)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise SpecError([f"cannot read spec file {p}: {exc}"], source=str(p)) from exc
    try:
        raw = json.loads(text) if p.suffix == ".json" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise SpecError([f"not valid {p.suffix.lstrip('.') or 'YAML'}: {exc}"], str(p)) from exc
    if not isinstance(raw, dict):
        raise SpecError(["top level must be a mapping of fields"], source=str(p))
    return raw


def _pydantic_problems(exc: ValidationError) -> list[str]:
    out = []
    for err in exc.errors():
        loc = ".".join(str(x) for x in err["loc"]) or "(spec)"
        msg = err["msg"]
        if err["type"] == "missing":
            msg = "missing required field"
        out.append(f"{loc}: {msg.removeprefix('Value error, ')}")
    return out


def parse_spec(raw: Mapping[str, Any], base_dir: Path | None = None) -> TuningRunSpec:
    """Validate the fields alone (no harness, no sets); all field problems in one SpecError."""
    try:
        spec = TuningRunSpec.model_validate(dict(raw))
    except ValidationError as exc:
        raise SpecError(_pydantic_problems(exc)) from exc
    return spec.with_base_dir(base_dir or Path.cwd())


def load_spec(path: str | Path) -> TuningRunSpec:
    """Parse a spec file; checks needing the harness or the sets are in `check_spec`. A field
    problem names the line of the field (or of its nearest declared parent)."""
    p = Path(path)
    raw = read_spec_file(p)
    try:
        return parse_spec(raw, p.resolve().parent).with_source(str(p))
    except SpecError as exc:
        text = p.read_text(encoding="utf-8")
        lined = [_with_line(text, problem) for problem in exc.problems]
        raise SpecError(lined, source=str(p)) from exc


def _with_line(text: str, problem: str) -> str:
    """`problem` ("a.b.c: message") as "line N: a.b.c: message", N the line of the deepest of
    `a`, `a.b`, `a.b.c` the file declares; unchanged when the file declares none."""
    field, sep, _ = problem.partition(": ")
    try:
        node: yaml.Node | None = yaml.compose(text)  # JSON is YAML: one reader for both
    except yaml.YAMLError:
        return problem
    line = None
    for part in field.split(".") if sep else ():
        if isinstance(node, yaml.MappingNode):
            found = next(((k, v) for k, v in node.value if k.value == part), None)
        elif isinstance(node, yaml.SequenceNode) and part.isdigit() and int(part) < len(node.value):
            found = (node.value[int(part)], node.value[int(part)])
        else:
            found = None
        if found is None:
            break
        line, node = found[0].start_mark.line + 1, found[1]
    return problem if line is None else f"line {line}: {problem}"
