"""`bench.mcp` inside a workbench: MCP tools get call names, results and the unknown-outcome block."""

from __future__ import annotations

from collections.abc import Callable

from toolbench import Profile, Workbench
from toolbench.examples.demo_mcp import build_server

ALLOW = ("mcp/demo:issue.create", "mcp/demo:sleep", "mcp/demo:echo", "mcp/demo:fail")


def test_mcp_tools_run_through_an_invocation(
    make_bench: Callable[..., Workbench], profile_with: Callable[..., Profile]
) -> None:
    bench = make_bench(profile=profile_with(*ALLOW))
    assert bench.mcp.add("demo", server=build_server(), timeout=1.0).state == "active"
    inv = bench.invocation("chat")
    assert inv.snapshot.call_names["mcp__demo__issue_create"].name == "issue.create"
    created = inv.call("mcp__demo__issue_create", {"title": "Bug"})
    assert not created.is_error and "issueId" in created.content
    failed = inv.call("mcp__demo__fail", {})
    assert (failed.is_error, failed.error_code) == (True, "mcp.tool_error")
    unknown = inv.call("mcp__demo__sleep", {"seconds": 30})
    assert (unknown.is_error, unknown.error_code) == (True, "mcp.call_outcome_unknown")
    after = inv.call("mcp__demo__echo", {"text": "x"})
    assert after.error_code == "agent.tool_not_started"  # the runtime blocked the invocation


def test_an_off_tool_leaves_the_snapshot(
    make_bench: Callable[..., Workbench], profile_with: Callable[..., Profile]
) -> None:
    bench = make_bench(profile=profile_with(*ALLOW))
    bench.mcp.add("demo", server=build_server())
    bench.mcp.set_permission("mcp/demo:echo", "off")
    inv = bench.invocation("chat")
    assert "mcp__demo__echo" not in inv.snapshot.call_names
    assert "mcp__demo__issue_create" in inv.snapshot.call_names
