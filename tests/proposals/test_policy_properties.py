"""Hypothesis: apply_patch never mutates the prior bundle and always bumps the version;
evaluation is deterministic."""

from __future__ import annotations

import copy

from hypothesis import given, settings
from hypothesis import strategies as st

from contextos_lab.proposals.policy.bundle import (
    PatchError,
    PolicyBundle,
    PolicyRule,
    apply_patch,
    evaluate,
)
from contextos_lab.schemas import Patch
from tests.factories import decision_record

EVIDENCE = ["order_lookup", "refund_window_evidence", "idv_check", "human_approval"]
rule_ids = st.sampled_from(["R_A", "R_B", "R_C", "R_D"])
thens = st.fixed_dictionaries(
    {
        "allow": st.booleans(),
        "requires": st.lists(st.sampled_from(EVIDENCE), unique=True, max_size=3),
        "approval_above": st.none() | st.integers(0, 2000),
    }
)
applies = st.sampled_from(
    [
        {"intent": "support.refund.execute"},
        {"intent": "support.refund.execute", "amount": {"gt": 300}},
        {"intent": "support.account.update"},
    ]
)
rules = st.builds(
    lambda rid, a, t: PolicyRule(rule_id=rid, applies_to=a, then=t), rule_ids, applies, thens
)
bundles = st.builds(
    lambda rs, v: PolicyBundle(
        bundle_id="POLICY_RETURNS_V4", version=v, rules=tuple({r.rule_id: r for r in rs}.values())
    ),
    st.lists(rules, max_size=4),
    st.integers(1, 50),
)
patches = st.builds(
    lambda op, rid, a, t: Patch(
        target="policy_bundle",
        target_id="POLICY_RETURNS_V4",
        op=op,
        body={"rule_id": rid, "applies_to": a, "then": t},
    ),
    st.sampled_from(["add", "modify", "deprecate"]),
    rule_ids,
    applies,
    thens,
)
records = st.builds(
    lambda amount, ev, i: decision_record(
        i, inputs={"amount": amount}, evidence_refs=[f"{e}:x" for e in ev]
    ),
    st.integers(0, 3000),
    st.lists(st.sampled_from(EVIDENCE), unique=True),
    st.integers(0, 99),
)


@settings(max_examples=150, deadline=None)
@given(bundles, patches)
def test_apply_patch_never_mutates_and_bumps_version(bundle, patch) -> None:
    before, digest = copy.deepcopy(bundle.model_dump()), bundle.content_hash()
    try:
        new = apply_patch(bundle, patch)
    except PatchError:
        new = None
    assert bundle.model_dump() == before and bundle.content_hash() == digest
    if new is not None:
        assert new.version == bundle.version + 1 and new.parent_hash == digest
        assert new.content_hash() != digest


@settings(max_examples=150, deadline=None)
@given(bundles, records)
def test_evaluation_is_deterministic(bundle, record) -> None:
    first = evaluate(bundle, record)
    again = evaluate(PolicyBundle.model_validate(bundle.model_dump()), record)
    assert first == again
    reordered = bundle.model_copy(update={"rules": tuple(reversed(bundle.rules))})
    assert evaluate(reordered, record).outputs() == first.outputs()
    assert first.status in ("COMPLETED", "DENIED", "ESCALATED")
