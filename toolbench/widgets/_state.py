"""The widgets' controller: the bench, the current invocation and the result on show.

The panels hold no state of their own that matters: they read it from here, ask it to act
(which it does through the public API only), and redraw when it tells them something changed.

Calls fired from the app run as tasks on the notebook's event loop (`submit`), so the kernel
keeps answering widget messages while a call runs: that is what lets the app show a call as
pending, show MCP progress, and take an Approve / Deny click for an `ask` tool. The runtime
calls back on the bench's loop thread; every change reaches the panels on the notebook's loop.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from .. import (
    MISSING,
    ApprovalRequest,
    CallRecord,
    Invocation,
    Profile,
    ToolbenchError,
    ToolError,
    ToolId,
    ToolResult,
    Workbench,
)
from ..models import Model
from ._chat_run import ChatRun, can_stream

Event = Literal["profile", "invocation", "result", "busy", "progress", "approval", "closed", "mcp", "run",
                "stream"]
Listener = Callable[[], None]
TICK_S = 0.25  # how often a pending call's elapsed time is redrawn


@dataclass(frozen=True, slots=True)
class Pending:
    """The call the app is running now."""

    call_name: str
    invocation_id: str
    started: float = field(default_factory=time.monotonic)

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started


@dataclass(frozen=True, slots=True)
class Progress:
    """The last MCP progress notification of the pending call."""

    progress: float
    total: float | None
    message: str | None

    @property
    def fraction(self) -> float | None:
        return min(1.0, max(0.0, self.progress / self.total)) if self.total else None


@dataclass(eq=False)
class PendingApproval:
    """A call of an `ask` tool waiting for the user's decision in the app."""

    request: ApprovalRequest
    answer: concurrent.futures.Future[bool] = field(default_factory=concurrent.futures.Future)

    def decide(self, approve: bool) -> None:
        if not self.answer.done():
            self.answer.set_result(bool(approve))


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


