"""What the manager reports: frozen views of servers, their tools and their diagnostics."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, NamedTuple

from ..core.ids import ToolId

ServerState = Literal["pending", "active", "disabled", "failed"]
"""`pending`: registered, not connected yet (`connect=False`, or connecting); `active`: connected
and its tools listed; `disabled`: switched off, no process; `failed`: could not start, or its
connection was lost (see `diagnostic`); `refresh()` tries again."""

Permission = Literal["on", "off", "ask"]
"""`ask`: offered, but each call waits for a decision from `bench.on_approval`'s handler."""


@dataclass(frozen=True, slots=True)
class McpToolInfo:
    """One listed tool. `offered` is true when the model sees it (server active, tool valid, on)."""

    tool_id: ToolId | None  # None when the native name cannot make a ToolId (empty, not text)
    name: str | None
    title: str | None
    description: str
    permission: Permission
    offered: bool
    problem_code: str | None = None  # why it is left out, when it is invalid
    problem: str | None = None
    annotations: dict[str, Any] | None = None  # the server's hints, verbatim (not trusted)
    output_schema: dict[str, Any] | None = None
    warnings: tuple[McpDiagnostic, ...] = ()  # offered all the same (a long name, a bad outputSchema)


@dataclass(frozen=True, slots=True)
class McpServerInfo:
    """A registration and its current state."""

    id: str
    name: str
    state: ServerState
    transport: str  # the transport's kind: stdio, http, memory, sdk, or a custom one's
    tools: tuple[McpToolInfo, ...]
    diagnostic_code: str | None
    diagnostic: str | None
    stderr_tail: tuple[str, ...]
    log_path: Path | None
    pid: int | None  # the stdio server's process while it runs (Linux; None elsewhere)
    timeout: float
    server_info: dict[str, Any] | None  # the name and version the server reported
    client_capabilities: tuple[str, ...] = ()  # what toolbench declared: roots, sampling, elicitation
    warnings: tuple[McpDiagnostic, ...] = ()  # the server's and its tools' (see `McpManager.warnings`)
    protocol_version: str | None = None  # the MCP revision the session speaks (2025-11-25, 2026-07-28, ...)
    server_capabilities: dict[str, Any] | None = None  # what it declared: resources, prompts, logging, ...

    @property
    def provider(self) -> str:
        return f"mcp/{self.id}"


class McpDiagnostic(NamedTuple):
    """Why a server or a tool is not offered: `(subject, code, message)`.

    `subject` is the tool's `ToolId` for a tool, the server's display name (text) for a server."""

    subject: ToolId | str
    code: str
    message: str
