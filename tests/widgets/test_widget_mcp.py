"""McpPanel: add servers from pasted mcp.json, list them and their tools, set permissions,
restart / switch / remove, and read the stderr log and the protocol trace."""

from __future__ import annotations

import asyncio
import json
import re
import sys
from pathlib import Path

import pytest

from toolbench import ToolbenchError, Workbench
from toolbench.examples.demo_mcp import build_server
from toolbench.widgets._state import WorkbenchState
from toolbench.widgets.mcp import McpPanel, parse_config

SERVERS = Path(__file__).parents[1] / "mcp" / "servers"  # the MCP tests' stdio servers


def stdio(name: str) -> dict[str, object]:
    return {"command": sys.executable, "args": [str(SERVERS / f"{name}.py")]}


def panel_with_demo(bench: Workbench) -> tuple[WorkbenchState, McpPanel]:
    bench.mcp.add("demo", server=build_server())
    bench.enable("mcp/demo:echo")
    state = WorkbenchState(bench, bench.invocation("chat", id="inv_x"))
    return state, McpPanel(state)


def test_a_bench_without_servers_shows_none(bench: Workbench) -> None:
    panel = McpPanel(WorkbenchState(bench, bench.invocation("chat", id="inv_x")))
    assert "no servers yet" in panel.title.value
    assert panel.server.options == () and panel.row_buttons == {}
    assert panel.add_box.selected_index == 0  # the add box is open when there is nothing else
    assert bench.mcp.servers == []


def test_lists_servers_and_tools(bench: Workbench) -> None:
    _state, panel = panel_with_demo(bench)
    assert panel.server.value == "demo"
    assert set(panel.row_buttons["demo"]) == {"select", "restart", "toggle", "remove"}
    card = panel.server_list.children[0].children[0].value
    assert "demo" in card and "tb-mcp-state-active" in card and "memory" in card and "8 tools" in card
    assert "toolbench-demo" in card  # the server_info name
    assert set(panel.permission_controls) >= {"mcp/demo:echo", "mcp/demo:issue.create"}
    assert panel.permission_controls["mcp/demo:echo"].value == "on"
    assert "a memory server has no stderr log" in panel.log_path.value


def test_setting_a_permission_reaches_the_manager(bench: Workbench) -> None:
    _state, panel = panel_with_demo(bench)
    panel.permission_controls["mcp/demo:weather"].value = "ask"
    assert bench.mcp.permission("mcp/demo:weather") == "ask"
    panel.permission_controls["mcp/demo:echo"].value = "off"
    assert bench.mcp.permission("mcp/demo:echo") == "off"
    assert panel.permission_controls["mcp/demo:echo"].value == "off"  # redrawn from the manager
    assert "mcp.tool_off" in panel.diagnostics_view.value


def test_the_trace_shows_a_call_fired_through_the_state(bench: Workbench) -> None:
    state, panel = panel_with_demo(bench)
    before = len(panel.trace.options)
    result = state.call("mcp__demo__echo", {"text": "hello"})
    assert not result.is_error
    labels = [label for label, _ in panel.trace.options]  # redrawn on the `result` event
    assert len(labels) == before + 2
    assert "→ request tools/call #" in labels[1] and "← response #" in labels[0] and "(tools/call)" in labels[0]
    panel.trace.value = 1
    sent = json.loads(bench.mcp.trace("demo")[-2].text)
    assert sent["method"] == "tools/call" and sent["params"]["arguments"] == {"text": "hello"}
    assert "&quot;tools/call&quot;" in panel.trace_detail.value and "hello" in panel.trace_detail.value


def test_restart_keeps_the_trace_and_adds_messages(bench: Workbench) -> None:
    _state, panel = panel_with_demo(bench)
    first = bench.mcp.trace("demo")
    panel.row_buttons["demo"]["restart"].click()
    after = bench.mcp.trace("demo")
    assert panel.error_code is None
    assert after[:len(first)] == first and len(after) > len(first)
    assert len(panel.trace.options) == len(after)


