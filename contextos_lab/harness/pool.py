"""Run tasks on at most N threads, each with its own deadline; a hung task is abandoned.

Why not `concurrent.futures.ThreadPoolExecutor`: a task that hangs keeps its pool thread
forever (threads cannot be killed) and the executor joins it at interpreter exit, so one hung
harness call would stall the trial's slot and then the process. Here every task runs on its
own daemon thread; on timeout its slot is freed at once and its late answer is ignored.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from contextos_lab.errors import EXIT_HARNESS, ContextosError


class TaskTimeout(ContextosError, TimeoutError):
    """The task did not finish within its deadline (its thread was abandoned)."""

    exit_code = EXIT_HARNESS


def run_pool(
    tasks: Sequence[Callable[[], Any]],
    max_concurrency: int,
    timeouts: Sequence[float | None] | None = None,
) -> list[Any]:
    """Each task's return value, or the exception it raised (TaskTimeout on timeout), in order.

    At most `max_concurrency` tasks run at once; `timeouts[i]` (seconds, None = unbounded)
    counts from the moment task i starts.
    """
    n = len(tasks)
    limit = max(1, int(max_concurrency))
    out: list[Any] = [None] * n
    if n == 0:
        return out
    if limit == 1 and (timeouts is None or all(t is None for t in timeouts)):
        for i, task in enumerate(tasks):  # no thread at all on the sequential path
            try:
                out[i] = task()
            except Exception as exc:
                out[i] = exc
        return out
    cond = threading.Condition()
    finished: list[int] = []
    running: dict[int, float] = {}  # index -> deadline (inf when unbounded)
    abandoned: set[int] = set()

    def runner(i: int) -> None:
        try:
            value: Any = tasks[i]()
        except Exception as exc:
            value = exc
        with cond:
            if i not in abandoned:
                out[i] = value
                finished.append(i)
                cond.notify()

    next_i = 0
    while next_i < n or running:
        with cond:
            while next_i < n and len(running) < limit:
                limit_s = timeouts[next_i] if timeouts is not None else None
                running[next_i] = time.monotonic() + limit_s if limit_s else float("inf")
                threading.Thread(target=runner, args=(next_i,), daemon=True).start()
                next_i += 1
            if not finished:
                wait = min(running.values()) - time.monotonic()
                cond.wait(None if wait == float("inf") else max(wait, 0.0))
            for i in finished:
                running.pop(i, None)
            finished.clear()
            now = time.monotonic()
            for i, deadline in list(running.items()):
                if deadline <= now:
                    abandoned.add(i)
                    running.pop(i)
                    limit_s = timeouts[i] if timeouts is not None else None
                    out[i] = TaskTimeout(f"no answer within {limit_s:g}s (abandoned)")
    return out
