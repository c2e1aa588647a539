"""`mcp.manage` as a model calls it: LiveAgent's McpManager actions (reference §7.3) over
`bench.mcp`. Cases: the action list and its parameters (server_id / server_ids, server,
patch, conflict fail|overwrite, include_*), writes and restart/stop only in chat scope,
id-level merges, and changes that apply from the next invocation's snapshot."""

from __future__ import annotations

import json
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolbench import Profile
from toolbench.core.errors import CODES, ToolError
from toolbench.examples.demo_mcp import build_server
from toolbench.tools.agents import TASK_RETURN
from toolbench.tools.mcp_manage import ACTIONS, DESCRIPTOR, config_of
from toolbench.tools.registry import BUILTINS

MANAGE = "builtin:mcp.manage"
DEMO_CMD = [sys.executable, "-m", "toolbench.examples.demo_mcp"]
ECHO = "mcp/demo:echo"


@pytest.fixture
def bench(make_bench):
    bench = make_bench(profile=Profile.default().edit(allow=[MANAGE, "mcp/demo:echo", "mcp/stdio-demo:echo"]))
    assert bench.mcp.add("demo", server=build_server(), timeout=5.0).state == "active"
    return bench


@pytest.fixture
def manage(bench):
    inv = bench.invocation("chat")

    def call(action, **fields):
        result = inv.call("mcp_manage", {"action": action, **fields})
        return result, (result.structured if not result.is_error else None)

    call.inv = inv
    return call


def test_the_builtin_has_upstreams_actions_and_a_closed_schema():
    assert ACTIONS == ("list", "read", "tools", "diagnose", "validate", "create", "update", "delete", "enable",
                       "disable", "test", "restart", "stop")
    assert set(DESCRIPTOR.input_schema["properties"]["action"]["enum"]) == set(ACTIONS)
    assert DESCRIPTOR.input_schema["additionalProperties"] is False
    assert BUILTINS[DESCRIPTOR.id].descriptor is DESCRIPTOR
    assert MANAGE not in Profile.default().tools.allow  # not in the default allow list
    assert {"mcp.manage_scope", "mcp.manage_unavailable", "mcp.server_not_editable"} <= set(CODES)


def test_list_shows_runtime_state_and_hides_disabled_unless_asked(bench, manage):
    result, data = manage("list")
    assert not result.is_error
    [server] = data["servers"]
    assert (server["id"], server["state"], server["enabled"], server["transport"]) == ("demo", "active", True, "memory")
    assert server["toolCount"] > 0 and "tools" not in server and "stderrTail" not in server
    json.loads(result.content)  # the model reads the same data as JSON
    bench.mcp.disable("demo")
    assert manage("list")[1]["servers"] == []
    assert manage("list", include_disabled=True)[1]["servers"][0]["state"] == "disabled"


def test_read_and_tools_list_a_servers_tools_with_schemas_on_request(manage):
    _, data = manage("tools", server_id="demo")
    names = {t["name"] for t in data["servers"][0]["tools"]}
    assert {"echo", "issue.create", "fail"} <= names
    assert all("inputSchema" not in t for t in data["servers"][0]["tools"])
    _, data = manage("read", server_ids=["demo"], include_schema=True)
    echo = next(t for t in data["servers"][0]["tools"] if t["name"] == "echo")
    assert echo["toolId"] == ECHO and echo["inputSchema"]["type"] == "object"


def test_unknown_server_and_missing_ids_are_coded(manage):
    assert manage("read", server_id="nope")[0].error_code == "mcp.server_unknown"
    assert manage("read")[0].error_code == "tool.invalid_arguments"
    assert manage("create")[0].error_code == "tool.invalid_arguments"
    assert manage("list", bogus=1)[0].error_code == "tool.invalid_arguments"  # closed schema


