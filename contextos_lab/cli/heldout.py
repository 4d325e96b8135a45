"""`contextos-lab heldout status|refresh`: a held-out set's error budget, and a fresh set."""

from __future__ import annotations

import argparse
from pathlib import Path

from contextos_lab.cli.conventions import add_command, non_negative_int, positive_int
from contextos_lab.errors import UserError


def register(subparsers: argparse._SubParsersAction) -> None:
    p = add_command(
        subparsers,
        "heldout",
        example=[
            "contextos-lab heldout status --spec my_run.yaml",
            "contextos-lab heldout refresh --spec my.yaml --from new_cases.jsonl --out heldout2",
        ],
    )
    sub = p.add_subparsers(dest="heldout_command", required=True, metavar="ACTION")
    s = add_command(
        sub,
        "status",
        help="where the spec's held-out set stands: gates, alpha spent, next level, advice",
        example="contextos-lab heldout status --spec my_run.yaml",
    )
    s.add_argument("--spec", required=True, help="run spec (YAML or JSON)")
    s.add_argument("--ledger", default=None, help="held-out ledger (default as for `gate`)")
    s.set_defaults(func=status)
    r = add_command(
        sub,
        "refresh",
        help="split a new held-out set from new cases and retire the spec's current one",
        example="contextos-lab heldout refresh --spec my.yaml --from new_cases.jsonl --out h2",
        description=(
            "Draw a new held-out set from --from, keeping only cases whose normalised content "
            "(ids ignored; NFKC, case and whitespace folded) matches no case of the search set, "
            "the current held-out set or any retired set; retire the current set in the ledger. "
            "Then point the spec's heldout_test_set at the printed path."
        ),
    )
    r.add_argument("--spec", required=True, help="run spec (YAML or JSON)")
    r.add_argument("--from", dest="source", required=True, help="new cases (file or replay set)")
    r.add_argument("--out", required=True, help="folder for the new held-out set (new or empty)")
    r.add_argument("--size", type=positive_int, default=None, help="cases (default: as now)")
    r.add_argument("--seed", type=non_negative_int, default=0)
    r.add_argument("--ledger", default=None, help="held-out ledger (default as for `gate`)")
    r.set_defaults(func=refresh)


def _context(spec_path: str):  # -> tuple[RunContext, Path, CaseSet]
    from contextos_lab.autotune.cases import load_case_set
    from contextos_lab.autotune.context import prepare
    from contextos_lab.autotune.spec.load import SpecError, load_spec

    try:
        ctx = prepare(load_spec(spec_path))
    except SpecError as exc:
        raise UserError(f"{spec_path}: {exc}", code=exc.code) from exc
    path = ctx.spec.resolve(ctx.spec.heldout_test_set)
    return ctx, path, load_case_set(path)


def status(args: argparse.Namespace) -> int:
    from contextos_lab.gate.heldout import ledger
    from contextos_lab.gate.heldout.error_budget import advice

    ctx, path, heldout = _context(args.spec)
    if args.ledger and not Path(args.ledger).is_file():  # a typo'd ledger would read as unspent
        raise UserError(f"--ledger {args.ledger}: no such file")
    ledger_file = ledger.resolve_ledger(args.ledger)
    state, retired = ledger.budget_state(
        heldout.manifest_hash, ctx.spec.heldout_budget, path=ledger_file
    )
    reads = ledger.prior_reads(heldout.manifest_hash, ledger_file)
    print(f"held-out set: {path} (sha256:{heldout.manifest_hash[:16]}…, {len(heldout)} cases)")
    print(f"ledger: {ledger_file}; reads so far: {reads}")
    if retired is not None:
        print(f"RETIRED ({retired.reason}); replaced by {retired.replaced_by}")
        return 0
    print(
        f"budget: LORD++ alpha {state.alpha}, planned horizon {state.horizon}; "
        f"{state.next_index - 1} gate(s), spent {state.spent:.3g}, wealth {state.wealth:.3g}, "
        f"{state.promotions} promoting"
    )
    print(f"next gate: alpha_t = {state.next_level:.3g}")
    print(advice(state, str(path)))
    return 0


def refresh(args: argparse.Namespace) -> int:
    from contextos_lab.gate.heldout.ledger import resolve_ledger
    from contextos_lab.gate.heldout.refresh import refresh_heldout

    ctx, path, heldout = _context(args.spec)
    if not Path(args.source).exists():
        raise UserError(f"--from {args.source}: no such file or folder")
    try:
        done = refresh_heldout(
            search=ctx.search,
            current=heldout,
            current_path=path,
            new_cases=args.source,
            out=Path(args.out),
            size=args.size,
            seed=args.seed,
            ledger_file=resolve_ledger(args.ledger),
        )
    except ValueError as exc:
        raise UserError(str(exc)) from exc
    dropped = ", ".join(f"{n} as {k}" for k, n in done.dropped.items() if n) or "none"
    print(f"new held-out set: {done.path} ({done.n_kept} of {done.n_offered} offered cases)")
    print(f"dropped: {dropped}")
    print(f"retired in the ledger: sha256:{done.retired[:16]}… ({path})")
    print(f"next: set heldout_test_set: {done.path} in {args.spec}, then run the gate")
    return 0
