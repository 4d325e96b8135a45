"""The adjustment-layer registry: immutable layer versions plus an activation log, per layer.

Kept like policy bundles (`<root>/<layer>/`), so rollback re-activates the pinned version (same
bytes, same content hash) and retire writes a version without the rule.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from contextos_lab.schemas.base import canonical_json, sha256_hex
from contextos_lab.schemas.strategy import StrategyRule


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
