"""Replay sets on disk: `cases.jsonl` (one ReplayPacket per line) plus `manifest.json`.

The manifest pins a SHA-256 per case (of its content: the case, the expected outcome and the
forbidden strings — not its id, so a case copied under a new id is still caught) and one for the
whole set. Loading re-hashes and refuses drift; `check_disjoint` refuses a search/held-out pair
that shares any case, naming the shared case ids.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from contextos_lab.errors import ContextosError
from contextos_lab.schemas.base import canonical_json, sha256_hex
from contextos_lab.schemas.replay import ReplayPacket

if TYPE_CHECKING:  # pandas only where a frame is built (`project --check` reads packets)
    import pandas as pd

CASES_FILE = "cases.jsonl"
MANIFEST_FILE = "manifest.json"

#: Columns of a flattened cases frame (what harnesses and evaluators read), `case_id` first.
CASE_COLUMNS: tuple[str, ...] = (
    "case_id",
    "request",
    "intent",
    "entities",
    "order_id",
    "amount",
    "days_since_delivery",
    "facts",
    "evidence",
    "injection",
    "edge_cases",
    "expected_decision",
    "expected_skill",
    "key_evidence",
    "forbidden_strings",
    "content_hash",
)


class ReplaySetError(ContextosError, ValueError):
    """A replay set is malformed or does not match its manifest."""


class ReplaySetOverlapError(ReplaySetError):
    """Two sets that must be disjoint share cases."""

    def __init__(self, shared: Sequence[tuple[str, str]]) -> None:
        self.shared = tuple(shared)
        names = ", ".join(f"{a}={b}" if a != b else a for a, b in self.shared[:20])
        more = f" (+{len(self.shared) - 20} more)" if len(self.shared) > 20 else ""
        super().__init__(f"replay sets share {len(self.shared)} case(s): {names}{more}")


def case_content_hash(
    case: Mapping[str, Any], expected: Mapping[str, Any], forbidden: Sequence[str]
) -> str:
    return sha256_hex(
        canonical_json({"case": case, "expected": expected, "forbidden": list(forbidden)})
    )


def packet_content_hash(packet: ReplayPacket) -> str:
    return case_content_hash(
        packet.case, packet.expected_outcome.model_dump(mode="json"), packet.forbidden_strings
    )


def write_replay_set(
    directory: Path, packets: Sequence[ReplayPacket], meta: Mapping[str, Any]
) -> dict[str, Any]:
    """Write cases.jsonl and manifest.json atomically; returns the manifest."""
    directory.mkdir(parents=True, exist_ok=True)
    lines = [canonical_json(p.model_dump(mode="json")) for p in packets]
    body = ("\n".join(lines) + "\n").encode("utf-8")
    hashes = {p.packet_id: packet_content_hash(p) for p in packets}
    if len(hashes) != len(packets):
        raise ReplaySetError("duplicate packet ids in one set")
    manifest = {
        **meta,
        "n_cases": len(packets),
        "file": CASES_FILE,
        "file_sha256": sha256_hex(body),
        "set_sha256": sha256_hex("".join(hashes.values())),
        "cases": hashes,
    }
    _atomic_write(directory / CASES_FILE, body)
    _atomic_write(directory / MANIFEST_FILE, (json.dumps(manifest, indent=1) + "\n").encode())
    return manifest


def _atomic_write(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)


def read_packets(directory: Path) -> list[ReplayPacket]:
    path = Path(directory) / CASES_FILE
    with path.open(encoding="utf-8") as fh:
        return [ReplayPacket.model_validate_json(line) for line in fh if line.strip()]


def packets_to_frame(packets: Sequence[ReplayPacket]) -> pd.DataFrame:
    """Flatten packets into the cases frame (CASE_COLUMNS), one row per case, input order.

    Case fields beyond CASE_COLUMNS are kept as extra columns after them (a harness gets every
    input its cases carry, not only the ones the kit knows)."""
    import pandas as pd

    rows = []
    extras: dict[str, None] = {}
    for p in packets:
        c = p.case
        props = p.expected_outcome.properties
        for key in c:
            if key not in CASE_COLUMNS:
                extras.setdefault(key, None)
        rows.append(
            {
                **{k: v for k, v in c.items() if k not in CASE_COLUMNS},
                "case_id": p.packet_id,
                "request": c["request"],
                "intent": c["intent"],
                "entities": tuple(c.get("entities", ())),
                "order_id": c.get("order_id", ""),
                "amount": float(c.get("amount", 0.0)),
                "days_since_delivery": int(c.get("days_since_delivery", 0)),
                "facts": dict(c.get("facts", {})),
                "evidence": list(c.get("evidence", [])),
                "injection": c.get("injection"),
                "edge_cases": tuple(c.get("edge_cases", ())),
                "expected_decision": p.expected_outcome.decision,
                "expected_skill": props.get("skill", ""),
                "key_evidence": tuple(props.get("key_evidence", ())),
                "forbidden_strings": tuple(p.forbidden_strings),
                "content_hash": packet_content_hash(p),
            }
        )
    return pd.DataFrame(rows, columns=[*CASE_COLUMNS, *extras])


def load_replay_set(directory: str | Path) -> tuple[pd.DataFrame, dict[str, Any]]:
    """(cases frame, manifest); refuses a set whose cases do not match the manifest."""
    directory = Path(directory)
    manifest = json.loads((directory / MANIFEST_FILE).read_text(encoding="utf-8"))
    frame = packets_to_frame(read_packets(directory))
    expected: dict[str, str] = manifest["cases"]
    actual = dict(zip(frame["case_id"], frame["content_hash"], strict=True))
    if actual != expected:
        drift = sorted(
            k for k in expected.keys() | actual.keys() if expected.get(k) != actual.get(k)
        )
        raise ReplaySetError(f"{directory}: cases differ from manifest: {', '.join(drift[:20])}")
    if sha256_hex("".join(actual.values())) != manifest["set_sha256"]:
        raise ReplaySetError(f"{directory}: set sha256 does not match the manifest")
    return frame, manifest


def check_disjoint(a: Mapping[str, str], b: Mapping[str, str]) -> None:
    """Raise ReplaySetOverlapError naming every shared case (same id or same content).

    `a` and `b` map case id -> content hash (a manifest's `cases`).
    """
    by_hash_b: dict[str, str] = {h: cid for cid, h in b.items()}
    shared: list[tuple[str, str]] = []
    for cid, h in a.items():
        if h in by_hash_b:
            shared.append((cid, by_hash_b[h]))
        elif cid in b:
            shared.append((cid, cid))
    if shared:
        raise ReplaySetOverlapError(sorted(shared))


def load_replay_pair(
    search_dir: str | Path, heldout_dir: str | Path
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Both sets, after proving they are disjoint."""
    search, m_search = load_replay_set(search_dir)
    heldout, m_heldout = load_replay_set(heldout_dir)
    check_disjoint(m_search["cases"], m_heldout["cases"])
    return search, heldout
