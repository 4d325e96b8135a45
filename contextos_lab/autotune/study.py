"""Create or resume an Optuna study for a run spec and drive it with one or more workers.

Storage URLs (`--storage`):
  * none given        -> `sqlite:///<out>/study.db` (one file beside the results)
  * `sqlite:///p.db`, `postgresql://...`, `mysql://...` -> Optuna RDBStorage (any SQLAlchemy URL)
  * `journal:///abs/path.log`, `journal:rel/path.log`, or any bare path ending `.log` or
    `.journal` -> JournalStorage over a JournalFileBackend (cheapest per trial on one machine)
  * `memory`          -> in-process only (notebook smoke runs; one worker)

Resuming: the same study name on the same storage continues the study. Finished trials are
kept; trials left RUNNING by a dead worker on this host (its pid is gone) are marked FAIL with
`interrupted` and do not count toward the budget, so a killed sweep ends with its full budget.
Workers on other hosts are never touched. Failed trials (harness errors) count toward the budget
and are recorded with `fail_reason`; nothing is retried silently.

Workers: `workers=N` runs N processes (spawned, so nothing inherits a live database handle),
each calling ask/tell on the same study until the budget is spent.

Budget across processes: the budget is the study's, counted in its storage (as Optuna's
`MaxTrialsCallback` counts), so any number of `search` processes and workers on one study stop
at it together. A trial is run only if its rank among the study's counted trials (by trial
number, which the storage assigns atomically) is within the budget; a trial asked for past it
by a concurrent process is closed at once as FAIL with `over_budget` and never counted, so the
study ends with exactly its budget of counted trials. Processes starting a new study together
all wait for one baseline trial.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import logging
import multiprocessing as mp
import os
import socket
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import optuna
from optuna.storages import BaseStorage, InMemoryStorage, JournalStorage, RDBStorage
from optuna.storages.journal import JournalFileBackend
from optuna.trial import TrialState
from tqdm import tqdm

from contextos_lab.autotune.context import RunContext, rebuild
from contextos_lab.autotune.objective import HarnessFailure, run_trial, worker_id
from contextos_lab.autotune.sampler_config import SamplerConfig
from contextos_lab.errors import EXIT_STORAGE, EXIT_USAGE, Unreachable
from contextos_lab.schemas.base import canonical_json, sha256_hex
from contextos_lab.store.db_url import STORAGE_ENV, sqlalchemy_url

log = logging.getLogger(__name__)

#: Spec fields that define the problem; a resumed study must agree on all of them.
PROBLEM_FIELDS: tuple[str, ...] = (
    "harness",
    "harness_kwargs",
    "evaluate",
    "target",
    "guardrails",
    "baseline_tuple",
    "tunable_surfaces",
    "search_set",
    "objectives",
)
COUNTED_STATES = (TrialState.COMPLETE, TrialState.FAIL, TrialState.PRUNED, TrialState.RUNNING)


class StorageUnreachable(Unreachable, RuntimeError):
    """The study storage cannot be opened. `code` 2 (`EXIT_USAGE`) when the URL cannot work as
    given (unknown scheme, missing folder, driver not installed), 3 when a server does not
    answer (`errors` has the table)."""


class HarnessUnreachable(RuntimeError):
    """The baseline trial could not run: no study trial should start against this harness."""


class StudyMismatch(RuntimeError):
    """A study of that name exists but was created from a different problem definition."""


# -- storage ----------------------------------------------------------------------------------


def default_storage_url(out_dir: str | Path) -> str:
    """`$CONTEXTOS_STORAGE_URL` (a team's shared server), else a SQLite file in `out_dir`."""
    return os.environ.get(STORAGE_ENV) or f"sqlite:///{Path(out_dir).resolve() / 'study.db'}"


def journal_path(url: str) -> str | None:
    """The journal file a URL names, or None when it is not a journal URL."""
    if url.startswith("journal:"):
        rest = url.removeprefix("journal:")
        return rest[2:] if rest.startswith("//") else rest
    if "://" not in url and url.endswith((".log", ".journal")):
        return url
    return None


def redact(url: str) -> str:
    """The URL with any password hidden (for error messages and results files)."""
    if "://" not in url or "@" not in url:
        return url
    scheme, rest = url.split("://", 1)
    creds, host = rest.rsplit("@", 1)
    if ":" not in creds:  # no password to hide
        return url
    user = creds.split(":", 1)[0]
    return f"{scheme}://{user}:***@{host}"


def open_storage(url: str) -> BaseStorage:
    """An Optuna storage for `url`, or StorageUnreachable saying which and why."""
    if url in ("memory", ":memory:"):
        return InMemoryStorage()
    path = journal_path(url)
    try:
        if path is not None:
            parent = Path(path).resolve().parent
            if not parent.is_dir():
                raise FileNotFoundError(f"folder {parent} does not exist")
            _repair_journal_tail(Path(path))
            return JournalStorage(_FlushedJournalFileBackend(path))
        engine_kwargs: dict[str, Any] = {}
        if url.startswith("sqlite"):
            db = url.split(":///", 1)[-1]
            if db and db != ":memory:" and not Path(db).resolve().parent.is_dir():
                raise FileNotFoundError(f"folder {Path(db).resolve().parent} does not exist")
            # Several worker processes write one file: wait for the lock instead of failing.
            engine_kwargs = {"connect_args": {"timeout": 60}}
            return _rdb_storage(url, engine_kwargs)
        full = sqlalchemy_url(url)
        if full.startswith("postgresql+psycopg"):
            # Commit without waiting for the WAL flush (per session; the server's own default
            # is untouched): the same trade as SQLite's synchronous=NORMAL and the unsynced
            # journal above. A server crash can lose the last commits, never corrupt the study.
            engine_kwargs = {"connect_args": {"options": "-c synchronous_commit=off"}}
        return _rdb_storage(full, engine_kwargs)
    except Exception as exc:
        from sqlalchemy.exc import ArgumentError

        as_given = isinstance(exc, OSError | ImportError | ValueError | ArgumentError)
        raise StorageUnreachable(
            ("" if as_given else "storage unreachable: ")
            + f"cannot open study storage {redact(url)!r}: {type(exc).__name__}: {exc}",
            code=EXIT_USAGE if as_given else EXIT_STORAGE,
        ) from exc


def _rdb_storage(url: str, engine_kwargs: dict[str, Any]) -> RDBStorage:
    """RDBStorage, safe when several processes open a new storage together.

    Optuna's first open creates the tables, inserts its one version row and stamps the alembic
    revision, each a check-then-write: a second process in between sees "already exists", a
    duplicate version row, or no revision yet (an assertion). For a SQLite file the first open
    is serialised by a lock file beside it; for a server database a failed open is retried
    (the next try finds the schema complete) and the last failure is raised."""
    lock_path = _sqlite_file(url)
    for attempt in range(10):
        try:
            if lock_path is None:
                return RDBStorage(url, engine_kwargs=engine_kwargs)
            with _file_lock(lock_path.with_name(f".{lock_path.name}.init.lock")):
                storage = RDBStorage(url, engine_kwargs=engine_kwargs)
                _tune_sqlite(storage)  # switching to WAL also wants the file to itself
                return storage
        except Exception:  # retried, then re-raised: see the docstring
            if attempt == 9:
                raise
            time.sleep(0.1 * (attempt + 1))
    raise AssertionError("unreachable")


def _sqlite_file(url: str) -> Path | None:
    if not url.startswith("sqlite"):
        return None
    db = url.split(":///", 1)[-1]
    return Path(db).resolve() if db and db != ":memory:" else None


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    import fcntl

    with open(path, "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _tune_sqlite(storage: RDBStorage) -> None:
    """WAL (persistent in the file) lets workers read while one writes; `synchronous=NORMAL`
    commits without an fsync per write. A crash can lose the last commits, never corrupt."""
    from sqlalchemy import event

    engine = storage.engine

    @event.listens_for(engine, "connect")
    def _pragmas(dbapi_conn: Any, _record: Any) -> None:
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA synchronous=NORMAL")
        cur.close()

    engine.dispose()
    with engine.connect() as conn:
        conn.exec_driver_sql("PRAGMA journal_mode=WAL")


class _FlushedJournalFileBackend(JournalFileBackend):
    """Optuna's journal file, appended under its lock and flushed to the OS, without an fsync
    per append: the same trade as SQLite's `synchronous=NORMAL` above. Other processes see
    each record as soon as it is flushed; only an OS crash or power loss can drop the last
    records, and a torn last line is repaired by `_repair_journal_tail` on the next open.
    (An fsync per append was ~14 per trial and ~25 ms of framework time per trial here.)"""

    def append_logs(self, logs: list[dict[str, Any]]) -> None:
        data = "\n".join(json.dumps(entry, separators=(",", ":")) for entry in logs) + "\n"
        lock = self._lock
        lock.acquire()  # blocks (with backoff) until this process holds the journal lock
        try:
            with open(self._file_path, "ab") as f:
                f.write(data.encode("utf-8"))
                f.flush()
        finally:
            lock.release()


def _repair_journal_tail(path: Path) -> None:
    """Drop a half-written last line left by a worker killed mid-append (otherwise the next
    append would glue onto it and corrupt the journal)."""
    if not path.exists() or path.stat().st_size == 0:
        return
    with path.open("rb+") as f:
        data = f.read()
        if data.endswith(b"\n"):
            return
        f.truncate(data.rfind(b"\n") + 1)
        log.warning("journal %s: dropped a partial last record from an interrupted write", path)


# -- study ------------------------------------------------------------------------------------


def problem_hash(ctx: RunContext) -> str:
    spec = ctx.spec.model_dump(mode="json")
    problem = {k: spec[k] for k in PROBLEM_FIELDS}
    # k repeats change what a trial's scores mean: a resumed study must keep its k (a study
    # without repeats keeps the hash it always had)
    if spec.get("repeats", 1) != 1:
        problem["repeats"] = spec["repeats"]
    return sha256_hex(canonical_json(problem))


def open_study(
    ctx: RunContext,
    storage: BaseStorage,
    *,
    sampler: SamplerConfig | None = None,
    worker_index: int = 0,
    storage_url: str | None = None,
) -> optuna.Study:
    """Create the study (recording what defines it) or load it, refusing a different problem.

    Objective names are set with `study.set_metric_names` (optuna-dashboard and
    `optuna.visualization` show them); the search set's case hashes go to the artifact store
    beside a file storage (`autotune.artifacts`), not into a large study attribute.
    """
    from contextos_lab.autotune.artifacts import record_case_hashes

    cfg = sampler or ctx.spec.sampler
    study = optuna.create_study(
        study_name=ctx.spec.name,
        storage=storage,
        directions=ctx.spec.directions,
        sampler=cfg.build(worker_index),
        load_if_exists=True,
    )
    digest = problem_hash(ctx)
    attrs = study.user_attrs
    if "problem_hash" not in attrs:
        study.set_user_attr("problem_hash", digest)
        study.set_user_attr("spec", ctx.spec.model_dump(mode="json"))
        study.set_user_attr("objectives", [e.value for e in ctx.spec.objectives])
        study.set_user_attr("sampler", cfg.model_dump(mode="json"))
        study.set_user_attr("search_set_manifest", ctx.search.manifest_hash)
        record_case_hashes(study, ctx.search.case_hashes, storage_url)
    elif attrs["problem_hash"] != digest:
        raise StudyMismatch(
            f"study {ctx.spec.name!r} exists in this storage but was created from a different "
            "spec (harness, target, guardrails, surfaces, sets or objectives differ); "
            "give this run a new `name` or use another storage"
        )
    if [d.name.lower() for d in study.directions] != ctx.spec.directions:
        raise StudyMismatch(f"study {ctx.spec.name!r} has directions {study.directions}")
    if study.metric_names is None:
        with warnings.catch_warnings():  # experimental since Optuna 3.2, stable in use
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            study.set_metric_names([e.value for e in ctx.spec.objectives])
    return study


def _uncounted(t: optuna.trial.FrozenTrial) -> bool:
    return bool(
        t.user_attrs.get("interrupted")
        or t.user_attrs.get("over_budget")
        or t.user_attrs.get("duplicate_baseline")
    )


def counted_trials(study: optuna.Study) -> int:
    """Trials that count toward the budget: everything started except interrupted ones."""
    trials = study.get_trials(deepcopy=False, states=COUNTED_STATES)
    return sum(1 for t in trials if not _uncounted(t))


def finished_trials(study: optuna.Study) -> int:
    trials = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE, TrialState.FAIL))
    return sum(1 for t in trials if not _uncounted(t))


