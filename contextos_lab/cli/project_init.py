"""`contextos-lab project init DIR`: a minimal project that passes `project --check` and runs
the whole loop from its own data (ingest, cluster, propose, replay, review, release, monitor).

One decision key (`example.request.approve`) governed by one policy bundle, one reason class
(`missing_manager_approval`, compiled to `tighten_evidence`), 60 decisions of which every third
was approved without a manager's approval and corrected by an operator, replay cases for every
decision, goldens recorded from them on the bundle's first version, production scorecards and
an authorised list of one operator, three reviewers and an approver. Rename and grow it.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

from contextos_lab.errors import UserError

KEY, INTENT, BUNDLE = "example.request.approve", "example.request", "POLICY_EXAMPLE_V1"
REASON, NEEDS = "missing_manager_approval", "manager_approval"
PEOPLE = ["operator_ana", "reviewer_bo", "reviewer_cy", "reviewer_di", "approver_eve"]
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)

MANIFEST: dict[str, Any] = {
    "name": "my_domain",
    "description": "A skeleton from `contextos-lab project init`: one decision key, one class.",
    "decision_keys": {
        KEY: {
            "bundle": BUNDLE,
            "rule_stem": "R_REQUEST",
            "intent": INTENT,
            "description": "approve or deny a request",
        }
    },
    "replay_safety": [],
}
REGISTRY = {
    "registry": "reason-classes.json",
    "classes": {
        REASON: {
            "description": "A request was approved without the manager's approval.",
            "decision_keys": [KEY],
            "signal": "policy_gap",
        }
    },
}
COMPILERS = {
    "compilers": {
        REASON: {
            "shape": "tighten_evidence",
            "rule_id": "{stem}_REQUIRES_MANAGER_APPROVAL",
            "requires": [NEEDS],
            "rule_rationale": "A request needs the manager's approval; {count} corrections.",
            "rationale": "Cluster {insight_id}: {count} approvals corrected for a missing "
            "manager approval. Requiring manager_approval evidence.",
        }
    }
}
BUNDLE_V1 = {
    "bundle_id": BUNDLE,
    "version": 1,
    "parent_hash": None,
    "change": "baseline",
    "rules": [
        {
            "rule_id": "R_REQUEST_BASE",
            "applies_to": {"intent": KEY},
            "then": {"allow": True, "requires": ["record_lookup"], "approval_above": None},
            "rationale": "A request needs its record looked up.",
            "deprecated": False,
        }
    ],
}
SURFACES = [
    {
        "name": "top_k",
        "layer": "retrieval",
        "kind": "int",
        "low": 1,
        "high": 8,
        "step": 1,
        "baseline": 3,
        "change_class": "additive",
        "description": "records retrieved per request",
    }
]


def _jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows), encoding="utf-8")


def _json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def _data(root: Path) -> list[dict[str, Any]]:
    """Decisions, feedback, scorecards; returns the replay cases' rows."""
    from contextos_lab.proposals.replay.goldens import outputs_hash

    decisions, feedback, cards, cases = [], [], [], []
    for n in range(60):
        at = T0 + timedelta(hours=5 * n)
        bad = n % 3 == 0
        refs = [f"record_lookup:{n:03d}"] + ([] if bad else [f"{NEEDS}:{n:03d}"])
        outputs = {"decision": "approve", "status": "COMPLETED", "evidence_missing": []}
        rid = f"dr_{at:%Y_%m_%d}_r{n:03d}"
        trace = f"trace_request_{n:03d}"
        decisions.append(_decision(n, at, rid, trace, refs, outputs_hash(outputs)))
        cards.append(_scorecard(n, at, rid, trace, bad))
        expected = {"decision": "approve", "terminal_state": "COMPLETED", "properties": {}}
        if bad:
            feedback.append(_feedback(n, at, rid, trace, refs))
            expected = {
                "decision": "deny",
                "terminal_state": "DENIED",
                "properties": {"evidence_missing": [NEEDS]},
            }
        cases.append(
            {
                "packet_id": f"rp_{rid}",
                "source": feedback[-1]["id"] if bad else None,
                "case": {
                    "decision_key": KEY,
                    "inputs": {"amount": 40 + 7 * n},
                    "evidence_refs": refs,
                },
                "expected_outcome": expected,
            }
        )
    _jsonl(root / "data" / "decisions.jsonl", decisions)
    _jsonl(root / "data" / "feedback.jsonl", feedback)
    _jsonl(root / "data" / "scorecards.jsonl", cards)
    _json(root / "data" / "authorised_overriders.json", PEOPLE)
    return cases


