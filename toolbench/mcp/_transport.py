"""Opening a server's transport, and watching its message streams.

`open_transport` picks the SDK transport for a registration: stdio (a child process whose stderr
goes to a log file, so it works inside Jupyter where stderr has no file descriptor), streamable
HTTP (optional headers) or in-memory (an in-process server). `watched` wraps the streams with a
`WireMonitor`, which learns what the SDK does not say:

- whether a `tools/call` request was handed to the transport (a call that never left is
  "not sent"; one that left may have run);
- when the server side closed (the process died, the connection broke);
- lines on stdout that are not JSON-RPC (kept as samples for diagnostics);
- tools in a `tools/list` page the SDK would reject: each is taken out of the page and
  recorded, so one broken tool does not fail the whole listing; a tool whose only fault is its
  `outputSchema` stays, without the schema (recorded in `stripped`: it is a record for the
  user, and the tool works without it);
- requests the server sends the client (`on_server_request`), so one the SDK refuses for an
  undeclared capability is noted on the call.

`spawned_pid` reads the pid of the process the SDK's stdio transport started: the SDK does not
expose it, and toolbench adds nothing to a server's environment to find it.
"""

from __future__ import annotations

import json
import logging
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import Any, Literal, TextIO

import anyio
import httpx2
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.message import SessionMessage
from mcp.types import JSONRPCError, JSONRPCRequest, JSONRPCResponse
from mcp.types.methods import validate_server_result
from pydantic import ValidationError

from ._config import ServerSpec

_FALLBACK_VERSION = "2025-11-25"
_NOISE_SAMPLES = 5
TRACE_MESSAGES = 200  # JSON-RPC messages kept per server, across reconnects
TRACE_CHARS = 4_000  # of each message's JSON text


@dataclass(frozen=True, slots=True)
class TraceMessage:
    """One JSON-RPC message as it crossed the transport (`sent` by toolbench, or `received`).

    `text` is the message's JSON, cut at TRACE_CHARS (`cut` says so); `kind` is `request`,
    `notification`, `response` or `error`; `id` and `method` are empty when the message has none."""

    at: float  # time.time()
    direction: Literal["sent", "received"]
    kind: str
    method: str
    id: str
    text: str
    cut: bool

    @classmethod
    def of(cls, direction: Literal["sent", "received"], message: Any) -> TraceMessage:
        if isinstance(message, JSONRPCRequest):
            kind = "request"
        elif isinstance(message, JSONRPCResponse):
            kind = "response"
        elif isinstance(message, JSONRPCError):
            kind = "error"
        else:
            kind = "notification"
        try:
            text = message.model_dump_json(by_alias=True, exclude_none=True)
        except Exception:  # a trace never breaks a call
            text = repr(message)
        message_id = getattr(message, "id", None)  # 0 is an id
        return cls(time.time(), direction, kind, str(getattr(message, "method", "") or ""),
                   "" if message_id is None else str(message_id), text[:TRACE_CHARS], len(text) > TRACE_CHARS)


@dataclass(frozen=True, slots=True)
class RejectedTool:
    """A listed tool the SDK would refuse, with the first reason."""

    name: str | None
    code: str
    message: str


