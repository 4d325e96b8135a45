"""The change-control bundle: one folder a reviewer opens, with a manifest of every proposal.

Entries: promoted TuningProposals and ResearchTasks (from the store, and from a gate run's
`proposals/` folder when given), kept-but-underpowered gate candidates (seed 001: they "remain
review candidates"; marked, with the held-out sample size the gate says is needed),
StrategyProposals with their replay verdicts, proposed/released layer StrategyRules, and Notes.
Each entry is one JSON file (the artifact, its evidence ids, its status) whose SHA-256 is the
entry's `report_sha256`; a gate report's own hash is carried as `gate_report_sha256`.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from contextos_lab.proposals.release.checklist import latest_verdict
from contextos_lab.schemas.base import Envelope, canonical_json, sha256_hex
from contextos_lab.schemas.insight import InsightCluster
from contextos_lab.schemas.notes import Note
from contextos_lab.schemas.research import ResearchTask
from contextos_lab.schemas.strategy import StrategyProposal, StrategyRule
from contextos_lab.schemas.tuning import TuningProposal

MANIFEST = "manifest.json"


def _cluster_feedback(store: Any, insight_id: str | None) -> list[str]:
    cluster = store.get(InsightCluster, insight_id) if insight_id else None
    return list(cluster.feedback_ids) if cluster is not None else []


def _entry(out: Path, kind: str, aid: str, body: dict[str, Any], **meta: Any) -> dict[str, Any]:
    folder = out / kind
    folder.mkdir(parents=True, exist_ok=True)
    text = json.dumps(body, indent=2, sort_keys=True, default=str) + "\n"
    path = folder / f"{aid}.json"
    path.write_text(text, encoding="utf-8")
    return {
        "kind": kind,
        "id": aid,
        "file": str(path.relative_to(out)),
        "report_sha256": sha256_hex(text),
        **meta,
    }


def _dump(item: Envelope) -> dict[str, Any]:
    return item.model_dump(mode="json", by_alias=True)


def _gate_files(gate_dir: Path | None) -> list[Envelope]:
    found: list[Envelope] = []
    folder = gate_dir / "proposals" if gate_dir else None
    if folder is None or not folder.is_dir():
        return found
    for path in sorted(folder.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        model = TuningProposal if "tuning_proposal_id" in data else ResearchTask
        if "tuning_proposal_id" in data or "research_task_id" in data:
            found.append(model.model_validate(data))
    return found


#: The manifest kind of a gate candidate kept for review because it was underpowered.
REVIEW_CANDIDATE = "review_candidate"


def write_bundle(store: Any, out: Path, *, gate_dir: Path | None = None) -> dict[str, Any]:
    """Write the bundle folder and its manifest; returns the manifest."""
    out.mkdir(parents=True, exist_ok=True)
    tuning = {t.artifact_id: t for t in store.list(TuningProposal)}
    research = {t.artifact_id: t for t in store.list(ResearchTask)}
    for item in _gate_files(gate_dir):
        (tuning if isinstance(item, TuningProposal) else research).setdefault(
            item.artifact_id, item
        )
    entries = [
        *(_tuning_entry(out, t) for t in tuning.values()),
        *_review_candidates(out, gate_dir),
        *(_research_entry(out, t) for t in research.values()),
        *(_strategy_entry(out, store, p) for p in store.list(StrategyProposal)),
        *(_rule_entry(out, store, r) for r in store.list(StrategyRule) if r.adjustment is not None),
        *(
            _entry(out, "note", n.note_id, {"artifact": _dump(n)}, status=n.status.value,
                   evidence=list(n.evidence_refs))
            for n in store.list(Note)
        ),
    ]  # fmt: skip
    manifest = {
        "created_at": datetime.now(UTC).isoformat(),
        "store": str(store.url),
        "gate_dir": str(gate_dir) if gate_dir else None,
        "counts": {
            k: sum(1 for e in entries if e["kind"] == k)
            for k in dict.fromkeys(e["kind"] for e in entries)
        },
        "entries": entries,
    }
    (out / MANIFEST).write_text(canonical_json(manifest) + "\n", encoding="utf-8")
    return manifest


def _tuning_entry(out: Path, t: TuningProposal) -> dict[str, Any]:
    return _entry(
        out,
        "tuning_proposal",
        t.artifact_id,
        {"artifact": _dump(t)},
        status=str(t.status),
        marked="promoted",
        evidence=[t.evaluation_run_id],
        gate_report_sha256=t.report.sha256 if t.report else None,
    )


def _review_candidates(out: Path, gate_dir: Path | None) -> list[dict[str, Any]]:
    """The gate run's underpowered candidates: not promoted, kept for review (seed 001)."""
    if gate_dir is None or not (gate_dir / "gate.json").is_file():
        return []
    from contextos_lab.gate.run_gate import load_gate_run

    run = load_gate_run(gate_dir / "gate.json")
    return [
        _entry(
            out,
            REVIEW_CANDIDATE,
            f"{run.run_id}-{d.candidate_id}",
            {"run_id": run.run_id, "decision": d.model_dump(mode="json")},
            status="review_candidate",
            marked="underpowered: not promoted, kept for review",
            sample_size_needed=d.required_n,
            n_cases=d.n_cases,
            evidence=[run.run_id],
            gate_report_sha256=None,
        )
        for d in run.decisions
        if d.verdict == "underpowered"
    ]


def _research_entry(out: Path, t: ResearchTask) -> dict[str, Any]:
    report = t.report or {}
    return _entry(
        out,
        "research_task",
        t.artifact_id,
        {"artifact": _dump(t)},
        status=t.status.value,
        evidence=[t.trigger_insight_id],
        gate_report_sha256=report.get("sha256"),
    )


def _strategy_entry(out: Path, store: Any, p: StrategyProposal) -> dict[str, Any]:
    v = latest_verdict(store, p.proposal_id)
    evidence = [p.insight_id, *_cluster_feedback(store, p.insight_id)]
    return _entry(
        out,
        "strategy_proposal",
        p.proposal_id,
        {"artifact": _dump(p), "replay_verdict": _dump(v) if v else None},
        status=p.status.value,
        replay=v.status.value if v else "not replayed",
        replay_verdict_id=v.verdict_id if v else None,
        evidence=[*evidence, *([v.verdict_id] if v else [])],
    )


def _rule_entry(out: Path, store: Any, r: StrategyRule) -> dict[str, Any]:
    """A proposed or released adjustment-layer rule."""
    insight = r.trigger.get("from_insight")
    return _entry(
        out,
        "strategy_rule",
        r.rule_id,
        {"artifact": _dump(r)},
        status=r.status.value,
        replay="not applicable: adjustment-layer rule (lint + reviews gate it)",
        evidence=[insight, *_cluster_feedback(store, insight)] if insight else [],
    )
