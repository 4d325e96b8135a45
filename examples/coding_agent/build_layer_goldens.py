"""Regenerate the layer goldens: `python build_layer_goldens.py`.

Writes `harness/goldens/LAYER_<layer>.jsonl` for the six adjustment layers: recorded decisions
(their `outputs_hash` is what `harness/layer_replay.py` decides with no adjustment, so the
replay gate reproduces them) and, for the traces operators corrected, the outcome they said the
agent should have reached. Cases with no expected outcome must not change.
"""

from __future__ import annotations

import importlib.util
from datetime import UTC, datetime, timedelta
from pathlib import Path

from contextos_lab.api import (
    DecisionRecord,
    ExpectedOutcome,
    GoldenCase,
    dump_goldens,
    outputs_hash,
)
from contextos_lab.schemas.decision import TerminalStatus

HERE = Path(__file__).resolve().parent
T0 = datetime(2026, 10, 2, 8, 0, tzinfo=UTC)
MERGE, CMD = "code.change.merge", "code.command.run"
STATUS = {"approve": "COMPLETED", "deny": "DENIED", "escalate": "ESCALATED"}
#: layer -> decision key, and (facts, corrected outcome or None = must not change) per golden
CASES: dict[str, tuple[str, list[tuple[dict, str | None]]]] = {
    "prompt": (
        MERGE,
        [
            ({"pr_sections_missing": ["tested"]}, "approve"),
            ({"pr_sections_missing": ["why", "tested"]}, "approve"),
            ({"pr_sections_missing": []}, None),
            ({"pr_sections_missing": ["rollback_plan"]}, None),
        ],
    ),
    "planner": (
        MERGE,
        [
            ({"edit_tool": "editor.edit_file", "generated_file": True}, "approve"),
            ({"edit_tool": "editor.edit_file", "generated_file": True, "lines": 40}, "approve"),
            ({"edit_tool": "editor.edit_file", "generated_file": False}, None),
            ({"edit_tool": "codegen.edit_source", "generated_file": True}, None),
        ],
    ),
    "retrieval": (
        MERGE,
        [
            ({"docs_missing": ["lockfile_versions"]}, "approve"),
            ({"docs_missing": ["pinned_docs"]}, "approve"),
            ({"docs_missing": []}, None),
            ({"docs_missing": ["design_doc"]}, None),
        ],
    ),
    "tool_selection": (
        CMD,
        [
            ({"tool": "shell.rm_rf", "command": "rm -rf build"}, "deny"),
            ({"tool": "git.push_force", "command": "git push --force"}, "deny"),
            ({"tool": "git.revert", "command": "git revert HEAD"}, None),
            ({"tool": "shell.run", "command": "pytest -q"}, None),
        ],
    ),
    "memory_recall": (
        MERGE,
        [
            ({"same_fix_days_ago": 12}, "approve"),
            ({"same_fix_days_ago": 25}, "approve"),
            ({"same_fix_days_ago": 45}, None),
            ({"lines_changed": 30}, None),
        ],
    ),
    "budget_allocation": (
        CMD,
        [
            ({"command": "pytest -q", "steps": 51}, "escalate"),
            ({"command": "make lint", "steps": 88}, "escalate"),
            ({"command": "pytest -q", "steps": 20}, None),
            ({"command": "make lint", "steps": 40}, None),
        ],
    ),
}


def _replayer():
    spec = importlib.util.spec_from_file_location("layer_replay", HERE / "harness/layer_replay.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.replay


def build() -> dict[str, list[GoldenCase]]:
    replay = _replayer()
    out: dict[str, list[GoldenCase]] = {}
    n = 0
    for layer, (key, rows) in CASES.items():
        cases = []
        for facts, corrected in rows:
            at = T0 + timedelta(hours=3 * n)
            draft = DecisionRecord(
                record_id=f"dr_{at:%Y_%m_%d}_l{n:04d}",
                trace_id=f"trace_layer_{n:04d}",
                decision_key=key,
                intent=key.rsplit(".", 1)[0],
                status="COMPLETED",
                decision="approve",
                inputs=facts,
                decided_at=at,
                session_id=f"sess_l{n:03d}",
            )
            got = replay(draft, [])
            outputs = ExpectedOutcome(
                decision=got["decision"], evidence_missing=got["evidence_missing"]
            ).outputs()
            record = draft.model_copy(
                update={
                    "decision": got["decision"],
                    "status": TerminalStatus(STATUS[got["decision"]]),
                    "evidence_refs_missing": tuple(got["evidence_missing"]),
                    "outputs_hash": outputs_hash(outputs),
                }
            )
            expected = ExpectedOutcome(decision=corrected) if corrected else None
            cases.append(GoldenCase(record=record, expected_post_patch_outcome=expected))
            n += 1
        out[f"LAYER_{layer}"] = cases
    return out


def main() -> None:
    for name, cases in build().items():
        dump_goldens(cases, HERE / "harness" / "goldens" / f"{name}.jsonl")
        print(f"wrote harness/goldens/{name}.jsonl ({len(cases)} goldens)")


if __name__ == "__main__":
    main()