def _within_budget(study: optuna.Study, number: int, budget: int) -> bool:
    """Whether trial `number` is among the first `budget` counted trials of the study."""
    if number < budget:
        # Numbers are 0, 1, 2, ... assigned atomically, so at most number + 1 trials (counted
        # or not) are numbered <= it: within budget without reading every trial back.
        return True
    states = (*COUNTED_STATES, TrialState.WAITING)
    trials = study.get_trials(deepcopy=False, states=states)
    return sum(1 for t in trials if t.number <= number and not _uncounted(t)) <= budget


# A trial is RUNNING from `study.ask()` until its worker records itself a few storage calls
# later; another process reaping in that window would fail a live trial (seen in CI with
# three `search` processes on PostgreSQL). An unclaimed trial is only reaped once it is older.
UNCLAIMED_GRACE_S = 300.0


def reap_interrupted(study: optuna.Study, *, grace_s: float = UNCLAIMED_GRACE_S) -> list[int]:
    """Mark RUNNING trials whose worker process on this host is gone as interrupted FAILs.

    A trial with no recorded worker is reaped only when it started more than `grace_s` ago.
    """
    host = socket.gethostname()
    storage = study._storage
    reaped = []
    now = datetime.datetime.now()  # Optuna stamps datetime_start with naive local time
    for t in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
        worker = t.user_attrs.get("worker")
        if worker is not None:
            w_host, _, pid = str(worker).rpartition(":")
            if w_host != host or _pid_alive(int(pid)):
                continue
        elif t.datetime_start is not None and (now - t.datetime_start).total_seconds() < grace_s:
            continue
        reason = f"interrupted: worker {worker or '(unknown)'} died before finishing the trial"
        with contextlib.suppress(optuna.exceptions.UpdateFinishedTrialError):
            storage.set_trial_user_attr(t._trial_id, "interrupted", True)
            storage.set_trial_user_attr(t._trial_id, "fail_reason", reason)
            storage.set_trial_state_values(t._trial_id, state=TrialState.FAIL)
            reaped.append(t.number)
    if reaped:
        log.warning("study %s: marked interrupted trials %s as FAIL", study.study_name, reaped)
    return reaped


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def ensure_baseline(
    ctx: RunContext, study: optuna.Study, budget: int | None = None, *, poll_s: float = 0.2
) -> dict[str, float]:
    """Run the baseline tuple as the study's first trial (once) and return its scores.

    It doubles as the reachability check: if the harness cannot score its own baseline, the
    run stops here with the reason, before any search trial. When several processes start
    the study together, one runs the baseline and the others wait for its scores.
    """
    found = _baseline_scores(study)
    if found is not None:
        return found
    waiting = study.get_trials(deepcopy=False, states=(TrialState.WAITING, TrialState.RUNNING))
    if not any(t.user_attrs.get("is_baseline") for t in waiting):
        study.enqueue_trial(ctx.space.baseline_params(), user_attrs={"is_baseline": True})
    trial = study.ask()
    if trial.user_attrs.get("is_baseline") and _earlier_baseline(study, trial.number):
        # two processes both saw no baseline queued and both enqueued one (seen on PostgreSQL
        # with three `search` processes): the later one closes unrun and uncounted
        trial.set_user_attr("duplicate_baseline", True)
        trial.set_user_attr("fail_reason", "duplicate baseline: another process runs it")
        study.tell(trial, state=TrialState.FAIL)
        scores = _wait_for_baseline(study, poll_s)
        _run_one(ctx, study, scores, budget=budget)
        return scores
    if not trial.user_attrs.get("is_baseline"):
        # another process took the baseline: wait for it, then run the trial we were given
        scores = _wait_for_baseline(study, poll_s)
        _run_one(ctx, study, scores, budget=budget, trial=trial)
        return scores
    frozen = _run_one(ctx, study, baseline=None, trial=trial)
    if frozen is None or frozen.state != TrialState.COMPLETE:
        number = trial.number
        reason = frozen.user_attrs.get("fail_reason") if frozen is not None else "over budget"
        raise HarnessUnreachable(f"baseline trial {number} failed: {reason}")
    scores = dict(frozen.user_attrs["scores"])
    study.set_user_attr("baseline_scores", scores)
    study.set_user_attr("baseline_trial", frozen.number)
    return scores


