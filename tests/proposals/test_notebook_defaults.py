"""Notebook 04's defaults work on any project: the insight and the approver come from what the
project holds, and a wrong reason class lists the valid ones (was a bare KeyError)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from contextos_lab.errors import MissingPrerequisite, UserError
from contextos_lab.proposals.notebook import APPROVER, default_approver, pick_insight


class _Store:
    def __init__(self, clusters: list[SimpleNamespace]) -> None:
        self.clusters = clusters

    def list(self, _kind: object) -> list[SimpleNamespace]:
        return self.clusters


def _cluster(i: str, reason: str, count: int) -> SimpleNamespace:
    return SimpleNamespace(insight_id=i, override_reason_class=reason, count=count)


def test_insight_defaults_to_the_largest_and_a_wrong_class_lists_the_valid_ones() -> None:
    store = _Store([_cluster("ins_a", "merged_without_tests", 5), _cluster("ins_b", "flaky", 9)])
    assert pick_insight(store).insight_id == "ins_b"
    assert pick_insight(store, reason_class="merged_without_tests").insight_id == "ins_a"
    with pytest.raises(UserError) as exc:
        pick_insight(store, reason_class="refund_window_misjudged")
    assert exc.value._render_traceback_() == [
        "UserError: no InsightCluster with reason class 'refund_window_misjudged' in this "
        "store; valid: flaky, merged_without_tests"
    ]
    with pytest.raises(MissingPrerequisite, match="set `project`"):
        pick_insight(_Store([]))


def test_approver_is_on_the_projects_authorised_list() -> None:
    coding = ["eng_lead_ada", "sre_oncall_lin", "security_owner_kim", "cc_board"]
    assert default_approver(coding) == "cc_board"
    assert default_approver([*coding, APPROVER]) == APPROVER
    assert default_approver(None) == APPROVER
