"""Deterministic generated multi-agent runs of the support desk, shaped like Who&When traces
(for notebook 01's default: the mechanism, attribution, timeline and exemplar sections need
traces, which the feedback history of `synthetic_feedback` does not have).

Three planted failure mechanisms, known so a reader can check what the attributor finds:
an order-lookup agent that loops on a page that never loads until the round limit, a refund
agent whose calculation code fails and who then guesses, and a refund agent that counts the
window from the order date (amounts in dollars, as real traces write them). Half the runs carry
an annotation (`mistake_agent`, `mistake_step`): the answer key that scores the attribution,
never an input to it. Each run has a time, so the timeline is drawn.
"""

from __future__ import annotations

import json
import random
from datetime import datetime, timedelta
from typing import Any

from contextos_lab.harness.reference.synthetic_feedback import EPOCH


def _ledger(loop: bool, progress: bool, speaker: str) -> str:
    return json.dumps(
        {
            "is_request_satisfied": {"reason": "not yet", "answer": False},
            "is_in_loop": {"reason": "the same lookup again", "answer": loop},
            "is_progress_being_made": {"reason": "the order page", "answer": progress},
            "next_speaker": {"reason": "look the order up", "answer": speaker},
        }
    )


def _looping_lookup(i: int, order: int) -> tuple[list[dict[str, Any]], str, int, str]:
    history = [
        {"role": "human", "content": f"Customer asks why refund for order #{order} is late."},
        {"role": "Orchestrator (thought)", "content": "Plan: look the order up, then reply."},
        {"role": "Orchestrator (-> Lookup_Agent)", "content": f"Open order #{order}."},
        {"role": "Lookup_Agent", "content": f"I opened the order page for #{order}."},
        {"role": "Orchestrator (thought)", "content": _ledger(False, True, "Lookup_Agent")},
        {"role": "Lookup_Agent", "content": "I clicked 'shipment details'. The page did not load."},
        {"role": "Orchestrator (thought)", "content": _ledger(True, False, "Lookup_Agent")},
        {"role": "Lookup_Agent", "content": "I clicked 'shipment details'. The page did not load."},
        {"role": "Orchestrator (thought)", "content": _ledger(True, False, "Lookup_Agent")},
        {
            "role": "Orchestrator (termination condition)",
            "content": "No agent selected. Max rounds reached; the round limit was hit.",
        },
    ]
    return history, "Lookup_Agent", 5, "retried a page that never loads instead of escalating"


def _failing_code(i: int, order: int) -> tuple[list[dict[str, Any]], str, int, str]:
    history = [
        {
            "name": "Refund_Agent",
            "role": "assistant",
            "content": f"Task: compute the refund for order #{order}. Plan: load the invoice.",
        },
        {
            "name": "Refund_Agent",
            "role": "user",
            "content": f"```python\nimport json\nprint(json.load(open('inv_{order}.json')))\n```",
        },
        {
            "name": "Computer_terminal",
            "role": "user",
            "content": "exitcode: 1 (execution failed)\nCode output: Traceback (most recent call "
            f"last):\nFileNotFoundError: [Errno 2] No such file: 'inv_{order}.json'",
        },
        {
            "name": "Verification_Agent",
            "role": "user",
            "content": "The invoice is missing, so I will assume the usual $120 refund.",
        },
        {"name": "Verification_Agent", "role": "user", "content": "TERMINATE"},
    ]
    return history, "Refund_Agent", 1, "loaded an invoice file that does not exist"


def _wrong_window(i: int, order: int) -> tuple[list[dict[str, Any]], str, int, str]:
    paid, asked = 255 + i % 7 * 10, 305 + i % 5 * 10
    history = [
        {
            "name": "Refund_Agent",
            "role": "assistant",
            "content": f"Order #{order}: paid ${paid}, customer asks ${asked} back. Ordered on "
            "day 1, delivered on day 12, returned on day 38.",
        },
        {
            "name": "Refund_Agent",
            "role": "assistant",
            "content": "The refund window is 30 days from the order date: day 38 is outside it. "
            "Refund refused.",
        },
        {
            "name": "Verification_Agent",
            "role": "user",
            "content": "Agreed, refused. TERMINATE",
        },
    ]
    return history, "Refund_Agent", 1, "counted the window from the order date, not delivery"


MECHANISMS = (_looping_lookup, _failing_code, _wrong_window)


def support_desk_runs(n: int = 45, seed: int = 7) -> tuple[list[dict[str, Any]], list[datetime]]:
    """`n` failed runs (the three mechanisms in turn, order numbers and annotation shuffled by
    `seed`) and one time each, spread over the month the feedback history covers."""
    rng = random.Random(seed)
    runs, times = [], []
    for i in range(n):
        order = 40_000 + rng.randrange(10_000)
        history, agent, step, reason = MECHANISMS[i % len(MECHANISMS)](i, order)
        run: dict[str, Any] = {
            "question": f"support ticket {i} (order #{order})",
            "question_ID": f"desk-{seed}-{i:04d}",
            "level": 1 + i % 2,
            "ground_truth": "refund approved",
            "is_correct": False,
            "history": history,
        }
        if rng.random() < 0.5:
            run |= {"mistake_agent": agent, "mistake_step": str(step), "mistake_reason": reason}
        runs.append(run)
        times.append(EPOCH + timedelta(hours=rng.randrange(24 * 28)))
    return runs, times
