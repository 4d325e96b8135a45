"""A simple case format a new user can write by hand, converted to the kit's case sets.

Each case is inputs plus expectations, like promptfoo's tests:

    {"id": "q1", "vars": {"question": "What is 2 + 2?"},
     "assert": [{"type": "equals", "target": "decision", "value": "4"},
                {"type": "not-contains", "value": "@", "metric": "safety"}]}

JSONL (one case per line), YAML (a list of cases) or CSV (`id`, input columns, and
`__expected` / `__expected1`… cells like `contains: sorry`, promptfoo's CSV convention).
Assertion types: equals, contains, icontains, not-contains, regex, is-json, json-field (`path`
a dotted path into the JSON output, `value` what it must equal). `target` is `output`
(default, the output text) or `decision`; `metric` is utility (default), policy or safety.

`convert` writes `search.jsonl` and `heldout.jsonl` (a stable hash split), one flat row per case:
`case_id`, each input as its own field (what a harness is sent), and `assert` (never sent), plus
`inputs.json`, the names the cases declared under `vars`: the allow-list of what is sent.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from contextos_lab.errors import ContextosError
from contextos_lab.harness.case_inputs import INPUTS_FILE
from contextos_lab.schemas.base import canonical_json, sha256_hex

AssertionType = Literal[
    "equals", "contains", "icontains", "not-contains", "regex", "is-json", "json-field"
]


class CaseFormatError(ContextosError, ValueError):
    """A case file the kit cannot read: file, line and field in one line."""

    def __init__(self, path: Path, line: int | None, field: str, message: str) -> None:
        where = f"{path}:{line}" if line is not None else str(path)
        super().__init__(f"{where}: {field}: {message}")


class Assertion(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    type: AssertionType
    value: Any = None
    target: Literal["output", "decision"] = "output"
    path: str | None = None
    metric: Literal["utility", "policy", "safety"] = "utility"

    @field_validator("path")
    @classmethod
    def _path(cls, v: str | None) -> str | None:
        if v is not None and not v.strip():
            raise ValueError("path must not be empty")
        return v


class SimpleCase(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    id: str | None = Field(default=None, min_length=1)
    vars: dict[str, Any] = Field(default_factory=dict)
    asserts: tuple[Assertion, ...] = Field(default=(), alias="assert")
    description: str = ""

    @field_validator("vars")
    @classmethod
    def _no_reserved(cls, v: dict[str, Any]) -> dict[str, Any]:
        clash = sorted(set(v) & {"case_id", "assert"})
        if clash:
            raise ValueError(f"input names {clash} are reserved")
        return v


def _csv_assertion(cell: str) -> dict[str, Any]:
    kind, sep, value = cell.partition(":")
    kind = kind.strip()
    if not sep:
        return {"type": "equals", "value": cell}
    return {"type": kind, "value": value.strip()}


def _records(path: Path) -> Iterator[tuple[int | None, Any]]:
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        with path.open(encoding="utf-8") as fh:
            for no, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                try:
                    yield no, json.loads(line)
                except json.JSONDecodeError as exc:
                    raise CaseFormatError(path, no, "(line)", f"not JSON: {exc.msg}") from exc
    elif suffix in (".yaml", ".yml"):
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except yaml.YAMLError as exc:
            raise CaseFormatError(path, None, "(file)", f"not YAML: {exc}") from exc
        if not isinstance(data, list):
            raise CaseFormatError(path, None, "(file)", "top level must be a list of cases")
        yield from enumerate(data, start=1)
    elif suffix == ".csv":
        with path.open(encoding="utf-8", newline="") as fh:
            for no, row in enumerate(csv.DictReader(fh), start=2):
                expected = [
                    _csv_assertion(v)
                    for k, v in row.items()
                    if k and k.startswith("__expected")
                    if v
                ]
                inputs = {
                    k: v for k, v in row.items() if k and not k.startswith("__") and k != "id"
                }
                yield no, {"id": row.get("id") or None, "vars": inputs, "assert": expected}
    else:
        raise CaseFormatError(path, None, "(file)", "use .jsonl, .yaml/.yml or .csv")


def read_cases(path: str | Path) -> list[SimpleCase]:
    """Every case of the file, or CaseFormatError naming the first bad line and field."""
    p = Path(path)
    if not p.is_file():
        raise CaseFormatError(p, None, "(file)", "no such file")
    out: list[SimpleCase] = []
    seen: set[str] = set()
    for no, raw in _records(p):
        if not isinstance(raw, dict):
            raise CaseFormatError(p, no, "(case)", "must be an object with vars and assert")
        try:
            case = SimpleCase.model_validate(raw)
        except ValidationError as exc:
            err = exc.errors()[0]
            field = ".".join(str(x) for x in err["loc"]) or "(case)"
            raise CaseFormatError(p, no, field, err["msg"]) from exc
        if case.id is not None and case.id in seen:
            raise CaseFormatError(p, no, "id", f"duplicate id {case.id!r}")
        if case.id is not None:
            seen.add(case.id)
        out.append(case)
    return out


def case_row(case: SimpleCase, index: int) -> dict[str, Any]:
    """The flat row the kit runs: inputs as fields, expectations under `assert`."""
    cid = case.id or "case_" + sha256_hex(canonical_json(case.vars))[:12]
    return {
        "case_id": cid,
        **case.vars,
        "assert": [a.model_dump(exclude_none=True) for a in case.asserts],
    }


@dataclass(frozen=True)
class Converted:
    search: Path
    heldout: Path
    n_search: int
    n_heldout: int
    #: (dropped id, the kept id it duplicates): content duplicates are kept once, on one side
    duplicates: tuple[tuple[str, str], ...] = ()
    #: (moved id, the search case it copies): near copies drawn held out, kept on the search side
    moved: tuple[tuple[str, str], ...] = ()


def convert(
    path: str | Path, out_dir: str | Path, *, heldout_share: float = 0.5, seed: int = 0
) -> Converted:
    """Split the cases (stable: by a hash of id and seed) and write both sets as JSONL."""
    if not 0 < heldout_share < 1:
        raise ValueError("heldout_share must be between 0 and 1")
    cases = read_cases(path)
    rows = [case_row(c, i) for i, c in enumerate(cases)]
    ids = [r["case_id"] for r in rows]
    if len(set(ids)) != len(ids):
        raise CaseFormatError(Path(path), None, "id", "two cases have the same inputs and no id")
    rows, duplicates = _dedupe(rows)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    search: list[dict[str, Any]] = []
    heldout: list[dict[str, Any]] = []
    for r in rows:
        u = int(sha256_hex(f"{seed}:{r['case_id']}")[:8], 16) / 0xFFFFFFFF
        (heldout if u < heldout_share else search).append(r)
    search, heldout, moved = _copies_to_search(search, heldout)
    if not search or not heldout:
        raise ValueError(f"{path}: too few cases to split ({len(rows)}); add cases")
    inputs = sorted({k for c in cases for k in c.vars})
    (out / INPUTS_FILE).write_text(
        json.dumps({"input_fields": inputs}, indent=1) + "\n", encoding="utf-8"
    )  # the allow-list of what a harness is sent (harness.case_inputs)
    paths = (out / "search.jsonl", out / "heldout.jsonl")
    for p, part in zip(paths, (search, heldout), strict=True):
        tmp = p.with_suffix(".jsonl.tmp")
        tmp.write_text(
            "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in part),
            encoding="utf-8",
        )
        tmp.replace(p)
    return Converted(paths[0], paths[1], len(search), len(heldout), tuple(duplicates), tuple(moved))


Row = dict[str, Any]


def _copies_to_search(
    search: list[Row], heldout: list[Row]
) -> tuple[list[Row], list[Row], list[tuple[str, str]]]:
    """Each held-out case the spec check would call a copy of a search case moved to the search
    side, until none is left (a moved case may be copied by another held-out case). The rule
    is `overlap.near_copies.copies`, the one `search` and the gate apply, on the rows as JSON
    (what the written sets read back as), so an import never makes a split `search` refuses."""
    from contextos_lab.overlap.near_copies import compared, copies

    def form(r: Row) -> Any:
        return compared(str(r["case_id"]), json.loads(json.dumps(r, ensure_ascii=False)))

    forms = {str(r["case_id"]): form(r) for r in [*search, *heldout]}
    moved: list[tuple[str, str]] = []
    while found := copies(
        [forms[str(r["case_id"])] for r in search], [forms[str(r["case_id"])] for r in heldout]
    ):
        ids = {c.b_id: c.a_id for c in found}
        moved.extend(ids.items())
        search = [*search, *(r for r in heldout if str(r["case_id"]) in ids)]
        heldout = [r for r in heldout if str(r["case_id"]) not in ids]
    return search, heldout, moved


def _dedupe(rows: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[tuple[str, str]]]:
    """Each content duplicate once: the gate refuses a held-out set sharing content with the
    search set (ids ignored, text normalised: `overlap.normalise.normalised_hash`, the gate's own
    rule), so a duplicate split across the two would stop it later."""
    from contextos_lab.overlap.normalise import normalised_hash

    seen: dict[str, str] = {}
    kept, dropped = [], []
    for r in rows:
        key = normalised_hash(r)
        if key in seen:
            dropped.append((str(r["case_id"]), seen[key]))
            continue
        seen[key] = str(r["case_id"])
        kept.append(r)
    return kept, dropped
