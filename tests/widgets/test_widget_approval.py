"""ApprovalPanel: a call of an `ask` tool fired from the app waits for Approve / Deny in the
panel; a call fired elsewhere gets `tool.approval_required`; the permissions can be set here."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from toolbench import Workbench
from toolbench.core.ids import ToolId
from toolbench.examples.demo_mcp import build_server
from toolbench.runtime.approval import ApprovalRequest
from toolbench.widgets._state import PendingApproval, WorkbenchState
from toolbench.widgets.approval import ApprovalPanel


def counted(bench: Workbench) -> tuple[WorkbenchState, list[str]]:
    """A state whose invocation offers `touch`, an extension tool set to ask that notes each run."""
    runs: list[str] = []

    def touch(path: str) -> str:
        runs.append(path)
        return f"touched {path}"

    tool_id = bench.register_tool("test", touch, name="touch")
    bench.enable(tool_id)
    bench.set_permission(tool_id, "ask")
    return WorkbenchState(bench, bench.invocation("chat", id="inv_x")), runs


async def until(condition: Callable[[], Any]) -> None:
    for _ in range(300):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("timed out")


def test_nothing_waiting_is_one_muted_line(bench: Workbench) -> None:
    panel = ApprovalPanel(WorkbenchState(bench, bench.invocation("chat", id="inv_x")))
    assert panel.approve_buttons == []
    assert "no call is waiting for approval" in panel.waiting.children[0].value
    assert panel.settings.selected_index is None  # the settings are folded away


def test_approve_runs_the_call_once(bench: Workbench) -> None:
    state, runs = counted(bench)
    panel = ApprovalPanel(state)

    async def scenario() -> None:
        state.submit("touch", {"path": "a.txt"})
        await until(lambda: panel.approve_buttons)
        assert runs == []  # waiting, not run
        card = panel.waiting.children[0].children[0].children[0].value
        assert "touch" in card and "extension/test:touch" in card and "round 1" in card and "call_0001" in card
        assert "&quot;a.txt&quot;" in panel.waiting.children[0].children[0].children[1].children[0].value
        panel.approve_buttons[0].click()
        await until(lambda: not state.busy)

    asyncio.run(scenario())
    assert runs == ["a.txt"]
    assert state.result is not None and not state.result.is_error
    assert panel.last_decision == "approved `touch`"
    assert state.approvals == [] and panel.approve_buttons == []


def test_deny_does_not_run_the_call(bench: Workbench) -> None:
    state, runs = counted(bench)
    panel = ApprovalPanel(state)

    async def scenario() -> None:
        state.submit("touch", {"path": "b.txt"})
        await until(lambda: panel.deny_buttons)
        panel.deny_buttons[0].click()
        await until(lambda: not state.busy)

    asyncio.run(scenario())
    assert runs == []
    assert state.result is not None and state.result.error_code == "tool.approval_denied"
    assert panel.last_decision == "denied `touch`"


def test_a_call_not_fired_from_the_app_is_refused_at_once(bench: Workbench) -> None:
    state, runs = counted(bench)
    panel = ApprovalPanel(state)
    result = state.invocation.call("touch", {"path": "c.txt"})
    assert result.error_code == "tool.approval_required"
    assert runs == [] and panel.approve_buttons == []


def test_closing_the_bench_denies_and_disables(bench: Workbench) -> None:
    # The approval is put in the state by hand: a call really waiting on the bench loop would
    # hang when the bench closes, because the loop stops before the state can deny it (see
    # the report); what is tested here is what the state and this panel do on close.
    state, runs = counted(bench)
    panel = ApprovalPanel(state)
    request = ApprovalRequest("inv_x", 1, "call_0001", "touch", ToolId.parse("extension/test:touch"), {"path": "d"})
    item = PendingApproval(request)
    state.approvals.append(item)
    panel.show_waiting()
    approve, deny = panel.approve_buttons[0], panel.deny_buttons[0]
    assert not approve.disabled
    bench.close()
    assert item.answer.done() and item.answer.result() is False
    assert approve.disabled and deny.disabled
    assert all(c.disabled for c in panel.permission_controls.values())
    assert panel.error_code == "bench.closed"
    panel.show_waiting()  # a redraw after the close keeps the controls off
    assert panel.approve_buttons[0].disabled and panel.deny_buttons[0].disabled
    assert runs == []


def test_permission_dropdowns_set_the_bench(bench: Workbench) -> None:
    state = WorkbenchState(bench, bench.invocation("chat", id="inv_x"))
    bench.mcp.add("demo", server=build_server())
    panel = ApprovalPanel(state)
    assert "mcp/demo:echo" in panel.permission_controls
    weather = panel.permission_controls["extension/demo:weather"]
    assert weather.options == ("on", "ask") and weather.value == "on"
    weather.value = "ask"
    assert bench.permission("extension/demo:weather") == "ask"
    echo = panel.permission_controls["mcp/demo:echo"]
    assert echo.options == ("on", "off", "ask")
    echo.value = "off"
    assert bench.mcp.permission("mcp/demo:echo") == "off"
    assert panel.permission_controls["mcp/demo:echo"].value == "off"  # redrawn from the bench
    assert "next invocation" in panel.permission_note.value


def test_a_server_start_shows_what_would_run_and_denying_starts_nothing(bench: Workbench, tmp_path) -> None:
    import sys

    marker = tmp_path / "ran"
    bench.enable("builtin:mcp.manage")
    state = WorkbenchState(bench, bench.invocation("chat", id="inv_x"))
    panel = ApprovalPanel(state)
    script = f"open({str(marker)!r}, 'w')"
    server = {"id": "evil", "command": sys.executable, "args": ["-c", script], "env": {"TOKEN": "t"}}

    async def scenario() -> None:
        state.submit("mcp_manage", {"action": "create", "server": server})
        await until(lambda: panel.deny_buttons)
        card = panel.waiting.children[0].children[0]
        reason, details = card.children[1].value, card.children[2].children[0].value
        assert "mcp.start" in reason and "on the host" in reason and "TOKEN" in reason
        assert sys.executable in details and "&quot;TOKEN&quot;" in details and "&quot;action&quot;" not in details
        panel.deny_buttons[0].click()
        await until(lambda: not state.busy)

    asyncio.run(scenario())
    assert state.result is not None and state.result.error_code == "tool.approval_denied"
    assert not marker.exists() and [s.id for s in bench.mcp.servers] == []