class WireMonitor:
    """Facts about one connection, learnt from its messages."""

    def __init__(self, protocol_version: Callable[[], str | None],
                 trace: deque[TraceMessage] | None = None) -> None:
        self._protocol_version = protocol_version
        self.trace: deque[TraceMessage] = trace if trace is not None else deque(maxlen=TRACE_MESSAGES)
        self.closed = anyio.Event()
        self.call_sent = False
        self.noise_count = 0
        self.noise: list[str] = []
        self.rejected: list[RejectedTool] = []
        self.stripped: dict[str, str] = {}  # tool name -> why its outputSchema was taken out
        self.on_server_request: Callable[[str], None] | None = None
        self._list_ids: set[str] = set()

    def outgoing(self, item: SessionMessage) -> bool:
        """Note a message about to be written; True for a `tools/call` request."""
        message = item.message
        self.trace.append(TraceMessage.of("sent", message))
        if isinstance(message, JSONRPCRequest):
            if message.method == "tools/list":
                self._list_ids.add(str(message.id))
            elif message.method == "tools/call":
                self.call_sent = True
                return True
        return False

    def incoming(self, item: SessionMessage | Exception) -> SessionMessage | Exception:
        if isinstance(item, Exception):
            self.noise_count += 1
            self.noise = [*self.noise, _short(item)][-_NOISE_SAMPLES:]
            return item
        message = item.message
        self.trace.append(TraceMessage.of("received", message))
        if isinstance(message, JSONRPCRequest):
            if self.on_server_request is not None:
                self.on_server_request(message.method)
            return item
        if isinstance(message, JSONRPCResponse | JSONRPCError) and str(message.id) in self._list_ids:
            self._list_ids.discard(str(message.id))
            if isinstance(message, JSONRPCResponse):
                return self._sanitise_listing(item, message)
        return item

    def _sanitise_listing(self, item: SessionMessage, message: JSONRPCResponse) -> SessionMessage:
        page = message.result
        tools = page.get("tools")
        if not isinstance(tools, list):
            return item
        version = self._protocol_version() or _FALLBACK_VERSION
        rest = {k: v for k, v in page.items() if k != "tools"}
        if _wire_problem(version, {**rest, "tools": []}) is not None:
            return item  # the page itself is broken: let the SDK reject it as a whole
        kept: list[Any] = []
        changed = False
        for tool in tools:
            problem = _wire_problem(version, {**rest, "tools": [tool]})
            if problem is None:
                kept.append(tool)
                continue
            changed = True
            name = tool.get("name") if isinstance(tool, dict) else None
            if isinstance(tool, dict) and "outputSchema" in tool and isinstance(name, str):
                bare = {k: v for k, v in tool.items() if k != "outputSchema"}
                if _wire_problem(version, {**rest, "tools": [bare]}) is None:
                    self.stripped[name] = f"outputSchema breaks the MCP wire format ({problem[1]})"
                    kept.append(bare)
                    continue
            self.rejected.append(RejectedTool(name if isinstance(name, str) else None, *problem))
        if not changed:
            return item
        fixed = JSONRPCResponse(jsonrpc="2.0", id=message.id, result={**page, "tools": kept})
        return SessionMessage(message=fixed, metadata=item.metadata)

    def mark_closed(self) -> None:
        self.closed.set()


def _wire_problem(version: str, page: dict[str, Any]) -> tuple[str, str] | None:
    try:
        validate_server_result("tools/list", version, page)
    except ValidationError as exc:
        error = exc.errors()[0]
        loc = [str(part) for part in error["loc"]]
        where = ".".join(loc[2:]) if loc[:1] == ["tools"] else ".".join(loc)
        if "inputSchema" in loc:
            code = "mcp.tool_schema_invalid"
        elif loc[2:3] == ["name"]:
            code = "mcp.tool_name_invalid"
        else:
            code = "mcp.tool_invalid"
        return code, f"{where or 'tool'}: {error['msg']}"
    except (KeyError, ValueError):
        return None  # a version or method the SDK does not check: nothing to say
    return None


def _short(exc: Exception) -> str:
    """The offending stdout line when the SDK says which, else the error's first line."""
    if isinstance(exc, ValidationError):
        errors = exc.errors()
        if errors and isinstance(errors[0].get("input"), str):
            return repr(errors[0]["input"][:120])
    lines = str(exc).splitlines()
    return (lines[0] if lines else type(exc).__name__)[:200]


