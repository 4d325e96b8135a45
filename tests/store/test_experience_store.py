"""The experience store: append-only, hash-chained, signed feedback, tamper evident."""

from __future__ import annotations

import hashlib
import itertools
import json
import sqlite3
from datetime import timedelta
from pathlib import Path

import pytest

from contextos_lab.cli.app import main
from contextos_lab.schemas import (
    IllegalTransition,
    InsightCluster,
    LifecycleStatus,
    StrategyProposal,
    advance,
)
from contextos_lab.store import ExperienceStore, StoreRefusal, lineage
from contextos_lab.store.signing import SigningKeyMissing, signature_valid
from tests.factories import T0, decision_record, feedback_entry

OPERATOR = "user_finance_lead_77"


@pytest.fixture
def store(tmp_path: Path) -> ExperienceStore:
    return ExperienceStore(f"sqlite:///{tmp_path}/exp.db", authorised_overriders=[OPERATOR])


def _seed(store: ExperienceStore, n: int = 5) -> list[str]:
    ids = []
    for i in range(n):
        record = decision_record(i)
        store.append(record)
        ids.append(store.append(feedback_entry(i, record)).artifact_id)
    return ids


def _seed_insight(store: ExperienceStore) -> list[str]:
    """Five stored corrections and the insight cluster over them (ins_a17)."""
    ids = _seed(store, 5)
    store.append(
        InsightCluster(
            insight_id="ins_a17",
            decision_key="k",
            override_reason_class="refund_window_misjudged",
            count=5,
            feedback_ids=ids,
            earliest=T0,
            latest=T0,
        )
    )
    return ids


def _snapshot(db: Path) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT * FROM artifacts ORDER BY seq").fetchall()


def test_rows_chain_and_feedback_is_signed(store: ExperienceStore) -> None:
    _seed(store, 2)
    rows = list(store.rows())
    assert [r.seq for r in rows] == [1, 2, 3, 4]
    assert rows[0].prev_row_sha256 == "0" * 64
    for before, after in itertools.pairwise(rows):
        assert after.prev_row_sha256 == before.row_sha256
    fb = store.get(type(feedback_entry()), "fb_2026_05_09_a0")
    assert fb is not None and fb.signature is not None
    assert signature_valid(fb, b"test-signing-key-not-a-secret")
    assert rows[1].upstream_ids == ("dr_2026_05_01_r0",)
    assert rows[1].upstream_sha256 is not None
    assert store.verify().ok


def test_same_artifact_twice_stores_once(store: ExperienceStore) -> None:
    record = decision_record(1)
    assert store.append(record).status == "stored"
    assert store.append(record).status == "unchanged"
    fb = feedback_entry(1, record)
    assert store.append(fb).status == "stored"
    assert store.append(fb).status == "unchanged"  # signing is deterministic
    assert store.count() == 2


def test_feedback_is_immutable(store: ExperienceStore, tmp_path: Path) -> None:
    _seed(store, 1)
    before = _snapshot(tmp_path / "exp.db")
    edited = feedback_entry(0, override_reason_text="changed my mind")
    with pytest.raises(StoreRefusal, match="immutable"):
        store.append(edited)
    assert _snapshot(tmp_path / "exp.db") == before
    with pytest.raises(Exception, match="frozen"):
        edited.override_reason_text = "x"  # type: ignore[misc]


def test_correction_supersedes_instead_of_editing(store: ExperienceStore) -> None:
    _seed(store, 1)
    fix = feedback_entry(
        0, id="fb_2026_05_10_b1", supersedes="fb_2026_05_09_a0", override_kind="modify"
    )
    assert store.append(fix).status == "stored"
    tree = lineage(store, "fb_2026_05_10_b1")
    assert "fb_2026_05_09_a0" in tree.feedback_ids
    with pytest.raises(StoreRefusal, match="supersedes"):
        store.append(feedback_entry(0, id="fb_2026_05_10_b2", supersedes="fb_2026_05_01_zz"))


def test_db_refuses_update_and_delete(store: ExperienceStore, tmp_path: Path) -> None:
    _seed(store, 1)
    with sqlite3.connect(tmp_path / "exp.db") as conn:
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            conn.execute("UPDATE artifacts SET body = '{}' WHERE seq = 1")
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            conn.execute("DELETE FROM artifacts WHERE seq = 1")


@pytest.mark.parametrize(
    ("why", "build", "message"),
    [
        (
            "unauthorised signer",
            lambda r: feedback_entry(0, r, signed_by="intern_1"),
            "not in the authorised-overrider list",
        ),
        (
            "unknown decision record",
            lambda r: feedback_entry(0, r, decision_record_id="dr_x9"),
            "does not resolve",
        ),
        (
            "trace mismatch",
            lambda r: feedback_entry(0, r, trace_id="trace_other"),
            "does not match decision record",
        ),
        (
            "forged signature",
            lambda r: feedback_entry(0, r, signature="0" * 64),
            "signature does not verify",
        ),
    ],
)
def test_feedback_refusals_name_the_reason(
    store: ExperienceStore, tmp_path: Path, why: str, build, message: str
) -> None:
    record = decision_record(0)
    store.append(record)
    before = _snapshot(tmp_path / "exp.db")
    with pytest.raises(StoreRefusal, match=message):
        store.append(build(record))
    assert _snapshot(tmp_path / "exp.db") == before, why