def test_toggle_and_remove(bench: Workbench) -> None:
    _state, panel = panel_with_demo(bench)
    panel.row_buttons["demo"]["toggle"].click()
    assert bench.mcp.info("demo").state == "disabled"
    assert panel.row_buttons["demo"]["toggle"].description == "enable"
    assert "tb-mcp-state-disabled" in panel.server_list.children[0].children[0].value
    panel.row_buttons["demo"]["toggle"].click()
    assert bench.mcp.info("demo").state == "active"
    panel.row_buttons["demo"]["remove"].click()
    assert bench.mcp.servers == [] and panel.row_buttons == {} and panel.server.value is None


def test_paste_a_stdio_server_and_one_that_fails(bench: Workbench) -> None:
    panel = McpPanel(WorkbenchState(bench, bench.invocation("chat", id="inv_x")))
    panel.config.value = json.dumps(stdio("bad_tools"))
    panel.name.value = "bad"
    panel.add_button.click()
    assert panel.error_code is None, panel.error_view.value
    info = bench.mcp.info("bad")
    assert info.state == "active" and info.transport == "stdio" and info.pid
    assert panel.server.value == "bad" and panel.config.value == ""
    assert f"pid {info.pid}" in panel.server_list.children[0].children[0].value
    assert "mcp.tool_duplicate" in panel.diagnostics_view.value  # the broken tools' diagnostics
    assert "bad_tools ready" in panel.log_view.value and str(info.log_path) in panel.log_path.value

    panel.config.value = json.dumps({"mcpServers": {"broken": stdio("exits_at_start")}})
    panel.add_button.click()
    assert bench.mcp.info("broken").state == "failed"
    assert panel.server.value == "broken"
    card = panel.server_list.children[1].children
    assert "tb-mcp-state-failed" in card[0].value and "mcp.server" in card[1].value
    assert "the demo configuration file is missing" in panel.log_view.value  # its stderr
    assert "mcp.server" in panel.diagnostics_view.value


def test_a_malformed_config_shows_line_and_column(bench: Workbench) -> None:
    panel = McpPanel(WorkbenchState(bench, bench.invocation("chat", id="inv_x")))
    panel.config.value = '{\n  "mcpServers": {\n    "x": {"command": "python",}\n  }\n}'
    panel.add_button.click()
    assert panel.error_code == "mcp.config_invalid"
    assert "line 3, column" in panel.error_view.value
    assert bench.mcp.servers == []
    panel.config.value = '{"command": "python"}'  # a bare entry needs the name box
    panel.add_button.click()
    assert panel.error_code == "mcp.config_invalid" and "name" in panel.error_view.value


def test_config_shapes() -> None:
    entry = {"command": "python", "args": ["-m", "x"]}
    assert parse_config(json.dumps({"mcpServers": {"a": entry}})) == {"mcpServers": {"a": entry}}
    assert parse_config(json.dumps({"a": entry})) == {"mcpServers": {"a": entry}}
    assert parse_config(json.dumps(entry), " b ") == {"mcpServers": {"b": entry}}


def test_adding_inside_a_running_loop_does_not_block(bench: Workbench) -> None:
    panel = McpPanel(WorkbenchState(bench, bench.invocation("chat", id="inv_x")))

    async def scenario() -> None:
        panel.config.value = json.dumps({"mcpServers": {"bad": stdio("bad_tools")}})
        panel.add_button.click()
        assert "connecting bad…" in panel.status.value  # the click returned before the server started
        for _ in range(500):
            if not panel.status.value:
                break
            await asyncio.sleep(0.01)
        panel.row_buttons["bad"]["restart"].click()
        assert "restarting bad…" in panel.status.value
        for _ in range(500):
            if not panel.status.value:
                break
            await asyncio.sleep(0.01)

    asyncio.run(scenario())
    assert panel.error_code is None, panel.error_view.value
    assert bench.mcp.info("bad").state == "active" and panel.server.value == "bad"


