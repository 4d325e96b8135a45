"""Result lines a program prints, parsed one by one so one bad line costs one case, not all.

Each valid line answers its case. A line that breaks the protocol (not JSON, not an object, a
wrong type, an unknown or repeated case id) is a *protocol error*: it is recorded, the case it
names (when it names one) becomes an error row saying so (`fault` = `Fault.protocol`, typed
where the fault is detected), and every other answered case keeps its result. Fields beyond
RunResult's are kept under `attributes`; `cost_usd`, when present, is the case's cost.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError

from contextos_lab.harness.command_record import first_validation_error
from contextos_lab.harness.protocol import Fault, RunResult

#: Every reason that comes from a broken protocol starts so, for the reader; decisions read
#: the row's typed `fault` instead.
PROTOCOL_ERROR = "harness protocol error"
#: Fields a program's line fills; `fault` is the kit's judgement, so a program's own `fault`
#: key is kept under `attributes` like any other extra field.
_KNOWN = frozenset(RunResult.model_fields) - {"attributes", "fault"}


def error_result(case_id: str, reason: str, fault: Fault | None = None) -> dict[str, Any]:
    """An errored run: no answer, no latency, no cost (missing, never 0)."""
    return RunResult(
        case_id=case_id, decision="", output_text="", tokens=0, latency_ms=None, wall_ms=0,
        error=reason, fault=fault,
    ).model_dump()  # fmt: skip


class ResultLines:
    """Feed stdout lines as they come; `rows` gives every expected case a row."""

    def __init__(self, case_ids: Sequence[str]) -> None:
        self.expected = frozenset(case_ids)
        self.rows: dict[str, dict[str, Any]] = {}
        self.refused: dict[str, str] = {}  # case id -> why its line was refused
        self.problems: list[str] = []
        self.line_no = 0

    @property
    def first_problem(self) -> str | None:
        return self.problems[0] if self.problems else None

    def feed(self, line: str) -> None:
        self.line_no += 1
        if not line.strip():
            return
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            self._problem(None, f"malformed JSON on stdout line {self.line_no}: {exc.msg}")
            return
        if not isinstance(obj, dict):
            self._problem(None, f"stdout line {self.line_no} is not a JSON object")
            return
        self.take(obj)

    def take(self, obj: dict[str, Any]) -> None:
        """One parsed result object (the persistent reader parses lines itself)."""
        raw_id = obj.get("case_id")
        case_id = str(raw_id) if isinstance(raw_id, (str, int)) else None
        if case_id is not None and case_id not in self.expected:
            self._problem(None, f"result for unknown case id {case_id!r} (line {self.line_no})")
            return
        if case_id is not None and (case_id in self.rows or case_id in self.refused):
            self._problem(None, f"case {case_id!r} answered twice (line {self.line_no})")
            return
        known = {k: v for k, v in obj.items() if k in _KNOWN}
        extra = {k: v for k, v in obj.items() if k not in _KNOWN}
        known.setdefault("wall_ms", 0.0)
        if known.get("error"):
            known["latency_ms"] = None  # an errored run has no latency (it is not 0)
        try:
            result = RunResult.model_validate({**known, "attributes": extra})
        except ValidationError as exc:
            detail = first_validation_error(exc)
            self._problem(case_id, f"invalid result on stdout line {self.line_no}: {detail}")
            return
        if result.latency_ms is None and not result.error:
            where = f"stdout line {self.line_no}"
            self._problem(case_id, f"invalid result on {where}: latency_ms: missing (null)")
            return
        self.rows[result.case_id] = result.model_dump()

    def _problem(self, case_id: str | None, reason: str) -> None:
        self.problems.append(reason)
        if case_id is not None and case_id not in self.rows:
            self.refused[case_id] = f"{PROTOCOL_ERROR}: {reason}"

    def complete(self, case_ids: Sequence[str]) -> bool:
        return not self.problems and all(c in self.rows for c in case_ids)

    def rows_for(
        self,
        case_ids: Sequence[str],
        missing_reason: str,
        share_ms: float = 0.0,
        missing_fault: Fault | None = None,
    ) -> list[dict[str, Any]]:
        """A row per case in order: answered, refused (a protocol fault), or missing (with
        `missing_fault` when the caller knows why it is missing)."""
        out = []
        for c in case_ids:
            row = self.rows.get(c)
            if row is None:
                refused = self.refused.get(c)
                if refused is not None:
                    out.append(error_result(c, refused, Fault.protocol))
                else:
                    out.append(error_result(c, missing_reason, missing_fault))
                continue
            if not row["wall_ms"]:
                row["wall_ms"] = share_ms
            out.append(row)
        return out


def nan_to_none(row: dict[str, Any]) -> dict[str, Any]:
    """A frame row back to RunResult's fields (pandas turns a missing latency into NaN)."""
    return {k: None if isinstance(v, float) and math.isnan(v) else v for k, v in row.items()}
