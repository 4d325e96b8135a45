"""Optuna's own tools read the kit's studies: metric names, feasibility, plots, artifacts."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from contextos_lab.autotune.pareto import feasible_front
from contextos_lab.autotune.study.artifacts import CASE_HASHES_ATTR, recorded_case_hashes
from contextos_lab.autotune.sweep import SweepResult, sweep
from tests.autotune.conftest import toy_spec_dict


@pytest.fixture
def swept(case_dir: Path) -> SweepResult:
    # a tight utility allowance: some trials break it and are infeasible
    spec = case_dir / "run.yaml"
    spec.write_text(
        yaml.safe_dump(
            toy_spec_dict(
                guardrails={
                    "floors": {"policy": 0.99, "safety": 1.0},
                    "accepted_deltas": {"utility": 0.0, "latency": None, "economics": None},
                }
            )
        )
    )
    return sweep(spec, out_dir=case_dir / "out", n_trials=16, progress=False)


def test_metric_names_artifacts_and_best_trials_agree_with_the_kit(swept: SweepResult) -> None:
    study = swept.study
    assert study.metric_names == [e.value for e in swept.spec.objectives]
    # the case-hash list is an artifact beside study.db, not a study attribute
    assert CASE_HASHES_ATTR not in study.user_attrs
    assert len(recorded_case_hashes(study, swept.storage)) == 12
    assert (Path(swept.storage.removeprefix("sqlite:///")).parent / "artifacts").is_dir()
    infeasible = [t for t in study.trials if any(v > 0 for v in t.constraints.values())]
    assert infeasible, "the fixture should produce infeasible trials"
    best = {t.number for t in study.best_trials}
    kit = set(feasible_front(swept.trials, swept.spec)["number"])
    # the kit keeps one trial per distinct config; Optuna lists repeats too
    assert kit <= best
    params = {n: tuple(sorted(study.trials[n].params.items())) for n in best}
    assert {params[n] for n in best} == {params[n] for n in kit}
    assert not best & {t.number for t in infeasible}


def test_optuna_visualization_works(swept: SweepResult) -> None:
    import optuna

    fig = optuna.visualization.plot_pareto_front(swept.study, target_names=swept.study.metric_names)
    assert fig.data and fig.layout is not None


def _get(app: Any, path: str) -> dict[str, Any]:
    from wsgiref.util import setup_testing_defaults

    environ: dict[str, Any] = {"PATH_INFO": path, "REQUEST_METHOD": "GET"}
    setup_testing_defaults(environ)
    environ["wsgi.input"] = io.BytesIO(b"")
    status: list[str] = []
    body = b"".join(app(environ, lambda s, h, exc_info=None: status.append(s)))
    assert status[0].startswith("200"), (status, body[:300])
    return json.loads(body)


def test_dashboard_shows_named_objectives_and_no_infeasible_best(swept: SweepResult) -> None:
    pytest.importorskip("optuna_dashboard")
    from optuna_dashboard import wsgi

    from contextos_lab.autotune.study.storage import open_storage
    from contextos_lab.cli.dashboard import adapt_dashboard

    adapt_dashboard()
    app = wsgi(open_storage(swept.storage))
    study_id = swept.study._study_id
    detail = _get(app, f"/api/studies/{study_id}")
    assert detail["objective_names"] == [e.value for e in swept.spec.objectives]
    best = {t["number"] for t in detail["best_trials"]}
    assert best == {t.number for t in swept.study.best_trials}
    for t in detail["best_trials"]:
        assert t["constraints"] and all(c <= 0 for c in t["constraints"])
    shown = {t["number"]: t["constraints"] for t in detail["trials"]}
    for t in swept.study.trials:
        assert shown[t.number] == list(t.constraints.values())


def test_dashboard_command_refuses_a_folder_without_a_study(tmp_path: Path, capsys) -> None:
    from contextos_lab.cli.app import main

    assert main(["dashboard", "--out", str(tmp_path)]) == 2
    assert "no study storage" in capsys.readouterr().err
