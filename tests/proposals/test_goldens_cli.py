"""Goldens from the CLI: record from replay cases, diff and signed rerecord after a release;
an expected change that does not happen keeps a replay from being clean."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from contextos_lab.cli.app import main
from contextos_lab.proposals.replay.golden_recording import change_valid
from contextos_lab.proposals.replay.goldens import GoldenCase, load_goldens
from contextos_lab.proposals.replay.replay import run_replay_gate
from contextos_lab.schemas.strategy import EXPECTED_MISSED

CODING = Path(__file__).resolve().parents[2] / "examples" / "coding_agent"
REVIEWERS = {"compliance": "eng_lead_ada", "reliability": "sre_oncall_lin",
             "security": "security_owner_kim"}  # fmt: skip


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    copy = tmp_path / "desk"
    shutil.copytree(CODING, copy)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CONTEXTOS_PROJECT", raising=False)
    monkeypatch.setenv("CONTEXTOS_OVERRIDERS_FILE", str(copy / "data/authorised_overriders.json"))
    return copy


def _run(capsys, *argv: str, code: int = 0) -> tuple[str, str]:
    got = main(list(argv))
    out, err = capsys.readouterr()
    assert got == code, f"{argv}: {got}\n{out}\n{err}"
    return out, err


def test_record_writes_goldens_that_pass_the_check(project: Path, capsys) -> None:
    goldens = project / "harness/goldens/POLICY_CODE_MERGE_V1.jsonl"
    goldens.unlink()
    _, err = _run(capsys, "project", "--check", "--project", str(project), code=2)
    assert "no goldens for POLICY_CODE_MERGE_V1" in err
    out, err = _run(capsys, "goldens", "record", "POLICY_CODE_MERGE_V1", "--project", str(project))
    recorded = load_goldens(goldens)
    assert len(recorded) > 0 and f"{goldens}: {len(recorded)} goldens" in out
    assert all(g.record.policy_version.startswith("POLICY_CODE_MERGE_V1@v1#") for g in recorded)
    assert any(g.expected_post_patch_outcome is not None for g in recorded)
    _run(capsys, "project", "--check", "--project", str(project))
    # a second record refuses to overwrite: re-recording is the signed path
    _, err = _run(capsys, "goldens", "record", "POLICY_CODE_MERGE_V1", "--project", str(project),
                  code=2)  # fmt: skip
    assert "goldens rerecord" in err


def test_rerecord_after_a_release_is_signed_and_shows_the_diff(project: Path, capsys) -> None:
    store = ["--store", f"sqlite:///{project.parent}/s.db", "--project", str(project)]
    data = project / "data"
    _run(capsys, "ingest", "decisions", str(data / "decisions.jsonl"), *store)
    _run(capsys, "ingest", "feedback", str(data / "feedback.jsonl"), *store)
    _run(capsys, "cluster", *store)
    out, _ = _run(capsys, "propose", "--reason-class", "merged_without_tests", *store)
    pid = json.loads(out)["proposal_id"]
    _run(capsys, "replay", pid, *store)
    for role, who in REVIEWERS.items():
        _run(capsys, "review", pid, "--role", role, "--verdict", "approve", "--reviewer", who,
             "--rationale", "ok", *store)  # fmt: skip
    _run(capsys, "release", pid, "--approver", "cc_board", *store)
    # the live bundle moved: the goldens no longer reproduce on it
    out, err = _run(capsys, "goldens", "diff", "POLICY_CODE_MERGE_V1", *store[2:])
    assert "POLICY_CODE_MERGE_V1@v2#" in out and " 0 of " not in out
    assert "goldens rerecord POLICY_CODE_MERGE_V1" in err
    _run(capsys, "goldens", "rerecord", "POLICY_CODE_MERGE_V1", "--by", "nobody", "--rationale",
         "v2", *store[2:], code=2)  # fmt: skip
    out, _ = _run(capsys, "goldens", "rerecord", "POLICY_CODE_MERGE_V1", "--by", "eng_lead_ada",
                  "--rationale", "R_MERGE_REQUIRES_CI released", *store[2:])  # fmt: skip
    assert "re-recorded on POLICY_CODE_MERGE_V1@v2#" in out and "decision approve -> deny" in out
    change = json.loads((project / "harness/goldens-changes.jsonl").read_text().splitlines()[-1])
    assert change["by"] == "eng_lead_ada" and change["diff"] and change["old_sha256"] != change[
        "new_sha256"
    ]
    assert change_valid(change, b"test-signing-key-not-a-secret")
    assert not change_valid({**change, "by": "someone_else"}, b"test-signing-key-not-a-secret")
    out, _ = _run(capsys, "goldens", "diff", "POLICY_CODE_MERGE_V1", *store[2:])
    assert " 0 of " in out
    _run(capsys, "project", "--check", *store[2:])


def test_an_expected_change_that_does_not_happen_is_not_clean(unreleased, bundles) -> None:
    from contextos_lab.proposals.replay.goldens import ExpectedOutcome, bundled_goldens

    goldens = bundled_goldens(unreleased.proposal.patch.target_id)
    clean = run_replay_gate(unreleased.proposal, goldens, bundles)
    assert clean.status == "replay_clean"
    # a golden the patch leaves alone, now expected to change: the patch misses it
    untouched = next(
        i for i, d in enumerate(clean.details) if d.classification == "unchanged_baseline"
    )
    g = goldens[untouched]
    other = "escalate" if g.record.decision != "escalate" else "deny"
    goldens[untouched] = GoldenCase(
        record=g.record, expected_post_patch_outcome=ExpectedOutcome(decision=other)
    )
    verdict = run_replay_gate(unreleased.proposal, goldens, bundles)
    assert verdict.status == "replay_partial"
    assert verdict.details[untouched].note.startswith(EXPECTED_MISSED)
