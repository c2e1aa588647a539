"""A model's run started from the app (the chat panel): what it shows while it runs and after.

The run goes to the bench loop (`inv.submit`), where `inv.run` would run it too, so an SDK
client a notebook built is always used from one loop, whether a cell or the app drives it.
`stop()` cancels the run's task there (the run logs `stopped`) and `inv.cancel()` stops the
call running now; the run never raises into the app: a provider error is `Run.error`, any
other failure is kept as `error` with its code.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .. import Invocation, ToolbenchError
from ..models import Model

log = logging.getLogger("toolbench.widgets")

# Run and RunRound are not on the public face yet: they are read by duck typing here
# (`rounds`, `stop_reason`, `final_text`, `error.code` / `.message`).
RunLike = Any
RoundLike = Any


@dataclass(eq=False)
class ChatRun:
    """One run of the chat panel. `outcome` is the run's `stop_reason` (`"stopped"` once
    stopped), or `"error"` when the run could not go on (see `error`); `None` while it runs."""

    model_name: str
    prompt: str
    invocation: Invocation
    rounds: list[RoundLike] = field(default_factory=list)
    run: RunLike | None = None
    outcome: str | None = None
    error: tuple[str, str] | None = None  # (code, message): Run.error, or what stopped the run
    future: concurrent.futures.Future[Any] | None = None
    stop_requested: bool = False
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _task: asyncio.Task[Any] | None = None
    _loop: asyncio.AbstractEventLoop | None = None

    @property
    def running(self) -> bool:
        return self.outcome is None

    @property
    def final_text(self) -> str:
        return str(getattr(self.run, "final_text", "") or "")

    def start(self, model: Model, *, system: str | None, on_round: Callable[[ChatRun, RoundLike], None],
              on_end: Callable[[ChatRun], None]) -> concurrent.futures.Future[Any]:
        """Submit the run to the bench loop; `on_round` after each round and `on_end` once at
        the end are called there (the caller moves them to the notebook's loop)."""

        def round_done(run: RunLike, r: RoundLike) -> None:
            self.run = run
            on_round(self, r)

        async def main() -> None:
            with self._lock:
                if self.stop_requested:  # stopped before the bench loop took it up
                    self._end("stopped", None, on_end)
                    return
                self._task, self._loop = asyncio.current_task(), asyncio.get_running_loop()
            try:
                run = await self.invocation.arun(model, self.prompt, system=system, on_round=round_done)
            except asyncio.CancelledError:  # stop(), or the bench closing: this task ends here
                self._end("stopped", None, on_end)
                return
            except ToolbenchError as exc:  # the invocation closed, a storage failure, a misuse
                self._end("error", (exc.code, exc.message), on_end)
                return
            except Exception as exc:  # a model of the user's own that raised: shown, not a traceback
                log.debug("a chat run failed", exc_info=exc)
                self._end("error", ("unexpected", f"{type(exc).__name__}: {exc}"), on_end)
                return
            self.run = run
            error = (run.error.code, run.error.message) if run.error is not None else None
            self._end(str(run.stop_reason), error, on_end)

        self.future = self.invocation.submit(main())
        return self.future

    def stop(self) -> None:
        """Cancel the run (from any thread) and the call it is running."""
        with self._lock:
            if self.stop_requested or not self.running:
                return
            self.stop_requested = True
            task, loop = self._task, self._loop
        if task is not None and loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(task.cancel)
        self.invocation.cancel()

    def _end(self, outcome: str, error: tuple[str, str] | None, on_end: Callable[[ChatRun], None]) -> None:
        self.error = error
        self.outcome = outcome
        on_end(self)
