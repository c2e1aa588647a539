"""What a builtin tool is: a descriptor and a handler over a context it is given.

A tool module knows its context (the workspace, the profile, per-invocation state) and
`ToolError`; it never sees the invocation, the gate or the records.

A builtin's `handler` may be sync or async (async handlers run on the bench loop). A builtin
may also give `blocking`, a sync twin of an async handler with the same behaviour: the sync
`inv.call` / `inv.turn` run it in the caller's thread, which saves the two thread hops to the
bench loop and back; `inv.acall` / `inv.aturn` always use `handler`. A blocking twin that can
stop early watches `ctx.stop` (set by `inv.cancel()` from any thread) where the async handler
awaits `ctx.cancel`.
"""

from __future__ import annotations

import contextlib
import functools
import random
import threading
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..core.descriptors import Scene, ToolDescriptor
from ..core.errors import ToolError
from ..core.ids import ToolId
from ..core.results import ToolOutput, ToolResult
from .state import InvocationState

if TYPE_CHECKING:
    import asyncio

    from ..core.profile import Profile
    from .agents_port import AgentsPort
    from .mcp_port import McpPort


class StopSignal:
    """A one-shot, thread-safe cancel flag: `inv.cancel()` sets it from any thread.

    `on_set(fn)` runs `fn` (from the setting thread, or at once when already set) and returns a
    function that unregisters it; callbacks must be quick and must not raise."""

    __slots__ = ("_callbacks", "_lock", "_set")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._set = False
        self._callbacks: list[Callable[[], None]] = []

    def is_set(self) -> bool:
        return self._set

    def set(self) -> None:
        with self._lock:
            if self._set:
                return
            self._set = True
            callbacks, self._callbacks = self._callbacks, []
        for fn in callbacks:
            fn()

    def on_set(self, fn: Callable[[], None]) -> Callable[[], None]:
        with self._lock:
            if not self._set:
                self._callbacks.append(fn)
                return functools.partial(self._discard, fn)
        fn()
        return _nothing

    def _discard(self, fn: Callable[[], None]) -> None:
        with self._lock, contextlib.suppress(ValueError):
            self._callbacks.remove(fn)


def _nothing() -> None:
    pass


class Approve(Protocol):
    """`await approve(action, reason, details)` returns once a person agreed to the step; it
    raises the ToolError the call ends with otherwise (denied, timed out, nobody to ask)."""

    def __call__(self, action: str, reason: str, details: Mapping[str, Any]) -> Awaitable[None]: ...


class ToolPort(Protocol):
    """The invocation's own tools, for a builtin that calls them (the shell bridge).

    A call through the port takes the path a model's call takes: the gate charges it, its
    arguments are checked, an `ask` tool waits for approval, the source runs it, its result is
    projected and it gets a record of its own, in the caller's round, with a call id derived
    from the caller's (`<caller's id>/<n>`) and `via` set to the caller's id. It is sync and may
    block (call it from a worker thread, never from the bench loop). A nested call gets no
    port of its own, so calls nest one level deep and no further."""

    def descriptors(self) -> Sequence[ToolDescriptor]:
        """The tools the invocation's snapshot offers, in snapshot order."""
        ...

    def call(self, tool_id: ToolId, arguments: dict[str, Any]) -> ToolResult:
        """Run one nested call; every outcome is a `ToolResult` (refusals too)."""
        ...


@dataclass(slots=True)
class ToolContext:
    """What a call is given: a builtin handler uses it all, another tool source what it needs
    (the ids, the profile). `state` lives as long as the invocation."""

    workspace: Path
    profile: Profile
    rng: random.Random
    invocation_id: str
    round: int
    call_id: str
    call_names: Mapping[str, str] = field(default_factory=dict)  # ToolId text -> call name
    state: InvocationState = field(default_factory=InvocationState)
    agents: AgentsPort | None = None  # the bench's sub-agent service (tools/agents_port.py)
    # Set by `inv.cancel()`: an event of the bench loop (where async handlers run). A handler
    # that can stop early watches it and ends with its own cancelled error; others run to the end.
    cancel: asyncio.Event | None = None
    # The same cancel for a `blocking` handler, which runs outside the loop (see the module doc).
    stop: StopSignal | None = None
    # The invocation's own tools for nested calls (ToolPort); None inside a nested call.
    tools: ToolPort | None = None
    # The bench's MCP servers for `mcp.manage` (McpPort); None where the runtime gives none.
    mcp: McpPort | None = None
    # Asks a person to agree to one step of the call before it happens (`Approve`); None where
    # nobody can be asked, so such a step is refused (`tool.approval_required`).
    approve: Approve | None = None

    def call_name_of(self, tool_id: str) -> str | None:
        """The call name the model sees for a tool, if the snapshot offers it (for hints)."""
        return self.call_names.get(tool_id)


# The monotonic time the running builtin must stop by, set by the runtime around a sync
# handler. A context variable, so the loops that check it (walks, searches, edit passes) need
# no context object threaded through them, and each thread or task sees its own call's.
_DEADLINE: ContextVar[float | None] = ContextVar("toolbench_builtin_deadline", default=None)


class time_limit:
    """`with time_limit(seconds):` runs the block as a builtin call with that long to finish
    (or less: inside another limit, the earlier deadline holds)."""

    __slots__ = ("_seconds", "_token")

    def __init__(self, seconds: float) -> None:
        self._seconds = seconds

    def __enter__(self) -> None:
        # Never later than a deadline already running: a nested call ends by its caller's.
        deadline = time.monotonic() + self._seconds
        running = _DEADLINE.get()
        self._token = _DEADLINE.set(deadline if running is None else min(deadline, running))

    def __exit__(self, *exc: object) -> None:
        _DEADLINE.reset(self._token)


def current_deadline() -> float | None:
    """The monotonic time the running call must end by, if it runs under a limit (a nested
    call ends by its caller's)."""
    return _DEADLINE.get()


def check_deadline() -> None:
    """Raise `tool.timeout` when the running builtin is past its time limit.

    Long loops call it between steps (about every millisecond of work, never per byte), so
    a call that would run too long ends with a coded result and leaves nothing half done."""
    deadline = _DEADLINE.get()
    if deadline is not None and time.monotonic() > deadline:
        raise ToolError("tool.timeout", "The tool ran out of time (its limit is the profile's "
                        "`tools.builtinTimeoutSeconds`). Narrow the request: a smaller folder, a more "
                        "specific pattern, a shorter edit.")


Handler = Callable[[ToolContext, dict[str, Any]], "ToolOutput | Awaitable[ToolOutput]"]
BlockingHandler = Callable[[ToolContext, dict[str, Any]], ToolOutput]
# Runs when a round of an invocation that offers the tool ends: (state, round, scene).
RoundEnd = Callable[[InvocationState, int, "Scene"], None]


@dataclass(frozen=True, slots=True)
class BuiltinTool:
    descriptor: ToolDescriptor
    handler: Handler
    blocking: BlockingHandler | None = None  # the sync calls' twin of an async handler (module doc)
    end_round: RoundEnd | None = None  # what the tool settles when a round ends (the shell's auto-publish)
