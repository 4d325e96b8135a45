"""The CLI subcommands and notebook 04 (papermill) on the refund example."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from contextos_lab.cli.app import main
from contextos_lab.example.loop_example import APPROVER, AUTHORISED, REVIEWERS

REPO = Path(__file__).resolve().parents[2]
NOTEBOOK = REPO / "notebooks" / "04_strategy_replay.ipynb"


def test_cli_propose_replay_release_lineage_metrics_rollback(
    unreleased, tmp_path, capsys, monkeypatch
) -> None:
    overriders = tmp_path / "overriders.json"
    overriders.write_text(json.dumps(list(AUTHORISED)))
    monkeypatch.setenv("CONTEXTOS_OVERRIDERS_FILE", str(overriders))
    common = ["--store", f"sqlite:///{tmp_path}/exp.db"]
    b = ["--bundles", str(tmp_path / "bundles")]
    assert main(["propose", "--reason-class", "refund_window_misjudged", *common, *b]) == 0
    proposal = json.loads(capsys.readouterr().out)
    assert proposal["proposal_id"] == unreleased.proposal.proposal_id
    pid = proposal["proposal_id"]
    assert main(["replay", pid, *common, *b]) == 0
    assert json.loads(capsys.readouterr().out)["status"] == "replay_clean"
    assert main(["release", pid, "--approver", APPROVER, *common, *b]) == 2
    assert "no signed compliance review" in capsys.readouterr().err

    def review(role: str, verdict: str, who: str | None = None) -> int:
        why = ["--rationale", f"{role} checked"]
        who = who or REVIEWERS[role]
        return main(
            ["review", pid, "--role", role, "--verdict", verdict, "--reviewer", who, *why, *common]
        )

    assert review("security", "approve", who="anyone_at_all") == 2  # not an authorised reviewer
    assert "not an authorised reviewer" in capsys.readouterr().err
    for role in ("compliance", "reliability"):
        assert review(role, "approve") == 0
    capsys.readouterr()
    assert review("security", "approve", who=REVIEWERS["compliance"]) == 2  # four eyes
    assert "need distinct reviewers" in capsys.readouterr().err
    assert main(["release", pid, "--approver", APPROVER, *common, *b]) == 2
    assert "no signed security review" in capsys.readouterr().err
    assert review("security", "approve") == 0
    assert main(["release", pid, "--approver", " ", *common, *b]) == 2
    assert "no approver" in capsys.readouterr().err
    # the same stored verdicts checked with another key: forged, and the release is refused
    key = os.environ["CONTEXTOS_SIGNING_KEY"]
    monkeypatch.setenv("CONTEXTOS_SIGNING_KEY", "a-different-key")
    assert main(["release", pid, "--approver", APPROVER, *common, *b]) == 2
    assert "is forged: its signature does not verify" in capsys.readouterr().err
    monkeypatch.setenv("CONTEXTOS_SIGNING_KEY", key)
    assert main(["release", pid, "--approver", APPROVER, *common, *b]) == 0
    rule = json.loads(capsys.readouterr().out)
    assert rule["lineage"]["feedback_ids"] == [f.id for f in unreleased.feedback]
    assert main(["lineage", rule["rule_id"], *common]) == 0
    out = capsys.readouterr().out
    assert all(f.id in out for f in unreleased.feedback) and "6 operator corrections" in out
    assert main(["metrics", "--json", *common]) == 0
    assert json.loads(capsys.readouterr().out)["proposals_released"] == 1
    assert main(["rollback", rule["rule_id"], "--reason", "p1", "--actor", "oc", *common, *b]) == 0
    assert "POLICY_RETURNS_V4@v1#" in capsys.readouterr().out
    assert main(["lineage", "str_missing1", *common]) == 2  # user errors: 2 (README table)
    assert main(["propose", "--insight", "ins_missing1", *common, *b]) == 2
    assert main(["replay", "sp_missing1", *common, *b]) == 2


def _signed_release_shown(path: Path) -> None:
    """The review cell: released (no refusal), three signed verdicts that verify."""
    nb = json.loads(path.read_text())
    cell = next(c for c in nb["cells"] if "review_frame(" in "".join(c["source"]))
    shown = "".join(
        "".join(o.get("text", "")) + "".join(o.get("data", {}).get("text/plain", ""))
        for o in cell["outputs"]
    )
    assert shown.startswith("released\n"), shown
    assert shown.count("rvw_") == 3 and shown.count("True") == 3 and "False" not in shown
    for role in ("compliance", "reliability", "security"):
        assert role in shown


@pytest.mark.notebook
def test_notebook_04(tmp_path: Path) -> None:
    papermill = pytest.importorskip("papermill")
    out = tmp_path / "04.ipynb"
    papermill.execute_notebook(
        str(NOTEBOOK),
        str(out),
        parameters={
            "store_url": f"sqlite:///{tmp_path}/nb.db",
            "bundles_dir": str(tmp_path / "bundles"),
        },
        kernel_name="python3",
        cwd=str(REPO),
        progress_bar=False,
    )
    text = json.dumps(json.loads(out.read_text()))
    for needle in (
        "replay_clean",
        "changed_to_expected",
        "Reviewers",
        "checked",
        "fb_2026_05_09_w06",
    ):
        assert needle in text
    _signed_release_shown(out)


@pytest.mark.notebook
def test_notebook_04_on_the_coding_agent_project(tmp_path: Path) -> None:
    """The same notebook on the second example domain, chosen by its parameters only."""
    papermill = pytest.importorskip("papermill")
    out = tmp_path / "04_coding.ipynb"
    papermill.execute_notebook(
        str(NOTEBOOK),
        str(out),
        parameters={
            "store_url": f"sqlite:///{tmp_path}/nb.db",
            "bundles_dir": str(tmp_path / "bundles"),
            "project": str(REPO / "examples" / "coding_agent"),
            "reason_class": "merged_without_tests",
            "build_example": False,
            "approver": "cc_board",  # on the project's authorised list (four eyes)
        },
        kernel_name="python3",
        cwd=str(REPO),
        progress_bar=False,
    )
    text = json.dumps(json.loads(out.read_text()))
    for needle in ("replay_clean", "R_MERGE_REQUIRES_CI", "POLICY_CODE_MERGE_V1", "Reviewers"):
        assert needle in text
    assert "POLICY_RETURNS_V4" not in text  # nothing of the refund domain ran
    _signed_release_shown(out)
