"""`ProposerContract`: what an outside proposer (docs/loop.md) must do with a run layout.

A proposer reads `runs/<study>/` (search-set runs only) and returns one change to enqueue, or
None: `{"config": {knob: value}, "rationale": str, "cites": ["trial_<n>[/<case_id>]", ...]}`.
Override `proposer` (`(study_dir) -> proposal | None`); `study_dir` defaults to a small layout
written by `toy_layout` (three trials, two knobs, one failure a knob fixes).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pandas as pd
import pytest

from contextos_lab.autotune.run_layout import RunLayout
from contextos_lab.autotune.study.enqueue import check_cites

Proposal = Mapping[str, Any]
Proposer = Callable[[Path], Proposal | None]

SURFACES = [
    {"name": "top_k", "layer": "retrieval", "kind": "int", "baseline": 1, "grid": [1, 2, 3]},
    {"name": "tone", "layer": "prompt", "kind": "categorical", "baseline": "plain",
     "grid": ["plain", "friendly"]},
]  # fmt: skip
ABOUT = {
    "target": {"intent": "toy", "metric": "utility", "direction": "increase"},
    "objectives": ["utility"],
    "floors": {},
    "surfaces": SURFACES,
}
#: trial number -> (params, the cases it fails)
TRIALS: dict[int, tuple[dict[str, Any], set[str]]] = {
    0: ({"top_k": 1, "tone": "plain"}, {"c0", "c1"}),
    1: ({"top_k": 2, "tone": "plain"}, {"c0"}),
    2: ({"top_k": 1, "tone": "friendly"}, {"c1"}),
}


def toy_layout(root: Path, study: str = "toy") -> Path:
    """A run layout written through `RunLayout`, as a sweep writes it; returns its folder."""
    layout = RunLayout(root, study, ABOUT)
    cases = pd.DataFrame(
        [{"case_id": f"c{i}", "question": f"q{i}", "expected_decision": "yes"} for i in range(4)]
    )
    for number, (params, failing) in TRIALS.items():
        decisions = ["no" if c in failing else "yes" for c in cases["case_id"]]
        results = pd.DataFrame(
            {"case_id": cases["case_id"], "decision": decisions, "output_text": decisions}
        )
        utility = [0.0 if c in failing else 1.0 for c in cases["case_id"]]
        per_case = pd.DataFrame({"utility": utility, "policy": 1.0, "safety": 1.0})
        layout.record(cases, results, per_case)
        trial = SimpleNamespace(
            number=number,
            params=params,
            state=SimpleNamespace(name="COMPLETE"),
            constraints={"floors": -1.0},
            user_attrs={"scores": {"utility": sum(utility) / 4}, "is_baseline": number == 0},
        )
        layout.finish(trial, config=params)
    return layout.study_dir


def _digest(folder: Path) -> str:
    h = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        h.update(str(path.relative_to(folder)).encode() + path.read_bytes())
    return h.hexdigest()


class ProposerContract:
    """Subclass and override `proposer` (and `study_dir` to use your own layout)."""

    @pytest.fixture
    def proposer(self) -> Proposer:
        raise NotImplementedError("override `proposer`: (study_dir) -> proposal or None")

    @pytest.fixture
    def study_dir(self, tmp_path: Path) -> Path:
        return toy_layout(tmp_path / "runs")

    def test_a_proposal_has_a_config_a_rationale_and_cites(
        self, proposer: Proposer, study_dir: Path
    ) -> None:
        proposal = proposer(study_dir)
        if proposal is None:
            pytest.skip("the proposer found nothing to propose in this layout")
        assert isinstance(proposal.get("config"), Mapping) and proposal["config"]
        assert isinstance(proposal.get("rationale"), str) and proposal["rationale"].strip()
        assert isinstance(proposal.get("cites"), list)

    def test_the_config_stays_on_the_declared_grid(
        self, proposer: Proposer, study_dir: Path
    ) -> None:
        proposal = proposer(study_dir)
        if proposal is None:
            pytest.skip("the proposer found nothing to propose in this layout")
        about = json.loads((study_dir / "study.json").read_text(encoding="utf-8"))
        grids = {s["name"]: s["grid"] for s in about["surfaces"]}
        for knob, value in proposal["config"].items():
            assert knob in grids, f"{knob!r} is not a declared surface"
            assert value in grids[knob], f"{knob}={value!r} is off its grid {grids[knob]}"

    def test_cites_point_into_the_layout(self, proposer: Proposer, study_dir: Path) -> None:
        proposal = proposer(study_dir)
        if proposal is None:
            pytest.skip("the proposer found nothing to propose in this layout")
        layout = RunLayout(study_dir.parent, study_dir.name)
        check_cites(layout, proposal["cites"])  # raises naming each citation that is not there

    def test_it_only_reads_and_is_deterministic(self, proposer: Proposer, study_dir: Path) -> None:
        before = _digest(study_dir)
        assert proposer(study_dir) == proposer(study_dir)
        assert _digest(study_dir) == before, "a proposer reads the layout; the kit writes it"

    def test_a_layout_without_trials_gives_no_proposal(
        self, proposer: Proposer, tmp_path: Path
    ) -> None:
        empty = tmp_path / "empty" / "toy"
        empty.mkdir(parents=True)
        (empty / "study.json").write_text(json.dumps({"study": "toy", **ABOUT}), encoding="utf-8")
        assert proposer(empty) is None


__all__ = ["ABOUT", "Proposal", "Proposer", "ProposerContract", "toy_layout"]
