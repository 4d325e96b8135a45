"""The seam every harness plugs into (docs/design.md, "Seams").

A harness runs a replay case under a config and says what happened. Cases travel as a pandas
frame (one row per case, `case_id` first) so a harness can offer a vectorised `run_batch`;
`run_cases` uses it when present and falls back to `run` per case otherwise.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import Any, Protocol, runtime_checkable

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, field_validator

from contextos_lab.errors import EXIT_PROTOCOL, ContextosError
from contextos_lab.schemas.base import canonical_json, sha256_hex
from contextos_lab.schemas.surface import TunableSurface


class Fault(StrEnum):
    """What kind of failure an errored run was, when the kit knows it as a fact rather than
    from the reason's words. Decisions (a protocol fault is never retried and exits 9 at the
    baseline) branch on this, never on `error`'s text."""

    #: The program broke the line protocol (a bad line, a missing answer after exit 0).
    protocol = "protocol"


class UnknownFault(ContextosError, ValueError):
    """A results row whose `fault` names no `Fault`: the harness put a wrong value in a typed
    field, a protocol breach (exit 9: deterministic, never worth a retry)."""

    exit_code = EXIT_PROTOCOL


def fault_of(value: object, where: str = "a results frame") -> Fault | None:
    """A `fault` cell of a results frame, typed. A frame from before the field existed, or
    from a harness that does not fill it, says "missing" (absent, None, NaN): no fault. Any
    other text raises `UnknownFault` naming `where` (file, row), the field and the value."""
    if not isinstance(value, str) or not value:
        return None
    try:
        return Fault(value)
    except ValueError:
        known = ", ".join(repr(f.value) for f in Fault)
        raise UnknownFault(
            f"{where}: field `fault`: {value!r} is no fault the kit knows ({known}); leave it "
            "empty (a harness's own kind of failure goes under `attributes`)"
        ) from None


class RunResult(BaseModel):
    """What one run of one case really did."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    case_id: str
    decision: str
    output_text: str
    evidence_used: tuple[str, ...] = ()
    tokens: int = Field(ge=0, description="tokens in context plus output")
    tokens_out: int = Field(
        default=0, ge=0, description="of `tokens`, how many were generated (priced differently)"
    )
    latency_ms: float | None = Field(
        ge=0, description="modelled latency (documented formula); None when the run errored"
    )
    wall_ms: float = Field(ge=0, description="measured wall time")
    trace: tuple[dict[str, Any], ...] = ()
    error: str | None = None
    fault: Fault | None = Field(
        default=None,
        description="set by the kit where it detects a fault (a program's own `fault` field "
        "is kept under `attributes`); None for a run that answered or errored on its own",
    )
    cost_usd: float | None = Field(
        default=None, ge=0, description="what the call cost, when the harness knows it"
    )
    attributes: dict[str, Any] = Field(
        default_factory=dict, description="fields a program harness sent beyond these"
    )

    @field_validator("latency_ms", "cost_usd", mode="before")
    @classmethod
    def _missing_number(cls, v: Any) -> Any:
        """A frame row says "missing" with NaN (pandas); the model says it with None."""
        return None if isinstance(v, float) and math.isnan(v) else v

    @field_validator("fault", mode="before")
    @classmethod
    def _missing_fault(cls, v: Any) -> Any:
        return None if isinstance(v, float) and math.isnan(v) else v

    @field_validator("attributes", mode="before")
    @classmethod
    def _missing_attributes(cls, v: Any) -> Any:
        return {} if v is None or (isinstance(v, float) and math.isnan(v)) else v

    def outputs_hash(self) -> str:
        """Stable across runs and machines: only what the harness decided and said."""
        return outputs_hash(self.case_id, self.decision, self.output_text, self.evidence_used)


def outputs_hash(case_id: str, decision: str, output_text: str, evidence: Sequence[str]) -> str:
    return sha256_hex(
        canonical_json(
            {
                "case_id": case_id,
                "decision": decision,
                "output": output_text,
                "evidence": list(evidence),
            }
        )
    )


#: Columns of a batch result frame; one row per case, same order as the input cases.
RESULT_COLUMNS: tuple[str, ...] = tuple(RunResult.model_fields)


@runtime_checkable
class Harness(Protocol):
    """The minimum a harness is: run a case under a config; `tunable_surfaces` bounds what
    autotune may change. Everything optional (version, concurrency, seeds, batches, deadlines)
    is a member of `harness.base.BaseHarness` with its default; a plain object like this one is
    read through `as_base_harness` (docs/harness-contract.md states the whole contract)."""

    name: str

    def tunable_surfaces(self) -> Sequence[TunableSurface]: ...

    def run(self, case: Mapping[str, Any], config: Mapping[str, Any]) -> RunResult: ...


@runtime_checkable
class BatchHarness(Harness, Protocol):
    def run_batch(self, cases: pd.DataFrame, config: Mapping[str, Any]) -> pd.DataFrame: ...


def baseline_config(harness: Harness) -> dict[str, Any]:
    return {s.name: s.baseline for s in harness.tunable_surfaces()}


def run_cases(harness: Harness, cases: pd.DataFrame, config: Mapping[str, Any]) -> pd.DataFrame:
    """Results frame (RESULT_COLUMNS) for every case, vectorised when the harness can."""
    if isinstance(harness, BatchHarness):
        return harness.run_batch(cases, config)
    rows = [harness.run(row, config).model_dump() for row in cases.to_dict(orient="records")]
    return pd.DataFrame(rows, columns=list(RESULT_COLUMNS))


def load_harness(spec: str, **kwargs: Any) -> Harness:
    """A harness named by import path, `package.module:factory` (factory called with kwargs)."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ValueError(f"harness path {spec!r} must look like 'package.module:factory'")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ValueError(f"cannot import harness module {module_name!r}: {exc}") from exc
    try:
        factory = getattr(module, attr)
    except AttributeError as exc:
        raise ValueError(f"module {module_name!r} has no attribute {attr!r}") from exc
    # a class passes the runtime Protocol check on its attributes alone: instantiate it
    is_factory = isinstance(factory, type) or (
        callable(factory) and not isinstance(factory, Harness)
    )
    harness = factory(**kwargs) if is_factory else factory
    if not isinstance(harness, Harness):
        raise TypeError(f"{spec} did not produce a Harness (needs name, tunable_surfaces, run)")
    return harness
