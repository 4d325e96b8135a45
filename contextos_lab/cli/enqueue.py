"""`contextos-lab enqueue SPEC --config FILE --by NAME --rationale TEXT`: an outside proposal."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from contextos_lab.cli.conventions import add_command
from contextos_lab.errors import UserError


def register(subparsers: argparse._SubParsersAction) -> None:
    p = add_command(
        subparsers,
        "enqueue",
        example=(
            "contextos-lab enqueue my_run.yaml --out out/sweep "
            "--config change.json --by alice --rationale 'missing evidence on 14 cases' "
            "--cites trial_12/s-00031 --evaluate"
        ),
        description=(
            "Validate a config (JSON or YAML object: knob -> value; unnamed knobs keep their "
            "baseline) against the spec's tunable surfaces and enqueue it into the study in "
            "DIR with its provenance. It is evaluated on the search set like any trial "
            "(--evaluate runs it now) and only the held-out gate can promote it."
        ),
    )
    p.add_argument("spec", help="run spec (YAML or JSON)")
    p.add_argument("--out", required=True, help="the sweep's output folder (study.db, runs/)")
    p.add_argument("--config", required=True, help="JSON/YAML file with the proposed knobs")
    p.add_argument("--by", required=True, help="who proposes it (a person or an agent's name)")
    p.add_argument("--rationale", required=True, help="why, in a sentence")
    p.add_argument("--cites", nargs="*", default=[], help="trial_<n> or trial_<n>/<case_id>")
    p.add_argument("--storage", default=None, help="Optuna storage (default sqlite DIR/study.db)")
    p.add_argument("--evaluate", action="store_true", help="run the waiting trial(s) now")
    p.set_defaults(func=run)


def read_config(path: str) -> dict:
    import yaml  # only when a config file is read: `enqueue --help` needs no YAML parser

    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise UserError(f"--config {path}: cannot read ({exc.strerror or exc})") from exc
    try:
        data = json.loads(text) if p.suffix == ".json" else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError) as exc:
        raise UserError(f"--config {path}: not valid JSON/YAML ({exc})") from exc
    if not isinstance(data, dict) or not data:
        raise UserError(f"--config {path}: expected a non-empty object of knob -> value")
    return data


def run(args: argparse.Namespace) -> int:
    import optuna

    from contextos_lab.autotune.context import prepare
    from contextos_lab.autotune.spec.load import SpecError, load_spec
    from contextos_lab.autotune.study.enqueue import enqueue, layout_for
    from contextos_lab.autotune.study.open import open_study
    from contextos_lab.autotune.study.storage import default_storage_url, open_storage
    from contextos_lab.autotune.study.trial_count import counted_trials
    from contextos_lab.autotune.sweep import sweep

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    config = read_config(args.config)
    try:
        ctx = prepare(load_spec(args.spec))
    except SpecError as exc:
        raise UserError(f"{args.spec}: {exc}", code=exc.code) from exc
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    url = args.storage or default_storage_url(out)
    study = open_study(ctx, open_storage(url))  # StorageUnreachable: exit 2 or 3 (cli.main)
    done = enqueue(
        ctx,
        study,
        config=config,
        by=args.by,
        rationale=args.rationale,
        cites=args.cites,
        layout=layout_for(out, ctx.spec.name),
    )
    if not done.new:
        print(
            f"already in study {done.study!r} as trial {done.trial_number} "
            f"(by {done.proposer['by']}): nothing added"
        )
    else:
        print(f"enqueued into study {done.study!r} by {done.proposer['by']}: {done.params}")
    if not args.evaluate:
        print(
            f"{done.waiting} trial(s) waiting; the next `contextos-lab search`/`sweep` on {out} "
            "runs them first (or re-run with --evaluate)"
        )
        return 0
    before = counted_trials(study)
    result = sweep(
        ctx.spec, out_dir=out, n_trials=before + done.waiting, storage=url, ctx=ctx, progress=False
    )
    trial = max(result.study.get_trials(deepcopy=False), key=lambda t: t.number)
    print(f"evaluated as trial {trial.number}: {trial.state.name} {trial.user_attrs.get('scores')}")
    print(
        f"files: {out / 'runs' / ctx.spec.name / f'trial_{trial.number}'}; next: "
        f"contextos-lab gate --spec {args.spec} --out {out}"
    )
    return 0
