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
    if n == 0:
        return []
    if limit == 1 and (timeouts is None or all(t is None for t in timeouts)):
        return [_outcome(task) for task in tasks]  # no thread at all on the sequential path
    pool = _Pool(tasks, timeouts)
    for _ in range(min(limit, n)):
        pool.start()
    return pool.wait_all()


def _outcome(task: Callable[[], Any]) -> Any:
    try:
        return task()
    except Exception as exc:
        return exc


class _Pool:
    """One `run_pool` call's shared state, guarded by `cond`: the tasks not started, the
    running ones' deadlines (inf when unbounded), the abandoned ones, and how many settled
    (answered or abandoned)."""

    def __init__(
        self, tasks: Sequence[Callable[[], Any]], timeouts: Sequence[float | None] | None
    ) -> None:
        self.tasks, self.timeouts = tasks, timeouts
        self.out: list[Any] = [None] * len(tasks)
        self.cond = threading.Condition()
        self.todo = deque(range(len(tasks)))
        self.running: dict[int, float] = {}  # index -> deadline (inf when unbounded)
        self.abandoned: set[int] = set()
        self.settled = 0

    def _limit(self, i: int) -> float | None:
        return self.timeouts[i] if self.timeouts is not None else None

    def start(self) -> None:
        threading.Thread(target=self._worker, daemon=True).start()

    def _worker(self) -> None:
        while True:
            with self.cond:
                if not self.todo:
                    return
                i = self.todo.popleft()
                limit_s = self._limit(i)
                self.running[i] = time.monotonic() + limit_s if limit_s else float("inf")
                self.cond.notify()  # the waiting caller learns of the new deadline
            value = _outcome(self.tasks[i])
            with self.cond:
                if i in self.abandoned:  # a fresh thread took this one's place
                    return
                self.out[i] = value
                self.running.pop(i, None)
                self.settled += 1
                self.cond.notify()

    def wait_all(self) -> list[Any]:
        """Wait for every task; abandon each at its deadline and start a fresh thread."""
        with self.cond:
            while self.settled < len(self.tasks):
                deadline = min(self.running.values(), default=float("inf"))
                wait = deadline - time.monotonic()
                if wait > 0 or deadline == float("inf"):
                    self.cond.wait(None if deadline == float("inf") else wait)
                now = time.monotonic()
                for i, due in list(self.running.items()):
                    if due <= now:
                        self.abandoned.add(i)
                        self.running.pop(i)
                        self.settled += 1
                        limit_s = self._limit(i)
                        self.out[i] = TaskTimeout(f"no answer within {limit_s:g}s (abandoned)")
                        self.start()
        return self.out
