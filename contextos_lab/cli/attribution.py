"""`contextos-lab attribution calibrate|score DIR`: the attributor on your own annotated runs.

`calibrate` fits weights on the annotated failed runs in DIR with the bundled weights as the
prior (see `insights.attribution.calibrate`) and prints its leave-one-run-out agreement beside
the prior's; `score` prints agent / step top-1 and top-3 agreement with the answer key and the
trivial baselines beside them. `cluster --attribution-weights FILE` uses a calibrated file.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

from contextos_lab.cli.conventions import add_command
from contextos_lab.errors import UserError


def register(subparsers: argparse._SubParsersAction) -> None:
    p = add_command(
        subparsers,
        "attribution",
        example=[
            "contextos-lab attribution calibrate runs/ --out weights.json",
            "contextos-lab attribution score runs/ --weights weights.json --json",
        ],
    )
    sub = p.add_subparsers(dest="attribution_command", required=True, metavar="ACTION")
    c = add_command(
        sub,
        "calibrate",
        help="fit weights on DIR's annotated runs, shrunk toward the bundled ones",
        example="contextos-lab attribution calibrate runs/ --out weights.json",
    )
    c.add_argument("dir", metavar="DIR", help="annotated traces (any format `cluster` reads)")
    c.add_argument("--out", required=True, metavar="WEIGHTS", help="weights file to write")
    c.add_argument(
        "--prior", default=None, metavar="WEIGHTS", help="prior weights file (default: bundled)"
    )
    c.set_defaults(func=calibrate_command)
    s = add_command(
        sub,
        "score",
        help="agent / step top-1 and top-3 agreement with DIR's annotations, and baselines",
        example="contextos-lab attribution score runs/ --weights weights.json",
    )
    s.add_argument("dir", metavar="DIR", help="annotated traces (any format `cluster` reads)")
    s.add_argument("--weights", default=None, metavar="WEIGHTS", help="calibrated weights file")
    s.add_argument("--json", action="store_true", help="print one JSON object")
    s.set_defaults(func=score_command)


def _annotated(folder: str) -> list[Any]:
    from contextos_lab.insights.attribution.scoring import annotated_runs
    from contextos_lab.insights.runs.columns import runs_frame
    from contextos_lab.insights.sources import load_sources

    if not Path(folder).exists():
        raise UserError(f"no such file or folder: {folder}")
    loaded = load_sources([folder])
    records = runs_frame(loaded.records)
    where = {t.trace_id: _where(t.attributes, t.trace_id) for t in loaded.traces}
    key = annotated_runs(loaded.traces, records)
    found = [any(t.index == k.step for t in k.run.turns) for k in key]
    inside = [k for k, ok in zip(key, found, strict=True) if ok]
    outside = [k for k, ok in zip(key, found, strict=True) if not ok]
    _say_unusable(loaded, records, where, outside)
    if not inside:
        raise UserError(
            f"{folder}: no failed run with a trace and an annotated step "
            "(mistake_step or failing_step); nothing to calibrate or score"
        )
    return inside


#: Lines of unusable input printed before "… and N more".
_SHOWN = 5


def _where(attributes: Any, trace_id: str) -> str:
    """`file:line` of a run (`file` alone for a one-run file)."""
    name, line = attributes.get("file", trace_id), attributes.get("line")
    return f"{name}:{line}" if line else str(name)


def _say_unusable(loaded: Any, records: Any, where: dict[str, str], outside: list[Any]) -> None:
    """On stderr, what in DIR is not scored and why (file, line, field): a file no loader
    accepts, a failed run whose annotation is malformed or names a step the run does not have.
    Silently dropping them (or scoring a step outside the run as a miss) would score other runs
    than the user gave without a word."""
    from contextos_lab.insights.attribution.scoring import STEP_KEYS

    lines = [
        f"{q.file}:{q.line}: {q.field or '(whole row)'}: {q.message}" for q in loaded.quarantined
    ]
    inputs_of: dict[str, Any] = {}
    if "inputs" in records:
        inputs_of = dict(zip(records["trace_id"], records["inputs"], strict=True))
        for trace_id, inputs in inputs_of.items():
            missing = inputs.get("annotation_missing") if isinstance(inputs, dict) else None
            lines += [
                f"{where.get(trace_id, trace_id)}: field {name}: {why}"
                for name, why in (missing or {}).items()
                if str(why).startswith("malformed")
            ]
    for k in outside:
        inputs = inputs_of.get(k.run.run_id) or {}
        field = next((f for f in STEP_KEYS if isinstance(inputs.get(f), int)), STEP_KEYS[0])
        steps = [t.index for t in k.run.turns]
        span = f"steps {min(steps)}-{max(steps)}" if steps else "no steps"
        lines.append(
            f"{where.get(k.run.run_id, k.run.run_id)}: field {field}: {k.step} is outside "
            f"the run ({span})"
        )
    if not lines:
        return
    shown = "\n".join(f"  {line}" for line in lines[:_SHOWN])
    more = f"\n  … and {len(lines) - _SHOWN} more" if len(lines) > _SHOWN else ""
    print(f"not scored ({len(lines)}):\n{shown}{more}", file=sys.stderr)


def _prior(path: str | None) -> tuple[dict[str, float], float, str]:
    from contextos_lab.insights.attribution.default_weights import (
        DEFAULT_TEMPERATURE,
        DEFAULT_WEIGHTS,
    )
    from contextos_lab.insights.attribution.weights_file import read_weights

    if path is None:
        return dict(DEFAULT_WEIGHTS), DEFAULT_TEMPERATURE, "bundled"
    prior = read_weights(path)
    return prior.weights, prior.temperature, str(path)


def _step_top1(atts: list[Any], key: list[Any]) -> float:
    return sum(a is not None and a.step == k.step for a, k in zip(atts, key, strict=True)) / len(
        key
    )


def calibrate_command(args: argparse.Namespace) -> int:
    from contextos_lab.insights.attribution.calibrate import (
        calibrate_chosen,
        check_folds,
        leave_one_out,
    )
    from contextos_lab.insights.attribution.linear import (
        LinearAttributor,
        run_rows,
        run_system_rows,
    )
    from contextos_lab.insights.attribution.system_features import is_system_feature
    from contextos_lab.insights.attribution.weights_file import WeightsFile, write_weights

    if Path(args.out).is_dir():  # refused before the fit, not after it
        raise UserError(f"--out {args.out}: is a folder; give the weights file's path")
    key = _annotated(args.dir)
    weights, temperature, name = _prior(args.prior)
    runs, steps = [k.run for k in key], [k.step for k in key]
    parts = [run_rows(r, s) for r, s in zip(runs, steps, strict=True)]
    system = [run_system_rows(r) for r in runs]
    fit, strength = calibrate_chosen(parts, weights, temperature, system)
    folds = check_folds(len(runs))
    loo = _step_top1(leave_one_out(runs, steps, weights, temperature, folds=folds), key)
    check = "leave-one-run-out" if folds is None else f"{folds}-fold (runs i % {folds})"
    prior_model = LinearAttributor(weights, "prior", temperature)
    before = _step_top1([prior_model.attribute(r) for r in runs], key)
    out = write_weights(
        args.out,
        WeightsFile(
            weights=fit.weights,
            temperature=fit.temperature,
            runs=fit.runs,
            used_runs=fit.used_runs,
            prior=name,
            prior_strength=strength if math.isfinite(strength) else None,
            scale=round(fit.scale, 4),
            loo_step_top1=round(loo, 4),
            prior_step_top1=round(before, 4),
        ),
    )
    held = (
        f"prior strength {strength:g}"
        if math.isfinite(strength)
        else "the prior's ranking kept (no strength found more annotated steps)"
    )
    learnt = sorted((k for k in fit.weights if is_system_feature(k)), key=lambda k: -fit.weights[k])
    print(
        f"{fit.runs} annotated runs ({fit.used_runs} with the annotated step among the "
        f"candidates); step agreement, {check}: calibrated {loo:.3f} vs "
        f"prior ({name}) {before:.3f}; {held} (chosen by leave-one-out on these runs), "
        f"scale {fit.scale:.2f} -> {out}"
    )
    if learnt:
        print(
            "this system's own features: "
            + ", ".join(f"{k} {fit.weights[k]:+.2f}" for k in learnt[:6])
        )
    print(f"next: contextos-lab attribution score {args.dir} --weights {out}")
    return 0


def score_command(args: argparse.Namespace) -> int:
    from contextos_lab.insights.attribution.registry import (
        calibrated_attributor,
        default_attributor,
    )
    from contextos_lab.insights.attribution.scoring import top_k_agreement, trivial_baselines

    key = _annotated(args.dir)
    model: Any = calibrated_attributor(args.weights) if args.weights else default_attributor()
    atts = [model.attribute(k.run) for k in key]
    result = {"runs": len(key), **top_k_agreement(atts, key), "trivial": trivial_baselines(key)}
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"{len(key)} annotated runs, attributor {model.name}")
    print(f"{'':<8}{'top-1':>8}{'top-3':>8}")
    for what in ("agent", "step"):
        row = result[what]
        cells = "".join(f"{'-' if v is None else format(v, '.3f'):>8}" for v in row.values())
        print(f"{what:<8}{cells}")
    print("trivial baselines (no trace content; most-common ones read the answer key):")
    for name, value in result["trivial"].items():
        print(f"  {name:<28}{value:.3f}")
    return 0


__all__ = ["calibrate_command", "register", "score_command"]
