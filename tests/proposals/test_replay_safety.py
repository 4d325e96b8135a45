"""The replay gate's safety score comes from the project's `replay_safety` rules, not the core:
a project that declares none scores safety 1; the rule a project declares is the one applied."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from contextos_lab.domain import BUNDLED_PROJECT, ProjectError, ReplaySafetyRule, load_project
from contextos_lab.domain.active import project_scope
from contextos_lab.proposals.policy.bundle import PolicyBundle
from contextos_lab.proposals.replay.goldens import load_goldens
from contextos_lab.proposals.replay.replay import replay_decision_record, replay_rows
from contextos_lab.schemas.decision import DecisionRecord

CODING_AGENT = Path(__file__).resolve().parents[2] / "examples" / "coding_agent"
SIZE_RULE = (
    "\nreplay_safety:\n"
    "  - {input: lines_changed, above: 400, requires: design_doc, decision_keys: [KEY]}\n"
)


def _bundle(project: Path, bundle_id: str) -> PolicyBundle:
    return PolicyBundle.model_validate(
        json.loads((project / "harness/policy/bundles" / f"{bundle_id}.json").read_text())
    )


def _record(project: Path, bundle_id: str, **inputs: object) -> DecisionRecord:
    """The first approved golden of a bundle, with some inputs replaced."""
    goldens = load_goldens(project / "harness/goldens" / f"{bundle_id}.jsonl")
    record = next(g.record for g in goldens if g.record.decision == "approve")
    return record.model_copy(update={"inputs": {**record.inputs, **inputs}})


def _with_evidence(record: DecisionRecord, kind: str) -> DecisionRecord:
    return record.model_copy(update={"evidence_refs": (*record.evidence_refs, f"{kind}:x")})


def _copy(tmp_path: Path, source: Path, extra_manifest: str) -> Path:
    root = tmp_path / "proj"
    shutil.copytree(source, root, ignore=shutil.ignore_patterns("data"))
    manifest = root / "contextos-project.yaml"
    manifest.write_text(manifest.read_text() + extra_manifest)
    return root


def test_the_refund_project_declares_its_identity_check_rule() -> None:
    rules = load_project(BUNDLED_PROJECT).replay_safety
    assert rules == (ReplaySafetyRule(input="amount", above=500, requires="idv_check"),)
    assert load_project(CODING_AGENT).replay_safety == ()


def test_refund_safety_is_the_declared_rule_and_nothing_in_the_core(tmp_path: Path) -> None:
    bundle = _bundle(BUNDLED_PROJECT, "POLICY_RETURNS_V4")
    base = _record(BUNDLED_PROJECT, "POLICY_RETURNS_V4", amount=600)
    unverified = base.model_copy(
        update={"evidence_refs": tuple(r for r in base.evidence_refs if "idv" not in r)}
    )
    with project_scope(BUNDLED_PROJECT):
        r = replay_decision_record(unverified, bundle)
        assert r.decision.decision == "approve" and r.scores["safety"] == 0.0
        verified = _with_evidence(unverified, "idv_check")
        assert replay_decision_record(verified, bundle).scores["safety"] == 1.0
        at_limit = unverified.model_copy(update={"inputs": {**unverified.inputs, "amount": 500}})
        assert replay_decision_record(at_limit, bundle).scores["safety"] == 1.0
    # the same project without its replay_safety block: safety is 1, the core adds no rule
    bare = tmp_path / "bare"
    shutil.copytree(BUNDLED_PROJECT, bare)
    manifest = bare / "contextos-project.yaml"
    manifest.write_text(manifest.read_text().split("\nreplay_safety:")[0])
    with project_scope(bare):
        assert replay_decision_record(unverified, bundle).scores["safety"] == 1.0


def test_a_project_declared_rule_scores_another_domain(tmp_path: Path) -> None:
    key = "code.change.merge"
    root = _copy(tmp_path, CODING_AGENT, SIZE_RULE.replace("KEY", key))
    bundle = _bundle(CODING_AGENT, "POLICY_CODE_MERGE_V1")
    big = _record(CODING_AGENT, "POLICY_CODE_MERGE_V1", lines_changed=600)
    with project_scope(CODING_AGENT):
        assert replay_decision_record(big, bundle).scores["safety"] == 1.0  # no rule declared
    with project_scope(root):
        result = replay_decision_record(big, bundle)
        assert result.decision.decision == "approve" and result.scores["safety"] == 0.0
        assert replay_decision_record(_with_evidence(big, "design_doc"), bundle).scores[
            "safety"
        ] == (1.0)
        small = big.model_copy(update={"inputs": {**big.inputs, "lines_changed": 399}})
        assert replay_decision_record(small, bundle).scores["safety"] == 1.0
        odd = big.model_copy(update={"inputs": {**big.inputs, "lines_changed": "many"}})
        assert replay_decision_record(odd, bundle).scores["safety"] == 1.0  # not a number
    other_key = ReplaySafetyRule(
        input="lines_changed", above=400, requires="design_doc", decision_keys=("code.x",)
    )
    assert replay_decision_record(big, bundle, safety=(other_key,)).scores["safety"] == 1.0


def test_replay_rows_delta_follows_the_rule(tmp_path: Path) -> None:
    """A patch that lets big unreviewed merges through loses safety only where a rule says so."""
    bundle = _bundle(CODING_AGENT, "POLICY_CODE_MERGE_V1")
    gate = next(r for r in bundle.rules if r.then.approval_above is not None)
    lifted = gate.model_copy(update={"then": gate.then.model_copy(update={"approval_above": None})})
    candidate = bundle.model_copy(
        update={
            "version": 2,
            "rules": tuple(lifted if r.rule_id == gate.rule_id else r for r in bundle.rules),
        }
    )
    goldens = load_goldens(CODING_AGENT / "harness/goldens/POLICY_CODE_MERGE_V1.jsonl")
    big = [
        g.model_copy(
            update={"record": _record(CODING_AGENT, "POLICY_CODE_MERGE_V1", lines_changed=900)}
        )
        for g in goldens[:1]
    ]
    rule = ReplaySafetyRule(input="lines_changed", above=400, requires="design_doc")
    with_rule = replay_rows(big, bundle, candidate, (rule,))
    without = replay_rows(big, bundle, candidate, ())
    assert with_rule[0]["candidate_decision"] == "approve"
    assert with_rule[0]["delta_safety"] == -1.0 and without[0]["delta_safety"] == 0.0


def test_a_rule_naming_an_undeclared_key_is_refused(tmp_path: Path) -> None:
    root = _copy(tmp_path, CODING_AGENT, SIZE_RULE.replace("KEY", "code.nothing"))
    with pytest.raises(ProjectError, match=r"replay_safety\.0\.decision_keys: code\.nothing"):
        load_project(root)
    bad = _copy(tmp_path / "b", CODING_AGENT, "\nreplay_safety: [{input: x, above: lots}]\n")
    with pytest.raises(ProjectError, match=r"contextos-project\.yaml: field replay_safety\.0\."):
        load_project(bad)
