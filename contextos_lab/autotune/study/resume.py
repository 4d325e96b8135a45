"""What a run of an existing study will do, and what it left.

Optuna keeps a study's trials under its name in its storage; running again with the same
storage resumes it. A new seed or sampler does not make a new study (the gate finds a study by
the spec's name, and the trials already paid for stay valid evidence): it steers only the trials
still to run. `resume_note` says so before the run, so a notebook re-run with a new seed is
never a silent re-display of the old result. A new study, or a complete one run again with the
same parameters, needs no note before the run: `study_note` states the outcome after it, in
the same words both times, so Run All twice shows the same outputs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import optuna

from contextos_lab.autotune.sampling.config import SamplerConfig
from contextos_lab.autotune.study.storage import journal_path, open_storage, redact
from contextos_lab.autotune.study.trial_count import counted_trials


def _exists(url: str) -> bool:
    """Whether a file storage exists (never creating it); servers and memory: assume so."""
    if url in ("memory", ":memory:"):
        return False
    if url.startswith("sqlite:///"):
        return Path(url.removeprefix("sqlite:///")).is_file()
    path = journal_path(url)
    return Path(path).is_file() if path else True


def resume_note(url: str, name: str, sampler: SamplerConfig, n_trials: int) -> str:
    """Before a run: the resumed study's trials when some are still to run, and what new
    settings change; "" for a new study and for a complete one run again unchanged."""
    if not _exists(url):
        return ""
    try:
        study = optuna.load_study(study_name=name, storage=open_storage(url))
    except KeyError:
        return ""
    done = counted_trials(study)
    todo = max(0, n_trials - done)
    was: dict[str, Any] = dict(study.user_attrs.get("sampler") or {})
    now = sampler.model_dump(mode="json")
    changed = {k: (was.get(k), v) for k, v in now.items() if was and was.get(k) != v}
    if not done or not (todo or changed):
        return ""
    lines = [
        f"resuming study {name!r} in {redact(url)}: {done} trials already counted, "
        + (f"{todo} more to run." if todo else "none to run (raise `n_trials` for more).")
    ]
    if changed:
        said = ", ".join(f"{k} {a!r} -> {b!r}" for k, (a, b) in changed.items())
        lines.append(
            f"changed since the study was created: {said}. A study keeps its trials, so this "
            + (
                "steers only the trials still to run"
                if todo
                else "changes nothing: no trial is left to run"
            )
            + "; for a fresh study with these settings set `out_dir` (or `storage`) to a new place."
        )
    return "\n".join(lines)


def study_note(study: optuna.Study, url: str, n_trials: int) -> str:
    """After a run: how many trials the study counts, in the same words whether this run made
    them or found them done (a Run All with the same parameters runs none again)."""
    done = counted_trials(study)
    where = f"study {study.study_name!r} in {redact(url)}"
    if done >= n_trials:
        return (
            f"{where} complete: {done} trials counted of {n_trials} requested; a re-run with "
            "these parameters runs none (raise `n_trials` for more)."
        )
    return f"{where}: {done} trials counted of {n_trials} requested (stopped early: see Spend)."
