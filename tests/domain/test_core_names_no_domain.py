"""The core names no domain: no decision key, policy bundle or reason class of either example
project appears in the core packages (code, docstrings or package data)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from contextos_lab.domain import BUNDLED_PROJECT, load_project
from tests.domain.conftest import CODING_AGENT, REPO_ROOT

CORE = ("schemas", "evaluators", "store", "loaders", "insights", "proposals", "gate", "autotune")


def _domain_names() -> set[str]:
    names: set[str] = set()
    for root in (BUNDLED_PROJECT, CODING_AGENT):
        project = load_project(root)
        names |= set(project.decision_keys)
        names |= {k.bundle for k in project.decision_keys.values() if k.bundle}
        names |= {p.stem for p in project.bundles_dir.glob("*.json")}
        names |= set(project.reason_classes)
    return names


def _core_files() -> list[Path]:
    package = REPO_ROOT / "contextos_lab"
    return [
        path
        for name in CORE
        for path in sorted((package / name).rglob("*"))
        if path.suffix in {".py", ".json", ".jsonl", ".yaml", ".yml"}
    ]


def test_the_scan_sees_the_core_and_the_names() -> None:
    names = _domain_names()
    assert {"POLICY_RETURNS_V4", "refund_window_misjudged", "code.change.merge"} <= names
    assert len(_core_files()) > 50


@pytest.mark.parametrize("name", sorted(_domain_names()))
def test_core_does_not_mention(name: str) -> None:
    hits = [
        f"{path.relative_to(REPO_ROOT)}:{n}"
        for path in _core_files()
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if name in line
    ]
    assert not hits, f"{name} (an example domain's name) appears in the core: {hits[:5]}"


def test_bundled_policy_evaluation_is_the_reference_desks_rules() -> None:
    """The refund project's policy expressions score exactly as the desk's rules, with the
    reference harness's own approval limit (the limit lives in the project, not the core)."""
    from contextos_lab.evaluators.policy import PolicyEvaluator
    from contextos_lab.harness.reference.knowledge_base import POLICY_APPROVAL_LIMIT
    from contextos_lab.harness.replay_sets import load_replay_set

    cases = load_replay_set(REPO_ROOT / "search_sets")[0]
    rng = np.random.default_rng(0)
    decisions = rng.choice(["approve", "deny", "escalate"], len(cases))
    results = pd.DataFrame({"case_id": cases["case_id"], "decision": decisions})
    rules = load_project(BUNDLED_PROJECT).policy_evaluation
    got = PolicyEvaluator(rules).score(cases, results).to_numpy()
    facts = pd.DataFrame(list(cases["facts"]))

    def fact(name: str) -> np.ndarray:
        return facts[name].fillna(False).to_numpy(dtype=bool)

    amount = cases["amount"].to_numpy(dtype=float)
    intent = cases["intent"].to_numpy()
    bad_refund = (
        fact("repeat_customer")
        | ~fact("within_window")
        | ~fact("has_proof")
        | (amount > POLICY_APPROVAL_LIMIT)
    )
    violation = (decisions == "approve") & (
        ((intent == "refund") & bad_refund)
        | ((intent == "cancellation") & fact("shipped"))
        | ((intent == "account_change") & ~fact("idv_passed"))
    )
    assert (got == np.where(violation, 0.0, 1.0)).all() and violation.sum() > 100
