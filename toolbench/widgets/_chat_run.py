"""A model's run started from the app (the chat panel): what it shows while it runs and after.

The run goes to the bench loop (`inv.submit`), where `inv.run` would run it too, so an SDK
client a notebook built is always used from one loop, whether a cell or the app drives it.
`stop()` cancels the run's task there (the run logs `stopped`) and `inv.cancel()` stops the
call running now; the run never raises into the app: a provider error is `Run.error`, any
other failure is kept as `error` with its code.

A streamed run (`stream=True`, for a model that `can_stream`) keeps what the round streaming
now has sent so far on the ChatRun (`live`, a frozen `LiveRound` read from any thread), never
in a widget; the view is told at most every `REDRAW_S` (the first delta at once, the last ones
always: a redraw is due `REDRAW_S` after the one before), not once per delta. A round that
ended (its `RunRound` came) is shown from the round; what streamed stays on `live` when the
stream was cut or the run stopped mid-answer, so the view can show what came before the cut.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .. import Invocation, ToolbenchError
from ..models import Model, StreamingModel, stream_assembly
from ..protocols import StreamDelta

log = logging.getLogger("toolbench.widgets")

# Run and RunRound are not on the public face yet: they are read by duck typing here
# (`rounds`, `stop_reason`, `final_text`, `error.code` / `.message`).
RunLike = Any
RoundLike = Any
REDRAW_S = 0.1  # at most one redraw of a streaming round per this many seconds


def can_stream(model: Model) -> bool:
    """True when `inv.run(model, ..., stream=True)` can stream: the model has `stream(body)`
    and its provider can put a stream back together."""
    if not isinstance(model, StreamingModel):
        return False
    try:
        return stream_assembly(model.protocol) is not None  # the run's own check
    except ToolbenchError:  # a protocol no provider is registered for: the run says so
        return False


@dataclass(frozen=True, slots=True)
class LiveCall:
    """A call as far as it streamed: its name and its arguments' text so far."""

    name: str
    call_id: str | None
    arguments: str


@dataclass(frozen=True, slots=True)
class LiveRound:
    """What round `index` of a streamed run has sent so far (`deltas` pieces of it)."""

    index: int
    text: str = ""
    thinking: str = ""
    calls: tuple[LiveCall, ...] = ()
    deltas: int = 0


class _Parts:
    """The streaming round's pieces, appended on the bench loop (joined only when read)."""

    def __init__(self, index: int) -> None:
        self.index = index
        self.text: list[str] = []
        self.thinking: list[str] = []
        self.calls: dict[int, tuple[str, str | None, list[str]]] = {}
        self.deltas = 0

    def add(self, delta: StreamDelta) -> None:
        self.deltas += 1
        if delta.kind == "text":
            self.text.append(delta.text)
        elif delta.kind == "thinking":
            self.thinking.append(delta.text)
        else:  # a call: the first delta of an index names it, the next ones add to its arguments
            at = delta.index if delta.index is not None else max(self.calls, default=0)
            name, call_id, arguments = self.calls.get(at, ("", None, []))
            self.calls[at] = (delta.name or name, delta.call_id or call_id, arguments)
            if delta.text:
                arguments.append(delta.text)

    def frozen(self) -> LiveRound:
        calls = tuple(LiveCall(name or "?", call_id, "".join(arguments))
                      for _, (name, call_id, arguments) in sorted(self.calls.items()))
        return LiveRound(self.index, "".join(self.text), "".join(self.thinking), calls, self.deltas)


class _Throttle:
    """Calls `fire` at most once per `interval` on the running loop: at once when the last call
    is that long ago, else once when it is (so the last change is always drawn)."""

    def __init__(self, fire: Callable[[], None], interval: float = REDRAW_S) -> None:
        self._fire, self._interval = fire, interval
        self._last = float("-inf")
        self._due: asyncio.TimerHandle | None = None

    def poke(self) -> None:
        if self._due is not None:  # a redraw is already due: it will show this change too
            return
        wait = self._last + self._interval - time.monotonic()
        if wait <= 0:
            self._now()
        else:
            self._due = asyncio.get_running_loop().call_later(wait, self._now)

    def cancel(self) -> None:
        if self._due is not None:
            self._due.cancel()
            self._due = None

    def _now(self) -> None:
        self._due, self._last = None, time.monotonic()
        self._fire()


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
    stream: bool = False  # the run streams (see `live`)
    _parts: _Parts | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _task: asyncio.Task[Any] | None = None
    _loop: asyncio.AbstractEventLoop | None = None

    @property
    def running(self) -> bool:
        return self.outcome is None

    @property
    def final_text(self) -> str:
        return str(getattr(self.run, "final_text", "") or "")

    @property
    def live(self) -> LiveRound | None:
        """What the last streamed round sent so far (the round streaming now, or one that was
        cut or stopped); `None` before the first delta and for a run that does not stream."""
        with self._lock:
            return None if self._parts is None else self._parts.frozen()

    def start(self, model: Model, *, system: str | None, on_round: Callable[[ChatRun, RoundLike], None],
              on_end: Callable[[ChatRun], None],
              on_stream: Callable[[ChatRun], None] | None = None) -> concurrent.futures.Future[Any]:
        """Submit the run to the bench loop; `on_round` after each round and `on_end` once at
        the end are called there (the caller moves them to the notebook's loop). A run made
        with `stream=True` streams each answer into `live`, with `on_stream` called at most
        every `REDRAW_S`."""
        stream = self.stream
        throttle = _Throttle(lambda: on_stream(self) if on_stream is not None else None)

        def round_done(run: RunLike, r: RoundLike) -> None:
            self.run = run
            throttle.cancel()  # the round itself is drawn now, the live part with it
            on_round(self, r)

        def delta_came(delta: StreamDelta) -> None:  # on the bench loop, per piece
            index = delta.round  # the round streaming now: it is appended once it ends
            with self._lock:
                if self._parts is None or self._parts.index != index:
                    self._parts = _Parts(index)
                self._parts.add(delta)
            throttle.poke()

        def end(outcome: str, error: tuple[str, str] | None) -> None:
            throttle.cancel()  # the end redraws everything: no redraw of the live part after it
            self._end(outcome, error, on_end)

        async def main() -> None:
            with self._lock:
                stopped = self.stop_requested  # stopped before the bench loop took it up
                if not stopped:
                    self._task, self._loop = asyncio.current_task(), asyncio.get_running_loop()
            if stopped:  # ended outside the lock: the view's redraw reads `live`, which takes it
                end("stopped", None)
                return
            try:
                run = await self.invocation.arun(model, self.prompt, system=system, on_round=round_done,
                                                 stream=stream, on_delta=delta_came if stream else None)
            except asyncio.CancelledError:  # stop(), or the bench closing: this task ends here
                end("stopped", None)
                return
            except ToolbenchError as exc:  # the invocation closed, a storage failure, a misuse
                end("error", (exc.code, exc.message))
                return
            except Exception as exc:  # a model of the user's own that raised: shown, not a traceback
                log.debug("a chat run failed", exc_info=exc)
                end("error", ("unexpected", f"{type(exc).__name__}: {exc}"))
                return
            self.run = run
            error = (run.error.code, run.error.message) if run.error is not None else None
            end(str(run.stop_reason), error)

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
