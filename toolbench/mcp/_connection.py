"""One live connection to one MCP server: connect, initialise, list tools, call, close.

Every SDK exception is caught here and translated into toolbench terms (`_failures` builds them):

- connecting and listing raise `ConnectFailed(code, message)`;
- a call returns a `MappedResult` or raises `ToolError` (`mcp.tool_error`, `mcp.server_error`,
  `mcp.unsupported_response`, `mcp.call_not_sent`) or `OutcomeUnknown`
  (`mcp.call_outcome_unknown`) when the request left but no usable answer came back: the
  connection closed, the timeout ran out, or the answer was larger than the limit.

The SDK's own check of `structuredContent` against a tool's `outputSchema` is switched off: it
raises and the answer is lost. toolbench checks it instead (`_tools.OutputCheck`) and notes a
mismatch in the result's `structured["diagnostics"]` (`mcp.structured_content_invalid`), as the
MCP Inspector shows it; the model still gets the answer. What the client declares and answers
(roots, sampling, elicitation, progress) is `_client_side`'s; a call's progress and the server's
requests during it join its `structured` (`progress`, `serverRequests`).

The SDK client is entered and left by one owner task (anyio cancel scopes must be left by the
task that entered them); calls run in the callers' tasks on the same loop, one at a time per
connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import math
from collections import deque
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import anyio
import mcp.types as types
from mcp import Client, InputRequiredRoundsExceededError
from mcp.client import UnexpectedClaimedResult
from mcp.shared.exceptions import MCPError
from mcp.types import CONNECTION_CLOSED, REQUEST_TIMEOUT, Implementation, RootsListChangedNotification
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from ..core.errors import ToolbenchError, ToolError
from ._client_side import CallTrace, ClientSide, Handlers
from ._config import ServerSpec
from ._failures import ConnectFailed, connect_failure, first_error, not_sent, outcome_unknown
from ._mapping import MappedResult, map_server_error, map_tool_result, response_chars
from ._notices import ServerNotices
from ._server_features import LogLevel
from ._sign_in import SignIn
from ._tools import STRUCTURED_INVALID, OutputCheck
from ._transport import TransportContext
from ._wire import RejectedTool, TraceMessage, WireMonitor, watched

MAX_PAGES = 100  # a paginator that never ends cannot hang discovery
CLOSE_GRACE = 10.0  # the SDK's own stdio shutdown is bounded at ~6.5 s (stdin, SIGTERM, SIGKILL)
_CLIENT_INFO = Implementation(name="toolbench", version="0.1.0")
# The handshake: `server/discover` (protocol 2026-07-28) first, then `initialize` for a server that
# refuses it (every earlier revision), as the SDK's "auto" does; both revisions count.
HANDSHAKE = "auto"
_log = logging.getLogger("toolbench.mcp")
T = TypeVar("T")


class Connection:
    """One connection's lifetime. `start()` once, then `list_tools()` / `call()`, then `close()`."""

    def __init__(
        self,
        spec: ServerSpec,
        *,
        log_path: Path | None,
        max_response_chars: int,
        on_lost: Callable[[Connection], None] | None = None,
        client_side: ClientSide | None = None,
        trace: deque[TraceMessage] | None = None,
        sign_in: SignIn | None = None,
        notices: ServerNotices | None = None,
    ) -> None:
        self.spec = spec
        self.sign_in = sign_in
        self.notices = notices  # log messages, resource updates, list changes (`_notices`)
        self.subscribed: set[str] = set()  # the resource URIs this connection follows
        self._listen_changed = asyncio.Event()  # 2026-07-28: the listen stream's filter changed
        self._listen_generation = 0
        self._listen_acks: dict[int, asyncio.Future[types.SubscriptionFilter]] = {}
        self.trace = trace
        self.client_side = client_side or ClientSide(spec.name, Handlers())
        self.log_path = log_path
        self.max_response_chars = max_response_chars
        self.server_info: dict[str, Any] | None = None
        self.server_capabilities: dict[str, Any] | None = None
        self.lost = False  # the server side closed while we were using it
        self.rejected: tuple[RejectedTool, ...] = ()
        self.stripped: dict[str, str] = {}  # tools whose outputSchema the monitor took out, and why
        self._on_lost = on_lost
        self._monitor: WireMonitor | None = None
        self._context: TransportContext | None = None
        self._client: Client | None = None
        self._task: asyncio.Task[None] | None = None
        self._scope: anyio.CancelScope | None = None
        self._wake: anyio.Event | None = None
        self._clock: _ConnectClock | None = None
        self._stopping = False
        self._lock = asyncio.Lock()

    # -- lifetime ---------------------------------------------------------------------------

    async def start(self) -> list[dict[str, Any]]:
        """Connect, initialise and list the tools, all within the registration's timeout.

        Raises ConnectFailed at the deadline at the latest; stopping a stuck server (the SDK
        closes its stdin, waits, then signals it) goes on in the background, and `close()`
        waits for it."""
        loop = asyncio.get_running_loop()
        clock = self._clock = _ConnectClock(loop, self.spec.timeout)
        ready: asyncio.Future[None] = loop.create_future()
        self._wake = anyio.Event()
        self._task = loop.create_task(self._own(ready), name=f"toolbench-mcp-{self.spec.id}")
        try:
            while not ready.done():  # the deadline, not counting a person's sign-in
                left = clock.remaining()  # inf while a person signs in: their wait is bounded on its own
                await asyncio.wait([ready], timeout=None if left == math.inf else max(left, 0.01))
                if not ready.done() and clock.remaining() <= 0:
                    ready.cancel()
                    raise ConnectFailed("mcp.server_timeout", self._timeout_text())
            ready.result()
            try:
                with anyio.fail_after(max(clock.remaining(), 0.01)):
                    return await self.list_tools()
            except TimeoutError:
                text = f"the server did not list its tools within {self.spec.timeout:g} s"
                raise ConnectFailed("mcp.server_timeout", text) from None
        except BaseException:
            self._abandon()
            raise

    def _abandon(self) -> None:
        """Start closing without waiting: wake the owner task, or cut its handshake short."""
        self._stopping = True
        if self._wake is not None:
            self._wake.set()
        if self._client is None and self._scope is not None:
            self._scope.cancel()

    async def _own(self, ready: asyncio.Future[None]) -> None:
        """Hold the SDK client open from handshake to close (the owner task)."""
        try:
            with anyio.CancelScope(deadline=anyio.current_time() + self.spec.timeout) as scope:
                self._scope = scope
                async with AsyncExitStack() as stack:
                    self._monitor = WireMonitor(self._protocol_version, self.trace)
                    self._monitor.on_server_request = self.client_side.note_request
                    self._context = TransportContext(self._monitor, self.log_path, server=self.spec.name,
                                                     sign_in=self.sign_in, on_person=self._person_waiting)
                    client = Client(
                        watched(self.spec.transport.open(self._context), self._monitor),
                        cache=None,
                        client_info=_CLIENT_INFO,
                        mode=HANDSHAKE,
                        **self.client_side.options(),
                        **(self.notices.options() if self.notices is not None else {}),
                    )
                    await stack.enter_async_context(client)
                    _skip_sdk_output_check(client)
                    self._client = client
                    info = client.server_info
                    self.server_info = None if info is None else info.model_dump(mode="json", exclude_none=True)
                    self.server_capabilities = _wire(client.server_capabilities)
                    scope.deadline = math.inf
                    ready.set_result(None)
                    assert self._wake is not None
                    monitor = self._monitor
                    listen = [self._listening(client)] if client.protocol_version in MODERN_PROTOCOL_VERSIONS else []
                    await _first_of(self._wake.wait(), monitor.closed.wait(), *listen)
                    self.lost = not self._stopping
                    self._client = None
            if not ready.done():
                if self._stopping:
                    ready.set_exception(ConnectFailed("mcp.server_start_failed", "closed while connecting"))
                else:
                    ready.set_exception(ConnectFailed("mcp.server_timeout", self._timeout_text()))
        except Exception as exc:  # the SDK raises many kinds (and groups of them) while connecting
            signed = self._context.auth_failure if self._context is not None else None
            failure = signed or connect_failure(exc)
            if not ready.done():
                ready.set_exception(failure)
            elif not self._stopping:
                self.lost = True
        finally:
            self._client = None
            if not ready.done():
                ready.set_exception(ConnectFailed("mcp.server_start_failed", "the connection task was cancelled"))
            if self.lost and self._on_lost is not None:
                self._on_lost(self)

    def _person_waiting(self, waiting: bool) -> None:
        """A person signs in: stop the connect deadline (theirs is the sign-in's own), then go on."""
        clock, scope = self._clock, self._scope
        if clock is None:
            return
        clock.pause() if waiting else clock.resume()
        if scope is not None and not scope.cancel_called and self.server_info is None:
            scope.deadline = math.inf if waiting else anyio.current_time() + max(clock.remaining(), 0.01)

    def _timeout_text(self) -> str:
        text = f"no answer to the MCP handshake within {self.spec.timeout:g} s"
        if self._monitor is not None and self._monitor.noise_count:
            text += "; " + self.noise_text()
        return text

    def _protocol_version(self) -> str | None:
        client = self._client
        return None if client is None else client.protocol_version

    def noise_text(self) -> str:
        """What the server wrote on stdout that is not JSON-RPC (count and samples), or ''."""
        monitor = self._monitor
        if monitor is None or not monitor.noise_count:
            return ""
        samples = " | ".join(monitor.noise)
        return f"the server wrote {monitor.noise_count} line(s) on stdout that are not JSON-RPC, such as {samples}"

    def noise_warning(self) -> str:
        """For a working server: how many stdout lines were not JSON-RPC and the first, or ''."""
        monitor = self._monitor
        if monitor is None or not monitor.noise_count:
            return ""
        return (f"the server wrote {monitor.noise_count} line(s) on stdout that are not JSON-RPC (the first: "
                f"{monitor.noise_first}); the SDK drops them, stricter clients fail on them: log to stderr instead")

    @property
    def usable(self) -> bool:
        monitor = self._monitor
        closed = monitor is None or monitor.closed.is_set()
        return self._client is not None and not closed and not self.lost and not self._stopping

    async def close(self) -> None:
        """Close the session and stop the server (bounded; the child is killed if it lingers)."""
        self._abandon()
        task = self._task
        if task is not None and not task.done():
            try:
                await asyncio.wait_for(asyncio.shield(task), CLOSE_GRACE)
            except (TimeoutError, asyncio.CancelledError):
                task.cancel()
        self.kill()

    def _mark_lost(self) -> None:
        """The transport failed under a call: end the connection (the owner reports it lost)."""
        if not self._stopping:
            self.lost = True
            if self._wake is not None:
                self._wake.set()

    def kill(self) -> None:
        """Last resort from any thread (interpreter exit): SIGKILL what the transport started."""
        if self._context is not None:
            self._context.kill()

    @property
    def pid(self) -> int | None:
        """The server process the transport started (stdio), while the connection holds it."""
        return None if self._context is None else self._context.pid

    # -- discovery --------------------------------------------------------------------------

    async def list_tools(self) -> list[dict[str, Any]]:
        """Every tool the server lists, following pages, as wire JSON. Raises ConnectFailed."""
        client, monitor = self._client, self._monitor
        if client is None or monitor is None or not self.usable:
            raise ConnectFailed("mcp.server_exited", "the connection is closed")
        capabilities = client.server_capabilities
        if capabilities.tools is None:
            self.rejected = ()
            return []
        monitor.rejected, monitor.stripped = [], {}
        tools: list[dict[str, Any]] = []
        cursor: str | None = None
        seen: set[str] = set()
        try:
            for _ in range(MAX_PAGES):
                page = await client.list_tools(cursor=cursor)
                tools.extend(t.model_dump(by_alias=True, mode="json", exclude_none=True) for t in page.tools)
                cursor = page.next_cursor
                if cursor is None:
                    self.rejected, self.stripped = tuple(monitor.rejected), dict(monitor.stripped)
                    return tools
                if cursor in seen:
                    raise ConnectFailed("mcp.tool_listing_failed", f"the server repeated the page cursor {cursor!r}")
                seen.add(cursor)
        except MCPError as exc:
            if exc.code == CONNECTION_CLOSED:
                raise ConnectFailed("mcp.server_exited", "the server closed the connection while listing") from exc
            raise ConnectFailed("mcp.tool_listing_failed", f"tools/list failed: {exc.message} ({exc.code})") from exc
        except ValidationError as exc:
            text = f"the tools/list answer is invalid: {first_error(exc)}"
            raise ConnectFailed("mcp.tool_listing_failed", text) from exc
        raise ConnectFailed("mcp.tool_listing_failed", f"the tool list has more than {MAX_PAGES} pages")

    # -- calls ------------------------------------------------------------------------------

    async def call(
        self, tool: str, arguments: dict[str, Any], *, call_id: str | None = None, check: OutputCheck | None = None
    ) -> MappedResult:
        """Call one tool (one call at a time per connection), within the registration's timeout.

        `check` is the tool's outputSchema check; `call_id` names the call in progress events."""
        async with self._lock:
            trace = self.client_side.begin(tool, call_id)
            try:
                wire = await self._send(tool, arguments, trace)
            except ToolError as exc:  # OutcomeUnknown too: the progress before the failure is kept
                if isinstance(exc.structured, dict):
                    exc.structured.update(trace.extras())
                raise
            finally:
                self.client_side.end(trace)
        mapped = map_tool_result(wire)
        extras = trace.extras()
        problem = check.problem(wire) if check is not None else None
        if problem is None and not extras:
            return mapped
        structured = {**mapped.structured, **extras}
        if problem is not None:
            note = {"code": STRUCTURED_INVALID, "message": problem, "contentIndex": None}
            structured["diagnostics"] = [*(structured.get("diagnostics") or []), note]
        return dataclasses.replace(mapped, structured=structured)

    async def _send(self, tool: str, arguments: dict[str, Any], trace: CallTrace) -> dict[str, Any]:
        """The answer's wire JSON, or the toolbench error for what went wrong."""
        client, monitor = self._client, self._monitor
        if client is None or monitor is None or not self.usable:
            self._not_sent(tool, "the connection to the server is closed")
        monitor.call_sent = False
        try:
            # asyncio's timeout, not anyio's fail_after: a third of the price per call (anyio looks
            # for the root task each time), and the SDK's own scopes pass a native cancel on.
            async with asyncio.timeout(self.spec.timeout):
                result = await client.call_tool(tool, arguments, progress_callback=trace.progress)
        except TimeoutError:
            if monitor.call_sent:
                self._unknown(tool, "mcp.call_timeout", f"no answer within {self.spec.timeout:g} s")
            self._not_sent(tool, f"the request could not be sent within {self.spec.timeout:g} s")
        except MCPError as exc:
            if exc.code == CONNECTION_CLOSED:
                self._mark_lost()
                if monitor.call_sent:
                    self._unknown(tool, "mcp.connection_lost", "the connection closed before the answer came")
                self._not_sent(tool, "the connection to the server is closed")
            if exc.code == REQUEST_TIMEOUT:
                self._unknown(tool, "mcp.call_timeout", exc.message)
            mapped = map_server_error(exc.code, exc.message, exc.data)
            raise ToolError("mcp.server_error", mapped.content, structured=mapped.structured) from exc
        except ValidationError as exc:
            message = f"The MCP server's answer is not a valid tools/call result: {first_error(exc)}"
            mapped = map_server_error(-32603, message)
            raise ToolError("mcp.server_error", mapped.content, structured=mapped.structured) from exc
        except (InputRequiredRoundsExceededError, UnexpectedClaimedResult) as exc:
            raise ToolError(
                "mcp.unsupported_response",
                f"The MCP server answered `{tool}` with a response toolbench does not support: {exc}",
                structured={"unsupportedResponse": {"type": type(exc).__name__, "message": str(exc)}},
            ) from exc
        except RuntimeError as exc:  # the SDK's input-required refusals
            mapped = map_server_error(-32603, f"The MCP server's answer was refused: {exc}")
            raise ToolError("mcp.server_error", mapped.content, structured=mapped.structured) from exc
        except (ValueError, TypeError) as exc:
            if not monitor.call_sent:  # the client refused to serialise the request: nothing left
                self._not_sent(tool, f"the MCP client could not serialise the arguments ({exc}); "
                               "send flatter arguments")
            self._mark_lost()
            self._unknown(tool, "mcp.connection_lost", f"{type(exc).__name__}: {exc}")
        except Exception as exc:  # a transport failure: did the request leave?
            self._mark_lost()
            if monitor.call_sent:
                self._unknown(tool, "mcp.connection_lost", f"{type(exc).__name__}: {exc}")
            self._not_sent(tool, f"{type(exc).__name__}: {exc}")
        wire = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        size = response_chars(wire)
        if size > self.max_response_chars:
            self._unknown(
                tool,
                "mcp.response_too_large",
                f"the answer has {size} characters, more than the limit of {self.max_response_chars}",
            )
        return wire

    async def roots_changed(self) -> None:
        """Tell the server its roots changed (`notifications/roots/list_changed`), when it was told
        toolbench has roots. 2026-07-28 sessions have no client notifications: they ask each time."""
        client = self._client
        if client is None or not self.usable or "roots" not in self.client_side.declared:
            return
        if client.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return
        with contextlib.suppress(Exception):  # a notification is best effort; a lost server is noticed elsewhere
            await client.session.send_notification(RootsListChangedNotification())

    # -- beyond tools: resources, prompts, completion, logging, ping --------------------------
    # Each request is bounded by the registration's timeout (a listing: all its pages), runs beside
    # the calls (it does not wait for the call lock), and raises a coded ToolbenchError.

    @property
    def protocol_version(self) -> str | None:
        """The revision the session speaks, while it is open."""
        return self._protocol_version()

    async def list_resources(self) -> list[dict[str, Any]]:
        async def work(client: Client) -> list[dict[str, Any]]:
            return await _pages("resources/list", "resources", lambda c: client.list_resources(cursor=c))
        return await self._ask("resources/list", work, needs="resources")

    async def list_resource_templates(self) -> list[dict[str, Any]]:
        async def work(client: Client) -> list[dict[str, Any]]:
            return await _pages("resources/templates/list", "resource_templates",
                                lambda c: client.list_resource_templates(cursor=c))
        return await self._ask("resources/templates/list", work, needs="resources")

    async def read_resource(self, uri: str) -> dict[str, Any]:
        async def work(client: Client) -> dict[str, Any]:
            return _wire(await client.read_resource(uri))
        return await self._ask("resources/read", work, needs="resources")

    async def list_prompts(self) -> list[dict[str, Any]]:
        async def work(client: Client) -> list[dict[str, Any]]:
            return await _pages("prompts/list", "prompts", lambda c: client.list_prompts(cursor=c))
        return await self._ask("prompts/list", work, needs="prompts")

    async def get_prompt(self, name: str, arguments: dict[str, str] | None) -> dict[str, Any]:
        async def work(client: Client) -> dict[str, Any]:
            return _wire(await client.get_prompt(name, arguments))
        return await self._ask("prompts/get", work, needs="prompts")

    async def complete(self, ref: dict[str, str], argument: dict[str, str],
                       context: dict[str, str] | None) -> dict[str, Any]:
        reference = (types.PromptReference.model_validate(ref) if ref["type"] == "ref/prompt"
                     else types.ResourceTemplateReference.model_validate(ref))

        async def work(client: Client) -> dict[str, Any]:
            return _wire(await client.complete(reference, argument, context_arguments=context))
        return await self._ask("completion/complete", work, needs="completions")

    async def set_log_level(self, level: LogLevel) -> None:
        self._legacy_only("logging/setLevel", "log messages reach a 2026-07-28 client only with the requests "
                          "that opt in to them, which toolbench does not send")
        request = types.SetLevelRequest(params=types.SetLevelRequestParams(level=level))

        async def work(client: Client) -> None:
            await client.session.send_request(request, types.EmptyResult)
        await self._ask("logging/setLevel", work, needs="logging")

    async def ping(self) -> float:
        """The round trip of one `ping`, in seconds."""
        self._legacy_only("ping", "any request shows the server answers: list its tools with refresh()")

        async def work(client: Client) -> float:
            loop = asyncio.get_running_loop()
            start = loop.time()
            await client.session.send_ping()
            return loop.time() - start
        return await self._ask("ping", work)

    async def subscribe(self, uri: str) -> None:
        """Follow `uri`: `resources/subscribe`, or on 2026-07-28 sessions the listen stream's filter."""
        self._offers_subscriptions()
        if uri in self.subscribed:
            return
        if self._protocol_version() in MODERN_PROTOCOL_VERSIONS:
            self.subscribed.add(uri)
            try:
                honored = await self._ask("subscriptions/listen", lambda client: self._relisten())
            except ToolbenchError:
                self.subscribed.discard(uri)
                self._listen_generation += 1  # the stream failed: reopen it for the others (nobody waits)
                self._listen_changed.set()
                raise
            if uri not in (honored.resource_subscriptions or ()):
                self.subscribed.discard(uri)
                raise ToolbenchError("mcp.capability_missing", f"MCP server `{self.spec.name}` did not take the "
                                     f"subscription to {uri!r} on its subscriptions/listen stream; read the "
                                     "resource again when you need it")
            return
        request = types.SubscribeRequest(params=types.SubscribeRequestParams(uri=uri))

        async def work(client: Client) -> None:
            await client.session.send_request(request, types.EmptyResult)
        await self._ask("resources/subscribe", work)
        self.subscribed.add(uri)

    async def unsubscribe(self, uri: str) -> None:
        self._offers_subscriptions()
        if uri not in self.subscribed:
            return
        if self._protocol_version() in MODERN_PROTOCOL_VERSIONS:
            self.subscribed.discard(uri)
            await self._ask("subscriptions/listen", lambda client: self._relisten())
            return
        request = types.UnsubscribeRequest(params=types.UnsubscribeRequestParams(uri=uri))

        async def work(client: Client) -> None:
            await client.session.send_request(request, types.EmptyResult)
        await self._ask("resources/unsubscribe", work)
        self.subscribed.discard(uri)

    def _live(self) -> Client:
        client = self._client
        if client is None or not self.usable:
            raise ToolbenchError("mcp.server_unavailable", f"MCP server `{self.spec.name}` has lost its connection; "
                                 "refresh() reconnects it")
        return client

    def _legacy_only(self, method: str, instead: str) -> None:
        version = self._protocol_version()
        if version in MODERN_PROTOCOL_VERSIONS:
            raise ToolbenchError("mcp.not_in_protocol", f"MCP server `{self.spec.name}` speaks MCP {version}, which "
                                 f"has no {method} (removed in 2026-07-28); {instead}")

    def _offers_subscriptions(self) -> None:
        resources = self._live().server_capabilities.resources
        if resources is None or not resources.subscribe:
            what = "no resources" if resources is None else "no resource subscriptions"
            raise ToolbenchError("mcp.capability_missing", f"MCP server `{self.spec.name}` declares {what}; read the "
                                 "resource again when you need it")

    async def _ask(self, method: str, work: Callable[[Client], Awaitable[T]], *, needs: str | None = None) -> T:
        """Run `work` (SDK requests) within the timeout; every SDK exception becomes a ToolbenchError."""
        client = self._live()
        if needs is not None and getattr(client.server_capabilities, needs) is None:
            raise ToolbenchError("mcp.capability_missing", f"MCP server `{self.spec.name}` declares no {needs} (in "
                                 f"its capabilities at the handshake), so it answers no {method}")
        name, timeout = self.spec.name, self.spec.timeout
        try:
            async with asyncio.timeout(timeout):
                return await work(client)
        except ToolbenchError:
            raise
        except TimeoutError:
            raise ToolbenchError("mcp.request_timeout", f"MCP server `{name}` did not answer {method} within "
                                 f"{timeout:g} s (the registration's timeout); try again, or register it with a "
                                 "longer timeout") from None
        except MCPError as exc:
            if exc.code == CONNECTION_CLOSED:
                self._mark_lost()
                raise ToolbenchError("mcp.server_unavailable", f"MCP server `{name}` closed the connection during "
                                     f"{method}; refresh() reconnects it") from exc
            raise ToolbenchError("mcp.request_failed", f"MCP server `{name}` answered {method} with error "
                                 f"{exc.code}: {exc.message}") from exc
        except ValidationError as exc:
            raise ToolbenchError("mcp.request_failed", f"MCP server `{name}` answered {method} with a result that is "
                                 f"not valid MCP: {first_error(exc)}") from exc
        except (InputRequiredRoundsExceededError, UnexpectedClaimedResult, RuntimeError, ValueError,
                TypeError) as exc:
            raise ToolbenchError("mcp.request_failed", f"{method} on MCP server `{name}` failed: "
                                 f"{type(exc).__name__}: {exc}") from exc
        except Exception as exc:  # a transport failure
            self._mark_lost()
            raise ToolbenchError("mcp.server_unavailable", f"MCP server `{name}` lost its connection during "
                                 f"{method} ({type(exc).__name__}: {exc}); refresh() reconnects it") from exc

    # -- 2026-07-28: one subscriptions/listen stream ----------------------------------------

    async def _relisten(self) -> types.SubscriptionFilter:
        """Have the listener reopen its stream with the current subscriptions; the filter it got."""
        self._listen_generation += 1
        future: asyncio.Future[types.SubscriptionFilter] = asyncio.get_running_loop().create_future()
        self._listen_acks[self._listen_generation] = future
        self._listen_changed.set()
        return await future

    def _acked(self, generation: int, outcome: types.SubscriptionFilter | BaseException) -> None:
        for key in [k for k in self._listen_acks if k <= generation]:
            future = self._listen_acks.pop(key)
            if future.done():
                continue
            if isinstance(outcome, BaseException):
                future.set_exception(outcome)
            else:
                future.set_result(outcome)

    async def _listening(self, client: Client) -> None:
        """(The owner task, on 2026-07-28 sessions.) Hold one `subscriptions/listen` stream open
        while resources are subscribed, for them alone; reopen it when they change (events in
        between are not replayed). Its events reach `notices` through the SDK's message handler.
        No stream without subscriptions: one held for the whole session would keep an HTTP
        connection open, and a server from shutting down cleanly. Never returns by itself."""
        try:
            while True:
                self._listen_changed.clear()
                generation, uris = self._listen_generation, sorted(self.subscribed)
                if uris:
                    await self._listen_once(client, uris, generation)
                else:
                    self._acked(generation, types.SubscriptionFilter())
                await self._listen_changed.wait()
        finally:
            self._acked(self._listen_generation, MCPError(CONNECTION_CLOSED, "the connection closed"))

    async def _listen_once(self, client: Client, uris: list[str], generation: int) -> None:
        try:
            async with AsyncExitStack() as stack:
                async with asyncio.timeout(self.spec.timeout):
                    stream = await stack.enter_async_context(client.listen(resource_subscriptions=uris))
                self._acked(generation, stream.honored)
                await _first_of(self._listen_changed.wait(), _drain(stream))
        except Exception as exc:  # MCPError, SubscriptionLost, TimeoutError: the waiting subscribe() says so
            self._acked(generation, exc)
            _log.debug("subscriptions/listen on MCP server %s ended: %r", self.spec.name, exc)

    def _not_sent(self, tool: str, reason: str) -> NoReturn:
        raise not_sent(self.spec.name, tool, reason)

    def _unknown(self, tool: str, reason_code: str, reason: str) -> NoReturn:
        raise outcome_unknown(self.spec.name, tool, reason_code, reason)


