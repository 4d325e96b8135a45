"""Gate emissions into the experience store: the TuningProposal and ResearchTask files a gate
run wrote (report hash checked) are appended, so lineage and loop metrics see them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from contextos_lab.proposals.files.emit import EmitResult, report_matches
from contextos_lab.schemas.base import Envelope
from contextos_lab.schemas.research import ResearchTask
from contextos_lab.schemas.tuning import TuningProposal
from contextos_lab.store.experience_store import StoreRefusal


def store_emitted(result: EmitResult, store: Any) -> tuple[list[str], list[str]]:
    """(stored ids, refusals as text). A file whose report no longer matches is refused; a
    ResearchTask whose trigger insight is not in the store is refused (no lineage)."""
    items: list[Envelope] = []
    refused: list[str] = []
    for path in [*result.tuning_proposals, *result.research_tasks]:
        if not report_matches(path):
            refused.append(f"{path}: report hash does not match")
            continue
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        model = TuningProposal if "tuning_proposal_id" in data else ResearchTask
        items.append(model.model_validate(data))
    refusals: list[StoreRefusal] = []
    outcomes = store.append_many(items, on_refusal="skip", refusals=refusals) if items else []
    return [o.artifact_id for o in outcomes], [*refused, *(str(r) for r in refusals)]