def _earlier_baseline(study: optuna.Study, number: int) -> bool:
    live = (TrialState.WAITING, TrialState.RUNNING, TrialState.COMPLETE)
    return any(
        t.number < number and t.user_attrs.get("is_baseline") and not _uncounted(t)
        for t in study.get_trials(deepcopy=False, states=live)
    )


def _baseline_scores(study: optuna.Study) -> dict[str, float] | None:
    if "baseline_scores" in study.user_attrs:
        return dict(study.user_attrs["baseline_scores"])
    done = [
        t
        for t in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
        if t.user_attrs.get("is_baseline")
    ]
    if done:  # killed between finishing the baseline and recording its scores
        study.set_user_attr("baseline_scores", dict(done[0].user_attrs["scores"]))
        study.set_user_attr("baseline_trial", done[0].number)
        return dict(done[0].user_attrs["scores"])
    return None


def _wait_for_baseline(study: optuna.Study, poll_s: float) -> dict[str, float]:
    while True:
        found = _baseline_scores(study)
        if found is not None:
            return found
        failed = [
            t
            for t in study.get_trials(deepcopy=False, states=(TrialState.FAIL,))
            if t.user_attrs.get("is_baseline") and not t.user_attrs.get("duplicate_baseline")
        ]
        if failed:
            why = failed[0].user_attrs.get("fail_reason")
            raise HarnessUnreachable(f"baseline trial {failed[0].number} failed: {why}")
        time.sleep(poll_s)


