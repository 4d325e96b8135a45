"""Artifact ids in the seeds' shapes: `fb_2026_05_09_a17`, `ins_a17`, `str_2026_05_04_b03`, ...

An id is `<prefix>_[YYYY_MM_DD_]<suffix>` with a lowercase alphanumeric suffix. Ids made from
content (`seed=`) are deterministic, so re-deriving an artifact from the same inputs yields the
same id and the store can tell a repeat from a new fact.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from datetime import UTC, datetime
from typing import Annotated

from pydantic import AfterValidator

PREFIXES: dict[str, str] = {
    "feedback": "fb",
    "decision_record": "dr",
    "insight": "ins",
    "strategy_proposal": "sp",
    "strategy_rule": "str",
    "research_task": "rq",
    "tuning_proposal": "at",
    "note": "cs",
    "replay_verdict": "rv",
    "scorecard": "sc",
    "replay_packet": "rp",
    "evaluation_run": "eval",
    "preference": "pf",
}

_SUFFIX = r"[a-z0-9]+"


def id_pattern(prefix: str) -> re.Pattern[str]:
    # `\Z`, not `$`: `$` also matches before a trailing newline, so `dr_x\n` would pass.
    return re.compile(rf"\A{re.escape(prefix)}_(?:\d{{4}}_\d{{2}}_\d{{2}}_)?{_SUFFIX}\Z")


def new_id(prefix: str, at: datetime | None = None, seed: str | bytes | None = None) -> str:
    """A fresh id; with `seed`, the suffix is derived from it (same seed, same id). Data with
    no clock (`NO_CLOCK`) gets no date part: `ins_1970_01_01_...` would read as a real date."""
    from contextos_lab.schemas.clock import NO_CLOCK

    at = at or datetime.now(UTC)
    if seed is None:
        suffix = secrets.token_hex(4)
    else:
        raw = seed.encode("utf-8") if isinstance(seed, str) else seed
        suffix = hashlib.sha256(raw).hexdigest()[:10]
    if at == NO_CLOCK:
        return f"{prefix}_{suffix}"
    return f"{prefix}_{at.strftime('%Y_%m_%d')}_{suffix}"


def _checker(prefix: str):
    pattern = id_pattern(prefix)

    def check(value: str) -> str:
        if not pattern.match(value):
            raise ValueError(
                f"id {value!r} does not have the shape {prefix}_[YYYY_MM_DD_]<a-z0-9 suffix>"
            )
        return value

    return check


def IdOf(prefix: str):  # untyped on purpose: it returns a type, not a value
    """Annotated `str` that must carry the given prefix shape."""
    return Annotated[str, id_check(prefix)]


def id_check(prefix: str) -> AfterValidator:
    """The validator `IdOf` attaches; `Annotated[str, id_check(p)]` is the spelling a type
    checker reads as a type (a call's result is a value to it)."""
    return AfterValidator(_checker(prefix))


FeedbackId = IdOf("fb")
PreferenceId = IdOf("pf")
DecisionRecordId = IdOf("dr")
InsightId = IdOf("ins")
StrategyProposalId = IdOf("sp")
StrategyRuleId = IdOf("str")
ResearchTaskId = IdOf("rq")
TuningProposalId = IdOf("at")
NoteId = IdOf("cs")
ReplayVerdictId = IdOf("rv")
