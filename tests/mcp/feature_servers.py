"""In-process servers for the tests of what a server has besides tools.

`modern_server()` is an `MCPServer` (the SDK serves it at 2026-07-28: updates and tool-list
changes reach the client on a `subscriptions/listen` stream). `legacy_server()` is a low-level
`Server` with every handler the 2025 revision has (subscribe, setLevel, ping), reached through
`legacy(server)`, which answers the SDK's `server/discover` probe with "method not found" so the
session falls back to the `initialize` handshake, as with a server of 2025. `bare_server()` has
tools only; `paged_server()` lists its resources over pages (or endlessly)."""

from __future__ import annotations

import base64
import warnings
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp.types as types
from mcp.client._memory import InMemoryTransport
from mcp.server import Server
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.prompts.base import AssistantMessage, Message, UserMessage
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage

from toolbench.mcp import SdkTransport

PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5Er"
                       "kJggg==")  # one pixel


def legacy(server: Server[Any] | MCPServer) -> SdkTransport:
    """A transport to `server` on which the client's `server/discover` probe is refused."""

    @asynccontextmanager
    async def streams() -> AsyncIterator[tuple[Any, Any]]:
        async with InMemoryTransport(server) as (read, write):
            send, receive = anyio.create_memory_object_stream[SessionMessage | Exception](100)

            class Write:
                async def send(self, item: SessionMessage) -> None:
                    message = item.message
                    if isinstance(message, types.JSONRPCRequest) and message.method == "server/discover":
                        error = types.ErrorData(code=types.METHOD_NOT_FOUND, message="Method not found")
                        await send.send(SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=message.id, error=error)))
                        return
                    await write.send(item)

                async def aclose(self) -> None:
                    await write.aclose()

            async def pump() -> None:
                async with send:
                    async for item in read:
                        await send.send(item)

            async with anyio.create_task_group() as group:
                group.start_soon(pump)
                yield receive, Write()
                group.cancel_scope.cancel()

    return SdkTransport(streams)


CITIES = ("Oslo", "Osaka", "Ottawa", "Paris")


def modern_server(asked: list[dict[str, Any]] | None = None) -> MCPServer:
    """`asked` collects each completion request (ref, argument, context) as wire JSON."""
    server = MCPServer("features")

    @server.completion()
    async def complete(ref: Any, argument: Any, context: Any) -> types.Completion:
        if asked is not None:
            asked.append({"ref": ref.model_dump(by_alias=True, exclude_none=True),
                          "argument": argument.model_dump(by_alias=True, exclude_none=True),
                          "context": None if context is None else context.arguments})
        values = [c for c in CITIES if c.startswith(argument.value)]
        return types.Completion(values=values[:2], total=len(values), has_more=len(values) > 2)

    @server.resource("demo://text", mime_type="text/plain", description="a text")
    def text() -> str:
        return "hello, resource"

    @server.resource("demo://image.png", mime_type="image/png")
    def image() -> bytes:
        return PNG

    @server.resource("demo://slow")
    async def slow() -> str:
        await anyio.sleep_forever()
        return ""

    @server.resource("demo://items/{item}", mime_type="text/plain")
    def item(item: str) -> str:
        return f"item {item}"

    @server.prompt(description="Ask about a city's weather")
    def weather(city: str, days: str = "1") -> str:
        return f"What is the weather in {city} for {days} day(s)?"

    @server.prompt(description="A picture, a resource and a question")
    def picture() -> list[Message]:
        image = types.ImageContent(type="image", data=base64.b64encode(PNG).decode(), mime_type="image/png")
        resource = types.EmbeddedResource(type="resource", resource=types.TextResourceContents(
            uri="demo://text", mime_type="text/plain", text="hello, resource"))
        return [UserMessage("  Look at this:  "), UserMessage(image), AssistantMessage(resource)]

    @server.tool()
    async def poke(uri: str, ctx: Context) -> str:
        await ctx.notify_resource_updated(uri)
        return "poked"

    @server.tool()
    async def grow(ctx: Context) -> str:
        server.add_tool(lambda: "grown", name="grown")
        await ctx.notify_tools_changed()
        return "grew"

    return server


