"""Golden cases: a recorded DecisionRecord plus what a patch is expected to turn it into.

`expected_post_patch_outcome` keeps seed 000's semantics (the gate compares it with the
candidate's `outputs_hash`) and may be written two ways:
- a 64-hex outputs hash, compared as is;
- a readable outcome `{decision, status, evidence_missing}`, hashed with the same function
  replay uses (`outputs_hash`), so the comparison is still hash against hash.
None means "this golden must not change": any change is `changed_unexpected`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from contextos_lab.domain.active import active_project
from contextos_lab.domain.config import DomainConfig
from contextos_lab.errors import UserError
from contextos_lab.proposals.policy.bundle import STATUS_OF, Decision
from contextos_lab.schemas.base import canonical_json, sha256_hex
from contextos_lab.schemas.decision import DecisionRecord

OutputsHash = Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]


class ExpectedOutcome(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    decision: Decision
    status: str | None = None
    evidence_missing: tuple[str, ...] = ()
    #: output fields expected redacted (a redaction rule's goldens); hashed only when set
    redacted: tuple[str, ...] = ()

    def outputs(self) -> dict[str, object]:
        out: dict[str, object] = {
            "decision": self.decision,
            "status": self.status or STATUS_OF[self.decision],
            "evidence_missing": sorted(self.evidence_missing),
        }
        if self.redacted:
            out["redacted"] = sorted(self.redacted)
        return out


def outputs_hash(outputs: Mapping[str, object]) -> str:
    """sha256 of the canonical JSON of a replay's outputs: the one definition of outputs_hash."""
    return sha256_hex(canonical_json(outputs))


class GoldenCase(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    record: DecisionRecord
    expected_post_patch_outcome: ExpectedOutcome | OutputsHash | None = Field(default=None)
    note: str | None = None
    #: the reason class whose fix the expectation is for; a proposal from another class must
    #: leave this golden unchanged. None: the expectation holds for any patch of the set.
    reason_class: str | None = None

    def for_class(self, reason_class: str | None) -> GoldenCase:
        """This golden as a proposal of `reason_class` is replayed on it."""
        if self.reason_class is None or reason_class is None or reason_class == self.reason_class:
            return self
        return self.model_copy(update={"expected_post_patch_outcome": None})

    @property
    def trace_id(self) -> str:
        return self.record.trace_id

    @property
    def expected_hash(self) -> str | None:
        exp = self.expected_post_patch_outcome
        if exp is None or isinstance(exp, str):
            return exp
        return outputs_hash(exp.outputs())


def load_goldens(path: Path | str) -> list[GoldenCase]:
    """One GoldenCase per non-empty JSONL line; a bad line is an error naming the line."""
    out: list[GoldenCase] = []
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            out.append(GoldenCase.model_validate(json.loads(line)))
        except ValueError as exc:
            raise ValueError(f"{path}:{n}: not a golden case: {exc}") from exc
    return out


class GoldensMissing(UserError, LookupError):
    """A bundle (or rubric) without its goldens file: the CLI prints one line and exits 2."""


def bundled_goldens(bundle_id: str, project: DomainConfig | None = None) -> list[GoldenCase]:
    """The project's goldens for a bundle (seed 000: `listGoldensFor(target_id)`), from
    `harness/goldens/<BUNDLE_ID>.jsonl` of the given or active project."""
    path = (project or active_project()).goldens_path(bundle_id)
    if not path.exists():
        raise GoldensMissing(
            f"no goldens for {bundle_id} (looked for {path}): "
            f"`contextos-lab goldens record {bundle_id}` records them from the replay cases"
        )
    return load_goldens(path)


def dump_goldens(goldens: Iterable[GoldenCase], path: Path | str) -> None:
    lines = [json.dumps(g.model_dump(mode="json"), sort_keys=True) for g in goldens]
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")
