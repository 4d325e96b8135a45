"""Intents with no policy rule are named (`project --check`, `search`) before anything is paid:
policy would otherwise pass every case of them silently."""

from __future__ import annotations

import shutil
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import yaml

from contextos_lab.autotune.spec.parts import DEFAULT_EVALUATE
from contextos_lab.cli.app import main
from contextos_lab.cli.autotune import policy_warnings
from contextos_lab.domain.loader import BUNDLED_PROJECT
from contextos_lab.evaluators.policy_coverage import unruled_intents


def test_unruled_intents() -> None:
    rules = {"refund": "amount > 150"}
    assert unruled_intents(["refund", "faq", "faq", "billing", ""], rules) == ["billing", "faq"]


def test_project_check_warns_about_an_intent_without_a_rule(tmp_path: Path, capsys) -> None:
    root = tmp_path / "project"
    shutil.copytree(BUNDLED_PROJECT, root)
    manifest = root / "contextos-project.yaml"
    data = yaml.safe_load(manifest.read_text())
    data["case_intents"]["support.faq"] = ["faq_answer"]
    manifest.write_text(yaml.safe_dump(data))
    assert main(["project", "--project", str(root), "--check"]) == 0
    captured = capsys.readouterr()
    # every bundled intent has a rule ("False" where no decision breaks policy); workflows map
    # to case intents
    assert "no policy_evaluation rule for intent(s) faq_answer:" in captured.err
    data["policy_evaluation"].update({"faq_answer": "False"})
    ruled = tmp_path / "ruled"  # a second folder: projects are cached per folder
    shutil.copytree(root, ruled)
    (ruled / "contextos-project.yaml").write_text(yaml.safe_dump(data))
    assert main(["project", "--project", str(ruled), "--check"]) == 0
    captured = capsys.readouterr()
    assert captured.err == "" and "0 intent(s) without one" in captured.out


def test_search_warns_for_the_search_sets_unruled_intents() -> None:
    cases = pd.DataFrame({"case_id": ["a", "b", "c"], "intent": ["refund", "faq", "faq"]})
    ctx = SimpleNamespace(
        spec=SimpleNamespace(evaluate=DEFAULT_EVALUATE, search_set="s.jsonl"),
        search=SimpleNamespace(cases=cases),
    )
    (warning,) = policy_warnings(ctx)  # type: ignore[arg-type]
    assert "faq" in warning and "s.jsonl" in warning
    ctx.spec.evaluate = "contextos_lab.evaluators.assertions:evaluate"  # its own policy checks
    assert policy_warnings(ctx) == []  # type: ignore[arg-type]


def test_the_scorecard_named_by_name_is_the_default_evaluator() -> None:
    cases = pd.DataFrame({"case_id": ["a", "b"], "intent": ["faq", "faq"]})
    ctx = SimpleNamespace(
        spec=SimpleNamespace(evaluate="scorecard", search_set="s.jsonl"),
        search=SimpleNamespace(cases=cases),
    )
    (warning,) = policy_warnings(ctx)  # type: ignore[arg-type]
    assert "faq" in warning
    ctx.spec.evaluate = "assertions"
    assert policy_warnings(ctx) == []  # type: ignore[arg-type]
