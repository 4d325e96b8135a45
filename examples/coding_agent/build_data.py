"""Regenerate this example's data files deterministically: `python build_data.py`.

Writes `data/` (400 decision records, 70 operator feedback entries — 27 of them
`merged_without_tests` — the authorised-overrider list and one production scorecard per
decision) and, under `harness/`, the goldens of each policy bundle and the replay cases. Every
decision's `outputs_hash` is what its bundle's first version decides, so replay reproduces it.
"""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

from contextos_lab.domain import load_project, use_project
from contextos_lab.harness.replay_sets import write_replay_set
from contextos_lab.proposals.policy.bundle import PolicyBundle, apply_patch
from contextos_lab.proposals.replay.goldens import ExpectedOutcome, GoldenCase, dump_goldens
from contextos_lab.proposals.replay.replay import replay_decision_record
from contextos_lab.schemas.base import canonical_json, sha256_hex
from contextos_lab.schemas.decision import DecisionRecord, TerminalStatus
from contextos_lab.schemas.strategy import Patch

HERE = Path(__file__).resolve().parent
T0 = datetime(2026, 10, 1, 8, 0, tzinfo=UTC)
OVERRIDERS = ["eng_lead_ada", "sre_oncall_lin", "security_owner_kim"]
APPROVER = "cc_board"
MERGE, DEP, CMD = "code.change.merge", "code.dependency.add", "code.command.run"
#: feedback entries per reason class (70 in all) and the decision key each is made on
FEEDBACK = {
    "merged_without_tests": (27, MERGE),
    "unvetted_dependency": (12, DEP),
    "destructive_command": (9, CMD),
    "runaway_loop": (8, CMD),
    "stale_docs_retrieved": (7, MERGE),
    "unclear_pr_description": (7, MERGE),
}
CI_PATCH = {
    "rule_id": "R_MERGE_REQUIRES_CI",
    "applies_to": {"intent": MERGE},
    "then": {"allow": True, "requires": ["ci_test_run"]},
}


def bundle(name: str) -> PolicyBundle:
    return PolicyBundle.from_file(HERE / "harness" / "policy" / "bundles" / f"{name}.json")


def record(n: int, key: str, inputs: dict, evidence: list[str], at: datetime) -> DecisionRecord:
    """A decision as the harness made it under the bundle's first version (or a command run)."""
    draft = DecisionRecord(
        record_id=f"dr_{at:%Y_%m_%d}_c{n:04d}",
        trace_id=f"trace_code_{n:04d}",
        decision_key=key,
        intent=key.rsplit(".", 1)[0],
        status="COMPLETED",
        decision="approve",
        inputs=inputs,
        evidence_refs=tuple(f"{e}:{n:04d}" for e in evidence),
        decided_at=at,
        session_id=f"sess_{n // 4:03d}",
    )
    if key == CMD:
        return draft
    pinned = bundle("POLICY_CODE_MERGE_V1" if key == MERGE else "POLICY_DEPENDENCIES_V1")
    replay = replay_decision_record(draft, pinned)
    d = replay.decision
    return draft.model_copy(
        update={
            "decision": d.decision,
            "status": TerminalStatus(d.status),
            "evidence_refs_missing": d.evidence_missing,
            "outputs_hash": replay.outputs_hash,
            "policy_version": pinned.ref,
        }
    )


