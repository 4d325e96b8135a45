"""Create or load the Optuna study of a run spec, refusing one made from a different problem."""

from __future__ import annotations

import warnings

import optuna
from optuna.storages import BaseStorage

from contextos_lab.autotune.context import RunContext
from contextos_lab.autotune.sampling.config import SamplerConfig
from contextos_lab.errors import EXIT_MISMATCH, ContextosError
from contextos_lab.schemas.base import canonical_json, sha256_hex

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


class StudyMismatch(ContextosError, RuntimeError):
    """A study of that name exists but was created from a different problem definition."""

    exit_code = EXIT_MISMATCH


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
    beside a file storage (`autotune.study.artifacts`), not into a large study attribute.
    """
    from contextos_lab.autotune.study.artifacts import record_case_hashes

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
