"""The core names no domain: no decision key, policy bundle or reason class of either example
project appears in the core packages (code, docstrings or package data), nor the vocabulary of
their files — evidence kinds, input fields, facts, intents and rule stems — and no core module
reads a DecisionRecord input by one of the examples' field names.

The vocabulary is read from the example projects' own files (manifest, bundles, goldens,
compiler table), so a name a project adds is covered without editing this test. Single plain
words among them (`amount`, `tool`, `steps`, ...) are ordinary English the core uses for itself;
they are forbidden only as literal keys into `inputs`. `human_approval` is the core's own
evidence kind (`policy.bundle.HUMAN_APPROVAL`), which the examples use, not theirs.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from contextos_lab.domain import BUNDLED_PROJECT, DomainConfig, load_project
from contextos_lab.proposals.policy.bundle import HUMAN_APPROVAL, PolicyBundle
from contextos_lab.proposals.replay.goldens import load_goldens
from tests.domain.conftest import CODING_AGENT, REPO_ROOT

CORE = (
    "schemas", "evaluators", "store", "loaders", "insights", "proposals", "gate", "autotune", "cli",
)


def _domain_names() -> set[str]:
    names: set[str] = set()
    for root in (BUNDLED_PROJECT, CODING_AGENT):
        project = load_project(root)
        names |= set(project.decision_keys)
        names |= {k.bundle for k in project.decision_keys.values() if k.bundle}
        names |= {p.stem for p in project.bundles_dir.glob("*.json")}
        names |= set(project.reason_classes)
    return names


def _evidence_and_inputs(project: DomainConfig) -> tuple[set[str], set[str]]:
    """Evidence kinds and input field names the project's files use."""
    kinds = {r.requires for r in project.replay_safety}
    kinds |= {k for spec in project.compilers.values() for k in spec.requires}
    inputs = {r.input for r in project.replay_safety}
    for expr in project.policy_evaluation.values():
        inputs |= set(re.findall(r"[A-Za-z_]\w*", expr)) - {"and", "or", "not"}
    for path in project.bundles_dir.glob("*.json"):
        for rule in PolicyBundle.model_validate_json(path.read_text(encoding="utf-8")).rules:
            kinds |= set(rule.then.requires)
            inputs |= (set(rule.applies_to) - {"intent"}) | {rule.then.amount_field}
    for path in project.goldens_dir.glob("*.jsonl"):
        for golden in load_goldens(path):
            kinds |= {ref.split(":", 1)[0] for ref in golden.record.evidence_refs}
            kinds |= set(golden.record.evidence_refs_missing)
            inputs |= set(golden.record.inputs)
    return kinds - {HUMAN_APPROVAL}, inputs


@cache
def _vocabulary() -> tuple[set[str], set[str]]:
    """(identifiers the core must not mention, input fields it must not read by name)."""
    names: set[str] = set()
    all_inputs: set[str] = set()
    for root in (BUNDLED_PROJECT, CODING_AGENT):
        project = load_project(root)
        kinds, inputs = _evidence_and_inputs(project)
        all_inputs |= inputs
        names |= kinds | inputs | set(project.policy_evaluation) | set(project.case_intents)
        names |= {i for intents in project.case_intents.values() for i in intents}
        names |= {k.intent for k in project.decision_keys.values() if k.intent}
        names |= {k.rule_stem for k in project.decision_keys.values()}
    return {n for n in names if "_" in n or "." in n}, all_inputs


def _mentions(name: str) -> re.Pattern[str]:
    return re.compile(rf"(?<!\w){re.escape(name)}(?!\w)")


INPUT_KEY = re.compile(r"""inputs\s*(?:\.get\(|\[)\s*["']([^"']+)["']""")


def _core_files() -> list[Path]:
    package = REPO_ROOT / "contextos_lab"
    return [
        path
        for name in CORE
        for path in sorted((package / name).rglob("*"))
        if path.suffix in {".py", ".json", ".jsonl", ".yaml", ".yml"}
    ]


@cache
def _core_lines() -> tuple[tuple[Path, int, str], ...]:
    """(file relative to the repo, line number, line) for every line of the core, read once."""
    return tuple(
        (path.relative_to(REPO_ROOT), n, line)
        for path in _core_files()
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
    )


def test_the_scan_sees_the_core_and_the_names() -> None:
    names = _domain_names()
    assert {"POLICY_RETURNS_V4", "refund_window_misjudged", "code.change.merge"} <= names
    assert len(_core_files()) > 50


def test_the_vocabulary_comes_from_the_example_files_and_catches_a_leak() -> None:
    names, inputs = _vocabulary()
    assert {"idv_check", "order_lookup", "refund_window_evidence", "days_since_purchase"} <= names
    assert {"ci_test_run", "lines_changed", "force_push", "R_REFUND", "support.refund"} <= names
    assert {"amount", "lines_changed"} <= inputs and HUMAN_APPROVAL not in names
    # the replay scoring that once sat in the core: both lines are caught
    leak = 'unverified = "idv_check" not in evidence_kinds(record)'
    assert _mentions("idv_check").search(leak) and not _mentions("idv_check").search("idv_checks")
    read = 'amount = float(record.inputs.get("amount") or 0.0)'
    assert [m.group(1) for m in INPUT_KEY.finditer(read)] == ["amount"]
    assert INPUT_KEY.search("x = record.inputs['lines_changed']")


@pytest.mark.parametrize("name", sorted(_vocabulary()[0]))
def test_core_does_not_use_the_examples_vocabulary(name: str) -> None:
    pattern = _mentions(name)
    hits = [f"{path}:{n}" for path, n, line in _core_lines() if pattern.search(line)]
    assert not hits, (
        f"{name} (an example project's evidence kind, input or intent) is in: {hits[:5]}"
    )


def test_core_reads_no_input_by_an_examples_field_name() -> None:
    inputs = _vocabulary()[1]
    hits = [
        f"{path}:{n} inputs[{m.group(1)!r}]"
        for path, n, line in _core_lines()
        if path.suffix == ".py"
        for m in INPUT_KEY.finditer(line)
        if m.group(1) in inputs
    ]
    assert not hits, f"the core reads an example domain's input by name: {hits[:5]}"


@pytest.mark.parametrize("name", sorted(_domain_names()))
def test_core_does_not_mention(name: str) -> None:
    hits = [f"{path}:{n}" for path, n, line in _core_lines() if name in line]
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
