"""The reference outside proposer keeps the proposer contract (`contextos_lab.testing`) on
the suite's own run layout."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from contextos_lab.testing import Proposer, ProposerContract

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "reference_proposer" / "propose.py"


def _reference() -> Proposer:
    spec = importlib.util.spec_from_file_location("reference_propose", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.propose


class TestReferenceProposer(ProposerContract):
    @pytest.fixture
    def proposer(self) -> Proposer:
        return _reference()

    def test_it_proposes_on_the_toy_layout(self, proposer: Proposer, study_dir: Path) -> None:
        proposal = proposer(study_dir)
        assert proposal is not None and proposal["cites"]  # the suite's checks did not skip
