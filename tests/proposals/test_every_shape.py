"""Every compiler shape, end to end from the CLI on a user's project (a copy of the coding
agent with corrections for each class): propose, replay clean (the rubric on its
RUBRIC_<intent> goldens), three signed reviews, release, monitor, roll back. Goldens scope
each expectation to the class whose fix it is."""

from __future__ import annotations

import json
import re
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from contextos_lab.cli.app import main
from contextos_lab.proposals.replay.goldens import (
    ExpectedOutcome,
    GoldenCase,
    load_goldens,
    outputs_hash,
)

CODING = Path(__file__).resolve().parents[2] / "examples" / "coding_agent"
REVIEWERS = {"compliance": "eng_lead_ada", "reliability": "sre_oncall_lin",
             "security": "security_owner_kim"}  # fmt: skip
MERGE, DEP = "code.change.merge", "code.dependency.add"
T0 = datetime(2026, 11, 2, 8, 0, tzinfo=UTC)
STATUS = {"approve": "COMPLETED", "deny": "DENIED", "escalate": "ESCALATED"}
CI = ["diff_review", "ci_test_run"]

#: class -> (decision key, the decided record's inputs per n, its evidence kinds, its decision)
CLASSES = {
    "oversized_diff_merged": (MERGE, lambda n: {"lines_changed": 650 + 10 * n}, CI, "approve"),
    "needless_review_request": (MERGE, lambda n: {"lines_changed": 820 + 10 * n}, CI,
                                "escalate"),
    "copyleft_dependency": (DEP, lambda n: {"license": "GPL-3.0", "package": f"gpl-{n}"},
                            ["license_scan"], "approve"),
    "secret_in_diff": (MERGE, lambda n: {"lines_changed": 40, "output_fields": ["api_tokens"]},
                       ["diff_review", "ci_test_run"], "approve"),
    "flaky_test_ignored": (MERGE, lambda n: {"lines_changed": 60, "ci_retries": 2},
                           ["diff_review", "ci_test_run"], "approve"),
    "migration_without_rubric": (MERGE, lambda n: {"lines_changed": 90, "schema_migration": True},
                                 CI, "approve"),
}  # fmt: skip
#: class -> goldens: (inputs, evidence kinds, recorded decision, expected outcome or None)
GOLDENS = {
    "oversized_diff_merged": [
        ({"lines_changed": 700}, CI, "approve", ExpectedOutcome(decision="escalate")),
    ],
    "needless_review_request": [
        ({"lines_changed": 900}, CI, "escalate", ExpectedOutcome(decision="approve")),
    ],
    "secret_in_diff": [
        ({"lines_changed": 40, "output_fields": ["api_tokens", "summary"]},
         ["diff_review", "ci_test_run"], "approve",
         ExpectedOutcome(decision="approve", redacted=("api_tokens",))),
        ({"lines_changed": 40, "output_fields": ["summary"]}, ["diff_review", "ci_test_run"],
         "approve", None),
    ],
    "flaky_test_ignored": [
        ({"lines_changed": 60, "ci_retries": 3}, ["diff_review", "ci_test_run"], "approve",
         ExpectedOutcome(decision="deny", evidence_missing=("flake_triage",))),
        ({"lines_changed": 60, "ci_retries": 3}, ["diff_review", "ci_test_run", "flake_triage"],
         "approve", None),
    ],
    "copyleft_dependency": [
        ({"license": "AGPL-3.0", "package": "agpl-x"}, ["license_scan"], "approve",
         ExpectedOutcome(decision="deny")),
        ({"license": "MIT", "package": "mit-x"}, ["license_scan"], "approve", None),
    ],
}  # fmt: skip


def _record(i: int, key: str, inputs: dict, kinds: list[str], decision: str) -> dict:
    at = T0 + timedelta(hours=i)
    outputs = ExpectedOutcome(decision=decision).outputs()
    return {
        "record_id": f"dr_{at:%Y_%m_%d}_s{i:04d}",
        "trace_id": f"trace_shape_{i:04d}",
        "decision_key": key,
        "intent": key.rsplit(".", 1)[0],
        "status": STATUS[decision],
        "decision": decision,
        "inputs": inputs,
        "evidence_refs": [f"{k}:s{i:04d}" for k in kinds],
        "outputs_hash": outputs_hash(outputs),
        "decided_at": at.isoformat(),
    }


def _augment(root: Path) -> None:
    """Corrections for every class the example's data lacks; goldens for each fix."""
    decisions, feedback, i = [], [], 0
    for reason, (key, inputs, kinds, decision) in CLASSES.items():
        for n in range(14):
            rec = _record(i, key, inputs(n), kinds, decision)
            decisions.append(rec)
            feedback.append(
                {
                    "id": f"fb_{rec['decided_at'][:10].replace('-', '_')}_s{i:04d}",
                    "trace_id": rec["trace_id"],
                    "decision_record_id": rec["record_id"],
                    "decision_key": key,
                    "override_kind": "deny",
                    "override_reason_class": reason,
                    "expected_outcome": {"terminal_state": "DENIED"},
                    "evidence_refs_seen": rec["evidence_refs"],
                    "signed_by": "eng_lead_ada",
                    "signed_at": (T0 + timedelta(hours=i, minutes=30)).isoformat(),
                }
            )
            i += 1
    with (root / "data/decisions.jsonl").open("a") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in decisions)
    with (root / "data/feedback.jsonl").open("a") as fh:
        fh.writelines(json.dumps(f) + "\n" for f in feedback)
    from contextos_lab.schemas.decision import DecisionRecord

    for bundle, keys in (("POLICY_CODE_MERGE_V1", MERGE), ("POLICY_DEPENDENCIES_V1", DEP)):
        path = root / "harness/goldens" / f"{bundle}.jsonl"
        goldens = [_scoped(g) for g in load_goldens(path)]
        for reason, rows in GOLDENS.items():
            if CLASSES[reason][0] != keys:
                continue
            for inputs, kinds, decision, expected in rows:
                i += 1
                rec = DecisionRecord.model_validate(_record(i, keys, inputs, kinds, decision))
                goldens.append(
                    GoldenCase(record=rec, expected_post_patch_outcome=expected,
                               reason_class=reason if expected is not None else None)
                )  # fmt: skip
        path.write_text("".join(json.dumps(g.model_dump(mode="json")) + "\n" for g in goldens))