def decisions(rng: np.random.Generator) -> list[DecisionRecord]:
    out = []
    for n in range(400):
        at = T0 + timedelta(minutes=int(n * 105 + rng.integers(0, 60)))
        roll = rng.random()
        if n % 8 < 5:  # 250 merges; every 9th lacks a CI run, a few lack the diff review
            ev = ["diff_review"] if rng.random() > 0.04 else []
            if n % 9 != 0:
                ev.append("ci_test_run")
            inputs = {
                "repo": f"svc-{int(rng.integers(1, 6))}",
                "lines_changed": int(rng.lognormal(4.5, 1.0)),
                "files_touched": int(rng.integers(1, 25)),
                "force_push": bool(roll < 0.02),
                "ci_retries": int(rng.integers(0, 3)) if "ci_test_run" in ev else 0,
            }
            out.append(record(n, MERGE, inputs, ev, at))
        elif n % 8 < 7:  # 100 dependency additions
            lic = str(
                rng.choice(
                    ["MIT", "Apache-2.0", "BSD-3-Clause", "GPL-3.0"], p=[0.5, 0.3, 0.15, 0.05]
                )
            )
            ev = ["license_scan"] if rng.random() > 0.08 else []
            inputs = {"package": f"pkg-{int(rng.integers(100, 999))}", "license": lic}
            out.append(record(n, DEP, inputs, ev, at))
        else:  # 50 shell commands
            cmd = str(rng.choice(["pytest -q", "rm -rf build", "git push --force", "make lint"]))
            out.append(record(n, CMD, {"command": cmd, "steps": int(rng.integers(5, 90))}, [], at))
    return out


def feedback(records: list[DecisionRecord], rng: np.random.Generator) -> list[dict]:
    def pick(reason: str, key: str) -> list[DecisionRecord]:
        pool = [r for r in records if r.decision_key == key]
        if reason == "merged_without_tests":
            pool = [r for r in pool if r.decision == "approve" and "ci_test_run" not in _kinds(r)]
        elif reason == "unvetted_dependency":
            pool = [r for r in pool if r.decision == "approve"]
        elif reason == "destructive_command":
            pool = [r for r in pool if r.inputs["command"] in ("rm -rf build", "git push --force")]
        elif reason == "runaway_loop":
            pool = [r for r in pool if r.inputs["steps"] > 50]
        return pool

    out, used = [], set()
    for reason, (count, key) in FEEDBACK.items():
        pool = [r for r in pick(reason, key) if r.record_id not in used]
        if len(pool) < count:
            sys.exit(f"only {len(pool)} records for {reason}, need {count}")
        chosen = sorted(rng.choice(len(pool), size=count, replace=False))
        for i in chosen:
            rec = pool[int(i)]
            used.add(rec.record_id)
            entry = {
                "id": f"fb_{rec.decided_at:%Y_%m_%d}_f{len(out):03d}",
                "trace_id": rec.trace_id,
                "decision_record_id": rec.record_id,
                "decision_key": rec.decision_key,
                "override_kind": "deny" if key != CMD else "modify",
                "override_reason_class": reason,
                "override_reason_text": f"{reason.replace('_', ' ')} on {rec.trace_id}",
                "expected_outcome": {"terminal_state": "DENIED"} if key != CMD else {},
                "evidence_refs_seen": list(rec.evidence_refs),
                "evidence_refs_missing": ["ci_test_run"]
                if reason == "merged_without_tests"
                else [],
                "signed_by": OVERRIDERS[len(out) % len(OVERRIDERS)],
                "signed_at": (rec.decided_at + timedelta(hours=3))
                .isoformat()
                .replace("+00:00", "Z"),
            }
            out.append(entry)
    return sorted(out, key=lambda e: e["signed_at"])


def _kinds(r: DecisionRecord) -> set[str]:
    return {e.split(":", 1)[0] for e in r.evidence_refs}


def scorecards(records: list[DecisionRecord], rng: np.random.Generator) -> list[dict]:
    out = []
    for r in records:
        ok = r.decision != "approve" or (r.decision_key != MERGE or "ci_test_run" in _kinds(r))
        out.append(
            {
                "scorecard_id": f"sc_{r.record_id}",
                "subject_id": r.trace_id,
                "decision_key": r.decision_key,
                "policy": 1.0 if ok else 0.0,
                "safety": 1.0,
                "utility": round(float(rng.uniform(0.7, 1.0) if ok else rng.uniform(0.2, 0.6)), 3),
                "latency": round(float(rng.lognormal(8.5, 0.4)), 1),
                "economics": round(float(rng.lognormal(2.0, 0.3)), 3),
                "n_cases": 1,
                "computed_at": r.decided_at.isoformat().replace("+00:00", "Z"),
            }
        )
    return out


