"""The declared run spec (seed 001): its parts, loading, cross-field and harness checks,
the search space it implies and the fidelity it asks for.

The declared run spec (seed 001, "Before an autotune run starts, it must declare").

A run refuses to start until the spec names its target, guardrails, baseline tuple, tunable
surfaces, search and held-out sets and rollback target, and until those agree with the harness
and with each other. Every problem is reported in one `SpecError`, so a researcher fixes the
file once instead of once per field.
"""

__all__ = [
    "check",
    "fidelity",
    "load",
    "parts",
    "run_spec",
    "search_space",
]