def _decision(
    n: int, at: datetime, rid: str, trace: str, refs: list[str], digest: str
) -> dict[str, Any]:
    return {
        "record_id": rid,
        "trace_id": trace,
        "decision_key": KEY,
        "intent": INTENT,
        "status": "COMPLETED",
        "decision": "approve",
        "inputs": {"amount": 40 + 7 * n},
        "evidence_refs": refs,
        "evidence_refs_missing": [],
        "outputs_hash": digest,
        "decided_at": at.isoformat(),
    }


def _scorecard(n: int, at: datetime, rid: str, trace: str, bad: bool) -> dict[str, Any]:
    return {
        "scorecard_id": f"sc_{rid}",
        "subject_id": trace,
        "decision_key": KEY,
        "policy": 0.0 if bad else 1.0,
        "safety": 1.0,
        "utility": 0.4 if bad else 0.9,
        "latency": 900.0 + n,
        "economics": 2.0,
        "n_cases": 1,
        "computed_at": at.isoformat(),
    }


def _feedback(n: int, at: datetime, rid: str, trace: str, refs: list[str]) -> dict[str, Any]:
    """An operator's override of a decision that lacked the manager's evidence."""
    return {
        "id": f"fb_{at:%Y_%m_%d}_f{n:03d}",  # feedback ids: fb_YYYY_MM_DD_<suffix>
        "trace_id": trace,
        "decision_record_id": rid,
        "decision_key": KEY,
        "override_kind": "deny",
        "override_reason_class": REASON,
        "override_reason_text": f"approved without the manager on {trace}",
        "evidence_refs_seen": refs,
        "evidence_refs_missing": [NEEDS],
        "expected_outcome": {"terminal_state": "DENIED"},
        "signed_by": PEOPLE[0],
        "signed_at": (at + timedelta(hours=2)).isoformat(),
    }


def _replay_and_goldens(root: Path, cases: list[dict[str, Any]]) -> None:
    import tempfile

    from contextos_lab.domain.loader import load_project
    from contextos_lab.harness.replay_sets import write_replay_set
    from contextos_lab.proposals.policy.registry import BundleRegistry
    from contextos_lab.proposals.replay.golden_recording import Target, goldens_text, record_goldens
    from contextos_lab.schemas.base import canonical_json, sha256_hex
    from contextos_lab.schemas.replay import ReplayPacket

    packets = [
        ReplayPacket(
            packet_id=c["packet_id"],
            source_pressure={
                "source_type": "operator_correction" if c["source"] else "golden_case",
                "source_ref": c["source"] or c["packet_id"],
                "severity": "high" if c["source"] else "low",
            },
            pinned_context_pack="my-domain-pack@0.1.0",
            compiled_context_hash=sha256_hex(canonical_json(c["case"])),
            side_effect_policy="dry_run",
            expected_outcome=c["expected_outcome"],
            case=c["case"],
        )
        for c in cases
    ]
    write_replay_set(root / "harness" / "replay", packets, {"name": "my_domain_cases"})
    project = load_project(root)
    with tempfile.TemporaryDirectory() as tmp:
        registry = BundleRegistry(tmp, seeds=project.bundles_dir)
        goldens = record_goldens(Target(BUNDLE, project, registry), packets[:12])
    project.goldens_dir.mkdir(parents=True, exist_ok=True)
    project.goldens_path(BUNDLE).write_text(goldens_text(goldens), encoding="utf-8")


def init_project(root: Path) -> Path:
    """Write the skeleton into `root` (which must not hold a project already)."""
    root = root.expanduser().resolve()
    if (root / "contextos-project.yaml").exists() or (root / "harness").exists():
        raise UserError(f"{root} already holds a project (contextos-project.yaml or harness/)")
    root.mkdir(parents=True, exist_ok=True)
    manifest = {**MANIFEST, "name": root.name.replace("-", "_") or "my_domain"}
    (root / "contextos-project.yaml").write_text(
        "# Fields: docs/own_domain.md (README: 'Bring your own domain').\n"
        + yaml.safe_dump(manifest, sort_keys=False),
        encoding="utf-8",
    )
    _json(root / "harness" / "feedback" / "reason-classes.json", REGISTRY)
    (root / "harness" / "compilers.yaml").write_text(
        yaml.safe_dump(COMPILERS, sort_keys=False), encoding="utf-8"
    )
    _json(root / "harness" / "policy" / "bundles" / f"{BUNDLE}.json", BUNDLE_V1)
    _json(root / "harness" / "tunable-surfaces.json", SURFACES)
    _replay_and_goldens(root, _data(root))
    return root
