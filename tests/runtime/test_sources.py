"""Tool sources and the kernel: a fourth source is one class, and an invocation needs a kernel only."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Sequence
from pathlib import Path
from typing import Any

import pytest

from toolbench import (
    Profile,
    ToolbenchError,
    ToolContext,
    ToolDescriptor,
    ToolError,
    ToolId,
    ToolOutput,
    ToolSource,
    Workbench,
)
from toolbench.pytest_plugin import assert_code
from toolbench.runtime.kernel import Kernel

LOOKUP = ToolId.parse("extension/remote:lookup")
SLOW = ToolId.parse("extension/remote:slow")


class RemoteTools(ToolSource):
    """Stands in for tools served elsewhere (an HTTP API, another framework): two tools, one async."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any], str]] = []
        self.asked: set[ToolId] = set()

    def descriptors(self) -> Sequence[ToolDescriptor]:
        schema = {"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"],
                  "additionalProperties": False}
        return [ToolDescriptor(id=LOOKUP, description="Look a key up remotely.", input_schema=schema),
                ToolDescriptor(id=SLOW, description="An async remote tool.")]

    def call(self, tool_id: ToolId, arguments: dict[str, Any], ctx: ToolContext, *,
             blocking: bool) -> ToolOutput | Awaitable[ToolOutput]:
        self.calls.append((tool_id.name, arguments, ctx.call_id))
        if tool_id == SLOW:
            return self._slow()
        if arguments["key"] == "missing":
            raise ToolError("remote.not_found", "No such key; list the keys first.")
        return ToolOutput(f"value of {arguments['key']}", structured={"key": arguments["key"]})

    async def _slow(self) -> ToolOutput:
        await asyncio.sleep(0)
        return ToolOutput("slow done")

    def permission(self, tool_id: ToolId) -> str:
        return "ask" if tool_id in self.asked else "on"

    def set_permission(self, tool_id: ToolId, permission: str) -> ToolId:
        (self.asked.add if permission == "ask" else self.asked.discard)(tool_id)
        return tool_id


@pytest.fixture
def remote(tmp_path: Path) -> Any:
    bench = Workbench(tmp_path, Profile.default().edit(allow=["builtin:dice.roll", str(LOOKUP), str(SLOW)],
                                                       max_calls_per_tool={str(LOOKUP): 2}))
    source = RemoteTools()
    bench.add_source(source)
    yield bench, source
    bench.close()


def test_a_fourth_source_joins_the_catalog_after_the_others(remote: Any) -> None:
    bench, _ = remote
    ids = [d.id for d in bench.catalog()]
    assert ids[-2:] == [LOOKUP, SLOW] and ToolId.builtin("dice.roll") in ids
    inv = bench.invocation()
    assert [b.call_name for b in inv.snapshot.bindings] == ["dice_roll", "lookup", "slow"]


def test_its_calls_take_the_whole_path_gate_checks_results_and_records(remote: Any) -> None:
    bench, source = remote
    inv = bench.invocation()
    ok = inv.call("lookup", {"key": "a"})
    assert (ok.content, ok.tool_id, ok.is_error) == ("value of a", str(LOOKUP), False)
    bad = inv.call("lookup", {"key": 3})  # the runtime checks the schema before the source runs
    assert bad.error_code == "tool.invalid_arguments"
    over = inv.call("lookup", {"key": "b"})  # the per-tool budget of 2 was used by the two calls above
    assert over.error_code == "agent.tool_budget_exhausted"
    assert [c[0] for c in source.calls] == ["lookup"]
    assert inv.call("slow").content == "slow done"
    assert [r.call_name for r in inv.records] == ["lookup", "lookup", "lookup", "slow"]


def test_a_source_error_is_a_result_the_model_reads(remote: Any) -> None:
    bench, _ = remote
    result = bench.invocation().call("lookup", {"key": "missing"})
    assert (result.is_error, result.error_code) == (True, "remote.not_found")


