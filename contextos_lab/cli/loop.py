"""`contextos-lab notes …` and `contextos-lab research …`: the operator surface of the loop."""

from __future__ import annotations

import argparse

from contextos_lab.cli.common import add_store_options, next_step, store_of
from contextos_lab.cli.conventions import add_command
from contextos_lab.errors import UserError


def _notes(args: argparse.Namespace) -> int:
    from contextos_lab.insights.notes.store import emit_notes, move_note
    from contextos_lab.schemas.notes import Note, NoteStatus

    store = store_of(args)
    if args.action == "emit":
        notes, waiting = emit_notes(store, args.operator, budget=args.budget)
        for n in notes:
            print(f"{n.note_id} [{n.kind.value}] {n.subject} -> {n.recommended_action}")
        print(
            f"{len(notes)} note(s) for {args.operator}"
            + (
                f"; daily budget of {args.budget} spent, {waiting} signal(s) wait"
                if waiting
                else ""
            )
        )
        if notes:
            first = notes[0].note_id
            next_step(f"contextos-lab notes act {first}   |   contextos-lab notes dismiss {first}")
        else:
            next_step("contextos-lab metrics")
        return 0
    if args.action in ("act", "dismiss"):
        if not args.note_id:
            raise UserError(f"notes {args.action} needs a NOTE_ID")
        status = NoteStatus.acted_on if args.action == "act" else NoteStatus.dismissed
        try:
            note = move_note(store, args.note_id, status)
        except KeyError as exc:
            raise UserError(str(exc.args[0])) from None
        except ValueError as exc:  # the store refuses a second move
            raise UserError(str(exc)) from None
        print(f"{note.note_id} {note.status.value}")
        next_step("contextos-lab metrics   |   contextos-lab notes list")
        return 0
    for n in store.list(Note):
        print(
            f"{n.note_id} {n.status.value:<9} {n.operator or '-':<10} {n.created_at:%Y-%m-%d} "
            f"[{n.kind.value}] {n.subject}"
        )
    waiting = [n for n in store.list(Note) if n.status.value == "open"]
    if waiting:
        first = waiting[0].note_id
        next_step(f"contextos-lab notes act {first}   |   contextos-lab notes dismiss {first}")
    else:
        next_step("contextos-lab metrics")
    return 0


def _research(args: argparse.Namespace) -> int:
    from contextos_lab.insights.notes.store import complete_research, queue_research
    from contextos_lab.schemas.research import ResearchTask

    store = store_of(args)
    if args.action == "queue":
        tasks = queue_research(store, max_external_calls=args.max_external_calls)
        for t in tasks:
            print(f"{t.research_task_id} {t.question}")
        print(f"{len(tasks)} ResearchTask(s) queued from the stored knowledge-gap insights")
        if tasks:
            next_step(
                f"contextos-lab research complete {tasks[0].research_task_id} --promoted "
                "--by NAME   (or --not-promoted)"
            )
        else:
            next_step("contextos-lab metrics")
        return 0
    if args.action == "complete":
        if not args.task_id or args.promoted is None:
            raise UserError("research complete needs TASK_ID and --promoted or --not-promoted")
        try:
            task = complete_research(
                store, args.task_id, promoted=args.promoted, patch_ref=args.patch, by=args.by
            )
        except KeyError as exc:
            raise UserError(str(exc.args[0])) from None
        except ValueError as exc:
            raise UserError(str(exc)) from None
        print(f"{task.research_task_id} completed; knowledge patch promoted: {args.promoted}")
        next_step("contextos-lab metrics   |   contextos-lab bundle --out change-control")
        return 0
    for t in store.list(ResearchTask):
        print(
            f"{t.research_task_id} {t.status.value:<9} "
            f"promoted={t.confirmation.get('promoted')} {t.question}"
        )
    open_tasks = [t for t in store.list(ResearchTask) if t.status.value == "queued"]
    if open_tasks:
        next_step(
            f"contextos-lab research complete {open_tasks[0].research_task_id} --promoted "
            "--by NAME   (or --not-promoted)"
        )
    else:
        next_step("contextos-lab metrics")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    p = add_command(
        subparsers,
        "notes",
        example=["contextos-lab notes emit --operator ana", "contextos-lab notes act cs_..."],
    )
    p.add_argument("action", choices=["emit", "list", "act", "dismiss"])
    p.add_argument("note_id", nargs="?")
    p.add_argument("--operator", default="ops", help="whose surface (emit)")
    p.add_argument("--budget", type=int, default=5, help="notes per operator per day")
    add_store_options(p, bundles=False)
    p.set_defaults(func=_notes)

    p = add_command(
        subparsers,
        "research",
        example=[
            "contextos-lab research queue",
            "contextos-lab research complete rq_... --promoted --patch kb/pr-12 --by ana",
        ],
    )
    p.add_argument("action", choices=["queue", "list", "complete"])
    p.add_argument("task_id", nargs="?")
    p.add_argument("--max-external-calls", type=int, default=0)
    outcome = p.add_mutually_exclusive_group()
    outcome.add_argument("--promoted", dest="promoted", action="store_true", default=None)
    outcome.add_argument("--not-promoted", dest="promoted", action="store_false")
    p.add_argument("--patch", default=None, help="reference of the knowledge patch")
    p.add_argument("--by", default="operator")
    add_store_options(p, bundles=False)
    p.set_defaults(func=_research)