class _QuietParseErrors(logging.Filter):
    """Drop the SDK's traceback for each non-JSON stdout line: the monitor reports them instead."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("Failed to parse JSONRPC message from server")


logging.getLogger("mcp.client.stdio").addFilter(_QuietParseErrors())


class _ReadStream:
    def __init__(self, inner: Any, monitor: WireMonitor) -> None:
        self._inner = inner
        self._monitor = monitor

    @property
    def last_context(self) -> Any:
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        try:
            item = await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._monitor.mark_closed()
            raise
        return self._monitor.incoming(item)

    def __aiter__(self) -> _ReadStream:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _ReadStream:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


class _WriteStream:
    def __init__(self, inner: Any, monitor: WireMonitor) -> None:
        self._inner = inner
        self._monitor = monitor

    async def send(self, item: SessionMessage, /) -> None:
        is_call = self._monitor.outgoing(item)
        try:
            await self._inner.send(item)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            if is_call:
                self._monitor.call_sent = False  # refused by the transport: it never left
            self._monitor.mark_closed()
            raise

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _WriteStream:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


@asynccontextmanager
async def watched(
    transport: AbstractAsyncContextManager[tuple[Any, Any]],
    monitor: WireMonitor,
    *,
    on_open: Callable[[], Awaitable[None]] | None = None,
) -> AsyncIterator[tuple[Any, Any]]:
    """The transport's streams, seen through `monitor`; `on_open` runs once the transport is up."""
    async with transport as (read_stream, write_stream):
        if on_open is not None:
            await on_open()
        yield _ReadStream(read_stream, monitor), _WriteStream(write_stream, monitor)


def open_transport(
    spec: ServerSpec, *, errlog: TextIO | None, monitor: WireMonitor
) -> AbstractAsyncContextManager[tuple[Any, Any]]:
    """The SDK transport for a registration (not yet entered)."""
    if spec.transport == "stdio":
        params = StdioServerParameters(
            command=spec.command[0],
            args=list(spec.command[1:]),
            env=dict(spec.env or {}),  # over the SDK's safe defaults; nothing of toolbench's own
            cwd=spec.cwd,
            encoding_error_handler="replace",
        )
        assert errlog is not None
        return stdio_client(params, errlog=errlog)
    if spec.transport == "http":
        assert spec.url is not None
        return _http(spec.url, dict(spec.headers or {}), monitor)
    from mcp.client._memory import InMemoryTransport  # the SDK's in-process double

    return InMemoryTransport(spec.server)


def spawned_pid(transport: AbstractAsyncContextManager[Any]) -> int | None:
    """The pid of the server process an entered SDK stdio transport started, or None.

    `stdio_client` keeps the process in a local of its generator, suspended while the transport
    is open; reading that frame is the one way in that changes nothing the server sees (an
    environment marker leaked into the server's `env`, and a children diff races other spawns)."""
    frame = getattr(getattr(transport, "gen", None), "ag_frame", None)
    process = frame.f_locals.get("process") if frame is not None else None
    pid = getattr(process, "pid", None)
    return pid if isinstance(pid, int) else None


# The SDK's defaults for MCP over HTTP: 30 s to connect and write, 5 minutes to read a stream.
_HTTP_TIMEOUT = httpx2.Timeout(30.0, read=300.0)


@asynccontextmanager
async def _http(url: str, headers: dict[str, str], monitor: WireMonitor) -> AsyncIterator[tuple[Any, Any]]:
    transport = _RefusedCallTracker(monitor)
    client = httpx2.AsyncClient(headers=headers, timeout=_HTTP_TIMEOUT, transport=transport)
    async with client, streamable_http_client(url, http_client=client) as streams:
        yield streams


class _RefusedCallTracker(httpx2.AsyncBaseTransport):
    """Marks a `tools/call` POST that could not even connect as not sent."""

    def __init__(self, monitor: WireMonitor) -> None:
        self._inner = httpx2.AsyncHTTPTransport()
        self._monitor = monitor

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        try:
            return await self._inner.handle_async_request(request)
        except (httpx2.ConnectError, httpx2.ConnectTimeout):
            if request.method == "POST" and _is_call(request):
                self._monitor.call_sent = False
            raise

    async def aclose(self) -> None:
        await self._inner.aclose()


def _is_call(request: httpx2.Request) -> bool:
    try:
        body = json.loads(request.content)
    except (ValueError, httpx2.RequestNotRead):
        return False
    return isinstance(body, dict) and body.get("method") == "tools/call"