def _run_one(
    ctx: RunContext,
    study: optuna.Study,
    baseline: dict[str, float] | None,
    *,
    budget: int | None = None,
    trial: optuna.Trial | None = None,
) -> optuna.trial.FrozenTrial | None:
    """Ask (unless given) and run one trial; None when it fell past the budget (closed
    unrun as an uncounted FAIL, because a concurrent process took the last place)."""
    if ctx.runs is not None:
        ctx.runs.discard()
    trial = trial or study.ask()
    if budget is not None and not _within_budget(study, trial.number, budget):
        trial.set_user_attr("over_budget", True)
        trial.set_user_attr("fail_reason", f"over budget: the study already has {budget} trials")
        study.tell(trial, state=TrialState.FAIL)
        return None
    trial.set_user_attr("worker", worker_id())
    try:
        values = run_trial(ctx, trial, baseline)
    except HarnessFailure as exc:
        log.warning("trial %d failed: %s", trial.number, exc)
        return _laid_out(ctx, study.tell(trial, state=TrialState.FAIL))
    except optuna.TrialPruned:  # dropped by racing; its stage and reason are in user attrs
        return _laid_out(ctx, study.tell(trial, state=TrialState.PRUNED))
    except BaseException as exc:  # a bug or an interrupt: record it, never swallow it
        interrupted = isinstance(exc, KeyboardInterrupt | SystemExit)
        trial.set_user_attr("interrupted", interrupted)
        trial.set_user_attr("fail_reason", f"{type(exc).__name__}: {exc}")
        study.tell(trial, state=TrialState.FAIL)
        raise
    return _laid_out(ctx, study.tell(trial, list(values)))


