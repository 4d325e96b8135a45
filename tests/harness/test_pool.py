"""`run_pool`: a few threads take the tasks in turn; a hung task's thread is replaced."""

from __future__ import annotations

import threading

from contextos_lab.harness.pool import TaskTimeout, run_pool


def test_at_most_max_concurrency_threads_run_many_tasks_in_order() -> None:
    names: list[str] = []

    def task(i: int) -> int:
        names.append(threading.current_thread().name)
        return i * i

    # a generous limit: no fast task may time out on a loaded machine
    out = run_pool([lambda i=i: task(i) for i in range(60)], 4, [60.0] * 60)
    assert out == [i * i for i in range(60)]
    # a thread per task cost more than a fast harness's call (benchmarks/multi_fidelity.py)
    assert len(set(names)) <= 4


def test_a_hung_task_times_out_and_a_fresh_thread_takes_the_rest() -> None:
    release = threading.Event()

    def hung() -> str:
        release.wait(30)
        return "late"

    tasks = [hung, *[lambda i=i: i for i in range(10)]]
    out = run_pool(tasks, 1, [0.2] + [None] * 10)
    release.set()
    assert isinstance(out[0], TaskTimeout)
    assert out[1:] == list(range(10))


def test_a_raising_task_is_its_exception() -> None:
    def boom() -> None:
        raise ValueError("no")

    out = run_pool([boom, lambda: 1], 2)
    assert isinstance(out[0], ValueError) and out[1] == 1
