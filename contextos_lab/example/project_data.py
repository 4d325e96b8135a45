"""The bundled refund desk's `data/` and `harness/replay/`: the loop from the CLI on it.

`python -m contextos_lab.example.project_data` rewrites them. Sixty refund decisions
decided by POLICY_RETURNS_V4 v1; every third approved a refund outside the 30-day window on an
order lookup alone and was corrected by an operator (`refund_window_misjudged`), so a cluster
forms after the held-out split; one replay case per correction; production scorecards; the
authorised list (operators, a third reviewer and the approver: four eyes).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from contextos_lab.domain.loader import BUNDLED_PROJECT
from contextos_lab.example.loop_example import AUTHORISED, OVERRIDERS
from contextos_lab.proposals.policy.bundle import PolicyBundle
from contextos_lab.proposals.replay.replay import replay_decision_record
from contextos_lab.schemas.decision import DecisionRecord, TerminalStatus

if TYPE_CHECKING:
    from contextos_lab.schemas.replay import ReplayPacket

T0 = datetime(2026, 6, 1, 9, 0, tzinfo=UTC)
KEY = "support.refund.execute"
ORD, WIN = "order_lookup", "refund_window_evidence"


def _records() -> list[tuple[DecisionRecord, bool]]:
    v1 = PolicyBundle.from_file(BUNDLED_PROJECT / "harness/policy/bundles/POLICY_RETURNS_V4.json")
    out = []
    for n in range(60):
        wrong = n % 3 == 0  # outside the window, approved on an order lookup alone
        kinds = [ORD] if wrong else [ORD, WIN]
        draft = DecisionRecord(
            record_id=f"dr_2026_06_{1 + n // 6:02d}_d{n:03d}",
            trace_id=f"trace_refund_d{n:03d}",
            decision_key=KEY,
            intent="support.refund",
            status="COMPLETED",
            decision="approve",
            inputs={
                "amount": 20 + 5 * n,
                "days_since_purchase": 35 + n % 20 if wrong else 3 + n % 25,
                "payment_method": "card",
            },
            evidence_refs=tuple(f"{k}:d{n:03d}" for k in kinds),
            policy_version=v1.ref,
            decided_at=T0 + timedelta(hours=4 * n),
        )
        done = replay_decision_record(draft, v1)
        record = draft.model_copy(
            update={
                "decision": done.decision.decision,
                "status": TerminalStatus(done.decision.status),
                "evidence_refs_missing": done.decision.evidence_missing,
                "outputs_hash": done.outputs_hash,
            }
        )
        out.append((record, wrong))
    return out


def build(root: Path = BUNDLED_PROJECT) -> None:
    from contextos_lab.harness.replay_sets import write_replay_set

    decisions, feedback, cards, packets = [], [], [], []
    for i, (r, wrong) in enumerate(_records()):
        decisions.append(r.model_dump(mode="json"))
        cards.append(_scorecard(i, r, wrong))
        if not wrong:
            continue
        fid = f"fb_{r.decided_at:%Y_%m_%d}_w{i:03d}"
        feedback.append(_correction(i, r, fid))
        packets.append(_packet(r, fid))
    data = root / "data"
    data.mkdir(parents=True, exist_ok=True)
    for name, rows in (
        ("decisions", decisions),
        ("feedback", feedback),
        ("scorecards", cards),
    ):
        _jsonl(data / f"{name}.jsonl", rows)
    (data / "authorised_overriders.json").write_text(json.dumps(list(AUTHORISED)) + "\n")
    write_replay_set(root / "harness" / "replay", packets, {"name": "refund_desk_corrections"})


def _scorecard(i: int, r: DecisionRecord, wrong: bool) -> dict[str, Any]:
    return {
        "scorecard_id": f"sc_{r.record_id}",
        "subject_id": r.trace_id,
        "decision_key": KEY,
        "policy": 0.0 if wrong else 1.0,
        "safety": 1.0,
        "utility": 0.4 if wrong else 0.9,
        "latency": 1200.0 + i,
        "economics": 1.5,
        "n_cases": 1,
        "computed_at": r.decided_at.isoformat(),
    }


def _correction(i: int, r: DecisionRecord, fid: str) -> dict[str, Any]:
    """An authorised overrider's denial of a refund granted outside the window."""
    return {
        "id": fid,
        "trace_id": r.trace_id,
        "decision_record_id": r.record_id,
        "decision_key": KEY,
        "override_kind": "deny",
        "override_reason_class": "refund_window_misjudged",
        "override_reason_text": f"purchase {r.inputs['days_since_purchase']} days ago",
        "expected_outcome": {"terminal_state": "DENIED"},
        "evidence_refs_seen": list(r.evidence_refs),
        "evidence_refs_missing": [WIN],
        "signed_by": OVERRIDERS[i % len(OVERRIDERS)],
        "signed_at": (r.decided_at + timedelta(hours=2)).isoformat(),
    }


def _packet(r: DecisionRecord, fid: str) -> ReplayPacket:
    """The corrected decision as a replay case expecting the denial."""
    from contextos_lab.schemas.base import canonical_json, sha256_hex
    from contextos_lab.schemas.replay import ReplayPacket

    case = {"decision_key": KEY, "inputs": r.inputs, "evidence_refs": list(r.evidence_refs)}
    return ReplayPacket(
        packet_id=f"rp_{r.record_id}",
        source_pressure={
            "source_type": "operator_correction",
            "source_ref": fid,
            "severity": "high",
        },
        pinned_context_pack="refund-desk-pack@1.0.0",
        compiled_context_hash=sha256_hex(canonical_json(case)),
        side_effect_policy="dry_run",
        expected_outcome={
            "decision": "deny",
            "terminal_state": "DENIED",
            "properties": {"evidence_missing": [WIN]},
        },
        case=case,
    )


def _jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows), encoding="utf-8")


if __name__ == "__main__":
    build()
    print(f"wrote {BUNDLED_PROJECT / 'data'} and {BUNDLED_PROJECT / 'harness' / 'replay'}")
