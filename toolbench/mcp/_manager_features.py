"""The rest of a server besides its tools, on `bench.mcp`: resources, resource templates, reads
and subscriptions, prompts, completions, logging and ping (`ServerFeatures`, mixed into
`McpManager`).

Each method has an `a...` core that runs on the bench loop and a one-line sync face, as the
manager's own methods do. `name` is a server's display name or registration id. Every failure is
a coded `ToolbenchError` that says what to do next: `mcp.server_unknown`, `mcp.server_unavailable`
(not active, or the connection was lost: the server becomes `failed`), `mcp.capability_missing`
(the server declared no such capability at the handshake), `mcp.not_in_protocol` (ping and
`logging/setLevel` on a 2026-07-28 session), `mcp.request_failed` (the server answered with a
JSON-RPC error, whose code and message are in the text, or with an invalid result),
`mcp.request_timeout` (no answer within the registration's `timeout`), `bench.misuse` (an
argument of the wrong shape, naming what is accepted).

Nothing is cached: each listing asks the server (so `resources/list_changed` and
`prompts/list_changed` need no action). Subscriptions belong to the connection: a reconnect
(`refresh()` of a failed server, `restart=True`, `enable()`) starts with none.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from ..core.errors import ToolbenchError
from ._notices import Handler, NoticeHandlers
from ._server_features import (
    Completion,
    LogMessage,
    McpPrompt,
    McpResource,
    McpResourceTemplate,
    PromptResult,
    ResourceRead,
    completion_argument,
    completion_of,
    completion_ref,
    log_level,
    prompt_arguments,
    prompt_result_of,
    prompts_of,
    resource_read_of,
    resources_of,
    templates_of,
)

if TYPE_CHECKING:
    from ..core.loop import LoopThread
    from ._connection import Connection
    from ._entry import Entry

T = TypeVar("T")
W = TypeVar("W")


class ServerFeatures:
    """`McpManager`'s methods for a server's resources, prompts, completions, logs and ping."""

    _loop: LoopThread
    _notices: NoticeHandlers

    if TYPE_CHECKING:  # McpManager's own
        def _entry(self, name: str) -> Entry: ...
        def _run(self, coro: Coroutine[Any, Any, T]) -> T: ...
        def _check_open(self) -> None: ...
        def _lost(self, connection: Connection) -> None: ...

    # -- resources ---------------------------------------------------------------------------

    def resources(self, name: str) -> list[McpResource]:
        """Every resource server `name` lists (all pages, at most `MAX_PAGES`)."""
        return self._run(self.aresources(name))

    async def aresources(self, name: str) -> list[McpResource]:
        return await self._loop.run_async(self._resources(name))

    async def _resources(self, name: str) -> list[McpResource]:
        server, wire = await self._on(name, lambda c: c.list_resources())
        return resources_of(server, wire)

    def resource_templates(self, name: str) -> list[McpResourceTemplate]:
        """Every resource template server `name` lists (all pages, at most `MAX_PAGES`)."""
        return self._run(self.aresource_templates(name))

    async def aresource_templates(self, name: str) -> list[McpResourceTemplate]:
        return await self._loop.run_async(self._templates(name))

    async def _templates(self, name: str) -> list[McpResourceTemplate]:
        server, wire = await self._on(name, lambda c: c.list_resource_templates())
        return templates_of(server, wire)

    def read_resource(self, name: str, uri: str) -> ResourceRead:
        """Read one resource: its text items verbatim, its blobs as `Attachment`s (see `ResourceRead`)."""
        return self._run(self.aread_resource(name, uri))

    async def aread_resource(self, name: str, uri: str) -> ResourceRead:
        return await self._loop.run_async(self._read(name, _uri(uri)))

    async def _read(self, name: str, uri: str) -> ResourceRead:
        server, wire = await self._on(name, lambda c: c.read_resource(uri))
        return resource_read_of(server, uri, wire)

    def subscribe(self, name: str, uri: str) -> None:
        """Follow a resource: each `resources/updated` for it goes to `on_resource_updated`'s handler.
        On a 2026-07-28 session the URI joins the session's `subscriptions/listen` stream instead
        of a `resources/subscribe` request. Subscribing twice is one subscription."""
        self._run(self.asubscribe(name, uri))

    async def asubscribe(self, name: str, uri: str) -> None:
        chosen = _uri(uri)
        await self._loop.run_async(self._on(name, lambda c: c.subscribe(chosen)))

    def unsubscribe(self, name: str, uri: str) -> None:
        """Stop following a resource (nothing to do for one that is not followed)."""
        self._run(self.aunsubscribe(name, uri))

    async def aunsubscribe(self, name: str, uri: str) -> None:
        chosen = _uri(uri)
        await self._loop.run_async(self._on(name, lambda c: c.unsubscribe(chosen)))

    def on_resource_updated(self, handler: Handler | None) -> Handler | None:
        """`handler(event)` gets a `ResourceUpdate` (server, uri) for each update of a subscribed
        resource, on either protocol revision; sync or async, run on the bench loop (keep a sync
        one quick: await the `a...` methods from an async one). None removes it. Returns the
        handler it replaces."""
        previous = self._notices.resource_updated
        self._notices.set_resource_updated(handler)
        return previous

    # -- prompts and completion ---------------------------------------------------------------

    def prompts(self, name: str) -> list[McpPrompt]:
        """Every prompt server `name` lists (all pages, at most `MAX_PAGES`), with its arguments."""
        return self._run(self.aprompts(name))

    async def aprompts(self, name: str) -> list[McpPrompt]:
        return await self._loop.run_async(self._prompts(name))

    async def _prompts(self, name: str) -> list[McpPrompt]:
        server, wire = await self._on(name, lambda c: c.list_prompts())
        return prompts_of(server, wire)

    def get_prompt(self, name: str, prompt: str | McpPrompt, arguments: Mapping[str, str] | None = None
                   ) -> PromptResult:
        """One prompt's messages, each mapped to text and attachments as tool results are.
        `arguments` maps argument names to text."""
        return self._run(self.aget_prompt(name, prompt, arguments))

    async def aget_prompt(self, name: str, prompt: str | McpPrompt, arguments: Mapping[str, str] | None = None
                          ) -> PromptResult:
        return await self._loop.run_async(self._get_prompt(name, prompt, arguments))

    async def _get_prompt(self, name: str, prompt: str | McpPrompt, arguments: Any) -> PromptResult:
        title = prompt.name if isinstance(prompt, McpPrompt) else prompt
        if not isinstance(title, str) or not title:
            raise ToolbenchError("bench.misuse", "get_prompt takes a prompt's name or a value prompts() returns")
        given = prompt_arguments("get_prompt(arguments=...)", arguments)
        server, wire = await self._on(name, lambda c: c.get_prompt(title, given))
        return prompt_result_of(server, title, wire)

    def complete(self, name: str, ref: Any, argument: Any, *, context: Mapping[str, str] | None = None
                 ) -> Completion:
        """Suggestions for one argument of a prompt or a resource template (`completion/complete`).

        `ref`: a prompt's name or a value `prompts()` returns; a URI template (text holding a
        `{`) or a value `resource_templates()` returns; or the spec's `{"type": "ref/prompt",
        "name": ...}` / `{"type": "ref/resource", "uri": ...}`. `argument`: `(name, value)` or
        `{"name": ..., "value": ...}`, the value typed so far. `context`: the arguments already
        chosen (names to text), which some servers use to narrow the suggestions."""
        return self._run(self.acomplete(name, ref, argument, context=context))

    async def acomplete(self, name: str, ref: Any, argument: Any, *, context: Mapping[str, str] | None = None
                        ) -> Completion:
        return await self._loop.run_async(self._complete(name, ref, argument, context))

    async def _complete(self, name: str, ref: Any, argument: Any, context: Any) -> Completion:
        reference, given = completion_ref(ref), completion_argument(argument)
        chosen = prompt_arguments("complete(context=...)", context)
        _, wire = await self._on(name, lambda c: c.complete(reference, given, chosen))
        return completion_of(wire)

    # -- logging and ping ---------------------------------------------------------------------

    def set_log_level(self, name: str, level: str) -> None:
        """Ask the server to send log messages at `level` and above (`LOG_LEVELS`: debug ...
        emergency); they are kept in `logs(name)`. `mcp.not_in_protocol` on 2026-07-28 sessions."""
        self._run(self.aset_log_level(name, level))

    async def aset_log_level(self, name: str, level: str) -> None:
        chosen = log_level(level)
        await self._loop.run_async(self._on(name, lambda c: c.set_log_level(chosen)))

    def logs(self, name: str) -> list[LogMessage]:
        """The server's last log messages (`notifications/message`), oldest first: at most
        `MAX_LOGS`, the oldest dropped, kept across reconnects. No I/O: safe from any thread."""
        return list(self._entry(name).logs)

    def ping(self, name: str) -> float:
        """One `ping`'s round trip in seconds. `mcp.not_in_protocol` on 2026-07-28 sessions."""
        return self._run(self.aping(name))

    async def aping(self, name: str) -> float:
        return await self._loop.run_async(self._ping(name))

    async def _ping(self, name: str) -> float:
        _, seconds = await self._on(name, lambda c: c.ping())
        return seconds

    # -- helpers ------------------------------------------------------------------------------

    async def _on(self, name: str, request: Callable[[Connection], Awaitable[W]]) -> tuple[str, W]:
        """The server's display name and `request`'s answer on its live connection."""
        self._check_open()
        entry = self._entry(name)
        connection = entry.connection
        server = entry.spec.name
        if entry.state != "active" or connection is None or not connection.usable:
            raise ToolbenchError("mcp.server_unavailable", f"MCP server `{server}` {_why_not(entry)}")
        try:
            return server, await request(connection)
        except ToolbenchError:
            if connection.lost:
                self._lost(connection)  # now, not when the owner task gets round to it
            raise


def _why_not(entry: Entry) -> str:
    if entry.state == "disabled":
        return "is disabled; enable() it first"
    if entry.state == "pending":
        return "is not connected; refresh() connects it"
    if entry.state == "failed":
        detail = f": {entry.diagnostic[1]}" if entry.diagnostic else ""
        return f"failed{detail}; refresh() reconnects it"
    return "has lost its connection; refresh() reconnects it"


def _uri(uri: Any) -> str:
    if not isinstance(uri, str) or not uri:
        raise ToolbenchError("bench.misuse", f"a resource URI is non-empty text, not {uri!r}")
    return uri
