"""What a server declares about its tools (title, annotations, outputSchema), the check of
`structuredContent` against the outputSchema, and names over the spec's 128 characters."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypedDict

import mcp.types as types
from mcp.server import Server
from mcp.server.mcpserver import MCPServer
from mcp_support import fault_server

from toolbench import Profile, Workbench
from toolbench.core.naming import MAX_CALL_NAME_BYTES
from toolbench.core.results import ToolOutput
from toolbench.mcp import McpManager

Call = Callable[..., ToolOutput]
POINT = {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}
LONG = "a_very_long_tool_name_" * 10  # 220 characters


class Point(TypedDict):
    x: int
    y: int


def declared_server() -> MCPServer:
    server = MCPServer("declared")
    hints = types.ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                                  open_world_hint=False)

    @server.tool(title="Where is it", description="A point.", annotations=hints)
    def where() -> Point:
        return Point(x=1, y=2)

    @server.tool(name=LONG, description="A tool with a long name.")
    def long_one(text: str) -> str:
        return f"long: {text}"

    return server


def shaped_server() -> Server[Any]:
    """Tools whose answers break (or keep) their outputSchema, and tools with broken schemas."""
    listed = [
        types.Tool(name="good", input_schema={"type": "object"}, output_schema=POINT),
        types.Tool(name="wrong", input_schema={"type": "object"}, output_schema=POINT),
        types.Tool(name="missing", input_schema={"type": "object"}, output_schema=POINT),
        types.Tool(name="failed", input_schema={"type": "object"}, output_schema=POINT),
        types.Tool(name="bad_schema", input_schema={"type": "object"},
                   output_schema={"type": "object", "properties": {"x": {"type": 5}}}),
    ]
    answers = {
        "good": types.CallToolResult(content=[], structured_content={"x": 1}),
        "wrong": types.CallToolResult(content=[types.TextContent(type="text", text="x is one")],
                                      structured_content={"x": "one"}),
        "missing": types.CallToolResult(content=[types.TextContent(type="text", text="no structure")]),
        "failed": types.CallToolResult(content=[types.TextContent(type="text", text="boom")], is_error=True),
        "bad_schema": types.CallToolResult(content=[], structured_content={"x": "anything"}),
    }

    async def on_list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def on_call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        return answers[params.name]

    return Server("shaped", on_list_tools=on_list_tools, on_call_tool=on_call_tool)


def notes(output: ToolOutput) -> list[str]:
    return [d["code"] for d in output.structured.get("diagnostics") or []]


def test_title_annotations_and_output_schema_reach_the_descriptor(manager: McpManager) -> None:
    info = manager.add("declared", server=declared_server())
    where = next(d for d in manager.descriptors() if d.id.name == "where")
    assert where.title == "Where is it"
    assert where.annotations == {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True,
                                 "openWorldHint": False}
    assert where.output_schema is not None and where.output_schema["required"] == ["x", "y"]
    assert where.read_only is False  # hints are recorded, not trusted
    tool = next(t for t in info.tools if t.name == "where")
    assert (tool.annotations, tool.output_schema) == (where.annotations, where.output_schema)
    dumped = where.model_dump(mode="json", by_alias=True)
    assert dumped["annotations"]["readOnlyHint"] is True and "outputSchema" in dumped


def test_the_descriptor_fields_are_not_sent_to_providers(make_bench: Callable[..., Workbench]) -> None:
    bench = make_bench(profile=Profile.default().edit(allow=["mcp/declared:where"]))
    bench.mcp.add("declared", server=declared_server())
    snapshot = bench.invocation().snapshot
    for protocol in ("openai", "openai-responses", "anthropic", "gemini"):
        rendered = str(snapshot.render(protocol))
        assert "readOnlyHint" not in rendered and "'y'" not in rendered, protocol


def test_structured_content_that_breaks_the_schema_is_answered_with_a_note(manager: McpManager, call: Call) -> None:
    manager.add("shaped", server=shaped_server())
    wrong = call("mcp/shaped:wrong")  # the SDK would refuse it; the Inspector shows it with a mark
    assert "x is one" in wrong.content
    assert wrong.structured["structuredContent"] == {"x": "one"}
    [note] = [d for d in wrong.structured["diagnostics"] if d["code"] == "mcp.structured_content_invalid"]
    assert "x" in note["message"] and note["contentIndex"] is None
    assert "mcp.structured_content_invalid" in notes(call("mcp/shaped:missing"))
    assert "mcp.structured_content_invalid" not in notes(call("mcp/shaped:good"))


def test_an_error_result_is_not_checked(manager: McpManager, call: Call) -> None:
    manager.add("shaped", server=shaped_server())
    try:
        call("mcp/shaped:failed")
    except Exception as exc:  # mcp.tool_error
        assert "mcp.structured_content_invalid" not in str(getattr(exc, "structured", ""))
    else:
        raise AssertionError("an isError result is a tool error")


def test_an_output_schema_that_is_not_json_schema_keeps_the_tool_with_a_warning(
    manager: McpManager, call: Call
) -> None:
    info = manager.add("shaped", server=shaped_server())
    assert "bad_schema" in {t.name for t in info.tools if t.offered}  # the schema is a record only
    assert ("mcp/shaped:bad_schema", "mcp.output_schema_invalid") in {(str(w.subject), w.code)
                                                                      for w in manager.warnings}
    assert manager.diagnostics == []
    assert "mcp.structured_content_invalid" not in notes(call("mcp/shaped:bad_schema"))  # not checked


def test_an_output_schema_the_wire_format_refuses_is_taken_out_and_the_tool_stays(
    manager: McpManager, call: Call
) -> None:
    manager.add("strings", command=fault_server("string_output"))  # speaks 2025-11-25
    shout = next(d for d in manager.descriptors() if d.id.name == "shout")
    assert shout.output_schema is None  # the SDK would refuse the whole page with it
    assert ("mcp/strings:shout", "mcp.output_schema_invalid") in {(str(w.subject), w.code)
                                                                 for w in manager.warnings}
    assert manager.diagnostics == []
    assert call("mcp/strings:shout", text="hi").content == "HI"


def test_a_name_over_128_characters_is_offered_with_a_warning(manager: McpManager, call: Call) -> None:
    manager.add("declared", server=declared_server())
    assert f"mcp/declared:{LONG}" in [str(d.id) for d in manager.descriptors()]
    [warning] = [w for w in manager.warnings if w.code == "mcp.tool_name_long"]
    assert str(warning.subject) == f"mcp/declared:{LONG}" and "128" in warning.message
    tool = next(t for t in manager.info("declared").tools if t.name == LONG)
    assert tool.offered and [w.code for w in tool.warnings] == ["mcp.tool_name_long"]
    assert call(f"mcp/declared:{LONG}", text="hi").content == "long: hi"


def test_a_long_name_gets_a_call_name_cut_to_64_bytes(make_bench: Callable[..., Workbench]) -> None:
    for naming in ("tauritavern", "liveagent"):
        bench = make_bench(naming, profile=Profile.default().edit(allow=[f"mcp/declared:{LONG}"], naming=naming))
        bench.mcp.add("declared", server=declared_server())
        inv = bench.invocation()
        [name] = [n for n, tool_id in inv.snapshot.call_names.items() if tool_id.name == LONG]
        assert len(name.encode()) <= MAX_CALL_NAME_BYTES, naming
        assert inv.call(name, {"text": "hi"}).content == "long: hi"
