"""Deprecated path: `contextos_lab.proposals.policy_bundle` moved to `proposals.policy.bundle`
in the relayout. Kept so a domain's scripts written before it still run; import from
`contextos_lab.api` instead (its names do not move)."""

from __future__ import annotations

from contextos_lab.proposals.moved import moved_module

__getattr__ = moved_module(__name__, "contextos_lab.proposals.policy.bundle")
