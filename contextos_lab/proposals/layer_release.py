"""Release, rollback and retire for adjustment-layer StrategyRules (seed 001's six layers).

A layer's live configuration is the set of released adjustments on it, kept like policy
bundles: immutable version files plus an activation log, under `<root>/<layer>/`. Release
lints the rule against active rules, pins the live layer version as the baseline, writes the
next version with the rule added and activates it; rollback re-activates the pinned version
(the same bytes, the same content hash); retire writes a version without the rule.
Why not the bundle registry itself: a layer version holds adjustments, not policy rules.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from contextos_lab.proposals.lint import active_rules, rule_conflicts
from contextos_lab.proposals.reviews import Reviews, author_of, check_reviews, verdict_map
from contextos_lab.proposals.rule_lifecycle import stamp_release
from contextos_lab.schemas.base import canonical_json, sha256_hex
from contextos_lab.schemas.lifecycle import LifecycleStatus, advance
from contextos_lab.schemas.strategy import ReplayVerdict, StrategyRule

S = LifecycleStatus


@dataclass(frozen=True)
class LayerState:
    layer: str
    version: int
    rules: dict[str, Any]

    @property
    def body(self) -> str:
        return canonical_json({"layer": self.layer, "rules": self.rules})

    @property
    def ref(self) -> str:
        return f"LAYER_{self.layer}@v{self.version}#{sha256_hex(self.body)}"


class LayerRegistry:
    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)

    @classmethod
    def beside(cls, bundles_root: Path | str) -> LayerRegistry:
        """The layer registry next to a bundle registry (`.contextos/bundles` → `layers`)."""
        return cls(Path(bundles_root).parent / "layers")

    def _dir(self, layer: str) -> Path:
        return self.root / layer

    def _read(self, layer: str, version: int) -> LayerState:
        data = json.loads((self._dir(layer) / f"v{version:04d}.json").read_text("utf-8"))
        return LayerState(layer, version, data["rules"])

    def active(self, layer: str) -> LayerState:
        """The live version (version 1, empty, is written the first time a layer is used)."""
        log = self._dir(layer) / "activations.jsonl"
        if not log.is_file():
            self._write(LayerState(layer, 1, {}))
            self._activate(LayerState(layer, 1, {}), "contextos-lab", "initial (empty) layer")
        last = log.read_text("utf-8").strip().splitlines()[-1]
        return self._read(layer, int(json.loads(last)["version"]))

    def resolve(self, ref: str) -> LayerState:
        name, _, rest = ref.partition("@v")
        version = rest.partition("#")[0]
        state = self._read(name.removeprefix("LAYER_"), int(version))
        if state.ref != ref:
            raise RuntimeError(f"layer version file for {ref} does not match its pinned hash")
        return state

    def next_version(self, layer: str) -> int:
        return len(list(self._dir(layer).glob("v*.json"))) + 1

    def _write(self, state: LayerState) -> None:
        self._dir(state.layer).mkdir(parents=True, exist_ok=True)
        path = self._dir(state.layer) / f"v{state.version:04d}.json"
        with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL), "w") as fh:
            fh.write(state.body + "\n")

    def _activate(self, state: LayerState, actor: str, reason: str) -> None:
        line = {
            "version": state.version,
            "ref": state.ref,
            "actor": actor,
            "reason": reason,
            "at": datetime.now(UTC).isoformat(),
        }
        with (self._dir(state.layer) / "activations.jsonl").open("a", encoding="utf-8") as fh:
            fh.write(canonical_json(line) + "\n")

    def activated_since(self, layer: str, since: datetime) -> list[str]:
        """Refs activated on the layer after `since` (a replay on an older version is stale)."""
        log = self._dir(layer) / "activations.jsonl"
        if not log.is_file():
            return []
        lines = [json.loads(x) for x in log.read_text("utf-8").splitlines() if x.strip()]
        return [x["ref"] for x in lines if datetime.fromisoformat(x["at"]) > since]

    def publish(self, state: LayerState, actor: str, reason: str) -> LayerState:
        self._write(state)
        self._activate(state, actor, reason)
        return state

    def reactivate(self, state: LayerState, actor: str, reason: str) -> LayerState:
        self._activate(state, actor, reason)
        return state


def _entry(rule: StrategyRule) -> dict[str, Any]:
    assert rule.adjustment is not None
    return {
        "applies_to": rule.applies_to,
        "type": rule.adjustment.type,
        "value": rule.adjustment.value,
    }


def layer_refusals(
    rule: StrategyRule,
    approver_id: str | None,
    review_reasons: list[str],
    active: list[StrategyRule],
    verdict: ReplayVerdict | None = None,
) -> list[str]:
    """Every reason not to release (seed 000's checks, for a layer rule)."""
    from contextos_lab.proposals.checklist import verdict_refusals

    missing = f"no replay verdict (run `contextos-lab replay {rule.rule_id}`)"
    out = verdict_refusals(verdict, rule.rule_id, missing)
    if rule.adjustment is None:
        out.append(f"{rule.rule_id} has no layer adjustment")
    if rule.status != S.proposed:
        out.append(f"rule is {rule.status.value}, not proposed")
    if not (approver_id and approver_id.strip()):
        out.append("no approver")
    out.extend(review_reasons)
    out.extend(f"lint: {c}" for c in rule_conflicts(rule, active))
    return out


def release_layer_rule(
    rule: StrategyRule,
    approver_id: str | None,
    reviews: Reviews = None,
    *,
    verdict: ReplayVerdict | None,
    feedback_ids: tuple[str, ...],
    store: Any,
    layers: LayerRegistry,
    key: bytes | None = None,
    at: datetime | None = None,
    supersedes: str | None = None,
) -> tuple[StrategyRule, LayerState, LayerState]:
    """(released rule, new live layer version, pinned baseline); refuses naming every reason.
    `verdict`: the rule's clean golden replay (`layer_replay.run_layer_replay`), on the live
    layer version; `reviews`: signed ReviewVerdict envelopes, checked like a proposal's."""
    from contextos_lab.proposals.release import ReleaseRefused, supersede

    when = at or datetime.now(UTC)
    valid, review_reasons = check_reviews(
        reviews, rule.rule_id, approver_id, store=store, key=key, author=author_of(rule)
    )
    active = [r for r in active_rules(store) if r.rule_id != supersedes]
    reasons = layer_refusals(rule, approver_id, review_reasons, active, verdict)
    if verdict is not None and rule.adjustment is not None:
        moved = layers.activated_since(rule.adjustment.layer.value, verdict.computed_at)
        if moved:
            reasons.append(
                f"the layer changed since the replay ({moved[-1]} is live): replay it again"
            )
    if not reasons and not feedback_ids:
        reasons.append(f"no feedback lineage under {rule.trigger.get('from_insight')}")
    if reasons:
        raise ReleaseRefused(rule.rule_id, reasons)
    assert rule.adjustment is not None and approver_id and verdict is not None
    layer = rule.adjustment.layer.value
    baseline = layers.active(layer)
    rules = {k: v for k, v in baseline.rules.items() if k != supersedes}
    new = LayerState(layer, layers.next_version(layer), {**rules, rule.rule_id: _entry(rule)})
    versions = [rule]
    r = rule
    for target, why in (
        (
            S.reviewed,
            "reviewers approve: "
            + ", ".join(f"{k}={v}" for k, v in sorted(verdict_map(valid).items())),
        ),
        (S.approved, None),
        (S.released, None),
    ):
        r = advance(r, target, actor=approver_id, approver_id=approver_id, at=when, rationale=why)
        versions.append(r)
    versions[-1] = stamp_release(
        r,
        when=when,
        approver_id=approver_id,
        baseline_ref=baseline.ref,
        feedback_ids=feedback_ids,
        insight_id=rule.trigger["from_insight"],
        verdict_id=verdict.verdict_id,
    )
    store.append_many([v for v in valid.values() if store.find(v.review_id) is None])
    store.append_many(versions)
    layers.publish(new, approver_id, f"release {rule.rule_id}")
    old = store.get(StrategyRule, supersedes) if supersedes else None
    if old is not None and old.active:
        supersede(old, rule.rule_id, store=store, actor=approver_id, at=when)
    return versions[-1], new, baseline


def rollback_layer(
    rule: StrategyRule, layers: LayerRegistry, *, actor: str, reason: str
) -> LayerState:
    """The pinned baseline version becomes live again (hash-equal)."""
    if rule.pinned_baseline is None:
        raise ValueError(f"{rule.rule_id} has no pinned baseline to restore")
    baseline = layers.resolve(rule.pinned_baseline)
    return layers.reactivate(baseline, actor, f"rollback {rule.rule_id}: {reason}")


def retire_layer(rule: StrategyRule, layers: LayerRegistry, *, actor: str, reason: str) -> None:
    assert rule.adjustment is not None
    live = layers.active(rule.adjustment.layer.value)
    rules = {k: v for k, v in live.rules.items() if k != rule.rule_id}
    state = LayerState(live.layer, layers.next_version(live.layer), rules)
    layers.publish(state, actor, f"retire {rule.rule_id}: {reason}")
