"""Transports: how toolbench reaches one MCP server, as a frozen value.

A transport is one class: a subclass of `McpTransport` whose `open(context)` gives an async
context manager of the SDK's `(read, write)` streams, opened anew at each connect. `kind` labels
it (`McpServerInfo.transport`). The connection watches the streams (`_wire`), so every transport
gets the same outcomes, traces and listing repairs. What is special to one transport stays in
its class:

- `StdioTransport(command, args, env, cwd)`: a child process. It gets the SDK's safe default
  environment plus `env`, nothing of toolbench's own; its stderr goes to the log the context
  names (a pipe drained by a thread, so it works inside Jupyter where stderr has no file
  descriptor); its pid is reported to the context, and its process group is killed when the
  connection ends or gives up.
- `HttpTransport(url, headers, oauth)`: streamable HTTP. A `tools/call` POST that could not
  even connect is reported to the context as not sent. Requests carry the SDK's OAuth provider
  the context's `sign_in` builds (`_sign_in`), so a server that answers 401 is signed in to;
  `oauth` (an `OAuth`) says how.
- `InProcessTransport(server)`: the SDK's in-memory double for an `MCPServer` or `Server`.
- `SdkTransport(factory)`: any other SDK transport; `factory()` returns a new async context
  manager of streams at each connect (`SdkTransport(lambda: sse_client(url))`).

The `mcp.json` types that name these classes are in `_transport_types`; the classes read
their entry in `from_config`.
"""

from __future__ import annotations

import json
import logging
import os
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, TextIO

import httpx2
from mcp.client._transport import TransportStreams
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from ._failures import ConnectFailed
from ._mcp_json import ConfigEntry, config_invalid
from ._oauth import OAuth
from ._procs import CappedLog, is_alive, kill_group
from ._wire import WireMonitor

if TYPE_CHECKING:
    from ._sign_in import SignIn

Streams = AbstractAsyncContextManager[TransportStreams]


class TransportContext:
    """What one connection lends the transport it opens.

    `log_path`: where the server's stderr goes, for a transport with `stderr_log` (None: nowhere).
    A transport that starts a process sets `pid` (shown in `McpServerInfo.pid`; its group is
    killed when the connection gives up), and one that knows a `tools/call` request never left
    calls `call_not_sent()` (the call is then reported as not sent rather than outcome unknown).
    `server` is the display name and `sign_in` the manager's `SignIn` (None: no OAuth); a sign-in
    that fails says why with `auth_failed()`, and `person_waiting(True/False)` stops and starts
    the connect timeout around the person's part."""

    def __init__(
        self, monitor: WireMonitor, log_path: Path | None = None, *, server: str = "", sign_in: SignIn | None = None,
        on_person: Callable[[bool], None] | None = None,
    ) -> None:
        self.log_path = log_path
        self.pid: int | None = None
        self.server = server
        self.sign_in = sign_in
        self.auth_failure: ConnectFailed | None = None
        self._on_person = on_person
        self._monitor = monitor

    def call_not_sent(self) -> None:
        self._monitor.call_sent = False

    def auth_failed(self, failure: ConnectFailed) -> None:
        self.auth_failure = failure

    def person_waiting(self, waiting: bool) -> None:
        if self._on_person is not None:
            self._on_person(waiting)

    def kill(self) -> None:
        """SIGKILL the process group of the server this transport started, if it still runs."""
        if self.pid is not None and is_alive(self.pid):
            kill_group(self.pid)


class McpTransport(ABC):
    """How to reach one MCP server. Subclass it (a frozen dataclass is the habit) to add one.

    `kind` is the label `McpServerInfo.transport` shows; `stderr_log` says whether the server's
    stderr has a log (`<log_dir>/<registration-id>.stderr.log`, given as `context.log_path`)."""

    __slots__ = ()
    kind: ClassVar[str] = "custom"
    stderr_log: ClassVar[bool] = False

    @abstractmethod
    def open(self, context: TransportContext) -> Streams:
        """A new async context manager of the SDK's `(read, write)` streams (entered by the connection)."""


def _str_map(what: str, value: Any) -> dict[str, str] | None:
    """An object of strings (numbers are taken as their text), copied; None stays None."""
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise config_invalid(f"`{what}` must be an object of strings, not {type(value).__name__}")
    out: dict[str, str] = {}
    for key, item in value.items():
        if not isinstance(key, str) or not isinstance(item, str | int | float) or isinstance(item, bool):
            raise config_invalid(f"`{what}` entry `{key}` must be a string")
        out[key] = str(item)
    return out


def _only(entry: ConfigEntry, allowed: frozenset[str], kind: str) -> None:
    """Refuse transport fields that belong to another transport (a stdio entry with `headers`)."""
    foreign = sorted(k for k in _TRANSPORT_FIELDS - allowed if entry.has(k))
    if foreign:
        raise config_invalid(f"a {kind} server takes no {', '.join(f'`{k}`' for k in foreign)}")