def test_no_overrider_list_refuses_feedback(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("CONTEXTOS_OVERRIDERS_FILE", str(tmp_path / "missing.json"))
    store = ExperienceStore(f"sqlite:///{tmp_path}/e.db")
    record = decision_record(0)
    store.append(record)
    with pytest.raises(StoreRefusal, match="no authorised-overrider list"):
        store.append(feedback_entry(0, record))


def test_lineage_walks_back_to_feedback(store: ExperienceStore) -> None:
    ids = _seed(store, 5)
    cluster = InsightCluster(
        insight_id="ins_a17",
        decision_key="support.refund.execute",
        override_reason_class="refund_window_misjudged",
        count=5,
        feedback_ids=ids,
        earliest=T0,
        latest=T0 + timedelta(days=1),
    )
    store.append(cluster)
    proposal = StrategyProposal(
        proposal_id="sp_b03",
        insight_id="ins_a17",
        proposal_class="tighten_evidence_requirement",
        patch={
            "target": "policy_bundle",
            "target_id": "POLICY_RETURNS_V4",
            "op": "modify",
            "body": {"rule_id": "R_REFUND_REQUIRES_WINDOW_PROOF"},
        },
        rationale="5 corrections",
        expected_impact={"runs_affected_per_day": 3, "expected_decision_change_rate": 0.012},
    )
    store.append(proposal)
    tree = lineage(store, "sp_b03")
    assert sorted(tree.feedback_ids) == sorted(ids)
    assert "ins_a17" in tree.render()


def test_upstream_must_exist(store: ExperienceStore) -> None:
    cluster = InsightCluster(
        insight_id="ins_a18",
        decision_key="k",
        override_reason_class="missing_idv_check",
        count=5,
        feedback_ids=[f"fb_2026_05_09_z{i}" for i in range(5)],
        earliest=T0,
        latest=T0,
    )
    with pytest.raises(StoreRefusal, match="not in the store"):
        store.append(cluster)
    assert store.count() == 0


def test_versions_must_follow_the_lifecycle(store: ExperienceStore) -> None:
    _seed_insight(store)
    proposal = StrategyProposal(
        proposal_id="sp_b04",
        insight_id="ins_a17",
        proposal_class="add_policy_rule",
        patch={"target": "policy_bundle", "target_id": "P", "op": "add", "body": {}},
        rationale="r",
        expected_impact={"runs_affected_per_day": 1, "expected_decision_change_rate": 0.1},
    )
    store.append(proposal)
    reviewed = advance(proposal, "reviewed", actor="op")
    assert store.append(reviewed).status == "stored"
    # A version that claims a status without a recorded transition is refused.
    jumped = reviewed.model_copy(update={"status": LifecycleStatus.released})
    with pytest.raises(StoreRefusal, match="without a recorded lifecycle transition"):
        store.append(jumped)
    with pytest.raises(IllegalTransition, match="approver"):
        advance(reviewed, "approved", actor="op")
    approved = advance(reviewed, "approved", actor="op", approver_id="cc_lead")
    assert store.append(approved).status == "stored"
    assert store.get(StrategyProposal, "sp_b04").status == LifecycleStatus.approved
    assert len(list(store.rows(artifact_id="sp_b04"))) == 3


def _tamper(db: Path, sql: str) -> None:
    with sqlite3.connect(db) as conn:
        conn.execute("DROP TRIGGER artifacts_no_update")
        conn.execute("DROP TRIGGER artifacts_no_delete")
        conn.execute(sql)


@pytest.mark.parametrize(
    ("sql", "reason"),
    [
        (
            "UPDATE artifacts SET body = replace(body, 'deny', 'approve') WHERE seq = 4",
            "content does not match",
        ),
        (
            "UPDATE artifacts SET written_at = '2020-01-01T00:00:00+00:00' WHERE seq = 4",
            "row hash does not match",
        ),
        ("DELETE FROM artifacts WHERE seq = 4", "sequence gap"),
        ("UPDATE artifacts SET kind = 'scorecard' WHERE seq = 4", "row hash"),
    ],
)
def test_verify_names_first_tampered_row(
    store: ExperienceStore, tmp_path: Path, sql: str, reason: str, capsys
) -> None:
    _seed(store, 3)
    url = f"sqlite:///{tmp_path}/exp.db"
    assert main(["store", "verify", "--store", url]) == 0
    _tamper(tmp_path / "exp.db", sql)
    report = ExperienceStore(url).verify()
    assert not report.ok and report.first_bad_seq in (4, 5)
    assert reason in (report.reason or "") or reason in str(report)
    capsys.readouterr()
    assert main(["store", "verify", "--store", url]) == 1
    err = capsys.readouterr().err
    assert "TAMPERED" in err and "seq=" in err


def test_verify_catches_resigned_content_with_consistent_hashes(
    store: ExperienceStore, tmp_path: Path
) -> None:
    """An attacker who recomputes the content hash still breaks the chain and signature."""
    import hashlib

    _seed(store, 2)
    db = tmp_path / "exp.db"
    with sqlite3.connect(db) as conn:
        body = conn.execute("SELECT body FROM artifacts WHERE seq = 2").fetchone()[0]
    new_body = body.replace('"deny"', '"approve"')
    digest = hashlib.sha256(new_body.encode()).hexdigest()
    _tamper(
        db, f"UPDATE artifacts SET body = '{new_body}', content_sha256 = '{digest}' WHERE seq = 2"
    )
    report = ExperienceStore(f"sqlite:///{db}").verify()
    assert not report.ok and report.first_bad_seq == 2


def test_verify_on_missing_store_is_an_error(tmp_path: Path, capsys) -> None:
    assert main(["store", "verify", "--store", f"sqlite:///{tmp_path}/nope.db"]) == 2
    assert "no experience store" in capsys.readouterr().err


def test_frame_has_stable_dtypes(store: ExperienceStore) -> None:
    empty = store.frame(type(feedback_entry()))
    _seed(store, 2)
    full = store.frame(type(feedback_entry()))
    assert list(empty.columns) == list(full.columns)
    assert dict(empty.dtypes) == dict(full.dtypes)
    assert str(full.dtypes["signed_at"]) == "datetime64[us, UTC]"
    assert len(full) == 2


def test_rows_cut_from_the_end_break_the_seal(store: ExperienceStore, tmp_path: Path) -> None:
    _seed(store, 3)
    _tamper(tmp_path / "exp.db", "DELETE FROM artifacts WHERE seq >= 5")
    report = ExperienceStore(f"sqlite:///{tmp_path}/exp.db").verify()
    assert not report.ok and "removed from the end" in (report.reason or "")


def test_rewriting_the_whole_chain_without_the_key_is_caught(
    store: ExperienceStore, tmp_path: Path
) -> None:
    """An attacker edits a decision and recomputes every hash (but has no key)."""
    from contextos_lab.store.experience_store import GENESIS, row_hash

    _seed(store, 2)
    db = tmp_path / "exp.db"
    with sqlite3.connect(db) as conn:
        conn.execute("DROP TRIGGER artifacts_no_update")
        rows = conn.execute(
            "SELECT seq, kind, artifact_id, body, upstream_ids, upstream_sha256,"
            " written_at FROM artifacts ORDER BY seq"
        ).fetchall()
        prev = GENESIS
        for seq, kind, aid, body, ups, up_sha, written in rows:
            if seq == 1:
                body = body.replace('"approve"', '"deny"')
            content = hashlib.sha256(body.encode()).hexdigest()
            rh = row_hash(seq, kind, aid, content, prev, json.loads(ups), up_sha, written)
            conn.execute(
                "UPDATE artifacts SET body=?, content_sha256=?, prev_row_sha256=?, "
                "row_sha256=? WHERE seq=?",
                (body, content, prev, rh, seq),
            )
            prev = rh
    report = ExperienceStore(f"sqlite:///{db}").verify()
    assert not report.ok and report.first_bad_seq == 1
    assert "MAC" in (report.reason or "")


def test_verify_needs_the_key(store: ExperienceStore, tmp_path: Path, monkeypatch) -> None:
    _seed(store, 1)
    monkeypatch.delenv("CONTEXTOS_SIGNING_KEY")
    monkeypatch.setenv("CONTEXTOS_SIGNING_KEY_FILE", str(tmp_path / "no.key"))
    with pytest.raises(SigningKeyMissing, match="no feedback signing key"):
        ExperienceStore(f"sqlite:///{tmp_path}/exp.db").verify()
    assert main(["store", "verify", "--store", f"sqlite:///{tmp_path}/exp.db"]) == 2


def test_reviewed_proposal_substance_is_frozen(store: ExperienceStore) -> None:
    _seed_insight(store)
    proposal = StrategyProposal(
        proposal_id="sp_b05",
        insight_id="ins_a17",
        proposal_class="add_policy_rule",
        patch={
            "target": "policy_bundle",
            "target_id": "P",
            "op": "add",
            "body": {"max_refund": 100},
        },
        rationale="r",
        expected_impact={"runs_affected_per_day": 1, "expected_decision_change_rate": 0.1},
    )
    store.append(proposal)
    approved = advance(
        advance(proposal, "reviewed", actor="op"), "approved", actor="lead", approver_id="lead"
    )
    store.append(approved)
    swapped = approved.model_copy(
        update={"patch": approved.patch.model_copy(update={"body": {"max_refund": 100000}})}
    )
    with pytest.raises(StoreRefusal, match="patch changed after review"):
        store.append(swapped)
    assert store.get(StrategyProposal, "sp_b05").patch.body == {"max_refund": 100}