def test_its_ask_permission_goes_through_the_bench_approval(remote: Any) -> None:
    bench, source = remote
    assert bench.set_permission(LOOKUP, "ask") == LOOKUP and bench.permission(LOOKUP) == "ask"
    seen = []
    bench.on_approval(lambda request: seen.append(request.call_name) or False)
    denied = bench.invocation().call("lookup", {"key": "a"})
    assert denied.error_code == "tool.approval_denied" and seen == ["lookup"] and source.calls == []


def test_adding_something_that_is_not_a_source_is_misuse(toolbench_bench: Workbench) -> None:
    with pytest.raises(ToolbenchError) as info:
        toolbench_bench.add_source(object())  # type: ignore[arg-type]
    assert info.value.code == "bench.misuse"


def test_a_builtin_asks_like_any_tool_but_only_the_profile_takes_it_away(toolbench_bench: Workbench) -> None:
    toolbench_bench.set_permission("builtin:dice.roll", "ask")
    assert toolbench_bench.invocation().call("dice_roll", {"formula": "1d6"}).error_code == "tool.approval_required"
    with pytest.raises(ToolbenchError) as info:
        toolbench_bench.set_permission("builtin:dice.roll", "off")
    assert info.value.code == "bench.misuse"


def test_an_invocation_needs_a_kernel_only(tmp_path: Path) -> None:
    kernel = Kernel(tmp_path, Profile.default().edit(allow=["builtin:dice.roll"]), seed=3)
    try:
        inv = kernel.new_invocation("chat", "inv_kernel")
        assert inv.call("dice_roll", {"formula": "1d6"}).is_error is False
        assert (tmp_path / ".toolbench" / "invocations" / "inv_kernel" / "snapshot.json").is_file()
    finally:
        for step in kernel.close_steps():
            step()
    with pytest.raises(ToolbenchError) as info:
        kernel.new_invocation("chat", "inv_after")
    assert info.value.code == "bench.closed"


def test_the_cron_scheduler_is_built_once(toolbench_bench: Workbench) -> None:
    assert toolbench_bench.cron is toolbench_bench.cron


def test_an_added_source_s_tools_can_be_enabled_later(tmp_path: Path) -> None:
    with Workbench(tmp_path, Profile.default().edit(allow=["builtin:dice.roll"])) as bench:
        bench.add_source(RemoteTools())
        bench.enable(LOOKUP)
        bench.disable(LOOKUP)
        bench.enable(LOOKUP)
        assert bench.invocation().call("lookup", {"key": "k"}).content == "value of k"


class McpShaped(RemoteTools):
    """A source whose ids happen to have the MCP kind: its calls must still reach it."""

    TOOL = ToolId.parse("mcp/elsewhere:find")

    def descriptors(self) -> Sequence[ToolDescriptor]:
        return [ToolDescriptor(id=self.TOOL, description="Found elsewhere.")]

    def call(self, tool_id: ToolId, arguments: dict[str, Any], ctx: ToolContext, *,
             blocking: bool) -> ToolOutput | Awaitable[ToolOutput]:
        return ToolOutput("found")


def test_a_source_s_mcp_kind_ids_are_its_own(tmp_path: Path) -> None:
    with Workbench(tmp_path, Profile.default().edit(allow=[str(McpShaped.TOOL)])) as bench:
        bench.add_source(McpShaped())
        inv = bench.invocation()
        name = inv.snapshot.bindings[0].call_name
        assert inv.call(name).content == "found"
        assert inv.call(name).content == "found"  # the second call too (the owner is kept per invocation)


def test_an_unregistered_ask_tool_fails_at_once_without_asking(toolbench_bench: Workbench) -> None:
    bench = toolbench_bench
    tool = bench.register_tool("x", lambda n=1: n, name="double")
    bench.enable(tool)
    bench.set_permission(tool, "ask")
    asked: list[str] = []
    bench.on_approval(lambda request: asked.append(request.call_name) or True)
    inv = bench.invocation()
    bench.unregister_tool(tool)
    assert_code(inv.call("double", {"n": 2}), "extension.tool_unavailable")
    assert asked == []


