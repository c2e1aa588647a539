"""The shell bridge: the invocation's tools as `builtin.<tool>` and `mcp.*` commands in the shell.

Cases from TauriTavern's docs/Agent/ToolSystem.md (the 6,288-character version), its
shell_tools.rs test (which builtins a script may reach) and its shell mcp adapter's tests
(selectors, check, exit codes); toolbench adds the gate, the records and the approval.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from toolbench import Profile, Workbench
from toolbench.core.descriptors import ToolDescriptor
from toolbench.core.ids import ToolId
from toolbench.core.results import ToolResult
from toolbench.examples.demo_mcp import build_server
from toolbench.tools.registry import BUILTINS, INJECTED
from toolbench.tools.workspace.shell_bridge import (
    FAILED_EXIT,
    UNCONFIRMED_EXIT,
    USAGE_EXIT,
    bridge_commands,
    shell_builtins,
)

SHELL = "builtin:workspace.shell"
DICE = "builtin:dice.roll"


def shell_bench(make_bench: Callable[..., Workbench], *allow: str, **tools: Any) -> Workbench:
    return make_bench(profile=Profile.default().edit(allow=[SHELL, *allow], **tools), seed=3)


def run(inv: Any, script: str) -> ToolResult:
    return inv.call("workspace_shell", {"command": script})


def exit_code(result: ToolResult) -> int:
    return int(result.structured["exitCode"])


def test_a_builtin_runs_from_the_shell_as_a_recorded_call_of_the_shell_round(make_bench) -> None:
    inv = shell_bench(make_bench, DICE).invocation()
    shell = run(inv, """builtin.dice.roll '{"formula":"2d6"}'""")
    assert not shell.is_error, shell.content
    outer, nested = inv.records[-1], inv.records[0]  # the nested call is answered first
    assert (outer.tool_id, outer.via) == (SHELL, None)
    assert nested.tool_id == DICE and nested.call_name == "dice_roll"
    assert (nested.round, nested.call_id, nested.via) == (outer.round, f"{outer.call_id}/1", outer.call_id)
    assert nested.result.content in shell.content
    assert inv.budget()["total"] == 80 - 2  # the gate charged both


def test_a_failed_call_writes_its_code_to_stderr_and_exits_1_so_or_works(make_bench) -> None:
    inv = shell_bench(make_bench, DICE).invocation()
    shell = run(inv, """builtin.dice.roll '{"formula":"3x"}' || echo "status $?" """)
    assert not shell.is_error
    assert f"status {FAILED_EXIT}" in shell.content
    assert "builtin.dice.roll: tool.invalid_arguments: " in shell.content
    assert inv.records[0].result.error_code == "tool.invalid_arguments"


@pytest.mark.parametrize("argument", ["", "'[1,2]'", "'\"{}\"'", "'{\"formula\":'", "'" + "[" * 5000 + "'"])
def test_an_argument_that_is_not_one_json_object_is_a_usage_error_and_no_call(make_bench, argument) -> None:
    inv = shell_bench(make_bench, DICE).invocation()
    shell = run(inv, f"builtin.dice.roll {argument}")
    assert shell.error_code == "workspace.shell_exit" and exit_code(shell) == USAGE_EXIT
    assert [r.tool_id for r in inv.records] == [SHELL]


def test_the_shell_itself_and_the_read_tracking_tools_are_not_commands(make_bench) -> None:
    inv = shell_bench(make_bench, "builtin:workspace.read_file", "builtin:workspace.list_files").invocation()
    for command in ("builtin.workspace.shell", "builtin.workspace.read_file"):
        shell = run(inv, f"{command} '{{}}'")
        assert exit_code(shell) == 127, shell.content  # bash's command not found
    assert not run(inv, "builtin.workspace.list_files '{}'").is_error


def test_a_tool_the_profile_does_not_offer_is_not_a_command(make_bench) -> None:
    inv = shell_bench(make_bench).invocation()
    assert exit_code(run(inv, """builtin.dice.roll '{"formula":"d6"}'""")) == 127
    assert exit_code(run(inv, "mcp.list")) == 127  # no MCP tool offered: no mcp commands


def test_every_builtin_is_classified_as_reachable_from_the_shell_or_excluded() -> None:
    # upstream's shell_tools.rs pin: adding a builtin fails here until it is classified
    everything = [t.descriptor for t in (*BUILTINS.values(), *INJECTED.values())]
    assert sorted(shell_builtins(everything)) == [
        "chat.read_messages", "chat.search", "cron.create", "cron.delete", "cron.list_logs", "cron.read",
        "cron.update", "dice.roll", "memory.manage", "memory.query", "todo.write", "workspace.glob",
        "workspace.list_files", "workspace.search_files", "worldinfo.read_activated",
    ]


def test_nested_calls_share_the_invocation_budget(make_bench) -> None:
    inv = shell_bench(make_bench, DICE, max_calls_per_run=2).invocation()
    shell = run(inv, """builtin.dice.roll '{"formula":"d6"}' && builtin.dice.roll '{"formula":"d6"}'""")
    assert exit_code(shell) == FAILED_EXIT
    assert "agent.tool_budget_exhausted" in shell.content
    assert [r.result.error_code for r in inv.records[:2]] == [None, "agent.tool_budget_exhausted"]


def test_transcripts_leave_nested_calls_out_and_the_log_keeps_them(make_bench) -> None:
    bench = shell_bench(make_bench, DICE)
    inv = bench.invocation()
    run(inv, """builtin.dice.roll '{"formula":"d6"}'""")
    messages = inv.transcript("openai")
    assert sum(len(m.get("tool_calls") or ()) for m in messages) == 1
    bench.flush()
    reopened = Workbench(bench.workspace)
    try:
        again = reopened.open_invocation(inv.id)
        assert [r.via for r in again.records] == [inv.records[-1].call_id, None]
    finally:
        reopened.close()


def test_the_table_names_the_call_that_made_each_nested_call(make_bench) -> None:
    inv = shell_bench(make_bench, DICE).invocation()
    run(inv, """builtin.dice.roll '{"formula":"d6"}' && builtin.dice.roll '{"formula":"d4"}'""")
    frame = inv.to_dataframe()
    shell_id = inv.records[-1].call_id
    assert frame["call_id"].tolist() == [f"{shell_id}/1", f"{shell_id}/2", shell_id]
    assert frame["via"].tolist()[:2] == [shell_id, shell_id]
    assert frame["via"].isna().tolist() == [False, False, True]  # the model made the shell call
    assert frame["tool_id"].tolist() == [DICE, DICE, SHELL]


def test_the_async_call_bridges_too(make_bench) -> None:
    inv = shell_bench(make_bench, DICE).invocation()
    shell = asyncio.run(inv.acall("workspace_shell", {"command": """builtin.dice.roll '{"formula":"d4"}'"""}))
    assert not shell.is_error, shell.content
    assert [r.tool_id for r in inv.records] == [DICE, SHELL]


def test_the_commands_leave_with_their_call(make_bench) -> None:
    with_dice = shell_bench(make_bench, DICE).invocation()
    assert not run(with_dice, """builtin.dice.roll '{"formula":"d6"}'""").is_error
    without = make_bench("other", profile=Profile.default().edit(allow=[SHELL])).invocation()
    assert exit_code(run(without, """builtin.dice.roll '{"formula":"d6"}'""")) == 127  # a kept interpreter


# ---- mcp.list, mcp.check, mcp.invoke ----

def mcp_invocation(make_bench: Callable[..., Workbench], *tools: str) -> Any:
    bench = shell_bench(make_bench, *(f"mcp/demo:{t}" for t in tools))
    bench.mcp.add("demo", server=build_server(), id="demo")
    return bench, bench.invocation()


def test_mcp_list_names_each_server_and_its_offered_tools(make_bench) -> None:
    _, inv = mcp_invocation(make_bench, "echo", "weather")
    shell = run(inv, "mcp.list")
    assert shell.content.splitlines()[1:] == ["demo  demo", "  echo", "  weather"]


def test_mcp_check_passes_only_when_every_tool_is_offered(make_bench) -> None:
    _, inv = mcp_invocation(make_bench, "echo", "weather")
    assert not run(inv, "mcp.check --server demo echo weather").is_error
    missing = run(inv, "mcp.check --server demo echo fail")
    assert exit_code(missing) == FAILED_EXIT and "missing 1 of 2" in missing.content
    assert exit_code(run(inv, "mcp.check --server demo")) == USAGE_EXIT
    assert [r.tool_id for r in inv.records] == [SHELL] * 3  # nothing is called


@pytest.mark.parametrize("line", [
    "mcp.check echo",  # no selector
    "mcp.check --server demo --id demo echo",  # two
    "mcp.check --name nobody echo",  # no match
    "mcp.invoke --server demo",  # no tool
    "mcp.invoke --server demo echo '[1]'",  # not an object
    "mcp.invoke --server demo echo '{}' --timeout 20",  # not an option here
])
def test_an_mcp_command_line_that_is_not_understood_exits_2(make_bench, line) -> None:
    _, inv = mcp_invocation(make_bench, "echo")
    assert exit_code(run(inv, line)) == USAGE_EXIT


def test_mcp_invoke_calls_the_tool_through_the_gate_and_records_it(make_bench) -> None:
    _, inv = mcp_invocation(make_bench, "echo")
    shell = run(inv, """mcp.invoke --server demo echo '{"text":"lantern"}' | tr a-z A-Z""")
    assert not shell.is_error and "LANTERN" in shell.content
    nested = inv.records[0]
    assert (nested.tool_id, nested.via) == ("mcp/demo:echo", inv.records[-1].call_id)


def test_an_ask_tool_from_the_shell_needs_the_approval_a_model_call_needs(make_bench) -> None:
    bench, inv = mcp_invocation(make_bench, "echo")
    bench.set_permission("mcp/demo:echo", "ask")
    inv = bench.invocation()
    refused = run(inv, """mcp.invoke --server demo echo '{"text":"hi"}'""")
    assert exit_code(refused) == FAILED_EXIT and "tool.approval_required" in refused.content
    bench.on_approval(lambda request: request.call_id.endswith("/1"))
    assert "hi" in run(inv, """mcp.invoke --server demo echo '{"text":"hi"}'""").content


def test_a_nested_call_still_waiting_for_approval_when_the_shell_gives_up_never_runs(make_bench) -> None:
    # The shell's time (1 s) ends while a person is still deciding; their late yes starts nothing.
    bench = make_bench(profile=Profile.default().edit(allow=[SHELL, "mcp/demo:echo"], shell={"timeoutSeconds": 1.0}))
    bench.mcp.add("demo", server=build_server(), id="demo")
    bench.set_permission("mcp/demo:echo", "ask")
    decided = asyncio.Event()
    asked: list[Any] = []

    async def slow_person(request: Any) -> bool:
        asked.append(request)
        await decided.wait()
        return True

    bench.on_approval(slow_person)
    inv = bench.invocation()
    shell = run(inv, """mcp.invoke --server demo echo '{"text":"late"}'""")
    assert shell.error_code == "workspace.shell_timeout" and len(asked) == 1
    bench._kernel.loop.loop.call_soon_threadsafe(decided.set)  # the person says yes, too late
    for _ in range(1000):  # the nested call settles on its own thread: a bounded wait for its record
        if any(r.via is not None for r in inv.records):
            break
        time.sleep(0.01)
    [nested] = [r for r in inv.records if r.via is not None]
    assert nested.result.error_code == "tool.approval_timeout", nested.result
    assert not any(m.method == "tools/call" for m in bench.mcp.trace("demo", 50))


# ---- the deadline, without waiting for it ----

class _Port:
    def __init__(self) -> None:
        self.calls: list[ToolId] = []

    def descriptors(self) -> Sequence[ToolDescriptor]:
        return [BUILTINS[ToolId.parse(DICE)].descriptor]

    def call(self, tool_id: ToolId, arguments: dict[str, Any]) -> ToolResult:
        self.calls.append(tool_id)
        return ToolResult(call_id="c/1", tool_id=str(tool_id), content="ok")


def test_no_call_starts_after_the_shell_deadline() -> None:
    port = _Port()
    late = bridge_commands(port, time.monotonic() - 1)["builtin.dice.roll"](["{}"], None)
    assert late.exit_code == UNCONFIRMED_EXIT and "workspace.shell_timeout" in late.stderr
    assert port.calls == []
    on_time = bridge_commands(port, time.monotonic() + 60)["builtin.dice.roll"](["{}"], None)
    assert (on_time.exit_code, on_time.stdout, port.calls) == (0, "ok\n", [ToolId.parse(DICE)])


def test_a_nested_call_gets_no_port_so_nesting_stops_at_one_level(make_bench, monkeypatch) -> None:
    inv = shell_bench(make_bench, DICE).invocation()
    tool = BUILTINS[ToolId.parse(DICE)]
    ports: list[Any] = []

    def spy(ctx: Any, args: dict[str, Any]) -> Any:
        ports.append(ctx.tools)
        return tool.handler(ctx, args)

    monkeypatch.setitem(BUILTINS, ToolId.parse(DICE), dataclasses.replace(tool, handler=spy))
    inv.call("dice_roll", {"formula": "d6"})
    run(inv, """builtin.dice.roll '{"formula":"d6"}'""")
    assert ports[0] is not None and ports[1] is None


def test_nan_and_infinity_are_not_json_to_the_bridge(make_bench) -> None:
    inv = shell_bench(make_bench, "builtin:dice.roll").invocation()
    shell = run(inv, """builtin.dice.roll '{"formula": NaN}'""")
    assert exit_code(shell) == USAGE_EXIT
    assert [r for r in inv.records if r.via is not None] == []  # no call was made
