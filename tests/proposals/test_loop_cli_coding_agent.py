"""The whole loop on the second example domain (examples/coding_agent), through the CLI only.

Raw feedback files → ingest → cluster --store → propose → replay → review (signed) → release
(monitor window) → production scorecards after release → monitor → close (fixed, with a
ReplayPacket) → notes → research → bundle → metrics; plus an adjustment-layer rule replayed on
its goldens, released and rolled back. Every successful step prints a `next:` line. No import
of the refund example: every step is `contextos_lab.cli.app.main`.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from contextos_lab.cli.app import main

PROJECT = Path(__file__).resolve().parents[2] / "examples" / "coding_agent"
EIGHT = (
    "adoption_rate",
    "detection_lead_time_hours",
    "correction_to_rule_hours",
    "repeated_issue_close_hours",
    "rollback_rate",
    "retire_rate",
    "notes_acted_on_rate",
    "research_patch_yield",
)


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(
        "CONTEXTOS_OVERRIDERS_FILE", str(PROJECT / "data/authorised_overriders.json")
    )
    common = ["--store", f"sqlite:///{tmp_path}/loop.db", "--project", str(PROJECT)]

    def run(*argv: str, code: int = 0, bundles: bool = False) -> tuple[str, str]:
        extra = ["--bundles", str(tmp_path / "bundles")] if bundles else []
        got = main([*argv, *common, *extra])
        out, err = capsys.readouterr()
        assert got == code, f"{argv}: exit {got}\n{out}\n{err}"
        if code == 0:  # every step says what it did and where to look next
            assert re.search(r"^next: \S", out + err, re.M), f"{argv}: no next: line\n{out}{err}"
        return out, err

    return run


def _review_all(run, subject: str) -> None:
    for role, who in (
        ("compliance", "eng_lead_ada"),
        ("reliability", "sre_oncall_lin"),
        ("security", "security_owner_kim"),
    ):
        run(
            "review",
            subject,
            "--role",
            role,
            "--verdict",
            "approve",
            "--reviewer",
            who,
            "--rationale",
            f"{role}: checked the diff and the replay",
        )


def _post_release_scorecards(path: Path, after: datetime) -> Path:
    """Production scorecards scored after release: the example's last 150, re-timed."""
    rows = [json.loads(line) for line in (PROJECT / "data/scorecards.jsonl").open()][-150:]
    with path.open("w") as fh:
        for i, row in enumerate(rows):
            row.update(
                scorecard_id=f"sc_post_{i}",
                subject_id=f"trace_post_{i}",
                computed_at=(after + timedelta(minutes=1 + i)).isoformat(),
            )
            fh.write(json.dumps(row) + "\n")
    return path


