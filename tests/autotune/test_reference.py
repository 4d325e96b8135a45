"""The bundled spec over the bundled reference harness: a feasible front that meets the floors."""

from __future__ import annotations

from pathlib import Path

import pytest

from contextos_lab.autotune.spec.load import load_spec
from contextos_lab.autotune.study.artifacts import recorded_case_hashes

REPO = Path(__file__).resolve().parents[2]
SPEC = REPO / "specs" / "reference_refund.yaml"


def test_reference_study_front_meets_floors(tmp_path: Path) -> None:
    pytest.importorskip("contextos_lab.harness.reference.harness")
    pytest.importorskip("contextos_lab.evaluators.scorecard")
    if not (REPO / "search_sets" / "manifest.json").exists():
        pytest.skip("reference replay sets not generated")
    from contextos_lab.autotune.sweep import sweep

    spec = load_spec(SPEC)
    result = sweep(spec, out_dir=tmp_path, n_trials=20, progress=False)  # sqlite in tmp_path
    assert result.study.trials[0].user_attrs["is_baseline"]
    assert len(result.front) > 0
    floors = spec.guardrails.floors
    assert (result.front["policy"] >= floors.policy).all()
    assert (result.front["safety"] >= floors.safety).all()
    assert result.report["front_floor_violations"] == []
    assert 0 < result.hypervolume <= 1
    trial = result.study.trials[1].user_attrs
    # target.intent support.refund: the study ran on the set's refund cases only
    from contextos_lab.harness.replay_sets import load_replay_set

    n_refund = int((load_replay_set(REPO / "search_sets")[0]["intent"] == "refund").sum())
    assert 0 < n_refund < 2000
    assert trial["search_set"]["n_cases"] == n_refund and "digest" in trial["search_set"]
    assert result.study.metric_names == [e.value for e in spec.objectives]
    assert "search_set_case_hashes" not in result.study.user_attrs  # an artifact, not an attr
    assert len(recorded_case_hashes(result.study, result.storage)) == n_refund
