from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from contextos_lab.loaders.who_and_when import load_who_and_when

FIXTURE = Path(__file__).parents[1] / "insights" / "fixtures" / "who_and_when_small.json"


def test_annotations_become_feedback_with_text_and_evidence() -> None:
    result = load_who_and_when(FIXTURE)
    assert len(result.feedback) == len(result.records) == len(result.traces) == 2
    ag, hc = result.feedback
    assert ag.override_reason_class == "agent_mistake"
    assert ag.override_reason_text.startswith("The code did not handle")
    assert ag.evidence_refs_seen[:2] == ("agent:Excel_Expert", "step:0")
    assert ag.decision_key == "algorithm_generated.excel_expert"
    assert hc.decision_key == "hand_crafted.filesurfer"  # `groundtruth` spelling accepted
    assert result.traces[1].attributes["ground_truth"] == "pages 5-7"
    assert ag.decision_record_id == result.records[0].record_id
    assert result.records[0].status.value == "FAILED"


def test_variants_are_quarantined_with_reasons() -> None:
    result = load_who_and_when(FIXTURE)
    assert {(q.line, q.field) for q in result.quarantined} == {
        (3, "mistake_reason"),
        (4, "mistake_step"),
        (5, "history"),
    }


def test_folder_of_single_objects_jsonl_and_parquet(tmp_path) -> None:
    rows = json.loads(FIXTURE.read_text())[:2]
    (tmp_path / "Hand-Crafted").mkdir()
    (tmp_path / "Hand-Crafted" / "1.json").write_text(json.dumps(rows[1]))
    (tmp_path / "a.jsonl").write_text(json.dumps(rows[0]) + "\n{broken\n")
    pd.DataFrame([rows[0]]).drop(columns=["system_prompt"]).to_parquet(tmp_path / "b.parquet")
    result = load_who_and_when(tmp_path)
    assert len(result.feedback) == 3
    assert [q.field for q in result.quarantined] == [None]