class WorkbenchState:
    """The state every panel of one workbench shares.

    Events: `profile` (the bench's profile changed), `invocation` (a new invocation is current;
    the old one moves to `previous`), `result` (a call ended, or a record was chosen), `busy`
    (a call started, ended, or its elapsed time moved on), `progress`, `approval` (the
    pending approvals changed), `closed` (the bench closed), `mcp` (servers changed), `run`
    (the chat's run started, finished a round, or ended: `chat`), `stream` (more of the round
    a streamed run is streaming came: `chat.live`; at most every `REDRAW_S`, not per delta)."""

    def __init__(self, bench: Workbench, invocation: Invocation | None = None) -> None:
        self.bench = bench
        self.closed = bench.closed
        # The app offers what installed packages add, as the command line does (before the
        # invocation freezes its snapshot); a bench given again adds nothing twice.
        skipped = [] if self.closed else bench.add_installed_sources()
        self.invocation = invocation if invocation is not None else bench.invocation("chat")  # bench.closed
        self.previous: list[Invocation] = []  # earlier invocations of this app, newest first
        self.notice = "; ".join(skipped)  # one line about the last change of invocation (or the skipped sources)
        self.record: CallRecord | None = None
        self.busy = False
        self.pending: Pending | None = None
        self.progress: Progress | None = None
        self.approvals: list[PendingApproval] = []
        self.chat: ChatRun | None = None  # the chat panel's last run
        self._listeners: dict[Event, list[Listener]] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._call_task: asyncio.Task[Any] | None = None  # the call fired from the app that runs now
        self._ui_loop: asyncio.AbstractEventLoop | None = None
        self._other_approvals: Any = None  # the handler before ours: it decides calls this app did not fire
        self._other_progress: Any = None
        if not self.closed:
            bench.on_close(self._bench_closed)
            self._other_approvals = bench.on_approval(self._ask)

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

    def _emit_soon(self, event: Event, change: Callable[[], None] | None = None) -> None:
        """Apply `change` and emit `event` on the notebook's loop (from any thread)."""
        def apply() -> None:
            if change is not None:
                change()
            self._emit(event)

        loop = self._ui_loop
        if loop is None or loop.is_closed() or _running_loop() is loop:
            apply()
        else:
            loop.call_soon_threadsafe(apply)

    # reading ------------------------------------------------------------------------------
    @property
    def result(self) -> ToolResult | None:
        return self.record.result if self.record else None

    @property
    def records(self) -> list[CallRecord]:
        return self.invocation.records

    @property
    def invocations(self) -> list[Invocation]:
        """The current invocation, then the earlier ones (newest first)."""
        return [self.invocation, *self.previous]

    # acting -------------------------------------------------------------------------------
    def set_profile(self, profile: Profile, *, why: str = "") -> None:
        """Make `profile` the bench's profile, then freeze a new snapshot from it."""
        self.bench.profile = profile
        self._emit("profile")
        self.new_invocation(self.invocation.snapshot.scene, why=why or f"profile `{profile.name}` applied")

    def offer(self, tool_ids: list[ToolId], *, why: str) -> None:
        """Add `tool_ids` to the profile's allow list (off the deny list) and freeze a new snapshot,
        so a server added in the app is callable at once; nothing to add, nothing changes."""
        tools = self.bench.profile.tools
        new = [str(t) for t in tool_ids if str(t) not in tools.allow or str(t) in tools.deny]
        if new:
            ids = set(new)
            self.set_profile(self.bench.profile.edit(allow=list(dict.fromkeys([*tools.allow, *new])),
                                                     deny=[d for d in tools.deny if d not in ids]), why=why)

    def withdraw(self, tool_id: ToolId) -> None:
        """Take `tool_id` off the profile's allow list and freeze a new snapshot."""
        text = str(tool_id)
        self.set_profile(self.bench.profile.edit(allow=[a for a in self.bench.profile.tools.allow if a != text]),
                         why=f"`{text}` no longer offered")

    def in_snapshot(self, tool_id: ToolId | None) -> bool:
        """Whether the current invocation's snapshot offers `tool_id` (what the model sees now)."""
        return tool_id is not None and any(b.tool_id == tool_id for b in self.invocation.snapshot.bindings)

    def example(self, tool_id: ToolId) -> dict[str, Any] | None:
        """The tool's own example arguments, from the bench's catalog (a snapshot drops them), or None."""
        return next((d.example for d in self.bench.catalog() if d.id == tool_id), None)

    def new_invocation(self, scene: str = "chat", *, why: str = "") -> None:
        """Freeze a new snapshot; the current invocation (and its history) moves to `previous`."""
        old = self.invocation
        self.invocation = self.bench.invocation(scene)  # type: ignore[arg-type]
        self.previous.insert(0, old)
        self.record = None
        self.notice = (f"{why + ': ' if why else ''}new invocation `{self.invocation.id}` ({scene}); "
                       f"the calls of `{old.id}` stay in the history")
        self._emit("invocation")
        self._emit("result")

    def call(self, call_name: str, arguments: Any = MISSING) -> ToolResult:
        """Run one call on the current invocation now, and show its result."""
        inv = self.invocation
        result = inv.call(call_name, arguments)
        self._show_last(inv)
        return result

    def submit(self, call_name: str, arguments: Any = MISSING,
               on_error: Callable[[BaseException], None] | None = None) -> None:
        """Run a call without blocking the kernel when an event loop runs here (a notebook's).

        Outside a running loop (plain Python, tests) the call runs now. Inside one it becomes a
        task, so the kernel keeps answering widget messages while the call runs."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        if self.busy:  # one call at a time: the pending call, its approval and progress are one slot
            raise ToolbenchError("bench.misuse", f"`{self.pending.call_name if self.pending else 'a call'}` is "
                                 "still running; wait for its result (or cancel it) before the next call")
        inv = self.invocation
        self.pending, self.progress = Pending(call_name, inv.id), None
        self._set_busy(True)
        if loop is None:
            try:
                inv.call(call_name, arguments)
            finally:
                self._finish(inv)
            return
        self._ui_loop = loop
        self._watch_progress(call_name)

        async def run() -> None:
            ticker = loop.create_task(self._tick())
            try:
                await inv.acall(call_name, arguments)
            except asyncio.CancelledError:  # cancel_call: the call has its recorded result
                pass
            except Exception as exc:  # shown by the panel that asked
                if on_error is None:
                    raise
                on_error(exc)
            finally:
                ticker.cancel()
                self._finish(inv)

        task = self._call_task = loop.create_task(run())
        pending = self.pending
        # Cancelled before it began, `run` never runs its `finally`: the app must not stay busy.
        task.add_done_callback(lambda t: self._done() if t.cancelled() and self.pending is pending else None)
        self._keep(task)

    def rerun(self, record: CallRecord, on_error: Callable[[BaseException], None] | None = None) -> None:
        """Fire a past call again (same call name, same raw arguments) in the current invocation."""
        self.submit(record.call_name, record.arguments.to_json(), on_error)  # the object, or the text as sent

    def start_run(self, model: Model, prompt: str, *, name: str, system: str | None = None,
                  stream: bool = False) -> ChatRun:
        """Let `model` drive the current invocation from `prompt` in the background (the chat).

        The app is busy while it runs (the console waits: one thing drives the invocation at a
        time); each round's calls reach the history and the result viewer as a call fired by
        hand does, and `run` is emitted after each round and at the end. `stream=True` (a model
        that `can_stream`) streams each answer: `stream` is emitted as it grows (throttled)."""
        if self.closed:  # the bench loop must not start again for a closed bench
            raise ToolbenchError("bench.closed", "this workbench is closed: open a new one to run a model")
        if self.busy:
            raise ToolbenchError("bench.misuse", "a call or a run is still going; wait for it (or stop it) first")
        if stream and not can_stream(model):
            raise ToolbenchError("bench.misuse", f"`{name}` cannot stream (it has no `stream(body)`, or its "
                                 "provider cannot put a stream together): run it with stream=False")
        self._ui_loop = _running_loop() or self._ui_loop
        chat = ChatRun(name, prompt, self.invocation, stream=stream)
        self.chat = chat
        self._set_busy(True)
        self._emit("run")

        shown = len(chat.invocation.records)

        def show_calls() -> None:  # the history and the result viewer, as for calls fired by hand
            nonlocal shown
            if len(chat.invocation.records) > shown:
                shown = len(chat.invocation.records)
                self._emit_soon("result", lambda: self._last_record(chat.invocation))

        def on_round(chat: ChatRun, r: Any) -> None:  # on the bench loop
            self._emit_soon("run", lambda: chat.rounds.append(r))
            show_calls()

        def on_end(chat: ChatRun) -> None:  # on the bench loop
            show_calls()  # a stopped round's calls (cancelled ones too) have records of their own
            self._emit_soon("run", self._done)

        def on_stream(chat: ChatRun) -> None:  # on the bench loop, throttled by the run
            self._emit_soon("stream")

        try:
            chat.start(model, system=system, on_round=on_round, on_end=on_end, on_stream=on_stream)
        except BaseException:
            self._done()
            raise
        return chat

    def cancel_call(self) -> None:
        """Cancel the call fired from the app that runs now; nothing when none runs.

        Its result is `tool.cancelled`: a builtin that watches for it (the shell) stops with a
        confirmed result of its own; an MCP or extension tool may have run in part or in full,
        and its result says the outcome is unknown. A call waiting for Approve is denied."""
        task, pending = self._call_task, self.pending
        if task is None or task.done() or pending is None:
            return
        for item in list(self.approvals):
            if item.request.invocation_id == pending.invocation_id:
                item.decide(False)
        self.invocation.cancel()
        task.cancel()

    def stop_run(self) -> None:
        """Stop the chat's run (and the call it is running); nothing when none runs."""
        if self.chat is not None:
            self.chat.stop()

    def show(self, index: int) -> None:
        """Show the result of the current invocation's record number `index` again."""
        records = self.invocation.records
        if not 0 <= index < len(records):
            raise ToolbenchError("bench.misuse", f"there is no record {index}; the invocation has {len(records)}")
        self.select(records[index])

    def select(self, record: CallRecord) -> None:
        """Show `record` (of any invocation of this app) in the result viewer."""
        self.record = record
        self._emit("result")

    def mcp_changed(self) -> None:
        """Servers were added, restarted or switched: panels redraw what depends on them."""
        self._emit("mcp")

    # internals ----------------------------------------------------------------------------
    def _show_last(self, inv: Invocation) -> None:
        if inv is self.invocation and inv.records:
            self._last_record(inv)
            self._emit("result")

    def _last_record(self, inv: Invocation) -> None:
        if inv is self.invocation and inv.records:
            self.record = inv.records[-1]

    def _set_busy(self, busy: bool) -> None:
        self.busy = busy
        self._emit("busy")

    def _finish(self, inv: Invocation) -> None:
        """A call fired here ended: not busy first, so its result is never drawn under "calling"."""
        self._done()
        self._show_last(inv)

    def _done(self) -> None:
        self.pending = self.progress = None
        self._set_busy(False)

    def _keep(self, task: asyncio.Task[Any]) -> None:
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _tick(self) -> None:
        while True:
            await asyncio.sleep(TICK_S)
            self._emit("busy")

    def _watch_progress(self, call_name: str) -> None:
        binding = self.invocation.snapshot.binding_for(call_name)
        if binding is not None and binding.tool_id.kind == "mcp" and not self._watching_progress:
            self._watching_progress = True
            self._other_progress = self.bench.mcp.on_progress(self._on_progress)

    _watching_progress = False

    def _on_progress(self, event: Any) -> Any:  # on the bench loop
        pending = self.pending
        binding = self.invocation.snapshot.binding_for(pending.call_name) if pending else None
        if binding is not None and binding.tool_id.kind == "mcp" and binding.tool_id.name == event.tool:
            update = Progress(float(event.progress), event.total, event.message)
            self._emit_soon("progress", lambda: setattr(self, "progress", update))
        # Whoever watched before the app still hears every event.
        return self._other_progress(event) if self._other_progress is not None else None

    async def _ask(self, request: ApprovalRequest) -> bool:  # the bench's approval handler
        """Wait for Approve / Deny in the app; a call the app did not fire (a cell's `inv.call`
        blocks the kernel, so no click can arrive) gets `tool.approval_required` at once."""
        pending, chat = self.pending, self.chat
        fired_here = (pending is not None and pending.invocation_id == request.invocation_id
                      and pending.call_name == request.call_name) or (
            chat is not None and chat.running and chat.invocation.id == request.invocation_id)
        if self._ui_loop is None or not fired_here or not self._listeners.get("approval"):
            # Not this app's call (or nobody shows approvals here): the handler before ours decides.
            if self._other_approvals is not None:
                decision = self._other_approvals(request)
                return bool(await decision) if inspect.isawaitable(decision) else decision
            raise ToolError("tool.approval_required",
                            f"`{request.call_name}` needs the user's approval: fire it from the workbench app "
                            "(or set bench.on_approval). Do not retry it; continue without it or ask the user.")
        item = PendingApproval(request)
        self._emit_soon("approval", lambda: self.approvals.append(item))
        try:
            return await asyncio.wrap_future(item.answer)
        finally:
            self._emit_soon("approval", lambda: self.approvals.remove(item) if item in self.approvals else None)

    def _bench_closed(self) -> None:  # on the thread that closes the bench (aclose: a worker)
        for item in list(self.approvals):
            item.decide(False)  # a Future: safe from any thread
        self._emit_soon("closed", lambda: setattr(self, "closed", True))
