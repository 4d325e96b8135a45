"""A domain is a project folder: one loader, resolution order, loud errors naming the file."""

from __future__ import annotations

import argparse
import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest
from pydantic import ValidationError

from contextos_lab.cli.project_option import add_project_option, project_from_args
from contextos_lab.domain import (
    BUNDLED_PROJECT,
    ProjectError,
    active_project,
    load_project,
    resolve_project_path,
    use_project,
)
from contextos_lab.schemas.feedback import FeedbackEntry
from contextos_lab.schemas.reason_classes import reason_classes
from tests.domain.conftest import CODING_AGENT


def _entry(reason: str) -> dict:
    return {
        "id": "fb_2026_10_01_a1",
        "trace_id": "t1",
        "decision_record_id": "dr_2026_10_01_a1",
        "decision_key": "code.change.merge",
        "override_kind": "deny",
        "override_reason_class": reason,
        "signed_by": "eng_lead_ada",
        "signed_at": datetime(2026, 10, 1, tzinfo=UTC),
    }


def test_both_example_projects_load_typed() -> None:
    refund = load_project(BUNDLED_PROJECT)
    assert refund.name == "refund_desk"
    assert refund.bundle_for_key("support.refund.execute") == "POLICY_RETURNS_V4"
    assert refund.bundle_path("POLICY_RETURNS_V4").is_file()
    coding = load_project(CODING_AGENT)
    assert coding.name == "coding_agent"
    assert coding.bundle_for_key("code.change.merge") == "POLICY_CODE_MERGE_V1"
    assert coding.goldens_path("POLICY_CODE_MERGE_V1").is_file()
    assert {s.name for s in coding.tunable_surfaces} >= {"max_steps", "docs_top_k"}
    assert not set(coding.reason_classes) & set(refund.reason_classes)


def test_resolution_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CONTEXTOS_PROJECT", raising=False)
    monkeypatch.chdir(tmp_path)
    assert resolve_project_path() == BUNDLED_PROJECT  # nothing set, cwd is no project
    shutil.copytree(CODING_AGENT / "harness", tmp_path / "harness")
    assert resolve_project_path() == tmp_path.resolve()  # cwd has the layout
    monkeypatch.setenv("CONTEXTOS_PROJECT", str(CODING_AGENT))
    assert resolve_project_path() == CODING_AGENT.resolve()
    assert resolve_project_path(str(BUNDLED_PROJECT)) == BUNDLED_PROJECT  # explicit wins


def test_the_active_registry_follows_the_project(coding_agent) -> None:
    assert "merged_without_tests" in reason_classes() and "wrong_tool" in reason_classes()
    FeedbackEntry.model_validate(_entry("merged_without_tests"))
    with pytest.raises(
        ValidationError, match=r"refund_window_misjudged.*registry of project coding_agent"
    ):
        FeedbackEntry.model_validate(_entry("refund_window_misjudged"))
    use_project(BUNDLED_PROJECT)
    with pytest.raises(ValidationError, match=r"project refund_desk .*reason-classes\.json"):
        FeedbackEntry.model_validate(_entry("merged_without_tests"))
    FeedbackEntry.model_validate(_entry("refund_window_misjudged"))


def test_project_option_activates_or_fails_in_one_line(capsys) -> None:
    parser = argparse.ArgumentParser()
    add_project_option(parser)
    assert project_from_args(parser.parse_args(["--project", str(CODING_AGENT)])).name == (
        "coding_agent"
    )
    assert active_project().name == "coding_agent"
    assert project_from_args(parser.parse_args(["--project", "/no/such/dir"])) is None
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "/no/such/dir" in err


def _copy(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    shutil.copytree(CODING_AGENT, root, ignore=shutil.ignore_patterns("data"))
    return root


@pytest.mark.parametrize(
    ("path", "text", "match"),
    [
        ("contextos-project.yaml", "name: [unclosed", r"contextos-project\.yaml: not valid YAML"),
        ("contextos-project.yaml", "name: x\nteam: y\n", "unknown field team"),
        (
            "contextos-project.yaml",
            "decision_keys: {k: {bundle: 3, rule_stem: ''}}",
            r"contextos-project\.yaml: field decision_keys\.k\.",
        ),
        ("harness/feedback/reason-classes.json", "{", r"reason-classes\.json: not valid JSON"),
        (
            "harness/compilers.yaml",
            "compilers: {merged_without_tests: {shape: grow_wings}}",
            r"compilers\.yaml: field compilers\.merged_without_tests\.shape",
        ),
        (
            "harness/compilers.yaml",
            "compilers: {merged_without_tests: {shape: layer}}",
            "shape layer needs layer",
        ),
        (
            "harness/compilers.yaml",
            "compilers: {not_a_class: {shape: layer, layer: prompt}}",
            r"compilers\.not_a_class: not a reason class",
        ),
        (
            "harness/tunable-surfaces.json",
            '[{"name": "x", "layer": "moon", "kind": "int"}]',
            r"tunable-surfaces\.json: field tunable_surfaces\.0",
        ),
    ],
)
def test_a_bad_file_is_an_error_naming_file_and_field(tmp_path, path, text, match) -> None:
    root = _copy(tmp_path)
    (root / path).write_text(text)
    with pytest.raises(ProjectError, match=match):
        load_project(root)


def test_registry_naming_an_undeclared_decision_key_is_refused(tmp_path) -> None:
    root = _copy(tmp_path)
    reg = root / "harness" / "feedback" / "reason-classes.json"
    data = json.loads(reg.read_text())
    data["classes"]["runaway_loop"]["decision_keys"] = ["code.nothing"]
    reg.write_text(json.dumps(data))
    with pytest.raises(ProjectError, match=r"runaway_loop\.decision_keys: code\.nothing"):
        load_project(root)


def test_not_a_project(tmp_path) -> None:
    with pytest.raises(ProjectError, match="not a project folder"):
        load_project(tmp_path)


def test_project_command_shows_the_domain_and_refuses_a_bad_one(capsys, tmp_path) -> None:
    from contextos_lab.cli.app import main

    assert main(["project", "--project", str(CODING_AGENT)]) == 0
    out = capsys.readouterr().out
    assert "project coding_agent" in out and "POLICY_CODE_MERGE_V1" in out
    assert "destructive_command" in out and "tool_selection" in out
    assert main(["project", "--project", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a project folder" in err


def test_bundled_projects_surfaces_are_the_reference_harness_declaration() -> None:
    from contextos_lab.harness.reference import reference_harness

    declared = tuple(reference_harness().tunable_surfaces())
    assert load_project(BUNDLED_PROJECT).tunable_surfaces == declared