class LegacyState:
    """What `legacy_server()` was asked, for the tests to read."""

    def __init__(self) -> None:
        self.subscribed: list[str] = []
        self.unsubscribed: list[str] = []
        self.levels: list[str] = []
        self.tools = ["poke", "log", "grow"]


def legacy_server(state: LegacyState) -> Server[Any]:
    def tool(name: str) -> types.Tool:
        return types.Tool(name=name, input_schema={"type": "object", "properties": {"uri": {"type": "string"},
                                                                                    "count": {"type": "integer"}}})

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[tool(n) for n in state.tools])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        arguments = params.arguments or {}
        if params.name == "poke":
            await ctx.session.send_resource_updated(arguments["uri"])
        elif params.name == "log":
            for index in range(arguments.get("count", 1)):
                with warnings.catch_warnings():  # deprecated in 2026-07-28; the warning is raised at the call
                    warnings.simplefilter("ignore")
                    sending = ctx.session.send_log_message(level="warning", data={"n": index}, logger="feature-test")
                await sending
        elif params.name == "grow":
            state.tools.append("grown")
            await ctx.session.send_tool_list_changed()
        return types.CallToolResult(content=[types.TextContent(type="text", text="done")])

    async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=[types.Resource(uri="demo://a", name="a")])

    async def read_resource(ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        return types.ReadResourceResult(contents=[types.TextResourceContents(uri=params.uri, text="a")])

    async def subscribe(ctx: Any, params: types.SubscribeRequestParams) -> types.EmptyResult:
        state.subscribed.append(str(params.uri))
        return types.EmptyResult()

    async def unsubscribe(ctx: Any, params: types.UnsubscribeRequestParams) -> types.EmptyResult:
        state.unsubscribed.append(str(params.uri))
        return types.EmptyResult()

    async def set_level(ctx: Any, params: types.SetLevelRequestParams) -> types.EmptyResult:
        state.levels.append(params.level)
        return types.EmptyResult()

    with warnings.catch_warnings():  # logging is deprecated in 2026-07-28: this server is of 2025
        warnings.simplefilter("ignore")
        return Server("legacy-features", on_list_tools=list_tools, on_call_tool=call_tool,
                      on_list_resources=list_resources, on_read_resource=read_resource,
                      on_subscribe_resource=subscribe, on_unsubscribe_resource=unsubscribe,
                      on_set_logging_level=set_level)


def bare_server() -> Server[Any]:
    """Tools and nothing else: no resources, prompts, completions or logging."""

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[types.Tool(name="noop", input_schema={"type": "object"})])

    async def call_tool(ctx: Any, params: Any) -> types.CallToolResult:
        return types.CallToolResult(content=[])

    return Server("bare", on_list_tools=list_tools, on_call_tool=call_tool)


def paged_server(pages: int | None, *, repeat: bool = False) -> tuple[Server[Any], list[str | None]]:
    """Resources two a page over `pages` pages; `None` pages: a paginator that never ends;
    `repeat`: the second page hands out the first page's cursor again. Also the cursors asked for."""
    asked: list[str | None] = []

    async def list_resources(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListResourcesResult:
        cursor = params.cursor if params is not None else None
        asked.append(cursor)
        page = int(cursor or 0)
        items = [types.Resource(uri=f"demo://r/{page}/{i}", name=f"r{page}.{i}") for i in range(2)]
        last = pages is not None and page + 1 >= pages
        following = None if last else "1" if repeat else str(page + 1)
        return types.ListResourcesResult(resources=items, next_cursor=following)

    async def read_resource(ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        raise MCPError(types.INVALID_PARAMS, f"no resource {params.uri}")

    return Server("paged", on_list_resources=list_resources, on_read_resource=read_resource), asked
