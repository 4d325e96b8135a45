"""One Optuna study per run spec: open or resume it and run its trials (baseline first,
claims, counts, outside enqueues) in one or more workers; its artifacts.

Create or resume an Optuna study for a run spec and drive it with one or more workers.

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

__all__ = [
    "artifacts",
    "baseline",
    "enqueue",
    "open",
    "run",
    "storage",
    "trial_attrs",
    "trial_claim",
    "trial_count",
    "trial_run",
]
