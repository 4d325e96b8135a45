"""A harness that is an external program in any language, run through the feedback runner.

Protocol (`contextos-lab.harness/1`), by default one process per batch (chunk of cases):

- stdin: one JSON document
  `{"protocol": "contextos-lab.harness/1", "config": {knob: value}, "cases": [{case inputs}, ...]}`
  plus, when the kit has them, `"seeds": [int per case]` (use them if you sample),
  `"max_concurrency": m` (cases this process may run at once) and `"case_timeout_s": t`.
  A case carries its declared inputs only (`harness.case_inputs`): never an answer key.
- stdout: one JSON object per case, one per line, with RunResult's fields (`case_id`,
  `decision`, `output_text`, `evidence_used`, `tokens`, `tokens_out`, `latency_ms`, optional
  `wall_ms`, `trace`, `error`, `cost_usd`); any other field is kept under `attributes`.
  Order is free; every case must be answered exactly once. Logs go to stderr.
- exit code 0. Each valid line answers its case even when another line is bad, the process
  crashes or it is killed at its deadline: the unanswered cases become error rows (no latency,
  no cost) naming the reason. A line that breaks the protocol (not JSON, a wrong type, an
  unknown or repeated id, a missing answer after exit 0) is a "harness protocol error"
  (deterministic: never retried). Only a batch with no valid answer at all raises
  `HarnessFailure`, so an Optuna study marks the trial failed instead of crashing.
- Persistent (`program.persistent`): a program whose `--surfaces` object says
  `"persistent": true` (or `persistent=True` here) is started once per worker and reads one
  request per stdin line, answering each with its result lines then `{"batch_done": n}`.
- Surfaces: `argv + ["--surfaces"]` prints a JSON array of TunableSurface objects (no stdin),
  or an object `{"version": "1.2", "max_concurrency": m, "persistent": bool, "surfaces": [...]}`:
  `version` keys the result cache (bump it when the program changes what it answers; without
  it the program's files are hashed), `max_concurrency` is how many cases one process runs at
  once (default 1). Callers may pass the surfaces (a list, or a JSON file path) instead.
- Environment: `env` is merged over the kit's (`env_clear=True` starts from nothing).
- Concurrency: the kit runs up to `max_concurrency / m` processes at once on contiguous chunks.
- Timeouts: with a per-case deadline t, a batch gets t x ceil(cases / m) + 5 s.

Every call has its command record; the results frame carries that record's id in
`frame.attrs["command_id"]`.
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
from pydantic import TypeAdapter, ValidationError

from contextos_lab.errors import EXIT_HARNESS, EXIT_PROTOCOL, ContextosError
from contextos_lab.harness.base import BaseHarness, source_digest
from contextos_lab.harness.case_inputs import inputs_only
from contextos_lab.harness.program.environment import command_digest, effective_env
from contextos_lab.harness.program.persistent import PersistentPool
from contextos_lab.harness.program.result_lines import (
    PROTOCOL_ERROR,
    ResultLines,
    error_result,
    nan_to_none,
)
from contextos_lab.harness.program.stderr_reason import error_line
from contextos_lab.harness.protocol import RESULT_COLUMNS, Fault, RunResult
from contextos_lab.harness.runner import (
    CommandRecord,
    OutputLimits,
    RecordFile,
    first_validation_error,
    run_with_feedback,
)
from contextos_lab.schemas.base import canonical_json
from contextos_lab.schemas.surface import TunableSurface

PROTOCOL = "contextos-lab.harness/1"
SURFACES_FLAG = "--surfaces"

_SURFACES = TypeAdapter(list[TunableSurface])


class HarnessFailure(ContextosError, RuntimeError):
    """An external harness call produced no trustworthy results.

    `reason` is one line for a trial's user attrs; `record` is the command record of the
    (last) attempt, whose `command_id` leads to the retry chain. Catch this in a study
    (`study.optimize(..., catch=(HarnessFailure,))`) to mark the trial failed.
    """

    exit_code = EXIT_HARNESS

    def __init__(
        self, reason: str, record: CommandRecord | None = None, *, protocol: bool = False
    ) -> None:
        self.reason = reason
        self.record = record
        #: A protocol violation is deterministic: retrying the same request cannot help.
        self.protocol = protocol
        suffix = f" [{record.command_id}]" if record is not None else ""
        super().__init__(f"{reason}{suffix}", code=EXIT_PROTOCOL if protocol else None)

    def as_results(self, cases: pd.DataFrame) -> pd.DataFrame:
        """The failure as a results frame: every case errored with the reason."""
        fault = Fault.protocol if self.protocol else None
        rows = [error_result(str(c), self.reason, fault) for c in cases["case_id"]]
        return _frame(rows, self.record)


def load_surfaces(source: str | Path | Sequence[Mapping[str, Any]]) -> list[TunableSurface]:
    """Surfaces from a JSON file path or from already-parsed JSON (a list of objects)."""
    if isinstance(source, (str, Path)):
        data = json.loads(Path(source).read_bytes())
        return _SURFACES.validate_python(data.get("surfaces") if isinstance(data, dict) else data)
    return _SURFACES.validate_python(list(source))


class SubprocessHarness(BaseHarness):
    """Runs `argv` once per batch; see the module docstring for the wire protocol."""

    batched = True

    def __init__(
        self,
        argv: Sequence[str],
        *,
        name: str | None = None,
        surfaces: Sequence[TunableSurface] | str | Path | None = None,
        cwd: str | Path | None = None,
        env: Mapping[str, str] | None = None,
        env_clear: bool = False,
        timeout: float | None = 60.0,
        retries: int = 0,
        record_file: RecordFile | str | Path | None = None,
        limits: OutputLimits | None = None,
        version: str | None = None,
        max_concurrency: int | None = None,
        persistent: bool | None = None,
        input_fields: Sequence[str] | None = None,
    ) -> None:
        if not argv:
            raise ValueError("SubprocessHarness needs a non-empty argv")
        if retries < 0:
            raise ValueError("retries must be >= 0")
        self.argv = tuple(str(a) for a in argv)
        self.name = name or Path(self.argv[-1]).name
        self.cwd = cwd
        #: What the spec declared (keys the cache); the program gets `_run_env`.
        self.env = dict(env) if env is not None else None
        self.env_clear = bool(env_clear)
        self._run_env = effective_env(self.env, self.env_clear)
        #: Case fields the program may see beyond `case_id` (None: the case set's declared
        #: inputs; `harness.case_inputs`).
        self.input_fields = tuple(input_fields) if input_fields is not None else None
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
        #: Cases in flight across processes (the spec's `max_concurrency` overrides it): as
        #: given, else the program's own `max_concurrency` when it runs more than one at once.
        self.max_concurrency = max_concurrency
        #: From the program's `--surfaces` object unless given here.
        self.persistent = persistent
        self._pool: PersistentPool | None = None
        self._pool_lock = threading.Lock()

    @property
    def command_digest(self) -> str:
        """Hash of argv and the declared environment (part of the result-cache key)."""
        return command_digest(self.argv, self.env, self.env_clear)

    def close(self) -> None:
        """Stop the persistent processes (also done at interpreter exit)."""
        if self._pool is not None:
            self._pool.close()

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_pool"], state["_pool_lock"] = None, None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._pool_lock = threading.Lock()

    # --- Harness protocol ------------------------------------------------------------------

    def tunable_surfaces(self) -> Sequence[TunableSurface]:
        if self._surfaces is None:
            self._surfaces = tuple(self._ask_surfaces())
        return self._surfaces

    def describe(self) -> None:
        """Ask the program once for its surfaces, version and concurrency (unless given)."""
        self.tunable_surfaces()

    def cache_identity(self) -> str:
        """The declared version, else a hash of argv and the program files it names; plus
        `command_digest`: another argv or `MODEL=` in the spec is another harness."""
        suffix = f"+cmd:{self.command_digest}"
        if self.version:
            return str(self.version) + suffix
        files = [Path(a) for a in self.argv if Path(a).is_file()]
        prefix = canonical_json(list(self.argv)).encode()
        return "src:" + source_digest(type(self), files, prefix) + suffix

    def declare_inputs(self, fields: Sequence[str]) -> None:
        """The allow-list of case fields sent to the program, unless built with one."""
        if self.input_fields is None:
            self.input_fields = tuple(fields)

    def batch_deadline_s(self, n_cases: int, case_timeout_s: float) -> float:
        """The program is killed at its own deadline (`chunk_timeout_s`) and keeps what it
        answered; the kit's wait is a backstop behind it."""
        return self.chunk_timeout_s(n_cases, case_timeout_s) + 5.0

    def run(
        self, case: Mapping[str, Any], config: Mapping[str, Any], seed: int | None = None
    ) -> RunResult:
        seeds = None if seed is None else [seed]
        frame = self.run_batch(pd.DataFrame([dict(case)]), config, seeds=seeds)
        return RunResult.model_validate(nan_to_none(frame.to_dict(orient="records")[0]))

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

        Valid answers are kept whatever else went wrong; unanswered cases are error rows.
        Retries (`retries=N`, never for a protocol error) chain their records through
        `parent_command_id`. Raises HarnessFailure when the last attempt answered nothing.
        """
        case_ids = _unique_ids(cases)
        payload, timeout = self._request(cases, config, seeds, case_timeout_s)
        note = note or f"{self.name}: expect {len(case_ids)} result lines, exit 0"
        parent: str | None = None
        for attempt in range(self.retries + 1):
            lines, record, failure = self._attempt(payload, case_ids, timeout, note, parent)
            if failure is None and lines.complete(case_ids):
                share = record.duration_ms / max(len(case_ids), 1)
                return _frame(lines.rows_for(case_ids, "", share), record), record
            killed_at_deadline = record.timed_out and case_timeout_s is not None
            if failure is not None and not killed_at_deadline and attempt < self.retries:
                parent = record.command_id  # retryable: never a protocol fault
                continue
            return self._partial(case_ids, lines, record, failure, killed_at_deadline), record
        raise AssertionError("unreachable")  # pragma: no cover

    def _request(
        self,
        cases: pd.DataFrame,
        config: Mapping[str, Any],
        seeds: Sequence[int] | None,
        case_timeout_s: float | None,
    ) -> tuple[str, float | None]:
        """The batch's stdin document, serialised, and the process's deadline."""
        request: dict[str, Any] = {
            "protocol": PROTOCOL,
            "config": dict(config),
            "cases": _cases_json(inputs_only(cases, self.input_fields)),
        }
        if seeds is not None:
            request["seeds"] = [int(s) for s in seeds]
        timeout = self.timeout
        if case_timeout_s is not None:
            request["max_concurrency"] = self.per_process_concurrency
            request["case_timeout_s"] = case_timeout_s
            timeout = self.chunk_timeout_s(len(cases), case_timeout_s)
        return json.dumps(request, default=_json_default, allow_nan=False), timeout

    def _partial(
        self,
        case_ids: Sequence[str],
        lines: ResultLines,
        record: CommandRecord,
        failure: str | None,
        killed_at_deadline: bool,
    ) -> pd.DataFrame:
        """The last attempt's answers, the unanswered cases as error rows. A process that
        exited 0 but broke the protocol or left cases unanswered is a protocol fault, typed
        on its rows (`Fault.protocol`). Raises HarnessFailure when nothing was answered."""
        fault = Fault.protocol if failure is None else None
        if failure is None:
            missing = [c for c in case_ids if c not in lines.rows]
            detail = lines.first_problem or (
                f"no result for {len(missing)} of {len(case_ids)} cases (first: {missing[0]!r})"
            )
            failure = missing_reason = f"{PROTOCOL_ERROR}: {detail}"
        elif killed_at_deadline:
            missing_reason = f"no answer before the process deadline ({record.error})"
        else:
            missing_reason = failure
        if not lines.rows and not killed_at_deadline:
            raise HarnessFailure(failure, record, protocol=fault is Fault.protocol)
        share = record.duration_ms / max(len(case_ids), 1)
        return _frame(lines.rows_for(case_ids, missing_reason, share, fault), record)

    def _attempt(
        self,
        payload: str,
        case_ids: Sequence[str],
        timeout: float | None,
        note: str,
        parent: str | None,
    ) -> tuple[ResultLines, CommandRecord, str | None]:
        """One run of the batch: its parsed lines, record, and process failure (or None)."""
        if self.persistent:
            with self._pool_lock:
                if self._pool is None:
                    self._pool = PersistentPool(
                        self.argv, cwd=self.cwd, env=self._run_env,
                        record_file=self.record_file, limits=self.limits,
                    )  # fmt: skip
            done = self._pool.exchange(payload, case_ids, timeout, note, parent)
            return done.lines, done.record, done.failure
        lines = ResultLines(case_ids)
        record = run_with_feedback(
            self.argv,
            cwd=self.cwd,
            note=note,
            timeout=timeout,
            parent_command_id=parent,
            record_file=self.record_file,
            stdin=payload.encode("utf-8"),
            env=self._run_env,
            on_stdout_line=lines.feed,
            limits=self.limits,
        )
        return lines, record, _process_failure(record)

    def _ask_surfaces(self) -> list[TunableSurface]:
        lines: list[str] = []
        record = run_with_feedback(
            [*self.argv, SURFACES_FLAG],
            cwd=self.cwd,
            note=f"{self.name}: expect a JSON array of tunable surfaces",
            timeout=self.timeout,
            record_file=self.record_file,
            env=self._run_env,
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
                if self.max_concurrency is None and m > 1:
                    self.max_concurrency = m
            if self.persistent is None and isinstance(described.get("persistent"), bool):
                self.persistent = described["persistent"]
            described = described.get("surfaces")
        try:
            return _SURFACES.validate_python(described)
        except ValidationError as exc:
            reason = f"malformed surfaces: {first_validation_error(exc)}"
            raise HarnessFailure(reason, record) from exc

    def __repr__(self) -> str:
        return f"SubprocessHarness({list(self.argv)!r}, name={self.name!r})"


def _opt_str(value: Any) -> str | None:
    return str(value) if value not in (None, "") else None


def _process_failure(record: CommandRecord) -> str | None:
    """Why a one-shot process did not end well (None: it exited 0 without a runner error)."""
    if record.timed_out:
        return f"harness hung: {record.error}"
    if record.exit_code is None:
        return f"harness did not run: {record.error}"
    if record.exit_code != 0:
        named = error_line(record.stderr_tail)
        tail = f" (stderr: {named})" if named else ""
        return f"harness exited with code {record.exit_code}{tail}"
    if record.error is not None:
        return f"harness run error: {record.error}"
    return None


def _unique_ids(cases: pd.DataFrame) -> list[str]:
    if "case_id" not in cases.columns:
        raise ValueError("cases frame needs a case_id column")
    case_ids = [str(c) for c in cases["case_id"]]
    if len(set(case_ids)) != len(case_ids):
        raise ValueError("cases frame has duplicate case_id values")
    return case_ids


def _check_exit(record: CommandRecord) -> None:
    failure = _process_failure(record)
    if failure is not None:
        raise HarnessFailure(failure, record)


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
