"""`lineage(store, artifact_id)`: walk recorded upstream links back to the operator feedback."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from contextos_lab.store.experience_store import ExperienceStore


@dataclass
class LineageNode:
    artifact_id: str
    kind: str | None
    upstream: list[LineageNode] = field(default_factory=list)

    def walk(self) -> list[LineageNode]:
        out, stack, seen = [], [self], set()
        while stack:
            node = stack.pop()
            if node.artifact_id in seen:
                continue
            seen.add(node.artifact_id)
            out.append(node)
            stack.extend(reversed(node.upstream))
        return out

    @property
    def feedback_ids(self) -> list[str]:
        """Every feedback entry this artifact rests on, in walk order."""
        return [
            n.artifact_id for n in self.walk() if n.kind in ("feedback_entry", "feedback_record")
        ]

    def render(self, indent: int = 0) -> str:
        lines = [f"{'  ' * indent}{self.kind or '?'} {self.artifact_id}"]
        lines.extend(child.render(indent + 1) for child in self.upstream)
        return "\n".join(lines)


def lineage(store: ExperienceStore, artifact_id: str) -> LineageNode:
    """The upstream tree of an artifact; feedback entries are the leaves that matter."""
    kinds = {row.artifact_id: row.kind for row in store.rows()}
    links = {}
    for row in store.rows():
        links[row.artifact_id] = row.upstream_ids  # latest row wins
    if artifact_id not in kinds:
        raise KeyError(f"{artifact_id!r} is not in the store")

    def build(aid: str, path: frozenset[str]) -> LineageNode:
        node = LineageNode(aid, kinds.get(aid))
        if aid in path:
            return node
        for up in links.get(aid, ()):
            node.upstream.append(build(up, path | {aid}))
        return node

    return build(artifact_id, frozenset())