@pytest.mark.parametrize(("server", "code"), [
    ({"id": "x"}, "mcp.config_invalid"),  # no command, no url
    ({"id": "x", "transport": "sse", "url": "http://127.0.0.1:1/sse"}, "mcp.config_invalid"),
    ({"id": "x", "url": "http://h", "messageUrl": "http://h/m"}, "mcp.config_invalid"),
    ({"id": "x", "transport": "stdio", "url": "http://h"}, "mcp.config_invalid"),
    ({"id": "Bad Id", "command": "python"}, "mcp.config_invalid"),
    ({"id": "x", "command": ""}, "mcp.config_invalid"),
    ({"id": "x", "url": "ftp://h"}, "mcp.config_invalid"),
])
def test_validate_refuses_what_bench_mcp_add_refuses(manage, server, code):
    assert manage("validate", server=server)[0].error_code == code


def test_validate_accepts_and_hides_secret_values(manage):
    _, data = manage("validate", server={"id": "web", "url": "http://127.0.0.1:9/mcp", "headers": {"X-Key": "s3"}})
    assert data["valid"] and data["config"]["transport"] == "http"
    assert data["config"]["headers"] == {"X-Key": "***"}


def test_config_of_is_idempotent():
    once = config_of({"id": "a", "command": "python", "args": ["-m", "x"]})
    assert config_of(once) == once and once["transport"] == "stdio"


def test_create_applies_from_the_next_invocation_not_the_current_one(bench, manage):
    result, data = manage("create", server={"id": "stdio-demo", "command": DEMO_CMD[0], "args": DEMO_CMD[1:],
                                            "timeoutMs": 20000})
    assert not result.is_error, result.content
    assert data["server"]["state"] == "active" and data["appliesFrom"] == "next invocation"
    assert data["server"]["config"]["command"] == DEMO_CMD[0]
    assert "mcp__stdio-demo__echo" not in manage.inv.snapshot.call_names  # frozen
    assert manage.inv.call("mcp__stdio-demo__echo", {"text": "hi"}).error_code == "model.unknown_tool_call"
    nxt = bench.invocation("chat")
    echoed = nxt.call("mcp__stdio-demo__echo", {"text": "hi"})
    assert not echoed.is_error and "hi" in echoed.content
    assert {s.id for s in bench.mcp.servers} == {"demo", "stdio-demo"}  # an id-level add


def test_create_conflict_fails_by_default_and_overwrite_replaces_one_server(bench, manage):
    stdio = {"id": "demo", "command": DEMO_CMD[0], "args": DEMO_CMD[1:], "timeoutMs": 20000}
    assert manage("create", server=stdio)[0].error_code == "mcp.server_exists"
    assert bench.mcp.info("demo").transport == "memory"  # left alone
    result, data = manage("create", server=stdio, conflict="overwrite")
    assert not result.is_error, result.content
    assert bench.mcp.info("demo").transport == "stdio" and data["server"]["state"] == "active"


def test_update_merges_a_patch_and_keeps_the_other_fields_and_servers(bench, manage):
    manage("create", server={"id": "stdio-demo", "command": DEMO_CMD[0], "args": DEMO_CMD[1:],
                             "env": {"A": "1"}, "timeoutMs": 20000})
    result, data = manage("update", server_id="stdio-demo", patch={"timeoutMs": 15000, "enabled": False})
    assert not result.is_error, result.content
    server = data["server"]
    assert (server["state"], server["timeoutMs"]) == ("disabled", 15000)
    assert server["config"]["args"] == DEMO_CMD[1:] and server["config"]["env"] == {"A": "***"}
    assert bench.mcp.info("demo").state == "active"  # the other server untouched
    assert manage("update", server_id="stdio-demo", patch={"command": ""})[0].error_code == "mcp.config_invalid"
    assert bench.mcp.info("stdio-demo").timeout == 15.0  # a bad patch leaves it as it was


def test_a_bench_registered_server_takes_only_enabled_or_a_whole_transport(bench, manage):
    assert manage("update", server_id="demo", patch={"timeoutMs": 1000})[0].error_code == "mcp.server_not_editable"
    _, data = manage("update", server_id="demo", patch={"enabled": False})
    assert data["server"]["state"] == "disabled"


