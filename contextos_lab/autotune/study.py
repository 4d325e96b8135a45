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

from contextos_lab.autotune.baseline import (
    HarnessProtocolError,
    HarnessUnreachable,
    _baseline_scores,
    _earlier_baseline,
    _wait_for_baseline,
    ensure_baseline,
)
from contextos_lab.autotune.study_open import (
    PROBLEM_FIELDS,
    StudyMismatch,
    open_study,
    problem_hash,
)
from contextos_lab.autotune.study_run import (
    _progress,
    _run_workers,
    _worker_main,
    run_study,
    work,
)
from contextos_lab.autotune.study_storage import (
    StorageUnreachable,
    _file_lock,
    _FlushedJournalFileBackend,
    _rdb_storage,
    _repair_journal_tail,
    _sqlite_file,
    _tune_sqlite,
    default_storage_url,
    journal_path,
    open_storage,
    redact,
)
from contextos_lab.autotune.trial_count import (
    COUNTED_STATES,
    UNCLAIMED_GRACE_S,
    _uncounted,
    _within_budget,
    counted_trials,
    finished_trials,
    reap_interrupted,
)
from contextos_lab.autotune.trial_run import _laid_out, _run_one

#: Names this module has always offered (the private ones too: benchmarks and tests use some of
#: them); they now live in the sibling modules above.
__all__ = [
    "COUNTED_STATES",
    "PROBLEM_FIELDS",
    "UNCLAIMED_GRACE_S",
    "HarnessProtocolError",
    "HarnessUnreachable",
    "StorageUnreachable",
    "StudyMismatch",
    "_FlushedJournalFileBackend",
    "_baseline_scores",
    "_earlier_baseline",
    "_file_lock",
    "_laid_out",
    "_progress",
    "_rdb_storage",
    "_repair_journal_tail",
    "_run_one",
    "_run_workers",
    "_sqlite_file",
    "_tune_sqlite",
    "_uncounted",
    "_wait_for_baseline",
    "_within_budget",
    "_worker_main",
    "counted_trials",
    "default_storage_url",
    "ensure_baseline",
    "finished_trials",
    "journal_path",
    "open_storage",
    "open_study",
    "problem_hash",
    "reap_interrupted",
    "redact",
    "run_study",
    "work",
]
