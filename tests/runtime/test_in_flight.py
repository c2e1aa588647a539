"""runtime/in_flight.run_bounded: N in flight, results in order, the rest cancelled on a failure."""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Iterator

import pytest

from toolbench.core.loop import LoopThread
from toolbench.runtime.in_flight import run_bounded


@pytest.fixture
def loop() -> Iterator[LoopThread]:
    thread = LoopThread("test-in-flight")
    yield thread
    thread.close()


def test_results_come_in_the_items_order_whatever_order_they_end_in(loop: LoopThread) -> None:
    async def work(n: int) -> int:
        await asyncio.sleep(n / 100)  # the later items end first
        return n

    def start(n: int) -> tuple[concurrent.futures.Future[int], int]:
        return loop.submit(work(n)), n

    assert run_bounded([5, 4, 3, 2, 0], start, lambda _n, f: f.result(), 2) == [5, 4, 3, 2, 0]


def test_a_failure_cancels_the_unfinished_hands_each_to_done_and_starts_no_more(loop: LoopThread) -> None:
    cancelled: list[int] = []
    closed: list[int] = []

    async def work(n: int) -> int:
        if n == 1:
            raise ValueError("item 1 failed")
        try:
            await asyncio.Event().wait()  # runs until cancelled
        except asyncio.CancelledError:
            cancelled.append(n)
            raise
        return n

    def start(n: int) -> tuple[concurrent.futures.Future[int], int]:
        return loop.submit(work(n)), n

    def done(n: int, future: concurrent.futures.Future[int]) -> int | None:
        closed.append(n)
        return None if future.cancelled() else future.result()  # raises for item 1

    with pytest.raises(ValueError, match="item 1 failed"):
        run_bounded(range(10), start, done, 3)
    assert sorted(closed) == [0, 1, 2]  # each started item handed to `done`; 3..9 never started
    loop.run(asyncio.sleep(0.05))  # the loop delivers the cancellations
    assert sorted(cancelled) == [0, 2]
