"""Watching a connection's message streams, whatever the transport.

`watched` wraps the streams a transport opens (see `_transport`) with a `WireMonitor`, which
learns what the SDK does not say:

- whether a `tools/call` request was handed to the transport (a call that never left is
  "not sent"; one that left may have run);
- when the server side closed (the process died, the connection broke);
- lines on stdout that are not JSON-RPC (the count, the first and the last few, for diagnostics
  and the `mcp.server_stdout_noise` warning);
- tools in a `tools/list` page the SDK would reject: each is taken out of the page and
  recorded, so one broken tool does not fail the whole listing; a tool whose only fault is its
  `outputSchema` stays, without the schema (recorded in `stripped`: it is a record for the
  user, and the tool works without it);
- requests the server sends the client (`on_server_request`), so one the SDK refuses for an
  undeclared capability is noted on the call.

It also keeps the last JSON-RPC messages of a server (`TraceMessage`, `McpManager.trace`).
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import Any, Literal

import anyio
from mcp.client._transport import TransportStreams
from mcp.shared.message import SessionMessage
from mcp.types import JSONRPCError, JSONRPCRequest, JSONRPCResponse
from mcp.types.methods import validate_server_result
from pydantic import ValidationError

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
        self.noise: list[str] = []  # the last few samples
        self.noise_first = ""  # the first: a startup banner is often the cause of all the rest
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
            sample = _short(item)
            self.noise = [*self.noise, sample][-_NOISE_SAMPLES:]
            self.noise_first = self.noise_first or sample
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
    transport: AbstractAsyncContextManager[TransportStreams], monitor: WireMonitor
) -> AsyncIterator[tuple[Any, Any]]:
    """The transport's streams, seen through `monitor`."""
    async with transport as (read_stream, write_stream):
        yield _ReadStream(read_stream, monitor), _WriteStream(write_stream, monitor)
