"""The toolbench errors a connection reports, and the translation of what the SDK raises while
connecting (exception groups included) into one `ConnectFailed` (a transport may raise one
itself, as stdio does for a server that cannot be started)."""

from __future__ import annotations

import anyio
from mcp.shared.exceptions import MCPError
from mcp.types import CONNECTION_CLOSED
from pydantic import ValidationError

from ..core.errors import OutcomeUnknown, ToolError


class ConnectFailed(Exception):
    """Connecting, initialising or listing failed; `code` is a toolbench `mcp.*` code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


def not_sent(server: str, tool: str, reason: str) -> ToolError:
    """`mcp.call_not_sent`: the request never left, so the tool did not run."""
    return ToolError(
        "mcp.call_not_sent",
        f"The call to `{tool}` on MCP server `{server}` was not sent: {reason}. The tool did not run.",
        structured={"notSent": {"server": server, "tool": tool, "reason": reason}},
    )


def outcome_unknown(server: str, tool: str, reason_code: str, reason: str) -> OutcomeUnknown:
    """`mcp.call_outcome_unknown`: the request left and no usable answer came back."""
    return OutcomeUnknown(
        "mcp.call_outcome_unknown",
        f"The MCP tool `{tool}` on server `{server}` may have run, but its result was lost "
        f"({reason}). Check the state it may have changed before repeating the call; "
        "toolbench will not retry it.",
        structured={"outcomeUnknown": {"reason": reason_code, "message": reason, "server": server, "tool": tool}},
    )


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaves(inner)]
    return [exc]


def connect_failure(exc: BaseException) -> ConnectFailed:
    """The first meaningful failure in what connecting raised (cancellations are skipped)."""
    if isinstance(exc, ConnectFailed):
        return exc
    leaves = [e for e in _leaves(exc) if not isinstance(e, anyio.get_cancelled_exc_class())] or [exc]
    leaf = leaves[0]
    if isinstance(leaf, ConnectFailed):
        return leaf
    if isinstance(leaf, MCPError):
        if leaf.code == CONNECTION_CLOSED:
            return ConnectFailed(
                "mcp.server_start_failed", "the server closed the connection during the handshake (did it exit?)"
            )
        return ConnectFailed("mcp.server_start_failed", f"the handshake failed: {leaf.message} ({leaf.code})")
    if isinstance(leaf, ValidationError):
        return ConnectFailed("mcp.server_start_failed", f"the handshake answer is invalid: {first_error(leaf)}")
    return ConnectFailed("mcp.server_start_failed", f"{type(leaf).__name__}: {leaf}".strip())


def first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    return f"{'.'.join(str(p) for p in error['loc']) or 'answer'}: {error['msg']}"
