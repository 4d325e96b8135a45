"""Goldens from a project's replay cases, re-recorded after a release, and their diff.

`record_goldens` turns each ReplayPacket of the project (`harness/replay/cases.jsonl`) whose
decision key a target governs into a GoldenCase: the packet's case becomes a DecisionRecord,
decided on the live bundle (or the live layer version, through the project's layer replayer),
whose outputs_hash it records. Where the packet's expected outcome differs from the live one,
that is the golden's `expected_post_patch_outcome` (what a fix must change it to); where they
agree, the golden must not change (None).

`rerecord` re-decides an existing goldens file on the live version after a release moved it:
new recorded outputs, and an expectation the live version now meets becomes "must not change".
`golden_diff` says, per golden, what re-recording would change; `contextos-lab goldens rerecord`
shows it and appends a signed change record (who, why, old and new file hashes, the diff)
to `harness/goldens-changes.jsonl`, so a reviewer reads what moved and who moved it.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from contextos_lab.domain.config import DomainConfig
from contextos_lab.errors import UserError
from contextos_lab.proposals.policy.bundle import evaluate
from contextos_lab.proposals.policy.registry import BundleRegistry
from contextos_lab.proposals.policy.rubric import PREFIX as RUBRIC_PREFIX
from contextos_lab.proposals.policy.rubric import evaluate_rubric, is_rubric
from contextos_lab.proposals.release.layer_registry import LayerRegistry
from contextos_lab.proposals.replay.goldens import ExpectedOutcome, GoldenCase, outputs_hash
from contextos_lab.schemas.base import canonical_json
from contextos_lab.schemas.decision import DecisionRecord, TerminalStatus
from contextos_lab.schemas.ids import new_id
from contextos_lab.schemas.replay import ReplayPacket

LAYER_PREFIX = "LAYER_"
#: Beside the goldens folder (not in it: every `*.jsonl` there is a goldens set).
CHANGES_FILE = "goldens-changes.jsonl"


@dataclass(frozen=True)
class Target:
    """A goldens set: a policy bundle id, or `LAYER_<layer>`."""

    goldens_id: str
    project: DomainConfig
    bundles: BundleRegistry

    @property
    def layer(self) -> str | None:
        if self.goldens_id.startswith(LAYER_PREFIX):
            return self.goldens_id.removeprefix(LAYER_PREFIX)
        return None

    @property
    def path(self) -> Path:
        return self.project.goldens_path(self.goldens_id)

    def keys(self) -> set[str]:
        """Decision keys whose replay cases feed this set (a layer: every declared key)."""
        if self.layer is not None:
            return set(self.project.decision_keys)
        if is_rubric(self.goldens_id):  # an intent's rubric: the keys of that intent
            intent = self.goldens_id.removeprefix(RUBRIC_PREFIX)
            return {k for k, v in self.project.decision_keys.items() if (v.intent or k) == intent}
        keys = {k for k, v in self.project.decision_keys.items() if v.bundle == self.goldens_id}
        if not keys:
            raise UserError(
                f"{self.goldens_id}: no decision key in "
                f"{self.project.root / 'contextos-project.yaml'} names this bundle, and it is "
                "not LAYER_<layer>"
            )
        return keys

    def version(self) -> str:
        if self.layer is not None:
            return LayerRegistry.beside(self.bundles.root).active(self.layer).ref
        return self.bundles.active(self.goldens_id).ref

    def decide(self, record: DecisionRecord) -> ExpectedOutcome:
        """The live version's outcome on a record."""
        if self.layer is None:
            bundle = self.bundles.active(self.goldens_id)
            d = (evaluate_rubric if is_rubric(self.goldens_id) else evaluate)(bundle, record)
            return ExpectedOutcome(
                decision=d.decision,
                status=d.status,
                evidence_missing=d.evidence_missing,
                redacted=d.redacted,
            )
        from contextos_lab.proposals.replay.layers import entries, project_replayer

        state = LayerRegistry.beside(self.bundles.root).active(self.layer)
        replayer = project_replayer(self.project)
        chosen = [a for a in entries(state) if _applies(a, record)]
        raw = replayer(record, chosen)
        try:
            return ExpectedOutcome.model_validate(
                {k: raw.get(k) for k in ("decision", "status", "evidence_missing") if k in raw}
            )
        except (ValueError, AttributeError) as exc:
            raise UserError(
                f"{self.project.root}/harness/layer_replay.py returned {raw!r} for "
                f"{record.record_id}: {exc}"
            ) from None


def _applies(adjustment: dict[str, Any], record: DecisionRecord) -> bool:
    from contextos_lab.proposals.replay.layers import applies

    return applies(adjustment.get("applies_to") or {}, record)


def packet_record(packet: ReplayPacket, project: DomainConfig) -> DecisionRecord:
    """A replay case as the DecisionRecord its goldens replay (decision filled in later)."""
    case = packet.case
    key = case.get("decision_key")
    if not key:
        raise UserError(f"replay case {packet.packet_id}: field case.decision_key is missing")
    rid = packet.packet_id.removeprefix("rp_")
    if not rid.startswith("dr_"):
        rid = new_id("dr", at=datetime(2026, 1, 1, tzinfo=UTC), seed=packet.packet_id)
    return DecisionRecord(
        record_id=rid,
        trace_id=f"trace_{packet.packet_id}",
        decision_key=key,
        intent=case.get("intent") or project.intent_of(key),
        status="ESCALATED",
        decision="escalate",
        inputs=dict(case.get("inputs") or {}),
        evidence_refs=tuple(case.get("evidence_refs") or ()),
        decided_at=datetime(2026, 1, 1, tzinfo=UTC),
    )


