"""One registration's mutable state, and the frozen views the manager reports from it.

Entries are changed on the bench loop only; the views (`info`, `diagnostics`, `descriptors`)
read them without I/O beyond a log tail, so any thread may ask.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path

from ..core.descriptors import ToolDescriptor
from ..core.ids import ToolId
from ._config import ServerSpec
from ._connection import ConnectFailed, Connection
from ._info import McpDiagnostic, McpServerInfo, McpToolInfo, Permission, ServerState
from ._procs import is_alive, tail_lines
from ._tools import ToolRecord

Permissions = Mapping[ToolId, Permission]


class Entry:
    """A registration: its spec, switch, state, live connection and last tool listing."""

    def __init__(self, spec: ServerSpec, enabled: bool, log_path: Path | None) -> None:
        self.spec = spec
        self.enabled = enabled
        self.log_path = log_path
        self.state: ServerState = "pending" if enabled else "disabled"
        self.connection: Connection | None = None
        self.records: tuple[ToolRecord, ...] = ()
        self.diagnostic: tuple[str, str] | None = None
        self.lock = asyncio.Lock()  # one connect / refresh / disconnect at a time

    def record(self, name: str) -> ToolRecord | None:
        return next((r for r in self.records if r.name == name), None)

    def fail(self, failure: ConnectFailed) -> None:
        """State `failed`, with the failure and the server's last stderr line as the diagnostic."""
        message = failure.message
        last = next((line for line in reversed(tail_lines(self.log_path)) if line.strip()), None)
        if last is not None:
            message += f" (stderr: {last.strip()})"
        self.state, self.diagnostic = "failed", (failure.code, message)

    def lost(self, connection: Connection) -> None:
        """The active connection closed under us: `failed` with `mcp.server_exited`."""
        if self.connection is not connection or self.state != "active":
            return  # an old connection, or already reported
        detail = connection.noise_text()
        text = "the server closed the connection (did its process exit?)" + (f"; {detail}" if detail else "")
        self.fail(ConnectFailed("mcp.server_exited", text))

    # -- views ------------------------------------------------------------------------------

    def descriptors(self, permissions: Permissions) -> list[ToolDescriptor]:
        if self.state != "active":
            return []
        return [r.descriptor for r in self.records
                if r.descriptor is not None and permissions.get(r.descriptor.id, "on") == "on"]

    def diagnostics(self, permissions: Permissions) -> list[McpDiagnostic]:
        """A failed server: one line under its name and one per tool it listed before; disabled or
        pending: one per known tool; active: one per left-out tool (invalid, duplicate, off)."""
        name = self.spec.name
        out: list[McpDiagnostic] = []
        if self.state == "failed" and self.diagnostic is not None:
            out.append(McpDiagnostic(name, *self.diagnostic))
        for r in self.records:
            subject: ToolId | str = r.tool_id if r.tool_id is not None else name
            if self.state != "active":
                if r.tool_id is not None and r.descriptor is not None:
                    out.append(McpDiagnostic(subject, "mcp.server_unavailable", f"MCP server `{name}` is {self.state}"))
            elif r.code is not None:
                out.append(McpDiagnostic(subject, r.code, f"tool {r.name!r}: {r.message}"))
            elif r.tool_id is not None and permissions.get(r.tool_id, "on") == "off":
                out.append(McpDiagnostic(subject, "mcp.tool_off", f"the MCP tool `{r.tool_id}` is switched off"))
        return out

    def info(self, permissions: Permissions) -> McpServerInfo:
        active = self.state == "active"
        tools = tuple(
            McpToolInfo(
                tool_id=r.tool_id,
                name=r.name,
                title=r.descriptor.title if r.descriptor else None,
                description=r.descriptor.description if r.descriptor else "",
                permission=permissions.get(r.tool_id, "on") if r.tool_id else "on",
                offered=active and r.descriptor is not None and permissions.get(r.descriptor.id, "on") == "on",
                problem_code=r.code,
                problem=r.message,
            )
            for r in self.records
        )
        connection = self.connection
        pid = connection.pid if connection is not None else None
        code, message = self.diagnostic or (None, None)
        return McpServerInfo(
            id=self.spec.id,
            name=self.spec.name,
            state=self.state,
            transport=self.spec.transport,
            tools=tools,
            diagnostic_code=code,
            diagnostic=message,
            stderr_tail=tail_lines(self.log_path),
            log_path=self.log_path,
            pid=pid if pid is not None and is_alive(pid) else None,
            timeout=self.spec.timeout,
            server_info=connection.server_info if connection is not None else None,
        )
