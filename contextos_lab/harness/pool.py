"""Run tasks on at most N threads, each with its own deadline; a hung task is abandoned.

Why not `concurrent.futures.ThreadPoolExecutor`: a task that hangs keeps its pool thread
forever (threads cannot be killed) and the executor joins it at interpreter exit, so one hung
harness call would stall the trial's slot and then the process. Here the tasks run on daemon
threads; on timeout a task's thread is abandoned, its slot is given to a fresh thread at once
and its late answer is ignored.
"""

from __future__ import annotations

import threading
import time
from collections import deque
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
    counts from the moment task i starts. At most `max_concurrency` threads take the tasks in
    turn (starting a thread per task cost more than a fast harness's call); a thread whose
    task timed out is abandoned with it and a fresh one takes its place.
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
    todo = deque(range(n))
    running: dict[int, float] = {}  # index -> deadline (inf when unbounded)
    abandoned: set[int] = set()
    settled = 0  # answered or abandoned

    def worker() -> None:
        nonlocal settled
        while True:
            with cond:
                if not todo:
                    return
                i = todo.popleft()
                limit_s = timeouts[i] if timeouts is not None else None
                running[i] = time.monotonic() + limit_s if limit_s else float("inf")
                cond.notify()  # the waiting caller learns of the new deadline
            try:
                value: Any = tasks[i]()
            except Exception as exc:
                value = exc
            with cond:
                if i in abandoned:  # a fresh thread took this one's place
                    return
                out[i] = value
                running.pop(i, None)
                settled += 1
                cond.notify()

    def start() -> None:
        threading.Thread(target=worker, daemon=True).start()

    for _ in range(min(limit, n)):
        start()
    with cond:
        while settled < n:
            deadline = min(running.values(), default=float("inf"))
            wait = deadline - time.monotonic()
            if wait > 0 or deadline == float("inf"):
                cond.wait(None if deadline == float("inf") else wait)
            now = time.monotonic()
            for i, due in list(running.items()):
                if due <= now:
                    abandoned.add(i)
                    running.pop(i)
                    settled += 1
                    limit_s = timeouts[i] if timeouts is not None else None
                    out[i] = TaskTimeout(f"no answer within {limit_s:g}s (abandoned)")
                    start()
    return out