def goldens(records: list[DecisionRecord]) -> dict[str, list[GoldenCase]]:
    merge = [r for r in records if r.decision_key == MERGE]
    with_ci = [r for r in merge if "ci_test_run" in _kinds(r)][:8]
    without = [r for r in merge if r.decision == "approve" and "ci_test_run" not in _kinds(r)][:6]
    other = [r for r in merge if r.decision != "approve" and "ci_test_run" in _kinds(r)][:3]
    v1 = bundle("POLICY_CODE_MERGE_V1")
    patched = apply_patch(
        v1, Patch(target="policy_bundle", target_id=v1.bundle_id, op="add", body=CI_PATCH)
    )
    cases = []
    for r in with_ci + other + without:
        after = replay_decision_record(r, patched).decision
        expected = None
        if after.outputs() != replay_decision_record(r, v1).decision.outputs():
            expected = ExpectedOutcome(
                decision=after.decision, evidence_missing=after.evidence_missing
            )
        cases.append(GoldenCase(record=r, expected_post_patch_outcome=expected))
    dep = [r for r in records if r.decision_key == DEP][:10]
    return {
        "POLICY_CODE_MERGE_V1": cases,
        "POLICY_DEPENDENCIES_V1": [GoldenCase(record=r) for r in dep],
    }


def replay_cases(records: list[DecisionRecord], fb: list[dict]) -> None:
    from contextos_lab.schemas.replay import ReplayPacket

    by_id = {r.record_id: r for r in records}
    packets = []
    for e in fb:
        if e["override_reason_class"] != "merged_without_tests":
            continue
        r = by_id[e["decision_record_id"]]
        case = {
            "decision_key": r.decision_key,
            "inputs": r.inputs,
            "evidence_refs": list(r.evidence_refs),
        }
        packets.append(
            ReplayPacket(
                packet_id=f"rp_{r.record_id}",
                source_pressure={
                    "source_type": "operator_correction",
                    "source_ref": e["id"],
                    "severity": "high",
                },
                pinned_context_pack="coding-agent-pack@1.0.0",
                compiled_context_hash=sha256_hex(canonical_json(case)),
                side_effect_policy="dry_run",
                expected_outcome={
                    "decision": "deny",
                    "terminal_state": "DENIED",
                    "properties": {"evidence_missing": ["ci_test_run"]},
                },
                case=case,
            )
        )
    write_replay_set(HERE / "harness" / "replay", packets, {"name": "coding_agent_corrections"})


def _jsonl(path: Path, rows: list) -> None:
    path.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows), encoding="utf-8")


def main() -> None:
    use_project(load_project(HERE))
    rng = np.random.default_rng(13)
    records = decisions(rng)
    fb = feedback(records, rng)
    _jsonl(HERE / "data" / "decisions.jsonl", [r.model_dump(mode="json") for r in records])
    _jsonl(HERE / "data" / "feedback.jsonl", fb)
    _jsonl(HERE / "data" / "scorecards.jsonl", scorecards(records, rng))
    # the approver is on the authorised list too (four eyes: reviewers and approver)
    authorised = [*OVERRIDERS, APPROVER]
    (HERE / "data" / "authorised_overriders.json").write_text(json.dumps(authorised) + "\n")
    for bundle_id, cases in goldens(records).items():
        dump_goldens(cases, HERE / "harness" / "goldens" / f"{bundle_id}.jsonl")
    replay_cases(records, fb)
    print(f"wrote {len(records)} decisions, {len(fb)} feedback entries under {HERE}")


if __name__ == "__main__":
    main()
