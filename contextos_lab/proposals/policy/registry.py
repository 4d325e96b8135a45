"""Versions of policy bundles on disk: immutable version files plus an append-only activation log.

Why files and not the experience store: the store accepts only registered envelope kinds, and a
bundle is the runtime artifact a harness loads, not an observation about one. Layout:

    <root>/<BUNDLE_ID>/v0001.json        one file per version, written once (O_EXCL), never edited
    <root>/<BUNDLE_ID>/activations.jsonl which version is live: one line per activation

The active version is the last activation. Rollback is a new activation of the pinned version's
file, so the restored bundle is byte-identical (same content hash) to the baseline. The active
project's `harness/policy/bundles/<BUNDLE_ID>.json` seeds an empty registry as version 1.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from contextos_lab.errors import ContextosError, UserError
from contextos_lab.proposals.policy import DEFAULT_BUNDLES_DIR as DEFAULT_BUNDLES_DIR
from contextos_lab.proposals.policy.bundle import PolicyBundle

_REF = re.compile(r"^(?P<id>[A-Za-z0-9_.-]+)@v(?P<version>\d+)#(?P<hash>[0-9a-f]{64})$")


class BundleNotFound(UserError, KeyError):
    """A bundle (or version) the registry and the project do not hold: the user's to fix."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "bundle not found"


class BundleIntegrityError(ContextosError, RuntimeError):
    """A version file's content does not match the hash it was pinned or activated with."""


@dataclass(frozen=True)
class Activation:
    bundle_id: str
    version: int
    content_hash: str
    at: str
    actor: str
    reason: str
    rule_id: str | None = None


def parse_ref(ref: str) -> tuple[str, int, str]:
    m = _REF.match(ref)
    if not m:
        raise ValueError(f"not a bundle ref (BUNDLE@vN#sha256): {ref!r}")
    return m["id"], int(m["version"]), m["hash"]


class BundleRegistry:
    """`seeds`: where first versions come from (default: the active project's bundles)."""

    def __init__(
        self, root: Path | str = DEFAULT_BUNDLES_DIR, seeds: Path | str | None = None
    ) -> None:
        self.root = Path(root)
        self.seeds = Path(seeds) if seeds is not None else None

    def seed_dir(self) -> Path:
        if self.seeds is not None:
            return self.seeds
        from contextos_lab.domain.active import active_project

        return active_project().bundles_dir

    def _dir(self, bundle_id: str) -> Path:
        return self.root / bundle_id

    def _file(self, bundle_id: str, version: int) -> Path:
        return self._dir(bundle_id) / f"v{version:04d}.json"

    def versions(self, bundle_id: str) -> list[int]:
        return sorted(int(p.stem[1:]) for p in self._dir(bundle_id).glob("v*.json"))

    def get(self, bundle_id: str, version: int) -> PolicyBundle:
        path = self._file(bundle_id, version)
        if not path.exists():
            raise BundleNotFound(f"{bundle_id} v{version} is not in {self.root}")
        return PolicyBundle.from_file(path)

    def resolve(self, ref: str) -> PolicyBundle:
        """The version a ref pins, refusing it if its content no longer has the pinned hash."""
        bundle_id, version, digest = parse_ref(ref)
        bundle = self.get(bundle_id, version)
        if bundle.content_hash() != digest:
            raise BundleIntegrityError(f"{bundle_id} v{version} no longer hashes to {digest}")
        return bundle

    def put(self, bundle: PolicyBundle) -> PolicyBundle:
        """Write a version once; re-writing identical content is a no-op, different is refused."""
        path = self._file(bundle.bundle_id, bundle.version)
        if path.exists():
            stored = PolicyBundle.from_file(path)
            if stored.content_hash() != bundle.content_hash():
                raise BundleIntegrityError(
                    f"{bundle.bundle_id} v{bundle.version} exists with other content"
                )
            return stored
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(bundle.model_dump(mode="json"), indent=2, sort_keys=True))
        os.link(tmp, path)  # fails if another writer got there first
        tmp.unlink()
        return bundle

    def activations(self, bundle_id: str) -> list[Activation]:
        log = self._dir(bundle_id) / "activations.jsonl"
        if not log.exists():
            return []
        lines = log.read_text(encoding="utf-8").splitlines()
        return [Activation(**json.loads(line)) for line in lines if line.strip()]

    def activate(
        self,
        bundle: PolicyBundle,
        *,
        actor: str,
        reason: str,
        rule_id: str | None = None,
        at: datetime | None = None,
    ) -> Activation:
        stored = self.put(bundle)
        act = Activation(
            bundle_id=stored.bundle_id,
            version=stored.version,
            content_hash=stored.content_hash(),
            at=(at or datetime.now(UTC)).isoformat(),
            actor=actor,
            reason=reason,
            rule_id=rule_id,
        )
        with (self._dir(stored.bundle_id) / "activations.jsonl").open("a") as fh:
            fh.write(json.dumps(act.__dict__, sort_keys=True) + "\n")
        return act

    def active(self, bundle_id: str) -> PolicyBundle:
        """The live version (seeding the registry from the project's bundles the first time)."""
        acts = self.activations(bundle_id)
        if not acts:
            seed = self.seed_dir() / f"{bundle_id}.json"
            from contextos_lab.proposals.policy.rubric import empty_rubric, is_rubric

            if not seed.exists() and is_rubric(bundle_id):  # an intent with no rubric yet
                self.activate(empty_rubric(bundle_id), actor="bundled", reason="seed")
                return self.active(bundle_id)
            if not seed.exists():
                raise BundleNotFound(
                    f"no active version of {bundle_id} in {self.root}, and no first version "
                    f"at {seed} (the policy bundle named in contextos-project.yaml decision_keys)"
                )
            self.activate(PolicyBundle.from_file(seed), actor="bundled", reason="seed")
            acts = self.activations(bundle_id)
        last = acts[-1]
        return self.resolve(f"{bundle_id}@v{last.version}#{last.content_hash}")

    def next_version(self, bundle_id: str) -> int:
        return max(self.versions(bundle_id), default=0) + 1
