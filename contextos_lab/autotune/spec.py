"""The declared run spec (seed 001, "Before an autotune run starts, it must declare").

A run refuses to start until the spec names its target, guardrails, baseline tuple, tunable
surfaces, search and held-out sets and rollback target, and until those agree with the harness
and with each other. Every problem is reported in one `SpecError`, so a researcher fixes the
file once instead of once per field.
"""

from __future__ import annotations

from contextos_lab.autotune.run_spec import TuningRunSpec, _cross_field_problems
from contextos_lab.autotune.spec_check import (
    _domain_text,
    _narrow,
    _surface_specs_or_none,
    _unique,
    check_spec,
    default_set_checker,
    narrowed_surfaces,
)
from contextos_lab.autotune.spec_load import (
    SpecError,
    _pydantic_problems,
    load_spec,
    parse_spec,
    read_spec_file,
)
from contextos_lab.autotune.spec_parts import (
    DEFAULT_EVALUATE,
    METRIC_ALIASES,
    OBJECTIVE_EVALUATORS,
    AcceptedDeltas,
    Floors,
    Guardrails,
    HypervolumeSpec,
    SurfaceSpec,
    TargetSpec,
)

#: Names this module has always offered (a few private ones too); they now live in the
#: sibling modules above.
__all__ = [
    "DEFAULT_EVALUATE",
    "METRIC_ALIASES",
    "OBJECTIVE_EVALUATORS",
    "AcceptedDeltas",
    "Floors",
    "Guardrails",
    "HypervolumeSpec",
    "SpecError",
    "SurfaceSpec",
    "TargetSpec",
    "TuningRunSpec",
    "_cross_field_problems",
    "_domain_text",
    "_narrow",
    "_pydantic_problems",
    "_surface_specs_or_none",
    "_unique",
    "check_spec",
    "default_set_checker",
    "load_spec",
    "narrowed_surfaces",
    "parse_spec",
    "read_spec_file",
]