_STDIO_FIELDS = frozenset({"command", "args", "env", "cwd", "envFile"})
_HTTP_FIELDS = frozenset({"url", "headers", "oauth"})
_TRANSPORT_FIELDS = _STDIO_FIELDS | _HTTP_FIELDS


@dataclass(frozen=True, slots=True, init=False)
class StdioTransport(McpTransport):
    """A server run as a child process, speaking JSON-RPC on its stdin and stdout.

    `command` is one executable or `[executable, *arguments]`; `args` are appended. `env` goes
    over the SDK's safe default environment; `cwd` is the working folder. Equal values make the
    same transport: `StdioTransport(t.command, t.args, t.env, t.cwd) == t`."""

    kind: ClassVar[str] = "stdio"
    stderr_log: ClassVar[bool] = True
    command: str
    args: tuple[str, ...]
    env: Mapping[str, str] | None = field(repr=False, hash=False)  # may hold secrets
    cwd: str | None

    def __init__(
        self,
        command: str | Sequence[str],
        args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        cwd: str | Path | None = None,
    ) -> None:
        if not isinstance(command, str | Sequence) or isinstance(args, str) or not isinstance(args, Sequence):
            raise config_invalid("`command` is an executable or a list, `args` a list of strings")
        argv = [command] if isinstance(command, str) else list(command)
        argv += list(args)
        if not argv or not all(isinstance(a, str) for a in argv) or not argv[0].strip():
            raise config_invalid("`command` must be a non-empty executable, with string arguments")
        object.__setattr__(self, "command", argv[0])
        object.__setattr__(self, "args", tuple(argv[1:]))
        object.__setattr__(self, "env", _str_map("env", env))
        object.__setattr__(self, "cwd", None if cwd is None else str(cwd))

    @classmethod
    def from_config(cls, entry: ConfigEntry) -> StdioTransport:
        """From `{command, args, env, cwd, envFile}`: `envFile`'s variables go under `env`, which
        wins on a clash. A server of a file that gives no `cwd` starts in the file's folder, as a
        project's `.mcp.json` runs there in the clients that read it: its relative `args` and
        `command` mean the same wherever toolbench is started from."""
        _only(entry, _STDIO_FIELDS, "stdio")
        args, env = entry.value("args"), entry.value("env")
        variables = entry.env_file()
        if variables is not None:
            if env is not None and not isinstance(env, Mapping):
                raise config_invalid("`env` must be an object of strings")
            env = {**variables, **(env or {})}
        cwd = entry.path("cwd")
        return cls(entry.value("command"), args or (), env, cwd if cwd is not None or entry.base is None
                   else str(entry.base.resolve()))

    def open(self, context: TransportContext) -> Streams:
        return self._streams(context)

    @asynccontextmanager
    async def _streams(self, context: TransportContext) -> AsyncIterator[TransportStreams]:
        params = StdioServerParameters(
            command=self.command, args=list(self.args), env=dict(self.env or {}), cwd=self.cwd,
            encoding_error_handler="replace",
        )
        async with AsyncExitStack() as stack:
            client = stdio_client(params, errlog=_errlog(context.log_path, stack))
            stack.callback(context.kill)  # after the SDK's own shutdown: make sure no child is left
            try:
                streams = await stack.enter_async_context(client)
            except OSError as exc:  # the SDK spawns before anything else: nothing else raises this here
                raise ConnectFailed("mcp.server_start_failed", f"cannot start `{self.command}`: {exc}") from exc
            context.pid = _spawned_pid(client)
            yield streams


def _errlog(log_path: Path | None, stack: AsyncExitStack) -> TextIO:
    """The child's stderr: a capped log, closed after the child's shutdown; /dev/null without one."""
    if log_path is None:
        return stack.enter_context(open(os.devnull, "w", encoding="utf-8"))
    log_path.parent.mkdir(parents=True, exist_ok=True)
    log = CappedLog(log_path)
    stack.callback(log.close)
    return log.writer


def _spawned_pid(client: AbstractAsyncContextManager[Any]) -> int | None:
    """The pid of the server process an entered SDK stdio transport started, or None.

    `stdio_client` keeps the process in a local of its generator, suspended while the transport
    is open; reading that frame is the one way in that changes nothing the server sees (an
    environment marker leaked into the server's `env`, and a children diff races other spawns)."""
    frame = getattr(getattr(client, "gen", None), "ag_frame", None)
    process = frame.f_locals.get("process") if frame is not None else None
    pid = getattr(process, "pid", None)
    return pid if isinstance(pid, int) else None


