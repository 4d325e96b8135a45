"""A harness that is an external program in any language, run through the feedback runner.

Protocol (`contextos-lab.harness/1`), one process per batch:

- stdin: one JSON document
  `{"protocol": "contextos-lab.harness/1", "config": {knob: value}, "cases": [{case inputs}, ...]}`
  plus, when the kit has them, `"seeds": [int per case]` (use them if you sample),
  `"max_concurrency": m` (cases this process may run at once) and `"case_timeout_s": t`.
  A case carries its inputs only, every field the kit does not know included; expectations
  (`expected_decision`, `key_evidence`, `forbidden_strings`, `assert`, ...: see
  `harness.case_inputs.EXPECTATION_FIELDS`) never leave the kit.
- stdout: one JSON object per case, one per line, with RunResult's fields (`case_id`,
  `decision`, `output_text`, `evidence_used`, `tokens`, `latency_ms`, optional `wall_ms`,
  `trace`, `error`). Order is free; every case must be answered exactly once. Logs go to stderr.
- exit code 0. Anything else (crash, timeout, a non-JSON stdout line, a missing or unknown
  case_id) fails the whole batch with a `HarnessFailure` naming the reason and the command
  record, so an Optuna study marks the trial failed instead of crashing.
- Surfaces: `argv + ["--surfaces"]` prints a JSON array of TunableSurface objects (no stdin),
  or an object `{"version": "1.2", "max_concurrency": m, "surfaces": [...]}`: `version` keys the
  result cache (bump it when the program changes what it answers; without it the program's
  files are hashed), `max_concurrency` is how many cases one process runs at once (default 1).
  Callers may pass the surfaces (a list, or a JSON file path) to the constructor instead.
- Concurrency: the kit runs up to `max_concurrency / m` processes at once on contiguous chunks.
- Timeouts: with a per-case deadline t, a process gets t x ceil(cases / m) + 5 s; when it is
  killed, the cases it answered keep their results and the rest are error rows (failed cases).

Every call is a `run_with_feedback` call, so each batch (each trial) has its command record;
the results frame carries that record's id in `frame.attrs["command_id"]`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
from pydantic import TypeAdapter, ValidationError

from contextos_lab.harness.case_inputs import inputs_only
from contextos_lab.harness.protocol import RESULT_COLUMNS, RunResult, TunableSurface
from contextos_lab.harness.runner import (
    CommandRecord,
    OutputLimits,
    RecordFile,
    first_validation_error,
    run_with_feedback,
)

PROTOCOL = "contextos-lab.harness/1"
SURFACES_FLAG = "--surfaces"

_SURFACES = TypeAdapter(list[TunableSurface])


class HarnessFailure(RuntimeError):
    """An external harness call produced no trustworthy results.

    `reason` is one line for a trial's user attrs; `record` is the command record of the
    (last) attempt, whose `command_id` leads to the retry chain. Catch this in a study
    (`study.optimize(..., catch=(HarnessFailure,))`) to mark the trial failed.
    """

    def __init__(self, reason: str, record: CommandRecord | None = None) -> None:
        self.reason = reason
        self.record = record
        suffix = f" [{record.command_id}]" if record is not None else ""
        super().__init__(f"{reason}{suffix}")

    def as_results(self, cases: pd.DataFrame) -> pd.DataFrame:
        """The failure as a results frame: every case errored with the reason."""
        rows = [
            RunResult(
                case_id=str(cid),
                decision="",
                output_text="",
                tokens=0,
                latency_ms=0,
                wall_ms=0,
                error=self.reason,
            ).model_dump()
            for cid in cases["case_id"]
        ]
        return _frame(rows, self.record)


def load_surfaces(source: str | Path | Sequence[Mapping[str, Any]]) -> list[TunableSurface]:
    """Surfaces from a JSON file path or from already-parsed JSON (a list of objects)."""
    if isinstance(source, (str, Path)):
        data = json.loads(Path(source).read_bytes())
        return _SURFACES.validate_python(data.get("surfaces") if isinstance(data, dict) else data)
    return _SURFACES.validate_python(list(source))


class SubprocessHarness:
    """Runs `argv` once per batch; see the module docstring for the wire protocol."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        name: str | None = None,
        surfaces: Sequence[TunableSurface] | str | Path | None = None,
        cwd: str | Path | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float | None = 60.0,
        retries: int = 0,
        record_file: RecordFile | str | Path | None = None,
        limits: OutputLimits | None = None,
        version: str | None = None,
        max_concurrency: int | None = None,
    ) -> None:
        if not argv:
            raise ValueError("SubprocessHarness needs a non-empty argv")
        if retries < 0:
            raise ValueError("retries must be >= 0")
        self.argv = tuple(str(a) for a in argv)
        self.name = name or Path(self.argv[-1]).name
        self.cwd = cwd
        self.env = env
        self.timeout = timeout
        self.retries = retries
        self.record_file = record_file
        self.limits = limits
        if isinstance(surfaces, (str, Path)):
            surfaces = load_surfaces(surfaces)
        self._surfaces: tuple[TunableSurface, ...] | None = (
            tuple(surfaces) if surfaces is not None else None
        )
        #: From the program's `--surfaces` object unless given here (see the module docstring).
        self.version = version
        self.per_process_concurrency = 1
        self._max_concurrency = max_concurrency

    # --- Harness protocol ------------------------------------------------------------------

    def tunable_surfaces(self) -> Sequence[TunableSurface]:
        if self._surfaces is None:
            self._surfaces = tuple(self._ask_surfaces())
        return self._surfaces

    def describe(self) -> None:
        """Ask the program once for its surfaces, version and concurrency (unless given)."""
        self.tunable_surfaces()

    @property
    def max_concurrency(self) -> int | None:
        """Cases in flight across processes (the spec's `max_concurrency` overrides it)."""
        return self._max_concurrency or (
            self.per_process_concurrency if self.per_process_concurrency > 1 else None
        )

    def run(self, case: Mapping[str, Any], config: Mapping[str, Any]) -> RunResult:
        frame = self.run_batch(pd.DataFrame([dict(case)]), config)
        return RunResult.model_validate(frame.to_dict(orient="records")[0])

    def run_batch(
        self,
        cases: pd.DataFrame,
        config: Mapping[str, Any],
        seeds: Sequence[int] | None = None,
        case_timeout_s: float | None = None,
    ) -> pd.DataFrame:
        frame, _ = self.run_batch_recorded(
            cases, config, seeds=seeds, case_timeout_s=case_timeout_s
        )
        return frame

    def chunk_timeout_s(self, n_cases: int, case_timeout_s: float) -> float:
        """A process's deadline: each case's, times the rounds it needs, plus start-up."""
        rounds = -(-n_cases // max(self.per_process_concurrency, 1))
        return case_timeout_s * rounds + 5.0

    # --- the real work ---------------------------------------------------------------------

    def run_batch_recorded(
        self,
        cases: pd.DataFrame,
        config: Mapping[str, Any],
        note: str | None = None,
        *,
        seeds: Sequence[int] | None = None,
        case_timeout_s: float | None = None,
    ) -> tuple[pd.DataFrame, CommandRecord]:
        """Results (RESULT_COLUMNS, input order) and the command record of the attempt used.

        Retries (`retries=N`) chain their records through `parent_command_id`.
        Raises HarnessFailure when the last attempt fails; with `case_timeout_s`, a process
        killed at its deadline is not a failure: unanswered cases come back as error rows.
        """
        if "case_id" not in cases.columns:
            raise ValueError("cases frame needs a case_id column")
        case_ids = [str(c) for c in cases["case_id"]]
        if len(set(case_ids)) != len(case_ids):
            raise ValueError("cases frame has duplicate case_id values")
        request: dict[str, Any] = {
            "protocol": PROTOCOL,
            "config": dict(config),
            "cases": _cases_json(inputs_only(cases)),
        }
        if seeds is not None:
            request["seeds"] = [int(s) for s in seeds]
        timeout = self.timeout
        if case_timeout_s is not None:
            request["max_concurrency"] = self.per_process_concurrency
            request["case_timeout_s"] = case_timeout_s
            timeout = self.chunk_timeout_s(len(case_ids), case_timeout_s)
        payload = json.dumps(request, default=_json_default, allow_nan=False).encode("utf-8")
        note = note or f"{self.name}: expect {len(case_ids)} result lines, exit 0"
        parent: str | None = None
        for attempt in range(self.retries + 1):
            parser = _ResultParser()
            record = run_with_feedback(
                self.argv,
                cwd=self.cwd,
                note=note,
                timeout=timeout,
                parent_command_id=parent,
                record_file=self.record_file,
                stdin=payload,
                env=self.env,
                on_stdout_line=parser.feed,
                limits=self.limits,
            )
            if record.timed_out and case_timeout_s is not None and parser.problem is None:
                return _frame(parser.partial(case_ids, record), record), record
            try:
                rows = parser.finish(record, case_ids)
            except HarnessFailure as failure:
                if attempt == self.retries:
                    raise
                parent = failure.record.command_id if failure.record else None
                continue
            return _frame(rows, record), record
        raise AssertionError("unreachable")  # pragma: no cover

    def _ask_surfaces(self) -> list[TunableSurface]:
        lines: list[str] = []
        record = run_with_feedback(
            [*self.argv, SURFACES_FLAG],
            cwd=self.cwd,
            note=f"{self.name}: expect a JSON array of tunable surfaces",
            timeout=self.timeout,
            record_file=self.record_file,
            env=self.env,
            on_stdout_line=lines.append,
            limits=self.limits,
        )
        _check_exit(record)
        text = "\n".join(lines)
        try:
            described = json.loads(text)
        except json.JSONDecodeError as exc:
            raise HarnessFailure(f"malformed surfaces: not JSON ({exc.msg})", record) from exc
        if isinstance(described, dict):
            self.version = self.version or _opt_str(described.get("version"))
            m = described.get("max_concurrency")
            if isinstance(m, int) and not isinstance(m, bool) and m >= 1:
                self.per_process_concurrency = m
            described = described.get("surfaces")
        try:
            return _SURFACES.validate_python(described)
        except ValidationError as exc:
            reason = f"malformed surfaces: {first_validation_error(exc)}"
            raise HarnessFailure(reason, record) from exc

    def __repr__(self) -> str:
        return f"SubprocessHarness({list(self.argv)!r}, name={self.name!r})"


class _ResultParser:
    """Parses result lines as they stream in; keeps the first problem, not the whole output."""

    def __init__(self) -> None:
        self.rows: dict[str, dict[str, Any]] = {}
        self.problem: str | None = None
        self.line_no = 0

    def feed(self, line: str) -> None:
        self.line_no += 1
        if self.problem is not None or not line.strip():
            return
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            self.problem = f"malformed JSON on stdout line {self.line_no}: {exc.msg}"
            return
        if not isinstance(obj, dict):
            self.problem = f"stdout line {self.line_no} is not a JSON object"
            return
        obj.setdefault("wall_ms", 0.0)
        try:
            result = RunResult.model_validate(obj)
        except ValidationError as exc:
            detail = first_validation_error(exc)
            self.problem = f"invalid result on stdout line {self.line_no}: {detail}"
            return
        if result.case_id in self.rows:
            self.problem = f"case {result.case_id!r} answered twice (line {self.line_no})"
            return
        self.rows[result.case_id] = result.model_dump()

    def partial(self, case_ids: Sequence[str], record: CommandRecord) -> list[dict[str, Any]]:
        """After a deadline kill: answered cases as answered, the others as error rows."""
        reason = f"no answer before the process deadline ({record.error})"
        return [
            self.rows.get(c)
            or RunResult(
                case_id=c, decision="", output_text="", tokens=0, latency_ms=0, wall_ms=0,
                error=reason,
            ).model_dump()
            for c in case_ids
        ]  # fmt: skip

    def finish(self, record: CommandRecord, case_ids: Sequence[str]) -> list[dict[str, Any]]:
        _check_exit(record)
        if self.problem is not None:
            raise HarnessFailure(self.problem, record)
        unknown = sorted(set(self.rows) - set(case_ids))
        if unknown:
            raise HarnessFailure(f"results for unknown case ids: {unknown[:5]}", record)
        missing = [c for c in case_ids if c not in self.rows]
        if missing:
            raise HarnessFailure(
                f"no result for {len(missing)} of {len(case_ids)} cases (first: {missing[0]!r})",
                record,
            )
        share = record.duration_ms / max(len(case_ids), 1)
        rows = [self.rows[c] for c in case_ids]
        for row in rows:
            if not row["wall_ms"]:
                row["wall_ms"] = share
        return rows


def _opt_str(value: Any) -> str | None:
    return str(value) if value not in (None, "") else None


def _check_exit(record: CommandRecord) -> None:
    if record.timed_out:
        raise HarnessFailure(f"harness hung: {record.error}", record)
    if record.exit_code is None:
        raise HarnessFailure(f"harness did not run: {record.error}", record)
    if record.exit_code != 0:
        last = record.stderr_tail.rsplit("\n", 1)[-1] if record.stderr_tail else ""
        tail = f" (stderr: {last[:200]})" if last else ""
        raise HarnessFailure(f"harness exited with code {record.exit_code}{tail}", record)
    if record.error is not None:
        raise HarnessFailure(f"harness run error: {record.error}", record)


def _frame(rows: list[dict[str, Any]], record: CommandRecord | None) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=list(RESULT_COLUMNS))
    if record is not None:
        frame.attrs["command_id"] = record.command_id
    return frame


def _cases_json(cases: pd.DataFrame) -> list[dict[str, Any]]:
    """Rows as plain JSON values (NaN -> null, timestamps -> ISO strings, numpy -> Python)."""
    return json.loads(cases.to_json(orient="records", date_format="iso", force_ascii=False))


def _json_default(value: Any) -> Any:
    if hasattr(value, "item"):  # numpy scalar
        value = value.item()
        return None if isinstance(value, float) and math.isnan(value) else value
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    if hasattr(value, "isoformat"):
        return value.isoformat()
    raise TypeError(f"config value of type {type(value).__name__} is not JSON-serialisable")
