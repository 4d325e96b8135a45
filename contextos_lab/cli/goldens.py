"""`contextos-lab goldens record | diff | rerecord TARGET`: goldens from the CLI.

TARGET is a policy bundle id (`POLICY_…`, the goldens a patch to it is replayed on) or
`LAYER_<layer>`. `record` writes the project's `harness/goldens/TARGET.jsonl` from its replay
cases on the live version; `diff` shows what the live version (after a release) changes in an
existing set; `rerecord` writes that change, signed, with the diff shown and kept in
`harness/goldens-changes.jsonl`.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING

from contextos_lab.cli.common import next_step
from contextos_lab.cli.conventions import add_command
from contextos_lab.errors import UserError
from contextos_lab.proposals.policy import DEFAULT_BUNDLES_DIR

if TYPE_CHECKING:  # the recording machinery (pydantic models) loads when a command runs
    from contextos_lab.proposals.replay.golden_recording import Target


def _target(args: argparse.Namespace) -> Target:
    from contextos_lab.domain.active import active_project
    from contextos_lab.proposals.policy.registry import BundleRegistry
    from contextos_lab.proposals.replay.golden_recording import Target

    return Target(args.target, active_project(), BundleRegistry(args.bundles))


def _existing(target: Target) -> tuple[str, list]:
    from contextos_lab.proposals.replay.goldens import load_goldens

    if not target.path.is_file():
        raise UserError(
            f"no goldens at {target.path}: `contextos-lab goldens record {target.goldens_id}` "
            "writes them"
        )
    try:
        return target.path.read_text(encoding="utf-8"), load_goldens(target.path)
    except ValueError as exc:
        raise UserError(str(exc)) from None


def _show(diff: list[dict]) -> None:
    for row in diff:
        print(
            f"  {row['trace_id']}: decision {row['decision']}; recorded {row['recorded']}; "
            f"expected {row['expected']}"
        )


def _record(args: argparse.Namespace) -> int:
    from contextos_lab.harness.replay_sets import read_packets
    from contextos_lab.proposals.replay.golden_recording import (
        goldens_text,
        record_goldens,
    )

    target = _target(args)
    out = Path(args.out) if args.out else target.path
    if out.exists() and not args.out:
        raise UserError(
            f"{out} exists: `contextos-lab goldens rerecord {target.goldens_id} --by NAME "
            "--rationale TEXT` changes it (signed, with the diff)"
        )
    cases = target.project.replay_dir
    if not (cases / "cases.jsonl").is_file():
        raise UserError(f"no replay cases at {cases / 'cases.jsonl'} to record goldens from")
    try:
        packets = read_packets(cases)
    except ValueError as exc:
        raise UserError(f"{cases / 'cases.jsonl'}: {exc}".replace("\n", " ")) from None
    goldens = record_goldens(target, packets)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(goldens_text(goldens), encoding="utf-8")
    expect = sum(g.expected_post_patch_outcome is not None for g in goldens)
    print(
        f"{out}: {len(goldens)} goldens on {target.version()} ({expect} expect a change, "
        f"{len(goldens) - expect} must not change)"
    )
    next_step("contextos-lab project --check")
    return 0


def _diff(args: argparse.Namespace) -> int:
    from contextos_lab.proposals.replay.golden_recording import (
        golden_diff,
        rerecord,
    )

    target = _target(args)
    _, old = _existing(target)
    diff = golden_diff(old, rerecord(target, old))
    print(f"{target.path}: {len(diff)} of {len(old)} goldens change on {target.version()}")
    _show(diff)
    if diff:
        next_step(f"contextos-lab goldens rerecord {target.goldens_id} --by NAME --rationale TEXT")
    else:
        next_step("contextos-lab project --check")
    return 0


def _rerecord(args: argparse.Namespace) -> int:
    from contextos_lab.proposals.replay.golden_recording import (
        CHANGES_FILE,
        golden_diff,
        goldens_text,
        rerecord,
        signed_change,
    )
    from contextos_lab.store.signing import (
        SigningKeyMissing,
        load_authorised_overriders,
        load_signing_key,
    )

    target = _target(args)
    old_text, old = _existing(target)
    allowed = load_authorised_overriders()
    if allowed is not None and args.by not in allowed:
        raise UserError(f"{args.by} is not on the authorised list: goldens change needs one")
    try:
        key = load_signing_key(required=True)
    except SigningKeyMissing as exc:
        raise UserError(str(exc)) from None
    assert key is not None
    new = rerecord(target, old)
    diff = golden_diff(old, new)
    if not diff:
        print(f"{target.path}: every golden already holds on {target.version()}; nothing written")
        next_step("contextos-lab project --check")
        return 0
    new_text = goldens_text(new)
    change = signed_change(
        target, old_text, new_text, diff, by=args.by, rationale=args.rationale, key=key
    )
    target.path.write_text(new_text, encoding="utf-8")
    with (target.path.parent.parent / CHANGES_FILE).open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(change, sort_keys=True) + "\n")
    print(f"{target.path}: {len(diff)} goldens re-recorded on {target.version()} by {args.by}")
    _show(diff)
    print(f"signed change record: {target.path.parent.parent / CHANGES_FILE}")
    next_step("contextos-lab project --check")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    p = add_command(
        subparsers,
        "goldens",
        example=[
            "contextos-lab goldens record POLICY_MY_BUNDLE_V1 --project my-domain",
            "contextos-lab goldens diff POLICY_MY_BUNDLE_V1",
            "contextos-lab goldens rerecord POLICY_MY_BUNDLE_V1 --by ana --rationale 'v2 live'",
        ],
    )
    sub = p.add_subparsers(dest="goldens_command", required=True, metavar="ACTION")
    for name, fn, what in (
        ("record", _record, "goldens from the project's replay cases on the live version"),
        ("diff", _diff, "what the live version changes in an existing goldens set"),
        ("rerecord", _rerecord, "re-record after a release: signed, the diff shown and kept"),
    ):
        q = add_command(
            sub,
            name,
            help=what,
            example=f"contextos-lab goldens {name} POLICY_MY_BUNDLE_V1"
            + (" --by ana --rationale 'v2 released'" if name == "rerecord" else ""),
        )
        q.add_argument("target", help="policy bundle id, or LAYER_<layer>")
        q.add_argument(
            "--bundles", default=str(DEFAULT_BUNDLES_DIR), help="bundle registry dir (live version)"
        )
        if name == "record":
            q.add_argument("--out", help="write here instead of the project's goldens folder")
        if name == "rerecord":
            q.add_argument("--by", required=True, help="who re-records (authorised list)")
            q.add_argument("--rationale", required=True, help="why (e.g. the release)")
        q.set_defaults(func=fn)