def _laid_out(ctx: RunContext, frozen: optuna.trial.FrozenTrial) -> optuna.trial.FrozenTrial:
    """Write the told trial to the run layout; a full disk there never fails the study."""
    if ctx.runs is not None:
        try:
            ctx.runs.finish(frozen, config=ctx.space.config(dict(frozen.params)))
        except OSError as exc:
            log.warning("run layout: trial %d not written: %s", frozen.number, exc)
    return frozen


def work(
    ctx: RunContext,
    study: optuna.Study,
    budget: int,
    on_trial: Callable[[optuna.trial.FrozenTrial], None] | None = None,
    *,
    solo: bool = False,
) -> int:
    """Ask/tell until the study holds `budget` counted trials; returns trials run here.

    The count is always re-read from the storage (`solo` is kept for callers but no longer
    trusted): another `search` process may share the study without this one knowing."""
    from contextos_lab.autotune.budget import budget_stop_reason

    baseline = study.user_attrs.get("baseline_scores")
    ran = 0
    calls_per_trial = len(ctx.search) * ctx.spec.repeats
    while budget - counted_trials(study) > 0:
        stop = budget_stop_reason(study, ctx.spec.budget, calls_per_trial)
        if stop is not None:  # the next trial could exceed the spec's budget: stop cleanly
            study.set_user_attr("budget_stop", stop)
            log.warning("study %s stopped: %s", study.study_name, stop)
            break
        frozen = _run_one(ctx, study, baseline, budget=budget)
        if frozen is None:
            continue
        ran += 1
        if on_trial is not None:
            on_trial(frozen)
    return ran