def test_whole_loop_on_the_coding_agent_through_the_cli(cli, tmp_path: Path) -> None:
    data = PROJECT / "data"
    out, _ = cli("ingest", "decisions", str(data / "decisions.jsonl"))
    assert "accepted 400" in out
    out, _ = cli(
        "ingest",
        "feedback",
        str(data / "feedback.jsonl"),
        "--overriders",
        str(data / "authorised_overriders.json"),
    )
    assert "accepted 70" in out
    cli("ingest", "scorecards", str(data / "scorecards.jsonl"))

    out, err = cli("cluster")  # no SOURCE: what was ingested into --store
    assert (
        "merged_without_tests on code.change.merge" in out and "next: contextos-lab propose" in err
    )
    insight_id = re.search(r"(ins_\w+)\s+\d+ x merged_without_tests", out).group(1)
    again, _ = cli("cluster")
    assert "(0 rows new)" in again  # re-clustering stores nothing twice

    out, err = cli("propose", "--reason-class", "merged_without_tests", bundles=True)
    proposal = json.loads(out)
    pid = proposal["proposal_id"]
    assert proposal["insight_id"] == insight_id and f"replay {pid}" in err
    assert proposal["patch"]["body"]["rule_id"] == "R_MERGE_REQUIRES_CI"

    out, err = cli("replay", pid, bundles=True)
    assert json.loads(out)["status"] == "replay_clean" and f"review {pid}" in err

    _, err = cli("release", pid, "--approver", "cc_board", code=2, bundles=True)
    assert "no signed compliance review" in err  # the checklist's reviewers row
    _review_all(cli, pid)
    released_at = datetime.now(UTC)
    out, err = cli("release", pid, "--approver", "cc_board", bundles=True)
    rule = json.loads(out)
    rule_id = rule["rule_id"]
    assert rule["status"] == "released" and rule["pinned_baseline"].startswith(
        "POLICY_CODE_MERGE_V1@v1#"
    )
    assert "monitor window:  mw_" in err and f"monitor {rule_id}" in err
    assert set(rule["lineage"]["feedback_ids"]) and rule["lineage"]["insight_id"] == insight_id

    post = _post_release_scorecards(tmp_path / "post_release.jsonl", released_at)
    cli("ingest", "scorecards", str(post))
    out, err = cli("monitor", rule_id, bundles=True)
    verdict_id = out.split(":")[0]
    assert ": keep for " in out and "no evaluator worse" in out
    packet = re.search(r"--packet (rp_\w+)", err).group(1)

    _, err = cli(
        "close",
        insight_id,
        "--status",
        "fixed",
        "--rule",
        rule_id,
        "--evidence",
        verdict_id,
        "--rationale",
        "monitor keep",
        code=2,
    )
    assert "needs a ReplayPacket" in err
    _, err = cli(
        "close",
        insight_id,
        "--status",
        "fixed",
        "--rule",
        rule_id,
        "--packet",
        packet,
        "--evidence",
        "mv_2026_01_01_missing",
        "--rationale",
        "monitor keep",
        code=2,
    )
    assert "mv_2026_01_01_missing is not in the store" in err
    out, _ = cli(
        "close",
        insight_id,
        "--status",
        "fixed",
        "--rule",
        rule_id,
        "--packet",
        packet,
        "--evidence",
        verdict_id,
        "--rationale",
        "monitor keep",
    )
    assert f"{insight_id} fixed" in out and packet in out

    # an adjustment-layer rule (budget_allocation): lint, pinned layer baseline, rollback
    out, err = cli("propose", "--reason-class", "runaway_loop", bundles=True)
    layer_rule = json.loads(out)
    assert layer_rule["adjustment"]["layer"] == "budget_allocation" and "replay" in err
    _review_all(cli, layer_rule["rule_id"])
    _, err = cli("release", layer_rule["rule_id"], "--approver", "cc_board", code=2, bundles=True)
    assert "no replay verdict" in err  # a layer rule is replayed on its goldens first
    out, err = cli("replay", layer_rule["rule_id"], bundles=True)
    layer_verdict = json.loads(out)
    assert layer_verdict["status"] == "replay_clean" and layer_verdict["changed_to_expected"] == 2
    assert f"review {layer_rule['rule_id']}" in err
    out, _ = cli("release", layer_rule["rule_id"], "--approver", "cc_board", bundles=True)
    released_layer = json.loads(out)
    assert released_layer["pinned_baseline"].startswith("LAYER_budget_allocation@v1#")
    assert released_layer["lineage"]["replay_verdict_id"] == layer_verdict["verdict_id"]
    out, _ = cli(
        "rollback",
        layer_rule["rule_id"],
        "--reason",
        "step cap too tight",
        "--actor",
        "sre_oncall_lin",
        bundles=True,
    )
    assert f"live: {released_layer['pinned_baseline']}" in out and "retired" in out

    out, _ = cli("notes", "emit", "--operator", "eng_lead_ada", "--budget", "2")
    assert "recurring_correction" in out  # the other clusters still recur ...
    assert "merged_without_tests corrections" not in out  # ... the one closed fixed does not
    note_id = re.search(r"(cs_\w+)", out).group(1)
    cli("notes", "act", note_id)
    _, err = cli("notes", "dismiss", note_id, code=2)  # a note moves once
    assert "may not move from acted_on" in err

    out, _ = cli("research", "queue")
    task_id = re.search(r"(rq_\w+)", out).group(1)
    cli("research", "complete", task_id, "--promoted", "--patch", "kb/ci-runbook", "--by", "kim")

    out, _ = cli("bundle", "--out", str(tmp_path / "change-control"))
    manifest = json.loads((tmp_path / "change-control" / "manifest.json").read_text())
    kinds = {e["kind"] for e in manifest["entries"]}
    assert {"strategy_proposal", "strategy_rule", "note", "research_task"} <= kinds
    sp = next(e for e in manifest["entries"] if e["id"] == pid)
    assert sp["replay"] == "replay_clean" and insight_id in sp["evidence"]
    assert all(re.fullmatch(r"[0-9a-f]{64}", e["report_sha256"]) for e in manifest["entries"])

    out, _ = cli("metrics", "--json")
    metrics = json.loads(out)
    assert all(metrics[name] is not None for name in EIGHT), metrics
    assert metrics["rollback_rate"] == 0.5  # the layer rule rolled back, the policy rule kept
    assert metrics["notes_acted_on_rate"] == 1.0
    assert metrics["research_patch_yield"] == 1 / metrics["research_tasks"]  # one of them promoted
    out, _ = cli("metrics")
    assert all(name in out for name in EIGHT)
