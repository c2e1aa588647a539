"""Approval: a tool whose permission is `ask` waits for the bench's handler; every way the
decision can go ends in a coded result the model can read, and the decision is logged."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import pytest

from toolbench import ApprovalRequest, ToolbenchError, ToolId, Workbench
from toolbench.examples.demo_mcp import build_server


@pytest.fixture
def bench() -> Iterator[Workbench]:
    with Workbench.demo(seed=7) as bench:
        ran: list[str] = []
        bench.register_tool("shop", lambda item: ran.append(item) or f"bought {item}", name="buy",
                            input_schema={"type": "object", "properties": {"item": {"type": "string"}},
                                          "required": ["item"]})
        bench.enable("extension/shop:buy")
        bench.ran = ran  # type: ignore[attr-defined]
        yield bench


def _decisions(bench: Workbench, inv_id: str) -> list[str]:
    log = bench.workspace / ".toolbench" / "invocations" / inv_id / "log.jsonl"
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    return [e["approval"]["decision"] for e in lines if "approval" in e]


def test_an_ask_tool_without_a_handler_is_refused_at_once(bench: Workbench) -> None:
    bench.set_permission("extension/shop:buy", "ask")
    result = bench.invocation().call("buy", '{"item": "milk"}')
    assert result.error_code == "tool.approval_required"
    assert bench.ran == []  # type: ignore[attr-defined]


def test_approved_calls_run_and_denied_ones_do_not(bench: Workbench) -> None:
    bench.set_permission("extension/shop:buy", "ask")
    seen: list[ApprovalRequest] = []
    bench.on_approval(lambda request: seen.append(request) or request.arguments["item"] == "milk")
    inv = bench.invocation()
    assert inv.call("buy", '{"item": "milk"}').content == "bought milk"
    denied = inv.call("buy", '{"item": "gold"}')
    assert denied.error_code == "tool.approval_denied"
    assert bench.ran == ["milk"]  # type: ignore[attr-defined]
    assert [(r.call_name, str(r.tool_id), r.arguments) for r in seen] == [
        ("buy", "extension/shop:buy", {"item": "milk"}), ("buy", "extension/shop:buy", {"item": "gold"})]
    assert _decisions(bench, inv.id) == ["approved", "tool.approval_denied"]


def test_the_wait_for_a_decision_is_not_the_calls_elapsed_time(bench: Workbench) -> None:
    bench.set_permission("extension/shop:buy", "ask")
    waited = 1.5

    async def slow_person(request: ApprovalRequest) -> bool:
        await asyncio.sleep(waited)
        return True

    bench.on_approval(slow_person)
    inv = bench.invocation()
    assert inv.call("buy", '{"item": "milk"}').content == "bought milk"
    [record] = inv.records
    # With the wait counted it would be at least 1,500 ms; the tool itself returns at once.
    assert 0 <= record.elapsed_ms < waited * 1000, record.elapsed_ms


def test_invalid_arguments_are_refused_before_anyone_is_asked(bench: Workbench) -> None:
    bench.set_permission("extension/shop:buy", "ask")
    asked: list[ApprovalRequest] = []
    bench.on_approval(lambda request: asked.append(request) or True)
    assert bench.invocation().call("buy", "{}").error_code == "tool.invalid_arguments"
    assert asked == []


def test_an_async_handler_that_never_answers_times_out(bench: Workbench) -> None:
    bench.set_permission("extension/shop:buy", "ask")

    async def forever(request: ApprovalRequest) -> bool:
        await asyncio.Event().wait()
        return True

    bench.on_approval(forever, timeout=0.2)
    assert bench.invocation().call("buy", '{"item": "milk"}').error_code == "tool.approval_timeout"
    assert bench.ran == []  # type: ignore[attr-defined]


def test_a_handler_that_fails_denies(bench: Workbench) -> None:
    bench.set_permission("extension/shop:buy", "ask")
    bench.on_approval(lambda request: 1 / 0)
    result = bench.invocation().call("buy", '{"item": "milk"}')
    assert result.error_code == "tool.approval_denied"
    assert "ZeroDivisionError" in result.content


def test_only_a_true_approves(bench: Workbench) -> None:
    bench.set_permission("extension/shop:buy", "ask")
    bench.on_approval(lambda request: "yes")  # type: ignore[arg-type,return-value]
    assert bench.invocation().call("buy", '{"item": "milk"}').error_code == "tool.approval_denied"


def test_permissions_are_checked(bench: Workbench) -> None:
    # A builtin takes `ask` like any tool (issue 26); taking it away is the profile's job.
    assert bench.set_permission("builtin:dice.roll", "ask") == ToolId.parse("builtin:dice.roll")
    with pytest.raises(ToolbenchError) as builtin:
        bench.set_permission("builtin:dice.roll", "off")
    assert builtin.value.code == "bench.misuse"
    with pytest.raises(ToolbenchError) as off:
        bench.set_permission("extension/shop:buy", "off")
    assert off.value.code == "bench.misuse"
    with pytest.raises(ToolbenchError) as unknown:
        bench.set_permission("extension/shop:sell", "ask")
    assert unknown.value.code == "extension.tool_unavailable"
    assert bench.permission("extension/shop:buy") == "on"


def test_an_mcp_tool_can_ask_too(bench: Workbench) -> None:
    bench.mcp.add("demo", server=build_server())
    bench.enable("mcp/demo:echo")
    bench.set_permission("mcp/demo:echo", "ask")
    assert bench.mcp.permission("mcp/demo:echo") == "ask"
    inv = bench.invocation()
    name = next(n for n, t in inv.snapshot.call_names.items() if str(t) == "mcp/demo:echo")
    assert inv.call(name, '{"text": "hi"}').error_code == "tool.approval_required"
    bench.on_approval(lambda request: True)
    assert "hi" in inv.call(name, '{"text": "hi"}').content


def test_the_mcp_trace_keeps_the_wire_messages(bench: Workbench) -> None:
    bench.mcp.add("demo", server=build_server())
    bench.enable("mcp/demo:echo")
    inv = bench.invocation()
    name = next(n for n, t in inv.snapshot.call_names.items() if str(t) == "mcp/demo:echo")
    inv.call(name, '{"text": "hi"}')
    trace = bench.mcp.trace("demo")
    calls = [m for m in trace if m.method == "tools/call"]
    assert calls and calls[-1].direction == "sent" and '"hi"' in calls[-1].text
    answer = next(m for m in trace if m.direction == "received" and m.id == calls[-1].id)
    assert answer.kind == "response" and "hi" in answer.text
    bench.mcp.refresh("demo", restart=True)
    assert len(bench.mcp.trace("demo")) > len(trace)  # kept across the restart, and growing
    assert len(bench.mcp.trace("demo", limit=3)) == 3
