"""`McpManager`: MCP servers as a tool source (`bench.mcp`).

All async work runs on the bench's `LoopThread`: the `a*` methods are the core, the plain ones
are one-line sync wrappers for scripts and notebooks. Reads (`servers`, `descriptors()`,
`diagnostics`, `warnings`, `logs()`) do no I/O and are safe from any thread. The handlers
(`on_progress`, `on_sampling`, `on_elicitation`, `on_resource_updated`) are plain setters, see
`_client_side` for what they declare. What a server has besides tools (resources, prompts,
completion, logging, ping) comes from `ServerFeatures` (`_manager_features`).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import weakref
from collections.abc import Coroutine, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, Unpack

from ..core.descriptors import ToolDescriptor
from ..core.errors import ToolbenchError, ToolError
from ..core.ids import ToolId
from ..core.results import ToolOutput
from ..tools.workspace.runtime_files import make_runtime_folder
from ._client_side import ClientSide, Handler, Handlers, RootsProvider
from ._config import ServerFields, ServerOptions, parse_mcp_json
from ._connection import Connection
from ._entry import Entry, parse_or_unknown, resolve_tool
from ._info import McpDiagnostic, McpServerInfo, Permission
from ._manager_features import ServerFeatures
from ._notices import NoticeHandlers, ServerNotices
from ._roots import follows_workspace
from ._sampling import SamplingModel
from ._sign_in import AuthorizeHandler, SignIn
from ._token_store import TokenFolder
from ._wire import TRACE_MESSAGES, TraceMessage

if TYPE_CHECKING:  # mcp sits below runtime: the loop is handed in, never imported
    from ..core.loop import LoopThread

T = TypeVar("T")
DEFAULT_MAX_RESPONSE_CHARS = 2_000_000
_EXIT_GRACE = 5.0  # then the children are killed


class McpManager(ServerFeatures):
    """Registers MCP servers, discovers their tools, and calls them; reads their resources and
    prompts (`ServerFeatures`).

    `McpManager(loop, log_dir)`: `loop` is the bench's `LoopThread`; each stdio server's stderr
    goes to `log_dir/<registration-id>.stderr.log`. `max_response_chars` bounds one answer:
    a larger one is discarded and reported as `mcp.call_outcome_unknown`. `roots` gives the
    folders servers may work in (read at each `roots/list`; the bench passes the workspace
    roots its profile makes visible): with it the manager declares the roots capability to the
    servers registered with `roots="workspace"` (the default; see `_roots` for the others).
    OAuth tokens are kept in `token_dir` (default `default_token_dir()`, never inside `root`)."""

    def __init__(
        self, loop: LoopThread, log_dir: Path | str, *, max_response_chars: int = DEFAULT_MAX_RESPONSE_CHARS,
        roots: RootsProvider | None = None, root: Path | None = None, token_dir: Path | str | None = None,
    ) -> None:
        self._loop = loop
        self._handlers = Handlers(roots)
        self._sign_in = SignIn(TokenFolder(Path(token_dir) if token_dir is not None else None, root))
        self._notices = NoticeHandlers()  # on_resource_updated (ServerFeatures)
        self._log_dir = Path(log_dir)
        self._root = root  # the workspace the log folder must stay beneath (a planted link out: no logs)
        self._max_response_chars = max_response_chars
        self._entries: dict[str, Entry] = {}  # by registration id, in registration order
        self._permissions: dict[ToolId, Permission] = {}
        self._aio_loop: asyncio.AbstractEventLoop | None = None
        self._closed = False
        _LIVE.add(self)

    # -- registering ------------------------------------------------------------------------

    def add(self, name: str, *, connect: bool = True, **fields: Unpack[ServerFields]) -> McpServerInfo:
        """Register a server and (unless `connect=False`) connect and list its tools.

        One of `command=[exe, *args]` (stdio; `args`, `env`, `cwd` too), `url=` (streamable HTTP;
        `headers`), `server=` (an in-process `MCPServer` or low-level `Server`) or `transport=`
        (any `McpTransport`: `StdioTransport`, `HttpTransport`, `InProcessTransport`,
        `SdkTransport(factory)` or a class of your own). `id=` fixes the registration id,
        `timeout=` bounds connecting, listing and each call (seconds, default 60),
        `enabled=False` registers it switched off. `roots=` is what the server is told are the
        client's roots: `"workspace"` (default: the manager's workspace roots), `False` (no roots
        capability: it keeps the folders it was started with) or a list of folders. A server
        that fails becomes `failed` with a diagnostic; only misuse raises (`mcp.config_invalid`,
        `mcp.server_exists`)."""
        return self._run(self.aadd(name, connect=connect, **fields))

    async def aadd(self, name: str, *, connect: bool = True, **fields: Unpack[ServerFields]) -> McpServerInfo:
        [info] = await self._loop.run_async(self._add([ServerOptions.of(name, **fields)], connect))
        return info

    def load_config(self, source: str | Path | Mapping[str, Any], *, connect: bool = True,
                    timeout: float | None = None) -> list[McpServerInfo]:
        """Register every server of an `mcp.json` document (a path or the parsed object): all or
        none (`mcp.config_invalid` names every bad entry, `mcp.server_exists` a name taken).
        `timeout`: the seconds of the entries that give no `timeout` of their own."""
        return self._run(self.aload_config(source, connect=connect, timeout=timeout))

    async def aload_config(
        self, source: str | Path | Mapping[str, Any], *, connect: bool = True, timeout: float | None = None
    ) -> list[McpServerInfo]:
        return await self._loop.run_async(self._add(parse_mcp_json(source, timeout=timeout), connect))

    def registrations(self) -> list[ServerOptions]:
        """Every registration as it was asked (id, transport, timeout, switch, roots): what
        `restore` registers again in another bench (a copied workspace, a cluster worker)."""
        return [ServerOptions(e.spec.name, e.spec.transport, id=e.spec.id, timeout=e.spec.timeout,
                              enabled=e.enabled, roots=e.spec.roots) for e in self._entries.values()]

    def restore(self, options: Sequence[ServerOptions], *, connect: bool = True) -> list[McpServerInfo]:
        """Register `registrations()` of another manager, all or none, and connect them."""
        return self._run(self._add(list(options), connect))

    async def _add(self, options: list[ServerOptions], connect: bool) -> list[McpServerInfo]:
        """Register all of `options` or none, then connect the enabled ones concurrently."""
        self._check_open()
        clash = [o.name for o in options if any(e.spec.name == o.name for e in self._entries.values())]
        if clash:
            raise ToolbenchError("mcp.server_exists",
                                 f"MCP server name(s) registered already: {', '.join(f'`{n}`' for n in clash)}")
        added: list[Entry] = []
        try:
            for option in options:
                added.append(self._register(option))
        except ToolbenchError:
            for entry in added:
                del self._entries[entry.spec.id]
            raise
        if connect:
            await asyncio.gather(*(self._connect(e) for e in added if e.enabled))
        return [self._info(e) for e in added]

    def _register(self, options: ServerOptions) -> Entry:
        spec = options.register(frozenset(self._entries))
        log_path = self._log_dir / f"{spec.id}.stderr.log" if spec.transport.stderr_log and self._logs_here() else None
        entry = self._entries[spec.id] = Entry(spec, options.enabled, log_path)
        return entry

    def _logs_here(self) -> bool:
        """Whether stderr logs may be written to the log folder: it is (made) beneath the root,
        with no link on its way out; otherwise a server's stderr is drained and kept nowhere."""
        if self._root is None:
            return True
        try:
            make_runtime_folder(self._root, self._log_dir.relative_to(self._root).as_posix())
        except (ToolbenchError, ValueError):
            return False
        return True

    def remove(self, name: str) -> None:
        """Close a server and forget it (and its tool permissions)."""
        self._run(self.aremove(name))

    async def aremove(self, name: str) -> None:
        await self._loop.run_async(self._remove(name))

    async def _remove(self, name: str) -> None:
        self._check_open()
        entry = self._entry(name)
        async with entry.lock:
            await entry.disconnect()
            self._entries.pop(entry.spec.id, None)
        provider = entry.spec.provider
        for tool_id in [t for t in self._permissions if t.provider == provider]:
            del self._permissions[tool_id]

    def enable(self, name: str) -> McpServerInfo:
        """Switch a server on and connect it."""
        return self._run(self.aenable(name))

    async def aenable(self, name: str) -> McpServerInfo:
        return await self._loop.run_async(self._set_enabled(name, True))

    def disable(self, name: str) -> McpServerInfo:
        """Switch a server off: its process stops and its tools are neither offered nor callable."""
        return self._run(self.adisable(name))

    async def adisable(self, name: str) -> McpServerInfo:
        return await self._loop.run_async(self._set_enabled(name, False))

    async def _set_enabled(self, name: str, enabled: bool) -> McpServerInfo:
        self._check_open()
        entry = self._entry(name)
        entry.enabled = enabled
        if enabled:
            if entry.state != "active":
                await self._connect(entry)
        else:
            async with entry.lock:
                await entry.disconnect()
                entry.state, entry.diagnostic = "disabled", None
        return self._info(entry)

    def refresh(self, name: str | None = None, *, restart: bool = False) -> list[McpServerInfo]:
        """List the tools again (all enabled servers, or one); reconnect servers that are not
        active, and every one with `restart=True`. Servers refresh concurrently."""
        return self._run(self.arefresh(name, restart=restart))

    async def arefresh(self, name: str | None = None, *, restart: bool = False) -> list[McpServerInfo]:
        return await self._loop.run_async(self._refresh(name, restart))

    async def _refresh(self, name: str | None, restart: bool) -> list[McpServerInfo]:
        self._check_open()
        targets = [self._entry(name)] if name is not None else list(self._entries.values())
        await asyncio.gather(*(self._refresh_one(e, restart) for e in targets if e.enabled))
        return [self._info(e) for e in targets]

    async def _refresh_one(self, entry: Entry, restart: bool) -> None:
        connection = entry.connection
        stale = entry.stale(self._handlers.wanted(entry.spec.roots))  # capabilities are fixed at the handshake
        if restart or stale or entry.state != "active" or connection is None or not connection.usable:
            await self._connect(entry)
        else:
            await entry.relist()

    # -- what toolbench answers servers ------------------------------------------------------

    def on_progress(self, handler: Handler | None) -> Handler | None:
        """`handler(event)` gets each `ProgressEvent` of a call (server, tool, call_id, progress,
        total, message); sync ones run on the bench loop (keep them quick). None removes it.
        Returns the handler it replaces (a new one can pass events on to it)."""
        previous = self._handlers.progress
        self._handlers.set_progress(handler)
        return previous

    def on_sampling(self, handler: Handler | SamplingModel | None) -> None:
        """Answer `sampling/createMessage` with a `toolbench.models` Model (an SDK adapter or a
        ScriptedModel: one request in its protocol, no tools; see `_sampling`), a callable model
        `model(messages, tools)`, or `handler(SamplingRequest)`; declared to servers that connect
        while one is set."""
        self._handlers.set_sampling(handler)

    def on_elicitation(self, handler: Handler | None) -> None:
        """Answer `elicitation/create` with `handler(ElicitationRequest)`; declared like sampling."""
        self._handlers.set_elicitation(handler)

    def on_authorize(self, handler: AuthorizeHandler | bool | None) -> None:
        """`handler(url)` (sync or async) opens an OAuth authorization URL for the person; it
        returns once the URL is shown, and toolbench waits for the redirect to its loopback port.
        None restores the default (print the URL, open a browser where there is one); False
        refuses, so a server that needs a person to sign in fails with `mcp.sign_in_required`."""
        self._sign_in.set_handler(handler)

    def signed_in(self, name: str) -> bool:
        """Whether OAuth tokens are stored for server `name` (an HTTP server; never the tokens)."""
        entry = self._entry(name)
        url = getattr(entry.spec.transport, "url", None)
        return isinstance(url, str) and self._sign_in.token_file(entry.spec.name, url).has_tokens()

    def sign_out(self, name: str) -> None:
        """Forget the stored OAuth tokens and registration of server `name`."""
        entry = self._entry(name)
        url = getattr(entry.spec.transport, "url", None)
        if isinstance(url, str):
            self._sign_in.token_file(entry.spec.name, url).clear()

    def roots_changed(self) -> None:
        """Tell the active servers on the workspace roots (`roots="workspace"`) that the roots
        changed (for the bench's profile setter): safe from any thread, the bench loop included;
        it does not wait for the notifications. Servers on `False` or a list are not told."""
        if self._aio_loop is not None and not self._closed:
            self._loop.submit(self._roots_changed())

    async def aroots_changed(self) -> None:
        await self._loop.run_async(self._roots_changed())

    async def _roots_changed(self) -> None:
        connections = [e.connection for e in self._entries.values()
                       if e.connection is not None and follows_workspace(e.spec.roots)]
        await asyncio.gather(*(c.roots_changed() for c in connections))

    # -- permissions ------------------------------------------------------------------------

    def set_permission(self, tool: ToolId | str, permission: Permission) -> ToolId:
        """Turn one tool `on`, `off` (neither offered nor callable) or `ask` (offered; each call
        waits for the bench's approval handler, `bench.on_approval`).

        `tool` is a ToolId, its text, or a native tool name that one registered server lists."""
        if permission not in ("on", "off", "ask"):
            raise ToolbenchError("bench.misuse", f"a tool permission is `on`, `off` or `ask`, not {permission!r}")
        tool_id = resolve_tool(self._entries, tool)
        self._permissions[tool_id] = permission
        return tool_id

    def permission(self, tool: ToolId | str) -> Permission:
        return self._permissions.get(resolve_tool(self._entries, tool), "on")

    # -- what the runtime reads -------------------------------------------------------------

    @property
    def servers(self) -> list[McpServerInfo]:
        return [self._info(e) for e in list(self._entries.values())]

    def trace(self, name: str, limit: int = TRACE_MESSAGES) -> list[TraceMessage]:
        """The last `limit` JSON-RPC messages exchanged with server `name`, oldest first (kept
        across restarts, at most TRACE_MESSAGES; each message's text cut at TRACE_CHARS)."""
        messages = list(self._entry(name).trace)
        return messages[-limit:] if limit > 0 else []

    def info(self, name: str) -> McpServerInfo:
        """One server's state, by display name or registration id."""
        return self._info(self._entry(name))

    def descriptors(self) -> list[ToolDescriptor]:
        """The tools of active servers that are valid and permitted, in registration then listing order."""
        return [d for e in list(self._entries.values()) for d in e.descriptors(self._permissions)]

    def tool_ids(self) -> frozenset[ToolId]:
        """The ids of `descriptors()`."""
        return frozenset(d.id for d in self.descriptors())

    @property
    def diagnostics(self) -> list[McpDiagnostic]:
        """Why servers and tools are not offered: `(ToolId or server name, code, message)`.

        A failed server gives one line under its name, and one per tool it listed before; a
        disabled or pending server one per known tool; an active one a line per left-out tool
        (invalid, duplicate, or switched off)."""
        return [d for e in list(self._entries.values()) for d in e.diagnostics(self._permissions)]

    @property
    def warnings(self) -> list[McpDiagnostic]:
        """What is worth knowing about offered tools and active servers, none of it fatal: tool
        names over the MCP spec's 128 characters (`mcp.tool_name_long`), outputSchemas that cannot
        be checked (`mcp.output_schema_invalid`), folders of a `roots` list that do not exist
        (`mcp.roots_missing`), and capabilities toolbench did not declare to a server, which may
        hide tools (`mcp.capability_not_offered`)."""
        return [d for e in list(self._entries.values()) for d in e.warnings(self._handlers.wanted(e.spec.roots))]

    # -- calls ------------------------------------------------------------------------------

    async def call(
        self, tool_id: ToolId | str, arguments: Mapping[str, Any], *, call_id: str | None = None
    ) -> ToolOutput:
        """Call an MCP tool. Raises `ToolError` for a recoverable outcome (`mcp.tool_error`,
        `mcp.server_error`, or a not-sent code) and `OutcomeUnknown` when it may have run.
        `call_id` names the call in its progress events."""
        return await self._loop.run_async(self._call(tool_id, arguments, call_id))

    async def _call(self, tool: ToolId | str, arguments: Mapping[str, Any], call_id: str | None) -> ToolOutput:
        self._check_open()
        tool_id = tool if isinstance(tool, ToolId) else parse_or_unknown(tool)
        entry = self._entries.get(tool_id.source_id or "") if tool_id.kind == "mcp" else None
        if entry is None:
            raise ToolError("mcp.tool_unknown", f"no MCP server is registered for `{tool_id}`; the call was not sent")
        connection, record = entry.callable(tool_id, self._permissions)
        if not isinstance(arguments, Mapping):
            raise ToolError("tool.invalid_arguments", "the arguments of an MCP tool call must be a JSON object")
        try:
            mapped = await connection.call(tool_id.name, dict(arguments), call_id=call_id, check=record.output_check)
        except ToolError:
            if connection.lost:
                self._lost(connection)  # now, not when the owner task gets round to it
            raise
        if mapped.is_error:
            raise ToolError("mcp.tool_error", mapped.content, structured=mapped.structured)
        return ToolOutput(content=mapped.content, structured=mapped.structured, attachments=mapped.attachments)

    # -- connecting -------------------------------------------------------------------------

    async def _connect(self, entry: Entry) -> None:
        self._aio_loop = asyncio.get_running_loop()

        def make() -> Connection:
            notices = ServerNotices(entry.spec.name, self._notices, entry.logs)
            connection = Connection(entry.spec, log_path=entry.log_path, max_response_chars=self._max_response_chars,
                                    on_lost=self._lost,
                                    client_side=ClientSide(entry.spec.name, self._handlers, entry.spec.roots),
                                    trace=entry.trace, sign_in=self._sign_in, notices=notices)
            notices.on_tools_changed = lambda: entry.tools_changed(connection)  # re-list in the background
            return connection

        await entry.connect(make, lambda: self._entries.get(entry.spec.id) is entry)

    def _lost(self, connection: Connection) -> None:
        entry = self._entries.get(connection.spec.id)
        if entry is not None:
            entry.lost(connection)

    # -- closing ----------------------------------------------------------------------------

    def close(self) -> None:
        """Close every session and stop every server process. Idempotent."""
        if self._closed:
            return
        self._run(self.aclose())

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        _LIVE.discard(self)
        if self._aio_loop is None:
            return  # nothing ever connected
        await self._loop.run_async(self._close_all())

    async def _close_all(self) -> None:
        entries = list(self._entries.values())
        for entry in entries:
            entry.stop_following()
        await asyncio.gather(*(e.disconnect() for e in entries), return_exceptions=True)
        for entry in entries:
            if entry.enabled:
                entry.state = "pending"

    def _close_at_exit(self) -> None:
        """Interpreter exit: close through the bench loop if it still runs, else kill the children."""
        connections = [e.connection for e in self._entries.values() if e.connection is not None]
        loop = self._aio_loop
        if not self._closed and loop is not None and loop.is_running() and not self._loop.in_loop():
            self._closed = True
            with contextlib.suppress(Exception):  # the loop is going away: fall through to the kill
                asyncio.run_coroutine_threadsafe(self._close_all(), loop).result(_EXIT_GRACE)
        for connection in connections:
            connection.kill()

    # -- helpers ----------------------------------------------------------------------------

    def _entry(self, name: str) -> Entry:
        for candidate in self._entries.values():
            if candidate.spec.name == name:
                return candidate
        entry = self._entries.get(name)
        if entry is None:
            known = ", ".join(e.spec.name for e in self._entries.values()) or "none"
            raise ToolbenchError("mcp.server_unknown", f"no MCP server named `{name}` (registered: {known})")
        return entry

    def _info(self, entry: Entry) -> McpServerInfo:
        return entry.info(self._permissions, self._handlers.wanted(entry.spec.roots))

    def _check_open(self) -> None:
        if self._closed:
            raise ToolbenchError("bench.closed", "the MCP manager was closed")

    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        if self._loop.in_loop():
            coro.close()
            raise ToolbenchError("bench.misuse", "on the bench loop, await the `a...` form of this method")
        return self._loop.run(coro)

    def __repr__(self) -> str:
        states = ", ".join(f"{e.spec.name}={e.state}" for e in self._entries.values())
        return f"McpManager({states or 'no servers'})"


_LIVE: weakref.WeakSet[McpManager] = weakref.WeakSet()


@atexit.register
def _close_live_managers() -> None:
    for manager in list(_LIVE):
        manager._close_at_exit()
