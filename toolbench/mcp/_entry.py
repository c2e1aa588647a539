"""One registration: its mutable state and lifecycle (connect, re-list, disconnect), and the
frozen views the manager reports from it; `resolve_tool` finds a tool across registrations.

Entries are changed on the bench loop only; the views (`info`, `diagnostics`, `warnings`,
`descriptors`) read them without I/O beyond a log tail (and a stat of each folder of a roots
list), so any thread may ask. `wanted` is what the handlers would declare to this server now.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Mapping
from pathlib import Path

import anyio

from ..core.descriptors import ToolDescriptor
from ..core.errors import ToolbenchError, ToolError
from ..core.ids import ToolId
from ._client_side import CAPABILITIES
from ._config import ServerSpec
from ._connection import Connection
from ._failures import ConnectFailed
from ._info import McpDiagnostic, McpServerInfo, McpToolInfo, Permission, ServerState
from ._notices import MAX_LOGS
from ._procs import is_alive, tail_lines
from ._roots import missing_folders
from ._server_features import LogMessage
from ._tools import ToolRecord, build_records
from ._wire import TRACE_MESSAGES, TraceMessage

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
        self.trace: deque[TraceMessage] = deque(maxlen=TRACE_MESSAGES)  # the wire, across reconnects
        self.logs: deque[LogMessage] = deque(maxlen=MAX_LOGS)  # the server's log messages, across reconnects
        self._following: asyncio.Task[None] | None = None  # re-listing after tools/list_changed
        self._changed_again = False

    # -- lifecycle (bench loop) --------------------------------------------------------------

    async def connect(self, make: Callable[[], Connection], registered: Callable[[], bool]) -> None:
        """(Re)connect with a new connection from `make` and list the tools; `failed` on failure."""
        async with self.lock:
            await self.disconnect()
            if not self.enabled or not registered():
                return
            self.state = "pending"
            connection = self.connection = make()
            try:
                tools = await connection.start()
            except ConnectFailed as exc:
                self.fail(exc)  # the connection stays: closing the manager waits for its cleanup
                return
            self.records = build_records(self.spec, tools, connection.rejected, connection.stripped)
            self.state, self.diagnostic = "active", None

    async def relist(self, only: Connection | None = None) -> None:
        """List the tools again on the live connection (if `only` is given: if it is still that one);
        a failure or timeout fails the server."""
        async with self.lock:
            connection = self.connection
            if connection is None or (only is not None and connection is not only):
                return
            try:
                with anyio.fail_after(self.spec.timeout):
                    tools = await connection.list_tools()
            except (ConnectFailed, TimeoutError) as exc:
                await self.disconnect()
                failure = exc if isinstance(exc, ConnectFailed) else ConnectFailed(
                    "mcp.server_timeout", f"the server did not list its tools within {self.spec.timeout:g} s"
                )
                self.fail(failure)
                return
            self.records = build_records(self.spec, tools, connection.rejected, connection.stripped)

    async def disconnect(self) -> None:
        connection, self.connection = self.connection, None
        if connection is not None:
            await connection.close()

    # -- tools/list_changed (bench loop) ----------------------------------------------------

    def tools_changed(self, connection: Connection) -> None:
        """The server said its tools changed: list them again in the background (one listing at a
        time; changes that arrive meanwhile make one more)."""
        if connection is not self.connection:
            return
        self._changed_again = True
        if self._following is None or self._following.done():
            self._following = asyncio.get_running_loop().create_task(self._follow(connection))

    async def _follow(self, connection: Connection) -> None:
        while self._changed_again and connection is self.connection and self.state == "active":
            self._changed_again = False
            await self.relist(connection)

    def stop_following(self) -> None:
        if self._following is not None:
            self._following.cancel()

    # -- state ------------------------------------------------------------------------------

    def record(self, name: str) -> ToolRecord | None:
        return next((r for r in self.records if r.name == name), None)

    def callable(self, tool_id: ToolId, permissions: Permissions) -> tuple[Connection, ToolRecord]:
        """The connection and record to call `tool_id` on, or the `ToolError` saying why not (not sent)."""
        name = self.spec.name
        connection = self.connection
        if self.state != "active" or connection is None or not connection.usable:
            if self.state == "active":
                why = "has lost its connection"
            else:
                why = f"is {self.state}" + (f": {self.diagnostic[1]}" if self.diagnostic else "")
            raise ToolError("mcp.server_unavailable", f"MCP server `{name}` {why}; the call was not sent")
        record = self.record(tool_id.name)
        if record is None or record.descriptor is None:
            why = f" (left out: {record.message})" if record is not None else ""
            raise ToolError("mcp.tool_unknown", f"MCP server `{name}` offers no tool `{tool_id.name}`{why}")
        if permissions.get(tool_id, "on") == "off":
            raise ToolError("mcp.tool_off", f"the MCP tool `{tool_id}` is switched off; the call was not sent")
        return connection, record

    def stale(self, wanted: frozenset[str]) -> bool:
        """Whether the live connection declared other capabilities than the handlers ask for now."""
        connection = self.connection
        return connection is not None and connection.client_side.declared != wanted

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
                if r.descriptor is not None and permissions.get(r.descriptor.id, "on") != "off"]

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

    def warnings(self, wanted: frozenset[str]) -> list[McpDiagnostic]:
        """For an active server: its tools' warnings (offered all the same), the lines on its stdout
        that are not JSON-RPC (`mcp.server_stdout_noise`), the folders of its roots list that do
        not exist (`mcp.roots_missing`), then what toolbench did not declare to it (servers may
        hide the tools that need it: `mcp.capability_not_offered`; not roots when the
        registration says `roots=False`: that is asked for)."""
        if self.state != "active" or self.connection is None:
            return []
        out = [McpDiagnostic(r.tool_id, code, f"tool {r.name!r}: {message}")
               for r in self.records if r.tool_id is not None and r.descriptor is not None
               for code, message in r.warnings]
        noise = self.connection.noise_warning()
        if noise:
            text = f"MCP server `{self.spec.name}`: {noise}"
            out.append(McpDiagnostic(self.spec.name, "mcp.server_stdout_noise", text))
        absent = missing_folders(self.spec.roots)
        if absent:
            text = (f"MCP server `{self.spec.name}`: its roots {', '.join(map(str, absent))} are not existing "
                    "folders; toolbench declares them all the same, but a server may skip them")
            out.append(McpDiagnostic(self.spec.name, "mcp.roots_missing", text))
        declared = self.connection.client_side.declared
        missing = [c for c in CAPABILITIES if c not in declared and (c != "roots" or self.spec.roots is not False)]
        if missing:
            hints = []
            later = [c for c in missing if c in wanted]
            if later:
                hints.append(f"{' and '.join(later)} can be declared now: refresh() reconnects it")
            unset = [f"bench.mcp.on_{c}(handler)" for c in missing if c != "roots" and c not in wanted]
            if unset:
                hints.append(f"set {' / '.join(unset)}, then refresh()")
            if "roots" in missing and "roots" not in wanted:
                hints.append("the manager was given no workspace roots")
            text = (f"toolbench did not declare {', '.join(missing)} to MCP server `{self.spec.name}`, so it may "
                    f"hide tools that need them ({'; '.join(hints)})")
            out.append(McpDiagnostic(self.spec.name, "mcp.capability_not_offered", text))
        return out

    def info(self, permissions: Permissions, wanted: frozenset[str] = frozenset()) -> McpServerInfo:
        active = self.state == "active"
        tools = tuple(
            McpToolInfo(
                tool_id=r.tool_id,
                name=r.name,
                title=r.descriptor.title if r.descriptor else None,
                description=r.descriptor.description if r.descriptor else "",
                permission=permissions.get(r.tool_id, "on") if r.tool_id else "on",
                offered=active and r.descriptor is not None and permissions.get(r.descriptor.id, "on") != "off",
                problem_code=r.code,
                problem=r.message,
                annotations=r.descriptor.annotations if r.descriptor else None,
                output_schema=r.descriptor.output_schema if r.descriptor else None,
                warnings=tuple(McpDiagnostic(r.tool_id, code, message) for code, message in r.warnings
                               if r.tool_id is not None),
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
            transport=self.spec.transport.kind,
            tools=tools,
            diagnostic_code=code,
            diagnostic=message,
            stderr_tail=tail_lines(self.log_path),
            log_path=self.log_path,
            pid=pid if pid is not None and is_alive(pid) else None,
            timeout=self.spec.timeout,
            server_info=connection.server_info if connection is not None else None,
            client_capabilities=tuple(c for c in CAPABILITIES if connection is not None
                                      and c in connection.client_side.declared),
            warnings=tuple(self.warnings(wanted)),
            protocol_version=connection.protocol_version if connection is not None else None,
            server_capabilities=connection.server_capabilities if connection is not None else None,
        )


def resolve_tool(entries: Mapping[str, Entry], tool: ToolId | str) -> ToolId:
    """The ToolId `tool` names: a ToolId or its text (its server must be registered), or a native
    name exactly one registered server lists. Raises `mcp.server_unknown` / `mcp.tool_unknown`."""
    tool_id: ToolId | None = tool if isinstance(tool, ToolId) else None
    if tool_id is None and isinstance(tool, str):
        try:
            tool_id = ToolId.parse(tool)
        except ToolbenchError:
            tool_id = None
        if tool_id is not None and tool_id.kind != "mcp":
            tool_id = None
    if tool_id is not None:
        if tool_id.kind != "mcp" or tool_id.source_id not in entries:
            raise ToolbenchError("mcp.server_unknown", f"no MCP server is registered for `{tool_id}`")
        return tool_id
    matches = [r.tool_id for e in entries.values() for r in e.records if r.name == tool and r.tool_id]
    if len(matches) != 1:
        found = ", ".join(str(m) for m in matches) or "none"
        raise ToolbenchError("mcp.tool_unknown", f"`{tool}` must name exactly one listed MCP tool (matches: {found})")
    assert matches[0] is not None
    return matches[0]


def parse_or_unknown(text: str) -> ToolId:
    """The ToolId of a call's text, or `ToolError("mcp.tool_unknown")` (the call was not sent)."""
    try:
        return ToolId.parse(text)
    except ToolbenchError as exc:
        raise ToolError("mcp.tool_unknown", f"`{text}` is not a tool id: {exc.message}") from exc
