"""`target.intent` keeps the search and the gate local to one workflow's cases (seed 001)."""

from __future__ import annotations

import pandas as pd
import pytest

from contextos_lab.autotune.cases import OutOfScope, case_set_from_frame, scope_to_intent
from contextos_lab.domain import BUNDLED_PROJECT, use_project


@pytest.fixture(autouse=True)
def _refund_project():
    previous = use_project(BUNDLED_PROJECT)
    yield
    use_project(previous)


def _set(intents: list[str]):
    frame = pd.DataFrame({"case_id": [f"c{i}" for i in range(len(intents))], "intent": intents})
    return case_set_from_frame(frame, "cases.jsonl")


def test_only_the_workflows_cases_stay_with_their_hashes() -> None:
    full = _set(["refund", "order_status", "support.refund.partial", "support.refund", "x"])
    scoped = scope_to_intent(full, "support.refund")
    assert list(scoped.cases["case_id"]) == ["c0", "c2", "c3"]  # alias, child, itself
    assert scoped.case_hashes == tuple(full.case_hashes[i] for i in (0, 2, 3))
    assert scoped.manifest_hash == full.manifest_hash


def test_a_set_without_the_workflow_is_refused_naming_its_intents() -> None:
    with pytest.raises(OutOfScope, match=r"support\.refund.*order_status, x"):
        scope_to_intent(_set(["order_status", "x"]), "support.refund")


def test_a_set_without_intents_is_kept_whole() -> None:
    frame = pd.DataFrame({"case_id": ["a", "b"]})
    whole = case_set_from_frame(frame)
    assert scope_to_intent(whole, "support.refund") is whole


def test_the_reference_spec_searches_only_refund_cases(search_cases) -> None:
    from contextos_lab.autotune.spec.load import load_spec
    from tests.conftest import REPO_ROOT

    spec = load_spec(REPO_ROOT / "specs" / "reference_refund.yaml")
    full = case_set_from_frame(search_cases)
    scoped = scope_to_intent(full, spec.target.intent)
    assert set(scoped.cases["intent"]) == {"refund"}
    assert 0 < len(scoped) < len(full) == 2000


def test_prepare_and_the_gates_heldout_read_are_scoped(tmp_path) -> None:
    from contextos_lab.autotune.context import prepare
    from contextos_lab.autotune.spec.load import load_spec
    from contextos_lab.gate.heldout.heldout import open_heldout
    from tests.conftest import REPO_ROOT

    ctx = prepare(load_spec(REPO_ROOT / "specs" / "reference_refund.yaml"))
    assert set(ctx.search.cases["intent"]) == {"refund"}
    held = open_heldout(
        ctx,
        run_id="run_scope",
        study="s",
        spec_hash="0" * 64,
        n_candidates=1,
        ledger_file=tmp_path / "ledger.jsonl",
    )
    assert set(held.cases.cases["intent"]) == {"refund"}
    assert 0 < len(held.cases) < 2000
