"""McpManager with in-process servers: discovery, ids, permissions, states, calls, timeouts, order."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import mcp.types as types
import pytest
from mcp.server import Server
from mcp.shared.exceptions import MCPError
from mcp_support import fault_server

from toolbench.core.errors import OutcomeUnknown, ToolbenchError, ToolError
from toolbench.core.ids import ToolId
from toolbench.core.loop import LoopThread
from toolbench.core.results import ToolOutput
from toolbench.examples.demo_mcp import build_server
from toolbench.mcp import EMPTY_RESULT, McpManager
from toolbench.mcp._config import ServerOptions
from toolbench.mcp._connection import Connection

Call = Callable[..., ToolOutput]


def paged_server(*, loop_cursor: bool = False, tools: int = 7) -> Server[Any]:
    """A low-level server listing `tools` tools two a page (or one page pointing at itself)."""
    listed = [types.Tool(name=f"t{i}", input_schema={"type": "object"}) for i in range(tools)] + [
        types.Tool(name="typed", input_schema={"type": "object"},
                   output_schema={"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}),
    ]

    async def on_list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        if loop_cursor:
            return types.ListToolsResult(tools=listed[:1], next_cursor="again")
        start = int(params.cursor) if params and params.cursor else 0
        end = start + 2
        return types.ListToolsResult(tools=listed[start:end], next_cursor=str(end) if end < len(listed) else None)

    async def on_call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        if params.name == "t0":
            raise MCPError(code=-32602, message="Invalid params", data={"field": "title"})
        if params.name == "typed":
            return types.CallToolResult(content=[], structured_content={"n": "not a number"})
        return types.CallToolResult(content=[types.TextContent(type="text", text=f"ran {params.name}")])

    return Server("paged", on_list_tools=on_list_tools, on_call_tool=on_call_tool)


def raises(code: str, fn: Callable[[], Any], kind: type[Exception] = ToolError) -> Exception:
    with pytest.raises(kind) as caught:
        fn()
    assert caught.value.code == code, caught.value  # type: ignore[attr-defined]
    return caught.value


def test_in_process_demo_is_discovered_under_its_registration_id(manager: McpManager) -> None:
    info = manager.add("My Demo", server=build_server())
    assert (info.id, info.name, info.state, info.transport) == ("my-demo", "My Demo", "active", "memory")
    ids = [str(d.id) for d in manager.descriptors()]
    assert ids == [f"mcp/my-demo:{n}" for n in
                   ("echo", "issue.create", "weather", "image", "long_text", "fail", "sleep", "empty")]
    issue = next(d for d in manager.descriptors() if d.id.name == "issue.create")
    assert issue.server == "My Demo" and issue.kind == "mcp"
    assert issue.input_schema["required"] == ["title"] and issue.description.startswith("Create an issue")
    assert info.server_info is not None and info.server_info["name"] == "toolbench-demo"
    assert manager.diagnostics == []
    assert manager.add("my demo", server=build_server()).id == "my-demo-2"
    assert manager.add("third", server=build_server(), id="custom").id == "custom"


def test_results_are_mapped_as_the_model_reads_them(manager: McpManager, call: Call) -> None:
    manager.add("demo", server=build_server())
    created = call("mcp/demo:issue.create", title="Bug")
    assert created.content.startswith("Created issue.\n\n## Details\n\n- issueId: 42")
    assert [(a.kind, a.mime_type) for a in created.attachments] == [("image", "image/png")]  # passed through
    assert created.structured["structuredContent"] == {"issueId": 42, "title": "Bug"}
    weather = call("mcp/demo:weather", city="Paris")
    assert weather.content.count("Paris") == 1 and "## Details" not in weather.content  # the text wins
    assert call("mcp/demo:empty").content == EMPTY_RESULT
    assert call("mcp/demo:long_text").content == "界" * 60_000
    assert len(call("mcp/demo:long_text", size=12, char="ab").content) == 12
    assert call("mcp/demo:echo", text="hello").content == "hello"


def test_tool_errors_and_protocol_errors_have_their_codes(manager: McpManager, call: Call) -> None:
    manager.add("demo", server=build_server())
    manager.add("paged", server=paged_server())
    failed = raises("mcp.tool_error", lambda: call("mcp/demo:fail", message="no such repo"))
    assert "no such repo" in failed.message and failed.structured["structuredContent"] is None  # type: ignore[attr-defined]
    protocol = raises("mcp.server_error", lambda: call("mcp/paged:t0"))
    assert protocol.message.startswith("Invalid params\n\n## Error details\n\n- field: title")
    assert protocol.structured["serverError"]["code"] == -32602  # type: ignore[attr-defined]
    typed = call("mcp/paged:typed")  # breaks its outputSchema: answered, with a note (tests/mcp/test_mcp_output.py)
    assert typed.structured["structuredContent"] == {"n": "not a number"}
    assert call("mcp/paged:t3").content == "ran t3"


def test_tool_lists_are_followed_across_pages(manager: McpManager) -> None:
    info = manager.add("paged", server=paged_server(tools=7))
    assert info.state == "active" and len(info.tools) == 8
    looping = manager.add("looping", server=paged_server(loop_cursor=True))
    assert (looping.state, looping.diagnostic_code) == ("failed", "mcp.tool_listing_failed")
    assert ("looping", "mcp.tool_listing_failed") in [(d.subject, d.code) for d in manager.diagnostics]
    assert len(manager.descriptors()) == 8


def test_an_off_tool_is_neither_offered_nor_callable(manager: McpManager, call: Call) -> None:
    manager.add("demo", server=build_server())
    echo = ToolId.parse("mcp/demo:echo")
    assert manager.set_permission("mcp/demo:echo", "off") == echo
    assert echo not in [d.id for d in manager.descriptors()]
    raises("mcp.tool_off", lambda: call("mcp/demo:echo", text="x"))
    assert (echo, "mcp.tool_off") in [(d.subject, d.code) for d in manager.diagnostics]
    tool = next(t for t in manager.info("demo").tools if t.tool_id == echo)
    assert (tool.permission, tool.offered) == ("off", False)
    manager.refresh()
    assert manager.permission(echo) == "off"  # permissions outlive a refresh
    assert manager.set_permission("issue.create", "off") == ToolId.parse("mcp/demo:issue.create")  # by name
    manager.set_permission(echo, "on")
    assert call("mcp/demo:echo", text="back").content == "back"


def test_permission_misuse_raises(manager: McpManager) -> None:
    manager.add("a", server=build_server())
    manager.add("b", server=build_server())
    raises("mcp.tool_unknown", lambda: manager.set_permission("echo", "off"), ToolbenchError)  # two servers
    raises("mcp.tool_unknown", lambda: manager.set_permission("nope", "off"), ToolbenchError)
    raises("mcp.server_unknown", lambda: manager.set_permission("mcp/zzz:echo", "off"), ToolbenchError)
    raises("bench.misuse", lambda: manager.set_permission("mcp/a:echo", "maybe"), ToolbenchError)  # type: ignore[arg-type]


def test_disable_enable_and_deferred_connect(manager: McpManager, call: Call) -> None:
    manager.add("demo", server=build_server())
    assert manager.disable("demo").state == "disabled"
    assert manager.descriptors() == [] and manager.diagnostics[0].code == "mcp.server_unavailable"
    raises("mcp.server_unavailable", lambda: call("mcp/demo:echo", text="x"))
    assert manager.enable("demo").state == "active"
    assert call("mcp/demo:echo", text="again").content == "again"
    assert manager.add("later", server=build_server(), connect=False).state == "pending"
    assert manager.add("off", server=build_server(), enabled=False).state == "disabled"
    states = {i.name: i.state for i in manager.refresh()}
    assert states == {"demo": "active", "later": "active", "off": "disabled"}


def test_refresh_lists_tools_again(manager: McpManager) -> None:
    server = build_server()
    manager.add("demo", server=server)

    def added(x: int) -> int:
        return x + 1

    server.add_tool(added, name="added")
    assert "added" not in [d.id.name for d in manager.descriptors()]
    manager.refresh("demo")
    assert "added" in [d.id.name for d in manager.descriptors()]
    assert manager.refresh("demo", restart=True)[0].state == "active"


def test_remove_forgets_the_server_and_its_permissions(manager: McpManager, call: Call) -> None:
    manager.add("demo", server=build_server())
    manager.set_permission("mcp/demo:echo", "off")
    manager.remove("demo")
    assert manager.servers == [] and manager.descriptors() == []
    raises("mcp.tool_unknown", lambda: call("mcp/demo:echo"))
    assert manager.add("demo", server=build_server()).id == "demo"  # the same configuration, the same id
    assert manager.permission("mcp/demo:echo") == "on"


def test_misuse_raises_and_bad_calls_are_not_sent(manager: McpManager, call: Call) -> None:
    manager.add("demo", server=build_server())
    raises("mcp.server_exists", lambda: manager.add("demo", server=build_server()), ToolbenchError)
    raises("mcp.config_invalid", lambda: manager.add("x"), ToolbenchError)
    raises("mcp.server_unknown", lambda: manager.remove("nope"), ToolbenchError)
    raises("mcp.tool_unknown", lambda: call("mcp/demo:nope"))
    raises("mcp.tool_unknown", lambda: call("mcp/other:echo"))
    raises("mcp.tool_unknown", lambda: call("builtin:dice.roll"))
    assert manager.info("demo").state == "active"


def test_sync_methods_refuse_the_bench_loop(loop: LoopThread, manager: McpManager) -> None:
    async def inside() -> None:
        manager.add("demo", server=build_server())

    raises("bench.misuse", lambda: loop.run(inside()), ToolbenchError)

    async def awaited() -> str:
        return (await manager.aadd("demo", server=build_server())).state

    assert loop.run(awaited()) == "active"


def test_a_timeout_after_sending_is_an_unknown_outcome(manager: McpManager, call: Call) -> None:
    manager.add("slow", server=build_server(), timeout=1.0)
    started = time.monotonic()
    unknown = raises("mcp.call_outcome_unknown", lambda: call("mcp/slow:sleep", seconds=30), OutcomeUnknown)
    assert time.monotonic() - started < 6
    assert "may have run" in unknown.message and "before repeating" in unknown.message
    assert unknown.structured["outcomeUnknown"]["reason"] == "mcp.call_timeout"  # type: ignore[attr-defined]
    assert manager.info("slow").state == "active"
    assert call("mcp/slow:echo", text="still here").content == "still here"


def test_an_answer_over_the_size_limit_is_an_unknown_outcome(loop: LoopThread, tmp_path: Path) -> None:
    manager = McpManager(loop, tmp_path, max_response_chars=1_000)
    try:
        manager.add("demo", server=build_server())
        unknown = raises("mcp.call_outcome_unknown",
                         lambda: loop.run(manager.call(ToolId.parse("mcp/demo:long_text"), {"size": 5_000})),
                         OutcomeUnknown)
        assert unknown.structured["outcomeUnknown"]["reason"] == "mcp.response_too_large"  # type: ignore[attr-defined]
        assert loop.run(manager.call(ToolId.parse("mcp/demo:long_text"), {"size": 10})).content == "界" * 10
    finally:
        manager.close()


def intervals(outputs: list[ToolOutput]) -> list[tuple[float, float]]:
    return [(o.structured["structuredContent"]["started"], o.structured["structuredContent"]["ended"])
            for o in outputs]


def overlap(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def test_one_server_serialises_calls_and_two_servers_run_concurrently(loop: LoopThread, manager: McpManager) -> None:
    manager.add("a", server=build_server())
    manager.add("b", server=build_server())
    sleep_a, sleep_b = ToolId.parse("mcp/a:sleep"), ToolId.parse("mcp/b:sleep")

    async def together() -> list[ToolOutput]:
        return list(await asyncio.gather(manager.call(sleep_a, {"seconds": 0.3}),
                                         manager.call(sleep_a, {"seconds": 0.3}),
                                         manager.call(sleep_b, {"seconds": 0.3})))

    a1, a2, b = intervals(loop.run(together()))
    assert not overlap(a1, a2), "two calls to one server ran at the same time"
    assert overlap(b, a1) or overlap(b, a2), "calls to two servers did not run concurrently"


def test_a_call_on_a_closed_connection_is_not_sent(loop: LoopThread, tmp_path: Path) -> None:
    spec = ServerOptions.of("demo", server=build_server()).register(set())
    connection = Connection(spec, log_path=None, max_response_chars=1_000_000)

    async def scenario() -> None:
        await connection.start()
        await connection.close()
        await connection.call("echo", {"text": "x"})

    error = raises("mcp.call_not_sent", lambda: loop.run(scenario()))
    assert "did not run" in error.message


def test_mcp_json_loads_every_server_and_failures_stay_diagnostics(manager: McpManager) -> None:
    infos = manager.load_config({"mcpServers": {
        "Broken Start": {"command": fault_server("exits_at_start")[0], "args": fault_server("exits_at_start")[1:]},
        "later": {"command": "never-run", "disabled": True},
    }})
    assert [(i.id, i.state) for i in infos] == [("broken-start", "failed"), ("later", "disabled")]
    assert infos[0].diagnostic_code == "mcp.server_start_failed"
    assert "configuration file is missing" in (infos[0].diagnostic or "")
    raises("mcp.server_exists", lambda: manager.load_config({"mcpServers": {"later": {"command": "x"}}}),
           ToolbenchError)
    assert manager.add("demo", server=build_server()).state == "active"  # the manager keeps working


def test_a_closed_manager_refuses_work(loop: LoopThread, tmp_path: Path) -> None:
    manager = McpManager(loop, tmp_path)
    manager.add("demo", server=build_server())
    manager.close()
    manager.close()  # idempotent
    raises("bench.closed", lambda: manager.add("x", server=build_server()), ToolbenchError)
    raises("bench.closed", lambda: loop.run(manager.call(ToolId.parse("mcp/demo:echo"), {})), ToolbenchError)
