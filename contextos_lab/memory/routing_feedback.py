"""Seed 002's routing FeedbackStore: learned boosts per (normalised query, skill).

Each success adds `step` (the seed's DECAY_FACTOR, 0.1), each failure subtracts it; scores are
clamped to [MIN_SCORE, MAX_SCORE] = [-0.3, 0.3]. Every read decays the stored score by
TIME_DECAY_RATE (0.99, seed phase 40) and persists it, so advice nobody reinforces fades. The
store is JSON at `.memory/routing_feedback.json` (the seed's format) and survives restart.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path

DEFAULT_PATH = Path(".memory") / "routing_feedback.json"
#: Below this magnitude a decayed score is dropped (keeps the file from growing with dust).
_EPSILON = 1e-4
_WITH_DIGIT = re.compile(r"\S*\d\S*")
_NON_WORD = re.compile(r"[^a-z\s]+")
_SPACES = re.compile(r"\s+")


def normalize_query(query: str) -> str:
    """Lowercase, drop tokens with digits (order ids) and punctuation, collapse whitespace:
    one key per phrasing, whatever order it names."""
    text = _NON_WORD.sub(" ", _WITH_DIGIT.sub(" ", query.lower()))
    return _SPACES.sub(" ", text).strip()


class RoutingFeedbackStore:
    """Maps (normalised query, skill_id) -> score; positive boosts routing, negative penalises."""

    MIN_SCORE = -0.3
    MAX_SCORE = 0.3
    DECAY_FACTOR = 0.1
    TIME_DECAY_RATE = 0.99

    def __init__(
        self,
        path: str | Path | None = DEFAULT_PATH,
        *,
        step: float = DECAY_FACTOR,
        clamp: float = MAX_SCORE,
        decay: float = TIME_DECAY_RATE,
    ) -> None:
        """`path=None` keeps the store in memory (used to replay a bundled history)."""
        if not 0.0 < clamp <= 1.0 or step < 0.0 or not 0.0 < decay <= 1.0:
            raise ValueError("need step >= 0, 0 < clamp <= 1 and 0 < decay <= 1")
        self.path = Path(path) if path is not None else None
        self.step = step
        self.min_score, self.max_score = -clamp, clamp
        self.decay = decay
        self._data: dict[str, dict[str, float]] | None = None

    def _load(self) -> dict[str, dict[str, float]]:
        """Lazy load: a missing file is an empty store; a corrupt one is an error, not data loss."""
        if self._data is None:
            if self.path is not None and self.path.exists():
                raw = json.loads(self.path.read_text(encoding="utf-8"))
                self._data = {q: {s: float(v) for s, v in d.items()} for q, d in raw.items()}
            else:
                self._data = {}
        return self._data

    def _save(self) -> None:
        """Atomic write (temp file + rename) so a crash never leaves half a JSON file."""
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".routing_feedback.")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(self._load(), fh, indent=2, sort_keys=True)
        os.replace(tmp, self.path)

    def record_feedback(self, query: str, skill_id: str, success: bool) -> float:
        """Add +step on success, -step on failure, clamp, persist; returns the new score."""
        data = self._load()
        key = normalize_query(query)
        current = data.get(key, {}).get(skill_id, 0.0)
        delta = self.step if success else -self.step
        new = round(min(self.max_score, max(self.min_score, current + delta)), 10)
        data.setdefault(key, {})[skill_id] = new
        self._save()
        return new

    def get_boost(self, query: str, skill_id: str) -> float:
        """The learned boost, after this read's time decay (x0.99), which is persisted."""
        data = self._load()
        skills = data.get(normalize_query(query))
        if not skills or skill_id not in skills:
            return 0.0
        decayed = skills[skill_id] * self.decay
        if abs(decayed) < _EPSILON:
            del skills[skill_id]
            if not skills:
                del data[normalize_query(query)]
        else:
            skills[skill_id] = decayed
        self._save()
        return decayed

    def peek(self, query: str, skill_id: str) -> float:
        """The stored score without a read tick (for snapshots and inspection)."""
        return self._load().get(normalize_query(query), {}).get(skill_id, 0.0)

    def snapshot(self) -> dict[str, dict[str, float]]:
        """A copy of every stored score; reading it does not decay anything."""
        return {q: dict(s) for q, s in self._load().items()}


def explain_boost(boost: float) -> str:
    """The router's reasoning fragment (seed 002, step 3)."""
    if boost > 0:
        return f"(Reinforced by past success +{boost:.2f})"
    if boost < 0:
        return f"(Penalised by past failure {boost:.2f})"
    return ""
