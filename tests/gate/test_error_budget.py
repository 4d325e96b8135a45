"""The held-out set's error budget: LORD++ levels, the shared ledger state, refusal, refresh."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.contingency_tables import mcnemar

from contextos_lab.cli.app import main
from contextos_lab.gate.heldout import ledger
from contextos_lab.gate.heldout.error_budget import state
from contextos_lab.gate.heldout.ledger import HeldoutBudgetSpent
from contextos_lab.gate.heldout.reuse_simulation import holm_rows, mcnemar_exact_p, simulate_reuse
from contextos_lab.gate.paired_tests import holm_adjust
from contextos_lab.gate.run_gate import run_gate
from contextos_lab.proposals.files.emit import emit
from contextos_lab.schemas.error_budget import ErrorBudget
from tests.gate.conftest import study_for
from tests.gate.gate_toy import cases, write_project


def _lord_pp(outcomes: list[bool], b: ErrorBudget) -> list[float]:
    """LORD++ levels written out from Ramdas et al. (2017), eq. (LORD++), flat gamma."""

    def gamma(j: int) -> float:
        return 1.0 / b.horizon if 1 <= j <= b.horizon else 0.0

    w0, levels, taus = b.initial_wealth, [], []
    for t in range(1, len(outcomes) + 2):
        a = w0 * gamma(t)
        if taus:
            a += (b.alpha - w0) * gamma(t - taus[0]) + b.alpha * sum(gamma(t - s) for s in taus[1:])
        levels.append(a)
        if t <= len(outcomes) and outcomes[t - 1]:
            taus.append(t)
    return levels


@pytest.mark.parametrize(
    "outcomes", [[], [False] * 5, [True, False, True, True, False], [False, True] * 6]
)
def test_levels_match_the_lord_pp_formula(outcomes: list[bool]) -> None:
    b = ErrorBudget(horizon=8)
    expected = _lord_pp(outcomes, b)
    s = state(outcomes, b)
    assert s.next_level == pytest.approx(min(expected[-1], s.wealth), abs=1e-12)
    assert s.spent == pytest.approx(sum(expected[:-1]), abs=1e-12)
    assert s.next_index == len(outcomes) + 1


def test_no_promotion_levels_sum_to_the_initial_wealth_then_the_set_is_spent() -> None:
    b = ErrorBudget(horizon=4)
    s = state([False] * 4, b)
    assert s.spent == pytest.approx(b.initial_wealth)
    assert s.spent_out and "spent" in s.summary()
    assert not state([False] * 3, b).spent_out
    # a promotion earns budget back: the set is usable again
    assert not state([False, False, False, True], b).spent_out


def _claim(args: tuple[str, int]) -> int:
    path, i = args
    ledger.claim_gate(
        manifest_hash="m",
        run_id=f"eval_{i}",
        study="s",
        spec_hash="h",
        heldout_path="heldout",
        n_cases=10,
        n_candidates=1,
        budget=ErrorBudget(),
        path=path,
    )
    return i


def test_processes_sharing_a_ledger_share_one_budget(tmp_path: Path) -> None:
    path = str(tmp_path / "ledger.jsonl")
    with multiprocessing.get_context("spawn").Pool(4) as pool:
        pool.map(_claim, [(path, i) for i in range(12)])
    lines = [json.loads(x) for x in Path(path).read_text().splitlines()]
    claims = [x for x in lines if x["kind"] == "claim"]
    assert sorted(c["index"] for c in claims) == list(range(1, 13))
    assert ledger.prior_reads("m", path) == 12
    s, _ = ledger.budget_state("m", path=path)
    assert s.next_index == 13 and s.spent == pytest.approx(12 * ErrorBudget().initial_wealth / 50)


def test_a_spent_set_is_refused_naming_the_refresh_command(tmp_path: Path) -> None:
    path = tmp_path / "ledger.jsonl"
    b = ErrorBudget(horizon=2)
    for i in (1, 2):
        _, s = ledger.claim_gate(
            manifest_hash="m", run_id=f"r{i}", study="s", spec_hash="h", heldout_path="hs",
            n_cases=1, n_candidates=1, budget=b, path=path,
        )  # fmt: skip
        ledger.record_outcome(
            manifest_hash="m", run_id=f"r{i}", index=s.next_index, p_value=0.5, promoted=False,
            path=path,
        )  # fmt: skip
    before = path.read_text()
    with pytest.raises(HeldoutBudgetSpent, match="contextos-lab heldout refresh"):
        _claim((str(path), 3))
    assert path.read_text() == before, "a refused gate records nothing"


def test_gate_reports_its_alpha_and_the_proposal_carries_it(
    tmp_path: Path, ledger_file: Path
) -> None:
    spec = write_project(tmp_path / "p", tunable_surfaces=["top_k"], n_trials=10)
    out = tmp_path / "out"
    url = study_for(spec, out)
    result = run_gate(spec, storage=url, out_dir=out, ledger_file=ledger_file, n_boot=300)
    budget = result.run.error_budget
    assert budget is not None and budget.index == 1
    assert budget.alpha_tested == pytest.approx(ErrorBudget().initial_wealth / 50)
    assert budget.promoted == any(d.verdict == "promote" for d in result.run.decisions)
    assert budget.after.next_index == 2 and "gate(s)" in budget.advice
    report = tmp_path / "r.html"
    report.write_text("<html>gate</html>")
    emitted = emit(result.run, report, out)
    assert emitted.tuning_proposals
    proposal = json.loads(Path(emitted.tuning_proposals[0]).read_text())
    assert proposal["gate"]["error_budget"]["alpha_tested"] == budget.alpha_tested
    # a second gate on the same set is tested at the level LORD++ gives after the first
    again = run_gate(
        spec, storage=url, out_dir=out, ledger_file=ledger_file, n_boot=300, reuse=False
    )
    assert again.run.error_budget.index == 2
    assert again.run.error_budget.alpha_tested == pytest.approx(
        state([budget.promoted], ErrorBudget()).next_level
    )


def test_refresh_keeps_only_new_content_and_retires_the_old_set(
    tmp_path: Path, ledger_file: Path
) -> None:
    spec = write_project(tmp_path / "p")
    search = cases("s", 200, 0, seed=1)
    new = cases("n", 300, 10, seed=3)
    leaked = search.iloc[:5].copy()
    leaked["case_id"] = [f"copy{i}" for i in range(5)]  # same content, new ids
    new_file = tmp_path / "new.jsonl"
    pd.concat([new, leaked]).to_json(new_file, orient="records", lines=True)
    out = tmp_path / "heldout2"
    args = ["heldout", "refresh", "--spec", str(spec), "--from", str(new_file)]
    assert main([*args, "--out", str(out), "--size", "250", "--ledger", str(ledger_file)]) == 0
    fresh = pd.read_json(out / "cases.jsonl", lines=True)
    assert len(fresh) == 250 and not fresh["case_id"].str.startswith("copy").any()
    retired = [json.loads(x) for x in ledger_file.read_text().splitlines()]
    assert [r["kind"] for r in retired] == ["retire"]
    # the old set is retired: the gate refuses it, and its cases never come back
    old = cases("h", 200, 10, seed=2)
    with pytest.raises(HeldoutBudgetSpent, match="retired"):
        _claim_on(ledger_file, retired[0]["manifest_hash"])
    spec.write_text(spec.read_text().replace("heldout.jsonl", str(out / "cases.jsonl")))
    again = tmp_path / "again.jsonl"
    pd.concat([new, old]).to_json(again, orient="records", lines=True)
    cmd = ["heldout", "refresh", "--spec", str(spec), "--from", str(again), "--size", "100"]
    assert main([*cmd, "--out", str(tmp_path / "h3"), "--ledger", str(ledger_file)]) == 2
    assert main([*cmd[:-1], "40", "--out", str(tmp_path / "h3"), "--ledger", str(ledger_file)]) == 0
    third = pd.read_json(tmp_path / "h3" / "cases.jsonl", lines=True)
    assert set(third["case_id"]).isdisjoint(set(fresh["case_id"]) | set(old["case_id"]))


def _claim_on(path: Path, manifest_hash: str) -> None:
    ledger.claim_gate(
        manifest_hash=manifest_hash, run_id="r", study="s", spec_hash="h", heldout_path="x",
        n_cases=1, n_candidates=1, budget=ErrorBudget(), path=path,
    )  # fmt: skip


def test_simulation_statistics_are_the_kits() -> None:
    rng = np.random.default_rng(0)
    right, wrong = rng.integers(0, 40, 30), rng.integers(0, 40, 30)
    pairs = zip(right, wrong, strict=True)
    expected = [mcnemar([[0, b], [c, 0]], exact=True).pvalue for b, c in pairs]
    np.testing.assert_allclose(mcnemar_exact_p(right, wrong), expected, rtol=1e-9)
    p = rng.random((20, 3))
    np.testing.assert_allclose(holm_rows(p), [holm_adjust(list(r)) for r in p])


def test_budget_promotes_less_often_than_uncorrected_gates_under_the_null() -> None:
    r = simulate_reuse(design="null", lifetimes=30, sweeps=60, seed=1)
    assert r.any_false_promotion["uncorrected"] > 0.5
    assert r.any_false_promotion["budget"] <= 0.1
