"""`import contextos_lab as cl`: the notebook API returns DataFrames from what the CLI wrote."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

import contextos_lab as cl
from contextos_lab.cli.app import main
from contextos_lab.domain.loader import BUNDLED_PROJECT
from contextos_lab.schemas import DecisionRecord
from contextos_lab.store import ExperienceStore
from tests.gate.gate_toy import write_project
from tests.loaders.fixtures import decision_row, write_rows


def test_the_api_is_listed_and_lazy() -> None:
    for name in ("load_insights", "load_trials", "load_gate", "load_feedback", "load_proposals",
                 "run_sweep", "read_report"):  # fmt: skip
        assert callable(getattr(cl, name)) and name in dir(cl)
    with pytest.raises(AttributeError):
        _ = cl.no_such_thing


def test_load_insights_and_feedback(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from contextos_lab.insights.sources import load_sources

    assert main(["cluster", "synthetic:300:3", "--out", str(tmp_path / "c")]) == 0
    insights = cl.load_insights(tmp_path / "c")
    data = json.loads((tmp_path / "c" / "insights.json").read_text())
    assert isinstance(insights, pd.DataFrame) and len(insights) == len(data["insights"]) > 0
    assert "insight_id" in insights.columns
    # the documented json_normalize reading gives the same rows
    assert len(pd.json_normalize(data["insights"])) == len(insights)
    feedback = load_sources(["synthetic:80:3"]).feedback
    path = tmp_path / "feedback.jsonl"
    path.write_text("".join(f.model_dump_json() + "\n" for f in feedback))
    frame = cl.load_feedback(path)
    assert len(frame) == len(feedback) and {"id", "trace_id", "signed_by"} <= set(frame.columns)
    with pytest.raises(cl.UserError):
        cl.load_insights(tmp_path / "nope")


def test_store_lookups_accept_the_class_or_its_name(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/s.db"
    path = write_rows(tmp_path / "d.jsonl", [decision_row(i) for i in range(3)], DecisionRecord)
    named = ["--project", str(BUNDLED_PROJECT)]  # a fresh store's first write names its project
    assert main(["ingest", "decisions", str(path), "--store", url, *named]) == 0
    store = ExperienceStore(url)
    counts = {store.count(k) for k in (DecisionRecord, "DecisionRecord", "decision_record")}
    assert counts == {3}
    assert len(store.list("DecisionRecord")) == 3 and len(store.frame("decision_record")) == 3
    assert store.count("FeedbackEntry") == 0
    with pytest.raises(ValueError, match="unknown artifact kind"):
        store.count("Feedback")  # a typo is an error, never a silent 0


@pytest.mark.notebook
def test_sweep_outputs_as_frames(tmp_path: Path) -> None:
    spec = write_project(tmp_path / "p", tunable_surfaces=["top_k"], n_trials=8)
    out = tmp_path / "out"
    job = cl.run_sweep(spec, out, ledger=str(tmp_path / "l.jsonl"))
    trials = cl.load_trials(out)
    assert len(trials) == 8 and {"number", "feasible", "params"} <= set(trials.columns)
    gate = cl.load_gate(out)
    assert {"candidate", "metric", "delta", "ci_low", "ci_high", "p_holm"} <= set(gate.columns)
    assert gate["p_holm"].notna().all()  # every metric Holm-adjusted, not only the target
    proposals = cl.load_proposals(out)
    assert len(proposals) == len(job.emitted.tuning_proposals) + len(job.emitted.research_tasks)
    if len(proposals):
        assert "candidate_change.layer" in proposals.columns  # flattened
    report = cl.read_report(out)
    assert report.path == job.gate_report and "<iframe" in report._repr_html_()


def test_the_research_surface_resolves_and_is_all_the_benchmarks_import() -> None:
    """Every name in `api.RESEARCH` is a public attribute of the module it names, and the
    benchmarks import from the package through `contextos_lab.api` only (issue 32: benchmarks
    on the public API, no private names)."""
    import ast
    import importlib

    from contextos_lab import api

    for name, module in api.RESEARCH.items():
        assert not name.startswith("_")
        assert getattr(api, name) is getattr(importlib.import_module(module), name)
    with pytest.raises(AttributeError):
        api.no_such_name  # noqa: B018
    bench = Path(__file__).resolve().parents[1] / "benchmarks"
    imported: set[str] = set()
    for script in sorted(bench.glob("*.py")):
        for node in ast.walk(ast.parse(script.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                assert not any(a.name.startswith("contextos_lab") for a in node.names), script
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("contextos"):
                assert node.module == "contextos_lab.api", f"{script.name}: {node.module}"
                imported |= {a.name for a in node.names}
    assert imported and imported <= set(api.RESEARCH) | set(vars(api))