def _scoped(g: GoldenCase) -> GoldenCase:
    """The example's goldens, each expectation scoped to the fix it is for: the CI ones to
    merged_without_tests; a merge whose CI needed retries is denied without a flake triage;
    a copyleft package the agent added is denied outright once the
    copyleft rule exists (no evidence asked for)."""
    if g.expected_post_patch_outcome is not None:
        return g.model_copy(update={"reason_class": "merged_without_tests"})
    retried = (g.record.inputs.get("ci_retries") or 0) > 0
    missing = tuple(g.record.evidence_refs_missing)
    if retried and (g.record.decision == "approve" or missing):  # no triage of a retried CI
        return g.model_copy(
            update={
                "expected_post_patch_outcome": ExpectedOutcome(
                    decision="deny", evidence_missing=tuple(sorted({*missing, "flake_triage"}))
                ),
                "reason_class": "flaky_test_ignored",
            }
        )
    if g.record.inputs.get("license") in ("GPL-3.0", "AGPL-3.0"):
        return g.model_copy(
            update={
                "expected_post_patch_outcome": ExpectedOutcome(decision="deny"),
                "reason_class": "copyleft_dependency",
            }
        )
    return g


@pytest.fixture
def loop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys):
    root = tmp_path / "desk"
    shutil.copytree(CODING, root)
    _augment(root)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CONTEXTOS_PROJECT", raising=False)
    monkeypatch.delenv("CONTEXTOS_OVERRIDERS_FILE", raising=False)
    common = ["--store", f"sqlite:///{tmp_path}/s.db", "--project", str(root)]

    def run(*argv: str, code: int = 0) -> tuple[str, str]:
        got = main([*argv, *common])
        out, err = capsys.readouterr()
        assert got == code, f"{argv}: exit {got}\n{out}\n{err}"
        return out, err

    run("ingest", "decisions", str(root / "data/decisions.jsonl"))
    run("ingest", "feedback", str(root / "data/feedback.jsonl"))
    run("cluster")
    return run


SHAPES = {
    "tighten_evidence": "merged_without_tests",
    "raise_approval_threshold": "oversized_diff_merged",
    "lower_approval_threshold": "needless_review_request",
    "add_policy_rule": "copyleft_dependency",
    "add_redaction_rule": "secret_in_diff",
    "python": "flaky_test_ignored",
    "adjust_intent_rubric": "migration_without_rubric",
    "layer (budget_allocation)": "runaway_loop",
    "layer (tool_selection)": "destructive_command",
    "layer (retrieval)": "stale_docs_retrieved",
}


def test_every_shape_ships_and_rolls_back_from_the_cli(loop) -> None:
    shipped = {}
    for shape, reason in SHAPES.items():
        out, _ = loop("propose", "--reason-class", reason)
        made = json.loads(out)
        subject = made.get("proposal_id") or made["rule_id"]
        out, err = loop("replay", subject)
        verdict = json.loads(out)
        assert verdict["status"] == "replay_clean", (shape, verdict["details"], err)
        for role, who in REVIEWERS.items():
            loop("review", subject, "--role", role, "--verdict", "approve", "--reviewer", who,
                 "--rationale", f"{role}: read the diff and the replay")  # fmt: skip
        out, _ = loop("release", subject, "--approver", "cc_board")
        rule = json.loads(out)
        assert rule["status"] == "released", shape
        loop("monitor", rule["rule_id"])
        out, _ = loop("rollback", rule["rule_id"], "--reason", "test", "--actor", "sre_oncall_lin")
        assert re.search(r"retired|superseded", out), (shape, out)
        shipped[shape] = rule["rule_id"]
    assert set(shipped) == set(SHAPES)


def test_replay_without_the_rubrics_goldens_is_one_line_naming_goldens_record(
    loop, tmp_path: Path
) -> None:
    """Issue 40: a rubric proposal whose goldens file is missing: exit 2, one line naming the
    file and the command that records it (was a KeyError traceback)."""
    out, _ = loop("propose", "--reason-class", "migration_without_rubric")
    proposal = json.loads(out)
    target = proposal["patch"]["target_id"]
    goldens = tmp_path / "desk" / "harness" / "goldens" / f"{target}.jsonl"
    goldens.unlink()
    _, err = loop("replay", proposal["proposal_id"], code=2)
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert str(goldens) in err and f"contextos-lab goldens record {target}" in err
