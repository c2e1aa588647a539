"""Approval: calls of a tool whose permission is `ask` wait for a decision before they run.

A handler set with `bench.on_approval(handler)` decides: `handler(request) -> bool` (or an
awaitable of one), called on the bench loop. No handler gives `tool.approval_required` at
once, a handler that does not answer in `timeout` seconds `tool.approval_timeout`, a `False`
(or a handler that fails) `tool.approval_denied`: each a result the model can read, never a
hang. The decision is written to the invocation's run log before the tool runs.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..core.errors import ToolbenchError, ToolError
from ..core.ids import ToolId

DEFAULT_TIMEOUT_S = 600.0  # a person reading a request; bounded so that no call waits for ever


@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    """One call waiting for a decision. `action` is what the person is asked about: `call` for a
    call of an `ask` tool; a tool that asks for one step of its work names the step (`mcp.start`:
    a host process started or a server connected) and gives `details`, exactly what would happen
    (for `mcp.start`: transport, command, args, cwd, env, url, header names), and `reason`, the
    same in one line."""

    invocation_id: str
    round: int
    call_id: str
    call_name: str
    tool_id: ToolId
    arguments: dict[str, Any]
    action: str = "call"
    details: Mapping[str, Any] | None = None
    reason: str = ""


Handler = Callable[[ApprovalRequest], "bool | Awaitable[bool]"]


class Approvals:
    """The bench's approval handler and the rule that applies it."""

    def __init__(self) -> None:
        self.handler: Handler | None = None
        self.timeout = DEFAULT_TIMEOUT_S

    def set(self, handler: Handler | None, timeout: float) -> None:
        if handler is not None and not callable(handler):
            raise ToolbenchError("bench.misuse", "on_approval takes a callable (request) -> bool, or None")
        if not timeout > 0:
            raise ToolbenchError("bench.misuse", f"an approval timeout is a positive number of seconds, not {timeout}")
        self.handler, self.timeout = handler, float(timeout)

    async def decide(self, request: ApprovalRequest, *, deadline: float | None = None) -> str:
        """`approved`, or raise the ToolError the call ends with. `deadline` (monotonic) is when
        the caller gives up (a nested call's shell): no decision is waited for past it, and a yes
        that comes later does not count, so nothing runs after its caller was told it timed out."""
        handler = self.handler
        # A step's request says which step: the model must learn what was refused, not only the tool.
        what = f"`{request.call_name}`" + ("" if request.action == "call" else f" ({request.reason})")
        if handler is None:
            raise ToolError("tool.approval_required",
                            f"{what} needs the user's approval and no one can give it here. "
                            "Do not retry it; continue without it or ask the user.")
        wait = self.timeout if deadline is None else min(self.timeout, deadline - time.monotonic())
        try:
            decision: Any = handler(request)
            if inspect.isawaitable(decision):
                decision = await asyncio.wait_for(_awaited(decision), max(wait, 0.0))
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError
        except ToolError:
            raise  # a handler may end the call with a code of its own (approval_required: nobody to ask)
        except TimeoutError:
            late = "its caller's time ran out first" if wait < self.timeout else f"none came in {self.timeout:g} s"
            raise ToolError("tool.approval_timeout",
                            f"No approval for {what}: {late}; the call did not run. "
                            "Ask the user before trying again.", structured={"approval": "timeout"}) from None
        except Exception as exc:  # a handler that fails decides nothing: the call does not run
            raise ToolError("tool.approval_denied", f"The call of {what} was not approved "
                            f"(the approval handler failed: {type(exc).__name__}).",
                            structured={"approval": "denied", "handler_error": repr(exc)}) from exc
        if decision is not True:
            raise ToolError("tool.approval_denied",
                            f"The user denied this call of {what}; it did not run. Do not repeat it "
                            "with the same arguments; ask the user or do without it.",
                            structured={"approval": "denied"})
        return "approved"


async def _awaited(value: Awaitable[Any]) -> Any:
    return await value