def test_an_error_inside_a_running_loop_is_shown(bench: Workbench) -> None:
    _state, panel = panel_with_demo(bench)

    async def scenario() -> None:
        panel.config.value = json.dumps({"demo": stdio("bad_tools")})  # the name is taken
        panel.add_button.click()
        for _ in range(300):
            if panel.error_code:
                break
            await asyncio.sleep(0.01)

    asyncio.run(scenario())
    assert panel.error_code == "mcp.server_exists" and panel.status.value == ""


def test_a_server_added_in_the_panel_is_callable_at_once(bench: Workbench) -> None:
    """Adding is a person's act in the app: the new server's tools join the profile and a new
    snapshot is frozen with them; the card counts what the snapshot holds, not what the server lists."""
    state = WorkbenchState(bench, bench.invocation("chat", id="inv_x"))
    panel = McpPanel(state)
    panel.config.value = json.dumps(stdio("bad_tools"))
    panel.name.value = "bad"
    panel.add_button.click()
    info = bench.mcp.info("bad")
    offered = [t for t in info.tools if t.offered]
    assert offered and state.invocation.id != "inv_x" and "`bad` offered" in state.notice
    call_names = state.invocation.snapshot.call_names
    assert {t.tool_id for t in offered} <= set(call_names.values())
    card = panel.server_list.children[0].children[0].value
    assert f"{len(info.tools)} tools, {len(offered)} in the snapshot" in card
    name = next(n for n, t in call_names.items() if t == offered[0].tool_id)
    assert state.call(name, {}).error_code != "model.unknown_tool_call"


def test_the_offer_box_edits_the_profile_and_the_snapshot(bench: Workbench) -> None:
    state, panel = panel_with_demo(bench)
    card = lambda: panel.server_list.children[0].children[0].value  # noqa: E731
    assert "8 tools, 1 in the snapshot" in card()  # only echo was enabled: the others are listed, not offered
    offer = {str(t.tool_id): c for t, c in zip(bench.mcp.info("demo").tools, _offer_boxes(panel), strict=True)}
    assert offer["mcp/demo:echo"].value and not offer["mcp/demo:weather"].value
    offer["mcp/demo:weather"].value = True
    assert "mcp/demo:weather" in bench.profile.tools.allow and state.invocation.id != "inv_x"
    assert "8 tools, 2 in the snapshot" in card()
    assert state.invocation.snapshot.binding_for("mcp__demo__weather") is not None
    _offer_boxes(panel)[[str(t.tool_id) for t in bench.mcp.info("demo").tools].index("mcp/demo:echo")].value = False
    assert "mcp/demo:echo" not in bench.profile.tools.allow
    assert state.invocation.snapshot.binding_for("mcp__demo__echo") is None and "1 in the snapshot" in card()


def test_the_tools_table_has_one_cell_per_column_in_each_row(bench: Workbench) -> None:
    _state, panel = panel_with_demo(bench)
    heads = [c.value for c in panel.tools_grid.children[:6]]
    template = panel.tools_grid.layout.grid_template_columns
    widths = re.findall(r"minmax\([^)]*\)|\S+", template)
    assert len(widths) == len(heads) == 6 and heads[-1] == "<b>problem</b>", (widths, heads)
    assert len(panel.tools_grid.children) == len(heads) * (1 + len(bench.mcp.info("demo").tools))


def _offer_boxes(panel: McpPanel) -> list[object]:
    return [c for c in panel.tools_grid.children if "tb-mcp-offer" in c._dom_classes]


def test_a_json_error_quotes_the_text_around_its_column() -> None:
    from toolbench.widgets.mcp import parse_config

    entry = '{"command": "' + "x" * 120 + '", "args": [1 2]}'
    with pytest.raises(ToolbenchError) as broken:
        parse_config(entry, "far")
    column = entry.index("2]") + 1
    assert f"line 1, column {column}" in broken.value.message
    assert "[1 2]" in broken.value.message and "…" in broken.value.message  # the place, not the line's start
    with pytest.raises(ToolbenchError) as short:
        parse_config('{"a": }')
    assert '(near `{"a": }`)' in short.value.message