class _ConnectClock:
    """The connect budget, spent only while no person is signing in."""

    def __init__(self, loop: asyncio.AbstractEventLoop, seconds: float) -> None:
        self._loop = loop
        self._left = seconds
        self._since: float | None = loop.time()  # None: stopped

    def remaining(self) -> float:
        if self._since is None:
            return math.inf
        return self._left - (self._loop.time() - self._since)

    def pause(self) -> None:
        if self._since is not None:
            self._left, self._since = self.remaining(), None

    def resume(self) -> None:
        if self._since is None:
            self._since = self._loop.time()


def _skip_sdk_output_check(client: Client) -> None:
    """Switch off the SDK's outputSchema check for this session (see the module docstring)."""

    async def skip(name: str, result: Any) -> None:
        return None

    client.session.validate_tool_result = skip  # type: ignore[method-assign]


async def _first_of(*waits: Any) -> None:
    """Return when the first of the awaitables finishes; cancel the others."""
    async with anyio.create_task_group() as group:

        async def run(wait: Any) -> None:
            await wait
            group.cancel_scope.cancel()

        for wait in waits:
            group.start_soon(run, wait)


async def _pages(method: str, field: str, fetch: Callable[[str | None], Awaitable[Any]]) -> list[dict[str, Any]]:
    """Every item of a paginated listing (at most MAX_PAGES pages; a repeated cursor is an error)."""
    items: list[dict[str, Any]] = []
    cursor: str | None = None
    seen: set[str] = set()
    for _ in range(MAX_PAGES):
        page = await fetch(cursor)
        items.extend(_wire(item) for item in getattr(page, field))
        cursor = page.next_cursor
        if cursor is None:
            return items
        if cursor in seen:
            raise ToolbenchError("mcp.request_failed", f"the server repeated the {method} page cursor {cursor!r}")
        seen.add(cursor)
    raise ToolbenchError("mcp.request_failed", f"the {method} answer has more than {MAX_PAGES} pages; toolbench "
                         "stopped there (a paginator that never ends)")


def _wire(model: Any) -> dict[str, Any]:
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)  # type: ignore[no-any-return]


async def _drain(stream: Any) -> None:
    async for _ in stream:  # the events themselves reach the message handler (the SDK tees them)
        pass