def test_permission_of_ids_no_source_has(toolbench_bench: Workbench) -> None:
    assert toolbench_bench.permission("builtin:nope.x") == "on"
    assert toolbench_bench.permission("extension/none:x") == "on"
    with pytest.raises(ToolbenchError) as info:
        toolbench_bench.permission("mcp/none:x")
    assert info.value.code == "mcp.server_unknown"


# a source's own kind ---------------------------------------------------------------------------
SEARCH = ToolId.parse("remote/api:search")
GONE = ToolId.parse("remote/api:gone")


class OwnKind(ToolSource):
    """Tools under an id kind of its own (`remote/api:...`), not borrowed from the extensions."""

    kind = "remote"

    def descriptors(self) -> Sequence[ToolDescriptor]:
        return [ToolDescriptor(id=SEARCH, description="Search remotely.")]

    def call(self, tool_id: ToolId, arguments: dict[str, Any], ctx: ToolContext, *,
             blocking: bool) -> ToolOutput | Awaitable[ToolOutput]:
        if tool_id != SEARCH:
            raise ToolError("remote.tool_gone", f"`{tool_id}` is not served any more")
        return ToolOutput("found")

    def unavailable(self, tool_id: ToolId) -> Any:
        from toolbench.core.snapshot import Diagnostic

        return Diagnostic(tool_id=str(tool_id), code="tool.source_unavailable", message="the remote API dropped it")


def test_a_source_of_its_own_kind_names_its_ids_and_says_why_one_is_missing(tmp_path: Path) -> None:
    assert (SEARCH.kind, SEARCH.source_id) == ("remote", "api")
    with Workbench(tmp_path, Profile.default().edit(allow=[str(SEARCH), str(GONE)])) as bench:
        before = {d.tool_id: d for d in bench.invocation().snapshot.diagnostics}
        assert before[str(GONE)].code == "tool.source_unavailable"  # no source of that kind yet: not MCP's words
        assert "kind `remote`" in before[str(GONE)].message
        bench.add_source(OwnKind())
        inv = bench.invocation()
        assert [b.call_name for b in inv.snapshot.bindings] == ["search"]
        [gone] = [d for d in inv.snapshot.diagnostics if d.tool_id == str(GONE)]
        assert (gone.code, gone.message) == ("tool.source_unavailable", "the remote API dropped it")
        assert inv.call("search", {}).content == "found"
        with pytest.raises(ToolbenchError) as taken:
            bench.add_source(OwnKind())  # one source answers for a kind
        assert taken.value.code == "bench.misuse" and "OwnKind's" in taken.value.message


@pytest.mark.parametrize("kind", ["mcp", "extension", "builtin", "Remote", "", 3])
def test_a_source_cannot_take_a_kind_that_is_not_free(tmp_path: Path, kind: Any) -> None:
    source = OwnKind()
    source.kind = kind
    with Workbench(tmp_path) as bench, pytest.raises(ToolbenchError) as misuse:
        bench.add_source(source)
    assert misuse.value.code == "bench.misuse"


def test_an_installed_source_reaches_the_command_line_and_a_broken_one_is_a_notice(tmp_path: Path) -> None:
    import json

    from deadline import ROOT, run_with_deadline
    from plugin_support import write_source_dist

    site = tmp_path / "site"
    info = write_source_dist(site, {"remote": "tb_sources:Remote", "broken": "tb_sources:broken",
                                    "gone": "tb_missing:Source"})
    import shutil

    twice = tmp_path / "site-copy"  # the same distribution found twice on sys.path: added once
    shutil.copytree(info, twice / info.name)
    profile = tmp_path / "profile.json"
    profile.write_text(Profile.default().edit(allow=["remote/api:search"]).to_json_text(), encoding="utf-8")
    script = f"""
import contextlib, io, sys
sys.path[:0] = [{str(site)!r}, {str(twice)!r}]
from toolbench.cli import main
out, err = io.StringIO(), io.StringIO()
with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
    code = main(sys.argv[1:])
report([code, out.getvalue(), err.getvalue()])
"""
    code, out, err = run_with_deadline(script, cwd=ROOT, deadline=60,
                                       args=("call", "search", "{}", "--profile", str(profile)))
    assert code == 0 and json.loads(out)["content"] == "found"
    notices = [line for line in err.splitlines() if "tool.source_plugin_skipped" in line]
    assert len(notices) == 2 and any("`broken`" in n and "not a ToolSource" in n for n in notices)
    assert any("`gone`" in n for n in notices)


