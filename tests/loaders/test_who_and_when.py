from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from contextos_lab.loaders.who_and_when import load_who_and_when

FIXTURE = Path(__file__).parents[1] / "insights" / "fixtures" / "who_and_when_small.json"


def test_annotations_become_feedback_with_text_and_evidence() -> None:
    result = load_who_and_when(FIXTURE)
    # rows 3 and 4 carry half an annotation: loaded, only row 4 has a reason (a correction)
    assert len(result.records) == len(result.traces) == 4 and len(result.feedback) == 3
    ag, hc = result.feedback[:2]
    assert ag.override_reason_class == "agent_mistake"
    assert ag.override_reason_text.startswith("The code did not handle")
    assert ag.evidence_refs_seen[:2] == ("agent:Excel_Expert", "step:0")
    # The key comes from the task (subset and level), never from the mistake.
    assert ag.decision_key == "algorithm_generated.level_2"
    assert hc.decision_key == "hand_crafted.level_1"  # `groundtruth` spelling accepted
    ag_in, hc_in = (r.inputs for r in result.records[:2])
    assert (ag_in["mistake_agent"], ag_in["mistake_step"]) == ("Excel_Expert", 0)
    assert ag_in["annotation"] == {"is_correct": False}
    assert hc_in["annotation"] == {"is_corrected": False}
    assert hc_in["mistake_reason"].startswith("FileSurfer misread")
    assert (hc_in["n_steps"], hc_in["phase"], hc_in["speaker_at_step"]) == (
        3,
        "last_third",
        "FileSurfer",
    )
    assert hc_in["annotation_flag"] is None
    assert result.traces[1].attributes["ground_truth"] == "pages 5-7"
    assert ag.decision_record_id == result.records[0].record_id
    assert result.records[0].status.value == "FAILED"


def test_variants_are_quarantined_with_reasons() -> None:
    result = load_who_and_when(FIXTURE)
    # a run without its history cannot be analysed; a partial annotation never rejects a run
    assert {(q.line, q.field) for q in result.quarantined} == {(5, "history")}
    null_reason, bad_step = (r.inputs for r in result.records[2:])
    assert null_reason["annotation_missing"] == {"mistake_reason": "null"}
    assert (null_reason["mistake_agent"], null_reason["mistake_step"]) == ("WebSurfer", 0)
    assert bad_step["annotation_missing"] == {"mistake_step": "malformed: 'step two'"}
    assert bad_step["mistake_step"] is None and bad_step["phase"] is None
    assert result.feedback[2].override_reason_text == "Searched the wrong website."


def test_folder_of_single_objects_jsonl_and_parquet(tmp_path) -> None:
    rows = json.loads(FIXTURE.read_text())[:2]
    (tmp_path / "Hand-Crafted").mkdir()
    (tmp_path / "Hand-Crafted" / "1.json").write_text(json.dumps(rows[1]))
    (tmp_path / "a.jsonl").write_text(json.dumps(rows[0]) + "\n{broken\n")
    pd.DataFrame([rows[0]]).drop(columns=["system_prompt"]).to_parquet(tmp_path / "b.parquet")
    result = load_who_and_when(tmp_path)
    assert len(result.feedback) == 3
    assert [q.field for q in result.quarantined] == [None]


def _row(**changes: object) -> dict:
    row = dict(json.loads(FIXTURE.read_text())[1])
    row.update(changes)
    return row


def test_a_step_spoken_by_another_agent_is_flagged_not_trusted(tmp_path) -> None:
    rows = [
        _row(question_ID="a", mistake_agent="WebSurfer", mistake_step="2"),
        _row(question_ID="b", mistake_step="9"),
        _row(question_ID="c", mistake_agent="Orchestrator", mistake_step="1"),
    ]
    (tmp_path / "x.json").write_text(json.dumps(rows))
    flags = [r.inputs["annotation_flag"] for r in load_who_and_when(tmp_path / "x.json").records]
    assert flags[0] == "step 2 is spoken by FileSurfer, not by mistake_agent WebSurfer"
    assert flags[1] == "mistake_step 9 is outside the history (3 steps)"
    assert flags[2] is None  # "Orchestrator (thought)" is the Orchestrator speaking


def test_every_annotation_field_is_kept(tmp_path) -> None:
    row = _row(mistake_type="Information Withholding", labels=["x", "y"], is_corrected=True)
    (tmp_path / "x.json").write_text(json.dumps(row))
    result = load_who_and_when(tmp_path / "x.json")
    (record,) = result.records
    assert record.inputs["annotation"] == {
        "mistake_type": "Information Withholding",
        "is_corrected": True,
        "labels": ["x", "y"],
    }
    # the annotator's correction carries the registry's class; the run itself is not classed
    # by its annotation, so an unannotated copy of it is analysed alike
    assert result.feedback[0].override_reason_class == "agent_mistake"
    assert record.inputs["reason_class"] is None


def test_a_run_without_annotations_is_loaded_not_quarantined(tmp_path) -> None:
    row = {k: v for k, v in _row().items() if not k.startswith("mistake_")}
    (tmp_path / "x.json").write_text(json.dumps(row))
    result = load_who_and_when(tmp_path / "x.json")
    assert not result.quarantined and not result.feedback
    (record,) = result.records
    assert record.inputs["failed"] and record.inputs["mistake_agent"] is None
    assert record.inputs["annotated"] is False and record.inputs["annotation_flag"] is None
    partial = {**row, "mistake_agent": "WebSurfer"}  # half an annotation: kept, rest reported
    (tmp_path / "y.json").write_text(json.dumps(partial))
    half = load_who_and_when(tmp_path / "y.json")
    assert not half.quarantined and not half.feedback  # no reason text: no correction
    assert half.records[0].inputs["mistake_agent"] == "WebSurfer"
    assert half.records[0].inputs["annotation_missing"] == {
        "mistake_reason": "missing",
        "mistake_step": "missing",
    }


def test_the_subset_is_read_from_content_not_from_folder_names(tmp_path) -> None:
    ag, hc = json.loads(FIXTURE.read_text())[:2]
    (tmp_path / "Hand-Crafted").mkdir()
    (tmp_path / "Hand-Crafted" / "1.json").write_text(json.dumps(ag))
    (tmp_path / "Algorithm-Generated").mkdir()
    (tmp_path / "Algorithm-Generated" / "2.json").write_text(json.dumps(hc))
    keys = sorted(r.decision_key for r in load_who_and_when(tmp_path).records)
    assert keys == ["algorithm_generated.level_2", "hand_crafted.level_1"]


def test_a_step_spoken_by_another_agent_is_flagged_in_any_script(tmp_path) -> None:
    """Names were compared by their ASCII letters only, so two agents named in Japanese were
    one agent and an annotation naming the wrong one was never flagged."""
    history = [{"role": "ユーザー", "content": "東京の天気は?"},
               {"role": "計画者", "content": "計画: 検索する。"},
               {"role": "検索者", "content": "晴れ。"}]  # fmt: skip
    rows = [
        {"history": history, "mistake_agent": "計画者", "mistake_step": 2, "question_ID": "a"},
        {"history": history, "mistake_agent": "検索者", "mistake_step": 2, "question_ID": "b"},
    ]
    (tmp_path / "x.json").write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
    flags = [r.inputs["annotation_flag"] for r in load_who_and_when(tmp_path / "x.json").records]
    assert flags == ["step 2 is spoken by 検索者, not by mistake_agent 計画者", None]