def _worker_main(payload: dict[str, Any], storage_url: str, budget: int, index: int) -> None:
    """Entry point of a spawned worker process."""
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    ctx = rebuild(payload)
    storage = open_storage(storage_url)
    study = open_study(ctx, storage, worker_index=index, storage_url=storage_url)
    work(ctx, study, budget)


@contextlib.contextmanager
def _progress(total: int, initial: int, enabled: bool, desc: str) -> Iterator[tqdm]:
    bar = tqdm(total=total, initial=initial, disable=not enabled, desc=desc, unit="trial")
    try:
        yield bar
    finally:
        bar.close()


def run_study(
    ctx: RunContext,
    storage_url: str,
    *,
    n_trials: int | None = None,
    workers: int = 1,
    sampler: SamplerConfig | None = None,
    progress: bool = True,
    poll_s: float = 0.5,
) -> optuna.Study:
    """Create or resume the study and run it until `n_trials` trials count (baseline included)."""
    if workers < 1:
        raise ValueError("workers must be >= 1")
    if workers > 1 and storage_url in ("memory", ":memory:"):
        raise ValueError("several workers need a shared storage (sqlite, journal, postgresql)")
    budget = n_trials or ctx.spec.n_trials
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    storage = open_storage(storage_url)
    study = open_study(ctx, storage, sampler=sampler, storage_url=storage_url)
    reap_interrupted(study)
    if ctx.cache is None:  # results paid for live beside the study (harness.result_cache)
        from contextos_lab.harness.result_cache import open_for_study

        ctx.cache = open_for_study(storage_url)
    with _progress(budget, finished_trials(study), progress, ctx.spec.name) as bar:
        before = finished_trials(study)
        ensure_baseline(ctx, study, budget)
        bar.update(finished_trials(study) - before)
        if workers == 1:
            work(ctx, study, budget, on_trial=lambda _t: bar.update(1), solo=True)
        else:
            _run_workers(ctx, study, storage_url, budget, workers, sampler, bar, poll_s)
    return study


def _run_workers(
    ctx: RunContext,
    study: optuna.Study,
    storage_url: str,
    budget: int,
    workers: int,
    sampler: SamplerConfig | None,
    bar: tqdm,
    poll_s: float,
) -> None:
    payload = ctx.worker_payload()
    if sampler is not None:
        payload["spec"] = {**payload["spec"], "sampler": sampler.model_dump(mode="json")}
    spawn = mp.get_context("spawn")
    procs = [
        spawn.Process(
            target=_worker_main, args=(payload, storage_url, budget, i + 1), name=f"autotune-{i}"
        )
        for i in range(workers)
    ]
    for p in procs:
        p.start()
    try:
        while any(p.is_alive() for p in procs):
            time.sleep(poll_s)
            bar.update(finished_trials(study) - bar.n)
    except BaseException:
        for p in procs:
            p.terminate()
        raise
    finally:
        for p in procs:
            p.join()
    bar.update(finished_trials(study) - bar.n)
    failed = [f"{p.name} exit {p.exitcode}" for p in procs if p.exitcode != 0]
    if failed:
        raise RuntimeError(f"autotune workers failed: {failed}; finished trials are kept")