class _QuietParseErrors(logging.Filter):
    """Drop the SDK's traceback for each non-JSON stdout line: the monitor reports them instead."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("Failed to parse JSONRPC message from server")


logging.getLogger("mcp.client.stdio").addFilter(_QuietParseErrors())


@dataclass(frozen=True, slots=True, init=False)
class HttpTransport(McpTransport):
    """A server reached over streamable HTTP at `url` (http:// or https://), with `headers` on
    every request, signed in to with OAuth when it asks (`oauth`: how; None: discovery and
    registration as the SDK does them)."""

    kind: ClassVar[str] = "http"
    url: str
    headers: Mapping[str, str] | None = field(repr=False, hash=False)  # may hold secrets
    oauth: OAuth | None = field(repr=False, hash=False)

    def __init__(self, url: str, headers: Mapping[str, str] | None = None, oauth: OAuth | None = None) -> None:
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise config_invalid(f"`url` must start with http:// or https://, not {url!r}")
        if oauth is not None and not isinstance(oauth, OAuth):
            raise config_invalid(f"`oauth` must be a toolbench.mcp.OAuth, not {type(oauth).__name__}")
        object.__setattr__(self, "url", url)
        object.__setattr__(self, "headers", _str_map("headers", headers))
        object.__setattr__(self, "oauth", oauth)

    @classmethod
    def from_config(cls, entry: ConfigEntry) -> HttpTransport:
        """From `{url, headers, oauth}` (`oauth` with camelCase keys, see `_oauth`)."""
        _only(entry, _HTTP_FIELDS, "streamable HTTP")
        return cls(entry.value("url"), entry.value("headers"), OAuth.from_config(entry.value("oauth")))

    def open(self, context: TransportContext) -> Streams:
        return self._streams(context)

    @asynccontextmanager
    async def _streams(self, context: TransportContext) -> AsyncIterator[TransportStreams]:
        tracker = _RefusedCallTracker(context)
        auth = None if context.sign_in is None else context.sign_in.auth(context.server, self.url, self.oauth, context)
        client = httpx2.AsyncClient(headers=dict(self.headers or {}), timeout=_HTTP_TIMEOUT, transport=tracker,
                                    auth=auth)
        async with client, streamable_http_client(self.url, http_client=client) as streams:
            yield streams


# The SDK's defaults for MCP over HTTP: 30 s to connect and write, 5 minutes to read a stream.
_HTTP_TIMEOUT = httpx2.Timeout(30.0, read=300.0)


class _RefusedCallTracker(httpx2.AsyncBaseTransport):
    """Marks a `tools/call` POST that could not even connect as not sent."""

    def __init__(self, context: TransportContext) -> None:
        self._inner = httpx2.AsyncHTTPTransport()
        self._context = context

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        try:
            return await self._inner.handle_async_request(request)
        except (httpx2.ConnectError, httpx2.ConnectTimeout):
            if request.method == "POST" and _is_call(request):
                self._context.call_not_sent()
            raise

    async def aclose(self) -> None:
        await self._inner.aclose()


def _is_call(request: httpx2.Request) -> bool:
    try:
        body = json.loads(request.content)
    except (ValueError, httpx2.RequestNotRead):
        return False
    return isinstance(body, dict) and body.get("method") == "tools/call"


@dataclass(frozen=True, slots=True)
class InProcessTransport(McpTransport):
    """An `MCPServer` or low-level `Server` run in this process, over the SDK's in-memory streams
    (the same JSON-RPC messages as stdio and HTTP, so the monitor sees them alike)."""

    kind: ClassVar[str] = "memory"
    server: Any = field(repr=False)

    def __post_init__(self) -> None:
        from mcp.server import Server
        from mcp.server.mcpserver import MCPServer

        if not isinstance(self.server, MCPServer | Server):
            raise config_invalid(f"`server` must be an mcp MCPServer or Server, not {type(self.server).__name__}")

    def open(self, context: TransportContext) -> Streams:
        from mcp.client._memory import InMemoryTransport  # the SDK's in-process double

        return InMemoryTransport(self.server)


@dataclass(frozen=True, slots=True)
class SdkTransport(McpTransport):
    """Any SDK transport: `factory()` returns a new async context manager of `(read, write)`
    streams at each connect, e.g. `SdkTransport(lambda: sse_client(url))`."""

    kind: ClassVar[str] = "sdk"
    factory: Callable[[], AbstractAsyncContextManager[Any]]

    def __post_init__(self) -> None:
        if not callable(self.factory):
            raise config_invalid(f"`factory` must be a callable, not {type(self.factory).__name__}")

    def open(self, context: TransportContext) -> Streams:
        streams = self.factory()
        if not hasattr(streams, "__aenter__"):
            raise ConnectFailed("mcp.server_start_failed", "the SdkTransport factory returned a "
                                f"{type(streams).__name__}, not an async context manager of streams")
        return streams
