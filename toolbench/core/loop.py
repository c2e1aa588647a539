"""One event loop per workbench, on its own daemon thread.

All async work of a bench (tool calls, MCP sessions) runs on this loop, so the sync facade
works the same in a script and inside Jupyter's already-running loop, and async resources
are always used from the loop that made them.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Coroutine
from concurrent.futures import Future
from typing import Any, TypeVar

T = TypeVar("T")
CANCEL_GRACE_SECONDS = 5.0


class LoopThread:
    """A private event loop running on a daemon thread, started lazily."""

    def __init__(self, name: str = "toolbench-loop") -> None:
        self._name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            with self._lock:
                if self._loop is None:
                    loop = asyncio.new_event_loop()
                    ready = threading.Event()

                    def serve() -> None:
                        asyncio.set_event_loop(loop)
                        loop.call_soon(ready.set)
                        loop.run_forever()

                    self._thread = threading.Thread(target=serve, name=self._name, daemon=True)
                    self._thread.start()
                    ready.wait()
                    self._loop = loop
        return self._loop

    def in_loop(self) -> bool:
        return self._thread is not None and threading.current_thread() is self._thread

    def submit(self, coro: Coroutine[Any, Any, T]) -> Future[T]:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run a coroutine on the bench loop and wait for it (from any thread but the loop's).

        If the wait is interrupted (KeyboardInterrupt), the coroutine is cancelled and given up
        to `CANCEL_GRACE_SECONDS` to finish its clean-up before the interrupt goes on."""
        if self.in_loop():
            coro.close()
            raise RuntimeError("LoopThread.run called from its own loop; await the coroutine instead")
        ended = threading.Event()
        running = _Running(coro, ended.set)
        try:
            result: T = self.submit(running.main()).result()
            return result
        except BaseException:
            if not ended.is_set():  # interrupted while waiting, not a failure of the coroutine
                running.stop(self.loop)
                ended.wait(CANCEL_GRACE_SECONDS)
            raise

    async def run_async(self, coro: Coroutine[Any, Any, T]) -> T:
        """Await a coroutine on the bench loop from another loop (or directly when already on it).

        If the awaiting task is cancelled, so is the coroutine, which gets up to
        `CANCEL_GRACE_SECONDS` to finish its clean-up before the cancellation goes on."""
        if self.in_loop():
            return await coro
        caller = asyncio.get_running_loop()
        bench_loop = self.loop
        ended = asyncio.Event()

        def signal_end() -> None:
            with contextlib.suppress(RuntimeError):  # the caller's loop has closed: nobody waits
                caller.call_soon_threadsafe(ended.set)

        running = _Running(coro, signal_end)
        future = asyncio.wrap_future(self.submit(running.main()))
        try:
            return await asyncio.shield(future)  # the cancel goes through `stop`, not the future
        except asyncio.CancelledError:
            future.add_done_callback(lambda f: f.cancelled() or f.exception())  # retrieved: no warning
            if not ended.is_set():
                running.stop(bench_loop)  # not self.loop: a closed bench must not start a new one
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(ended.wait(), CANCEL_GRACE_SECONDS)
            raise

    def close(self) -> None:
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        if self.in_loop():
            raise RuntimeError("cannot close the bench loop from inside it")
        # Tasks still running (a call waiting for an approval, a server's answer) are cancelled
        # and given their grace to end, so whoever awaits them gets an answer instead of a hang.
        ended = asyncio.run_coroutine_threadsafe(_cancel_all(), loop)
        with contextlib.suppress(Exception):
            ended.result(CANCEL_GRACE_SECONDS + 1)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        if not loop.is_running():
            loop.close()
        self._loop = None
        self._thread = None


async def _cancel_all() -> None:
    tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    for task in tasks:
        task.cancel()
    if tasks:
        await asyncio.wait(tasks, timeout=CANCEL_GRACE_SECONDS)


class _Running:
    """A coroutine run on the bench loop by a waiter elsewhere, who may have to stop it.

    `stop` may come before the coroutine starts: each side writes its own field first and then
    reads the other's, so one of them always sees the other and the task is cancelled either
    way. `on_end` is called on the bench loop when the coroutine has ended."""

    def __init__(self, coro: Coroutine[Any, Any, Any], on_end: Callable[[], None]) -> None:
        self.coro = coro
        self.on_end = on_end
        self.task: asyncio.Task[Any] | None = None
        self.stopped = False

    async def main(self) -> Any:
        try:
            self.task = asyncio.current_task()
            if self.stopped:
                raise asyncio.CancelledError
            return await self.coro
        finally:
            self.coro.close()  # a coroutine stopped before it started is never awaited
            self.on_end()

    def stop(self, loop: asyncio.AbstractEventLoop) -> None:
        self.stopped = True
        task = self.task
        if task is not None:
            with contextlib.suppress(RuntimeError):  # the loop has closed: the task ended with it
                loop.call_soon_threadsafe(task.cancel)