def _with_outcome(record: DecisionRecord, out: ExpectedOutcome, version: str) -> DecisionRecord:
    outputs = out.outputs()
    return record.model_copy(
        update={
            "decision": out.decision,
            "status": TerminalStatus(str(outputs["status"])),
            "evidence_refs_missing": tuple(out.evidence_missing),
            "outputs_hash": outputs_hash(outputs),
            "policy_version": version,
        }
    )


def _recorded_decision(
    record: DecisionRecord, packet: ReplayPacket, target: Target
) -> DecisionRecord:
    """A layer replays a decision already made: the case's own `decision`, else its key's
    live bundle's, else an escalation."""
    decision = packet.case.get("decision")
    bundle = target.project.decision_keys.get(record.decision_key)
    if decision is None and bundle is not None and bundle.bundle is not None:
        decision = evaluate(target.bundles.active(bundle.bundle), record).decision
    decision = decision or "escalate"
    out = ExpectedOutcome(decision=decision)
    return record.model_copy(
        update={"decision": decision, "status": TerminalStatus(str(out.outputs()["status"]))}
    )


def _expected(packet: ReplayPacket) -> ExpectedOutcome:
    exp = packet.expected_outcome
    missing = exp.properties.get("evidence_missing") or ()
    try:
        return ExpectedOutcome(decision=exp.decision, evidence_missing=tuple(missing))
    except ValueError as exc:
        raise UserError(f"replay case {packet.packet_id}: expected_outcome: {exc}") from None


def record_goldens(target: Target, packets: Sequence[ReplayPacket]) -> list[GoldenCase]:
    """One golden per replay case of the target's keys, recorded on the live version."""
    keys, version = target.keys(), target.version()
    out = []
    for packet in packets:
        if packet.case.get("decision_key") not in keys:
            continue
        record = packet_record(packet, target.project)
        if target.layer is not None or is_rubric(target.goldens_id):  # acts on a decision made
            record = _recorded_decision(record, packet, target)
        live = target.decide(record)
        want = _expected(packet)
        changes = outputs_hash(want.outputs()) != outputs_hash(live.outputs())
        out.append(
            GoldenCase(
                record=_with_outcome(record, live, version),
                expected_post_patch_outcome=want if changes else None,
                note=f"recorded from replay case {packet.packet_id}",
            )
        )
    if not out:
        raise UserError(
            f"no replay case in {target.project.replay_dir / 'cases.jsonl'} is on "
            f"{', '.join(sorted(keys))}: nothing to record for {target.goldens_id}"
        )
    return out


def rerecord(target: Target, goldens: Sequence[GoldenCase]) -> list[GoldenCase]:
    """The same goldens re-decided on the live version (after a release moved it)."""
    version = target.version()
    out = []
    for g in goldens:
        live = target.decide(g.record)
        expected = g.expected_post_patch_outcome
        if g.expected_hash is not None and g.expected_hash == outputs_hash(live.outputs()):
            expected = None  # the live version does what was expected: now it must hold
        out.append(
            g.model_copy(
                update={
                    "record": _with_outcome(g.record, live, version),
                    "expected_post_patch_outcome": expected,
                }
            )
        )
    return out


def golden_diff(old: Sequence[GoldenCase], new: Sequence[GoldenCase]) -> list[dict[str, Any]]:
    """Per changed golden: trace, recorded decision old → new, expectation old → new."""
    rows = []
    for a, b in zip(old, new, strict=True):
        if a.record.outputs_hash == b.record.outputs_hash and a.expected_hash == b.expected_hash:
            continue
        rows.append(
            {
                "trace_id": a.trace_id,
                "decision": f"{a.record.decision} -> {b.record.decision}",
                "recorded": f"{(a.record.outputs_hash or '-')[:12]} -> {b.record.outputs_hash[:12]}"
                if b.record.outputs_hash
                else "-",
                "expected": f"{_short(a)} -> {_short(b)}",
            }
        )
    return rows


def _short(g: GoldenCase) -> str:
    exp = g.expected_post_patch_outcome
    if exp is None:
        return "must not change"
    return exp if isinstance(exp, str) else exp.decision


def goldens_text(goldens: Sequence[GoldenCase]) -> str:
    lines = [json.dumps(g.model_dump(mode="json"), sort_keys=True) for g in goldens]
    return "\n".join(lines) + "\n"


def signed_change(
    target: Target,
    old_text: str,
    new_text: str,
    diff: list[dict[str, Any]],
    *,
    by: str,
    rationale: str,
    key: bytes,
) -> dict[str, Any]:
    """The change record `rerecord` appends: HMAC-SHA256 under the store key over its body."""
    body = {
        "goldens_id": target.goldens_id,
        "live_version": target.version(),
        "by": by,
        "rationale": rationale,
        "at": datetime.now(UTC).isoformat(),
        "old_sha256": hashlib.sha256(old_text.encode()).hexdigest(),
        "new_sha256": hashlib.sha256(new_text.encode()).hexdigest(),
        "diff": diff,
    }
    mac = hmac.new(key, canonical_json(body).encode(), hashlib.sha256).hexdigest()
    return {**body, "signature": mac}


def change_valid(change: dict[str, Any], key: bytes) -> bool:
    body = {k: v for k, v in change.items() if k != "signature"}
    mac = hmac.new(key, canonical_json(body).encode(), hashlib.sha256).hexdigest()
    return hmac.compare_digest(mac, str(change.get("signature", "")))