class Offline(ToolSource):
    kind = "offline"

    def descriptors(self) -> Sequence[ToolDescriptor]:
        raise ConnectionError("the API is unreachable")

    def call(self, tool_id: ToolId, arguments: dict[str, Any], ctx: ToolContext, *,
             blocking: bool) -> ToolOutput | Awaitable[ToolOutput]:
        raise AssertionError("never called")


class OffAgain(Offline):
    def descriptors(self) -> Sequence[ToolDescriptor]:
        return []


class Twice(ToolSource):
    def descriptors(self) -> Sequence[ToolDescriptor]:
        return [ToolDescriptor(id=ToolId.parse("builtin:dice.roll"), description="Another dice.")]

    def call(self, tool_id: ToolId, arguments: dict[str, Any], ctx: ToolContext, *,
             blocking: bool) -> ToolOutput | Awaitable[ToolOutput]:
        raise AssertionError("never called")


def test_a_source_whose_tools_cannot_be_read_is_refused_when_added_and_the_bench_goes_on(tmp_path: Path) -> None:
    """Refused at `add_source`, not at the next invocation (which every later one would fail too)."""
    with Workbench(tmp_path) as bench:
        with pytest.raises(ToolbenchError) as offline:
            bench.add_source(Offline())
        assert offline.value.code == "bench.misuse"
        assert "ConnectionError: the API is unreachable" in offline.value.message
        with pytest.raises(ToolbenchError) as twice:
            bench.add_source(Twice())
        assert twice.value.code == "tool.catalog_duplicate_id"
        assert not bench.invocation().call("dice_roll", {"formula": "d6"}).is_error
        bench.add_source(OwnKind())  # nothing of the refused ones was kept: kinds, sources
        bench.add_source(OffAgain())  # the kind the refused source asked for is free
        assert [str(d.id) for d in bench.catalog()][-1] == str(SEARCH)


class Flaky(OwnKind):
    """OwnKind until its API goes offline."""

    offline = False

    def descriptors(self) -> Sequence[ToolDescriptor]:
        if self.offline:
            raise ConnectionError("the API is unreachable")
        return super().descriptors()


def test_a_source_that_fails_later_leaves_the_next_snapshots_named_and_the_bench_goes_on(tmp_path: Path) -> None:
    source = Flaky()
    with Workbench(tmp_path, Profile.default().edit(allow=[str(SEARCH), "builtin:dice.roll"])) as bench:
        bench.add_source(source)
        assert "search" in bench.invocation().snapshot.call_names
        source.offline = True
        inv = bench.invocation()  # raised ConnectionError before
        assert list(inv.snapshot.call_names) == ["dice_roll"]
        [gone] = [d for d in inv.snapshot.diagnostics if d.tool_id == str(SEARCH)]
        assert gone.code == "tool.source_unavailable"
        assert gone.message == "Flaky failed: ConnectionError: the API is unreachable"
        assert inv.call("search", {}).error_code == "model.unknown_tool_call"
        assert not inv.call("dice_roll", {"formula": "d6"}).is_error
        source.offline = False  # back: the next invocation offers it again
        assert bench.invocation().call("search", {}).content == "found"


def test_a_source_that_compares_by_value_and_cannot_be_hashed_is_a_source_like_any(tmp_path: Path) -> None:
    from dataclasses import dataclass

    @dataclass
    class Valued(Flaky):  # eq=True: unhashable, as many users' dataclass sources are
        region: str = "eu"

    source = Valued()
    with Workbench(tmp_path, Profile.default().edit(allow=[str(SEARCH)])) as bench:
        bench.add_source(source)
        source.offline = True
        assert [d.code for d in bench.invocation().snapshot.diagnostics if d.tool_id == str(SEARCH)] == [
            "tool.source_unavailable"]
        source.offline = False
        assert bench.invocation().call("search", {}).content == "found"
