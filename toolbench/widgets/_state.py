"""The widgets' controller: the bench, the current invocation and the result on show.

The panels hold no state of their own that matters: they read it from here, ask it to act
(which it does through the public API only), and redraw when it tells them something changed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, Literal

from ..core.arguments import MISSING
from ..core.errors import ToolbenchError
from ..core.profile import Profile
from ..core.results import ToolResult
from ..runtime.bench import Workbench
from ..runtime.invocation import Invocation
from ..runtime.records import CallRecord

Event = Literal["profile", "invocation", "result", "busy"]
Listener = Callable[[], None]


class WorkbenchState:
    """The state every panel of one workbench shares.

    `profile` fires when the bench's profile changes, `invocation` when a new invocation
    (a new frozen snapshot) becomes current, `result` when a call ends or a past record is
    chosen, `busy` when a call starts or ends."""

    def __init__(self, bench: Workbench, invocation: Invocation | None = None) -> None:
        self.bench = bench
        self.invocation = invocation if invocation is not None else bench.invocation("chat")
        self.record: CallRecord | None = None
        self.busy = False
        self._listeners: dict[Event, list[Listener]] = {}
        self._tasks: set[asyncio.Task[Any]] = set()

    @classmethod
    def of(cls, source: Workbench | WorkbenchState, invocation: Invocation | None = None) -> WorkbenchState:
        """A panel's argument: a shared state, or a bench to make a state of its own for."""
        if isinstance(source, WorkbenchState):
            return source
        if isinstance(source, Workbench):
            return cls(source, invocation)
        raise ToolbenchError("bench.misuse",
                             f"a panel takes a Workbench or a WorkbenchState, not {type(source).__name__}")

    # observing ----------------------------------------------------------------------------
    def observe(self, event: Event, listener: Listener) -> None:
        self._listeners.setdefault(event, []).append(listener)

    def _emit(self, event: Event) -> None:
        for listener in list(self._listeners.get(event, ())):
            listener()

    # reading ------------------------------------------------------------------------------
    @property
    def result(self) -> ToolResult | None:
        return self.record.result if self.record else None

    @property
    def records(self) -> list[CallRecord]:
        return self.invocation.records

    # acting -------------------------------------------------------------------------------
    def set_profile(self, profile: Profile) -> None:
        """Make `profile` the bench's profile, then freeze a new snapshot from it."""
        self.bench.profile = profile
        self._emit("profile")
        self.new_invocation(self.invocation.snapshot.scene)

    def new_invocation(self, scene: str = "chat") -> None:
        self.invocation = self.bench.invocation(scene)  # type: ignore[arg-type]
        self.record = None
        self._emit("invocation")
        self._emit("result")

    def call(self, call_name: str, arguments: Any = MISSING) -> ToolResult:
        """Run one call on the current invocation and show its result."""
        inv = self.invocation
        result = inv.call(call_name, arguments)
        self._show_last(inv)
        return result

    def submit(self, call_name: str, arguments: Any = MISSING,
               on_error: Callable[[BaseException], None] | None = None) -> None:
        """Run a call without blocking the kernel when an event loop runs here (a notebook's).

        Outside a running loop (plain Python, tests) the call runs now. Inside one it becomes a
        task, so the kernel keeps answering widget messages while an MCP server works."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        self._set_busy(True)
        if loop is None:
            try:
                self.call(call_name, arguments)
            finally:
                self._set_busy(False)
            return
        inv = self.invocation

        async def run() -> None:
            try:
                await inv.acall(call_name, arguments)
                self._show_last(inv)
            except Exception as exc:  # shown by the panel that asked
                if on_error is None:
                    raise
                on_error(exc)
            finally:
                self._set_busy(False)

        task = loop.create_task(run())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def show(self, index: int) -> None:
        """Show the result of the invocation's record number `index` again."""
        records = self.invocation.records
        if not 0 <= index < len(records):
            raise ToolbenchError("bench.misuse", f"there is no record {index}; the invocation has {len(records)}")
        self.record = records[index]
        self._emit("result")

    def _show_last(self, inv: Invocation) -> None:
        if inv is self.invocation and inv.records:
            self.record = inv.records[-1]
            self._emit("result")

    def _set_busy(self, busy: bool) -> None:
        self.busy = busy
        self._emit("busy")
