"""What a run of an existing study will do: resume it, and what new parameters change.

Optuna keeps a study's trials under its name in its storage; running again with the same
storage resumes it. A new seed or sampler does not make a new study (the gate finds a study by
the spec's name, and the trials already paid for stay valid evidence): it steers only the trials
still to run. Said before the run, so a notebook re-run with a new seed is never a silent
re-display of the old result.
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
    """One paragraph: a new study, or the resumed one's trials and what new settings change."""
    if not _exists(url):
        return f"new study {name!r} in {redact(url)}: {n_trials} trials to run."
    try:
        study = optuna.load_study(study_name=name, storage=open_storage(url))
    except KeyError:
        return f"new study {name!r} in {redact(url)}: {n_trials} trials to run."
    done = counted_trials(study)
    todo = max(0, n_trials - done)
    lines = [
        f"resuming study {name!r} in {redact(url)}: {done} trials already counted, "
        + (f"{todo} more to run." if todo else "none to run (raise `n_trials` for more).")
    ]
    was: dict[str, Any] = dict(study.user_attrs.get("sampler") or {})
    now = sampler.model_dump(mode="json")
    changed = {k: (was.get(k), v) for k, v in now.items() if was and was.get(k) != v}
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