def test_enable_disable_delete(bench, manage):
    _, data = manage("disable", server_id="demo")
    assert data["servers"][0]["state"] == "disabled"
    assert "mcp__demo__echo" not in bench.invocation("chat").snapshot.call_names
    _, data = manage("enable", server_ids=["demo"])
    assert data["servers"][0]["state"] == "active"
    assert "mcp__demo__echo" in bench.invocation("chat").snapshot.call_names
    _, data = manage("delete", server_id="demo")
    assert data["deleted"] == ["demo"] and bench.mcp.servers == []


def test_test_restart_stop_and_diagnose(bench, manage):
    _, data = manage("test", server_id="demo")
    assert data["servers"][0]["state"] == "active"
    _, data = manage("stop", server_id="demo")
    assert data["servers"][0]["state"] == "disabled"
    assert manage("test", server_id="demo")[0].error_code == "mcp.server_unavailable"
    _, data = manage("restart", server_id="demo")
    assert data["servers"][0]["state"] == "active"
    _, data = manage("restart", server_id="demo")
    assert data["servers"][0]["state"] == "active"
    _, data = manage("diagnose", server_id="demo")
    server = data["servers"][0]
    assert "stderrTail" in server and server["trace"] and "tools" not in server


@pytest.mark.parametrize("action", ["create", "update", "delete", "enable", "disable", "restart", "stop"])
def test_writes_and_restarts_are_refused_outside_chat(make_bench, action):
    bench = make_bench(profile=Profile.default().edit(allow=[MANAGE]))
    bench.mcp.add("demo", server=build_server())
    inv = bench.invocation("session")
    args = {"action": action, "server_id": "demo", "server": {"id": "z", "url": "http://h"}, "patch": {}}
    assert inv.call("mcp_manage", args).error_code == "mcp.manage_scope"
    assert not inv.call("mcp_manage", {"action": "list"}).is_error  # reads stay
    assert bench.mcp.info("demo").state == "active"


def test_a_delegated_child_reads_only(make_bench):
    bench = make_bench(profile=Profile.default().edit(allow=[MANAGE]))
    bench.mcp.add("demo", server=build_server())
    child = bench._kernel.new_invocation("chat", "inv_child", return_mode=TASK_RETURN)
    assert child.call("mcp_manage", {"action": "disable", "server_id": "demo"}).error_code == "mcp.manage_scope"
    assert not child.call("mcp_manage", {"action": "tools", "server_id": "demo"}).is_error


def test_a_script_reaches_it_through_the_shell_bridge_as_a_nested_call(make_bench):
    # like memory.manage and cron.*, it is not in the shell's exclusions (shell_bridge.SHELL_EXCLUDED)
    bench = make_bench(profile=Profile.default().edit(allow=[MANAGE, "builtin:workspace.shell"]))
    bench.mcp.add("demo", server=build_server())
    inv = bench.invocation("chat")
    shell = inv.call("workspace_shell", {"command": """builtin.mcp.manage '{"action":"list"}'"""})
    assert not shell.is_error, shell.content
    assert '"id": "demo"' in shell.content
    assert sorted(str(r.tool_id) for r in inv.records) == [MANAGE, "builtin:workspace.shell"]


_TEXT = st.text(max_size=8)


@given(st.fixed_dictionaries({"id": st.text(min_size=1, max_size=8)}, optional={
    "command": _TEXT, "url": _TEXT, "args": st.lists(_TEXT, max_size=2), "enabled": st.booleans(),
    "transport": st.sampled_from(["stdio", "http"]), "timeoutMs": st.integers(1, 10**6)}))
def test_config_of_accepts_its_own_output_unchanged(server):
    try:
        once = config_of(server)
    except ToolError as exc:
        assert exc.code == "mcp.config_invalid"
        return
    assert config_of(once) == once


def test_a_patch_with_fields_of_the_other_transport_is_refused(bench, manage):
    manage("create", server={"id": "web", "url": "http://127.0.0.1:9/mcp", "enabled": False})
    assert manage("update", server_id="web", patch={"args": ["x"]})[0].error_code == "mcp.config_invalid"
    _, data = manage("update", server_id="web", patch={"command": DEMO_CMD[0], "args": DEMO_CMD[1:]})
    assert data["server"]["config"]["transport"] == "stdio" and "url" not in data["server"]["config"]
