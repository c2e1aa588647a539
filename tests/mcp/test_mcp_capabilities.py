"""What the client declares and answers, against server-everything: roots, sampling, elicitation,
progress; what a server without handlers is told; and a server's environment and pid."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp_support import child_pids, fault_server, no_new_children, wait_until
from node_servers import node_bin

from toolbench import Profile, Workbench
from toolbench.core.errors import ToolError
from toolbench.core.ids import ToolId
from toolbench.core.loop import LoopThread
from toolbench.core.results import ToolOutput
from toolbench.mcp import ElicitationRequest, McpManager, ProgressEvent, SamplingRequest, workspace_roots
from toolbench.testing import ScriptedModel

HIDDEN = {"get-roots-list", "trigger-sampling-request", "trigger-elicitation-request", "trigger-url-elicitation"}
Make = Callable[..., McpManager]


@pytest.fixture
def make(loop: LoopThread, tmp_path: Path) -> Iterator[Make]:
    """`make(roots=...)`: managers on `tmp_path` that leave no server process behind."""
    baseline = child_pids()
    made: list[McpManager] = []

    def build(**options: Any) -> McpManager:
        made.append(McpManager(loop, tmp_path / "mcp-logs", **options))
        return made[-1]

    yield build
    for manager in made:
        manager.close()
    assert no_new_children(baseline), "a server process outlived the manager"


def everything(manager: McpManager) -> set[str]:
    info = manager.add("everything", command=[node_bin("mcp-server-everything"), "stdio"], timeout=30)
    assert info.state == "active", info.diagnostic
    return {t.name for t in info.tools if t.offered and t.name}


def run(loop: LoopThread, manager: McpManager, tool: str, call_id: str | None = None, **arguments: Any) -> ToolOutput:
    return loop.run(manager.call(ToolId.parse(f"mcp/everything:{tool}"), arguments, call_id=call_id))


def test_without_handlers_the_server_hides_four_tools_and_the_info_says_why(make: Make) -> None:
    manager = make()
    tools = everything(manager)
    assert not tools & HIDDEN and "echo" in tools
    info = manager.info("everything")
    assert info.client_capabilities == ()
    assert [(w.subject, w.code) for w in info.warnings] == [("everything", "mcp.capability_not_offered")]
    assert all(c in info.warnings[0].message for c in ("roots", "sampling", "elicitation"))
    assert ("everything", "mcp.capability_not_offered") in [(w.subject, w.code) for w in manager.warnings]
    assert manager.diagnostics == []  # a warning, not a reason to leave a tool out


def test_roots_are_the_folders_the_profile_makes_visible(make: Make, loop: LoopThread, tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    visible = Profile.default().workspace.visible_roots
    manager = make(roots=lambda: workspace_roots(workspace, visible))
    assert "get-roots-list" in everything(manager)
    assert manager.info("everything").client_capabilities == ("roots",)
    listed = run(loop, manager, "get-roots-list").content
    for name in visible:
        assert (workspace / name).resolve().as_uri() in listed
    assert f"({len(visible)} total)" in listed


def test_a_roots_change_is_announced_and_the_server_asks_again(make: Make, loop: LoopThread, tmp_path: Path) -> None:
    roots = [tmp_path / "work"]
    manager = make(roots=lambda: list(roots))
    everything(manager)
    assert tmp_path.joinpath("work").as_uri() in run(loop, manager, "get-roots-list").content
    roots.append(tmp_path / "output")
    manager.roots_changed()  # notifications/roots/list_changed: the server lists them again
    assert wait_until(lambda: tmp_path.joinpath("output").as_uri() in run(loop, manager, "get-roots-list").content)


def test_sampling_is_answered_by_a_scripted_model(make: Make, loop: LoopThread) -> None:
    manager = make()
    model = ScriptedModel(["A dragon sleeps."])
    manager.on_sampling(model)
    assert "trigger-sampling-request" in everything(manager)
    assert "sampling" in manager.info("everything").client_capabilities
    result = run(loop, manager, "trigger-sampling-request", prompt="a story", maxTokens=20)
    assert "A dragon sleeps." in result.content
    messages = model.requests[0].messages
    assert messages[0] == {"role": "system", "content": "You are a helpful test server."}
    assert messages[1]["role"] == "user" and "a story" in messages[1]["content"]
    assert result.structured["serverRequests"] == [{"method": "sampling/createMessage", "outcome": "answered"}]


def test_a_request_handler_gets_the_request_and_its_call(make: Make, loop: LoopThread) -> None:
    manager = make()
    seen: list[SamplingRequest] = []

    async def answer(request: SamplingRequest) -> dict[str, Any]:
        seen.append(request)
        return {"choices": [{"message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}],
                "model": "gpt-test"}

    manager.on_sampling(answer)
    everything(manager)
    result = run(loop, manager, "trigger-sampling-request", call_id="call_7", prompt="p", maxTokens=33)
    assert '"model": "gpt-test"' in result.content and '"text": "hi"' in result.content
    request = seen[0]
    assert (request.server, request.tool, request.call_id) == ("everything", "trigger-sampling-request", "call_7")
    assert (request.max_tokens, request.system_prompt) == (33, "You are a helpful test server.")


def test_a_handler_set_after_connecting_is_offered_after_a_refresh(make: Make) -> None:
    manager = make()
    assert "trigger-sampling-request" not in everything(manager)
    manager.on_sampling(ScriptedModel(["x"]))
    warning = manager.info("everything").warnings[0]
    assert warning.code == "mcp.capability_not_offered" and "refresh()" in warning.message
    info = manager.refresh("everything")[0]  # capabilities are fixed at the handshake: it reconnects
    assert {"trigger-sampling-request"} <= {t.name for t in info.tools if t.offered}
    assert info.client_capabilities == ("sampling",)


def test_a_removed_handler_is_a_refusal_the_server_sees(make: Make, loop: LoopThread) -> None:
    manager = make()
    manager.on_sampling(ScriptedModel(["never"]))
    everything(manager)
    manager.on_sampling(None)
    with pytest.raises(ToolError) as caught:
        run(loop, manager, "trigger-sampling-request", prompt="p")
    assert caught.value.code == "mcp.tool_error"
    assert "no sampling handler" in caught.value.message  # the server reports the error we sent
    assert caught.value.structured["serverRequests"][0]["outcome"] == "refused"


def test_a_failing_handler_is_an_error_for_the_server_not_a_crash(make: Make, loop: LoopThread) -> None:
    manager = make()

    def broken(request: SamplingRequest) -> str:
        raise RuntimeError("model offline")

    manager.on_sampling(broken)
    everything(manager)
    with pytest.raises(ToolError) as caught:
        run(loop, manager, "trigger-sampling-request", prompt="p")
    assert "model offline" in caught.value.message
    assert caught.value.structured["serverRequests"][0]["outcome"] == "failed"
    assert run(loop, manager, "echo", message="still here").content.endswith("still here")


@pytest.mark.parametrize(("answer", "shown"), [({"name": "Ada Lovelace", "check": True}, "Name: Ada Lovelace"),
                                               ("decline", "declined"), (None, "cancelled")])
def test_elicitation_forms_are_answered_by_the_handler(make: Make, loop: LoopThread, answer: Any, shown: str) -> None:
    manager = make()
    seen: list[ElicitationRequest] = []
    manager.on_elicitation(lambda request: seen.append(request) or answer)
    assert "trigger-elicitation-request" in everything(manager)
    result = run(loop, manager, "trigger-elicitation-request")
    assert shown in result.content
    assert seen[0].mode == "form" and "name" in (seen[0].requested_schema or {}).get("properties", {})
    outcome = {None: "cancel", "decline": "decline"}.get(answer if isinstance(answer, str | None) else "", "accept")
    assert result.structured["serverRequests"] == [{"method": "elicitation/create", "outcome": outcome}]


def test_url_elicitation_gives_the_handler_the_url(make: Make, loop: LoopThread) -> None:
    manager = make()
    seen: list[ElicitationRequest] = []
    manager.on_elicitation(lambda request: seen.append(request) or "accept")
    assert "trigger-url-elicitation" in everything(manager)
    result = run(loop, manager, "trigger-url-elicitation", url="https://example.com/consent")
    assert "completed the URL elicitation" in result.content
    assert (seen[0].mode, seen[0].url) == ("url", "https://example.com/consent")


def test_progress_reaches_the_handler_and_the_result(make: Make, loop: LoopThread) -> None:
    manager = make()
    events: list[ProgressEvent] = []
    manager.on_progress(events.append)
    everything(manager)
    result = run(loop, manager, "trigger-long-running-operation", call_id="call_1", duration=0.2, steps=4)
    assert [(e.progress, e.total) for e in events] == [(1, 4), (2, 4), (3, 4), (4, 4)]
    assert {(e.server, e.tool, e.call_id) for e in events} == {("everything", "trigger-long-running-operation",
                                                               "call_1")}
    assert result.structured["progress"] == {"count": 4, "last": [{"progress": float(i), "total": 4.0}
                                                                  for i in range(1, 5)]}


def test_progress_is_kept_bounded_and_an_async_handler_is_awaited(make: Make, loop: LoopThread) -> None:
    manager = make()
    events: list[ProgressEvent] = []

    async def handler(event: ProgressEvent) -> None:
        events.append(event)

    manager.on_progress(handler)
    everything(manager)
    result = run(loop, manager, "trigger-long-running-operation", duration=0.25, steps=25)
    assert len(events) == 25
    kept = result.structured["progress"]
    assert kept["count"] == 25 and [e["progress"] for e in kept["last"]] == [float(i) for i in range(6, 26)]


def test_an_undeclared_request_is_refused_and_noted(make: Make, loop: LoopThread) -> None:
    manager = make()
    manager.add("asks", command=fault_server("asks_anyway"))
    for tool, method in (("sample", "sampling/createMessage"), ("elicit", "elicitation/create"),
                         ("roots", "roots/list")):
        result = loop.run(manager.call(ToolId.parse(f"mcp/asks:{tool}"), {}))
        assert json.loads(result.content)["code"] == -32600  # the JSON-RPC error the server got
        [note] = result.structured["serverRequests"]
        assert (note["method"], note["outcome"]) == (method, "refused")
        assert note["detail"].startswith("mcp.capability_not_offered")


def test_the_server_environment_holds_nothing_of_toolbench_and_its_pid_is_known(make: Make, loop: LoopThread) -> None:
    manager = make()
    everything(manager)
    env = json.loads(run(loop, manager, "get-env").content)
    assert not [k for k in env if k.upper().startswith("TOOLBENCH")]
    pid = manager.info("everything").pid
    assert pid is not None and pid in child_pids()
    assert os.getpgid(pid) == pid  # it leads its own group: closing kills the whole tree


def test_progress_reaches_the_result_of_an_invocation(make_bench: Callable[..., Workbench]) -> None:
    bench = make_bench(profile=Profile.default().edit(allow=["mcp/everything:trigger-long-running-operation"]))
    events: list[ProgressEvent] = []
    bench.mcp.on_progress(events.append)
    everything(bench.mcp)
    result = bench.invocation().call("mcp__everything__trigger-long-running-operation", {"duration": 0.1, "steps": 2})
    assert not result.is_error and result.structured["progress"]["count"] == 2
    assert [e.progress for e in events] == [1, 2]
    assert {e.call_id for e in events} == {result.call_id}  # the bench names the call


def test_a_bench_tells_its_servers_the_workspace_roots(make_bench: Callable[..., Workbench]) -> None:
    bench = make_bench(profile=Profile.default().edit(allow=["mcp/everything:get-roots-list"]))
    tools = everything(bench.mcp)
    assert "get-roots-list" in tools  # shown because the bench declares roots
    result = bench.invocation().call("mcp__everything__get-roots-list", {})
    assert not result.is_error
    for root in bench.profile.workspace.visible_roots:
        assert (bench.workspace / root).as_uri() in result.content
