"""`mcp.manage` as a model calls it: LiveAgent's McpManager actions (reference §7.3) over
`bench.mcp`. Cases from LiveAgent's own tests of mcpManagerTools.ts (create defaults to
enabled; cwd resolved against the workdir; read/list redact env and headers; update refuses
an id change; conflict fail/overwrite; update, delete and disable stop the old runtime;
validate is static; test hides stderr that diagnose shows; tools lists afresh; an inline
test is transient; writes refused outside chat), plus toolbench's: changes apply from the
next invocation's snapshot, never the current one's."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolbench import Profile
from toolbench.core.errors import CODES, ToolError
from toolbench.examples.demo_mcp import build_server
from toolbench.tools.agents import TASK_RETURN
from toolbench.tools.mcp_manage import ACTIONS, DESCRIPTOR, config_of, resolve_cwd
from toolbench.tools.registry import BUILTINS

MANAGE = "builtin:mcp.manage"
DEMO_CMD = [sys.executable, "-m", "toolbench.examples.demo_mcp"]
ECHO = "mcp/demo:echo"


@pytest.fixture
def bench(make_bench):
    bench = make_bench(profile=Profile.default().edit(allow=[MANAGE, "mcp/demo:echo", "mcp/stdio-demo:echo"]))
    assert bench.mcp.add("demo", server=build_server(), timeout=5.0).state == "active"
    # The user agrees to every server start here (test_mcp_manage_hostile.py: when nobody does)
    bench.asked = []
    bench.on_approval(lambda request: bench.asked.append(request) or True)
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


@pytest.mark.parametrize("server", [
    {"id": "x"},  # no command, no url
    {"id": "x", "transport": "sse", "url": "http://127.0.0.1:1/sse"},
    {"id": "x", "url": "http://h", "messageUrl": "http://h/m"},
    {"id": "x", "transport": "stdio", "url": "http://h"},
    {"id": "Bad Id", "command": "python"},
    {"id": "broken", "transport": "stdio", "command": ""},  # upstream's case
    {"id": "x", "url": "ftp://h"},
])
def test_validate_is_static_and_reports_what_bench_mcp_add_refuses(bench, manage, server):
    result, data = manage("validate", server=server)
    assert not result.is_error  # upstream: ok false, not an error
    assert (data["valid"], data["code"]) == (False, "mcp.config_invalid") and data["problem"]
    assert [s.id for s in bench.mcp.servers] == ["demo"]
    assert manage("create", server=server)[0].error_code == "mcp.config_invalid"


def test_validate_accepts_and_hides_secret_values(manage):
    _, data = manage("validate", server={"id": "web", "url": "http://127.0.0.1:9/mcp", "headers": {"X-Key": "s3"}})
    assert data["valid"] and data["serverConfig"]["transport"] == "http"
    assert data["serverConfig"]["headers"] == {"X-Key": "<redacted>"}


def test_read_and_list_redact_env_and_headers(manage):
    secret = {"id": "web", "url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer header-secret"},
              "enabled": False}
    assert not manage("create", server=secret)[0].is_error
    for result, _ in (manage("list", include_disabled=True), manage("read", server_id="web")):
        assert "header-secret" not in result.content and "<redacted>" in result.content
        assert "serverConfig" in result.content


def test_config_of_is_idempotent(tmp_path):
    once = config_of({"id": "a", "command": "python", "args": ["-m", "x"], "cwd": "tools"}, tmp_path)
    assert config_of(once, tmp_path) == once and once["transport"] == "stdio"


@pytest.mark.parametrize(("cwd", "rel"), [
    ("tools/mcp", "tools/mcp"), ("workspace:tools/inline-mcp", "tools/inline-mcp"),
])
def test_a_local_cwd_is_resolved_against_the_workspace(tmp_path, cwd, rel):
    assert resolve_cwd(cwd, tmp_path) == str(tmp_path / rel)
    assert resolve_cwd(f"file://{tmp_path}/tools/new-mcp", tmp_path) == str(tmp_path / "tools/new-mcp")
    assert resolve_cwd(str(tmp_path / "abs"), tmp_path) == str(tmp_path / "abs")


def test_create_applies_from_the_next_invocation_not_the_current_one(bench, manage):
    result, data = manage("create", server={"id": "stdio-demo", "command": DEMO_CMD[0], "args": DEMO_CMD[1:],
                                            "timeoutMs": 20000})
    assert not result.is_error, result.content
    assert data["server"]["state"] == "active" and data["appliesFrom"] == "next invocation"
    assert data["server"]["serverConfig"]["command"] == DEMO_CMD[0] and data["server"]["enabled"]
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
    assert data["stopped"] is True  # the old runtime was stopped


def test_update_merges_a_patch_and_keeps_the_other_fields_and_servers(bench, manage):
    manage("create", server={"id": "stdio-demo", "command": DEMO_CMD[0], "args": DEMO_CMD[1:],
                             "env": {"A": "1"}, "timeoutMs": 20000})
    result, data = manage("update", server_id="stdio-demo", patch={"timeoutMs": 15000, "enabled": False})
    assert not result.is_error, result.content
    server = data["server"]
    assert (server["state"], server["timeoutMs"]) == ("disabled", 15000)
    assert data["stopped"] is True
    assert server["serverConfig"]["args"] == DEMO_CMD[1:] and server["serverConfig"]["env"] == {"A": "<redacted>"}
    assert "1" not in json.dumps(server["serverConfig"]["env"])
    assert bench.mcp.info("demo").state == "active"  # the other server untouched
    assert manage("update", server_id="stdio-demo", patch={"command": ""})[0].error_code == "mcp.config_invalid"
    assert bench.mcp.info("stdio-demo").timeout == 15.0  # a bad patch leaves it as it was


def test_a_bench_registered_server_takes_only_enabled_or_a_whole_transport(bench, manage):
    assert manage("update", server_id="demo", patch={"timeoutMs": 1000})[0].error_code == "mcp.server_not_editable"
    _, data = manage("update", server_id="demo", patch={"enabled": False})
    assert data["server"]["state"] == "disabled"


def test_enable_disable_delete(bench, manage):
    _, data = manage("disable", server_id="demo")
    assert data["servers"][0]["state"] == "disabled" and data["stopped"] is True
    assert "mcp__demo__echo" not in bench.invocation("chat").snapshot.call_names
    _, data = manage("enable", server_ids=["demo"])
    assert data["servers"][0]["state"] == "active"
    assert "mcp__demo__echo" in bench.invocation("chat").snapshot.call_names
    _, data = manage("delete", server_id="demo")
    assert data["deleted"] == ["demo"] and data["stopped"] is True and bench.mcp.servers == []


def test_test_restart_stop_and_diagnose(bench, manage):
    _, data = manage("test", server_id="demo")
    assert data["servers"][0]["state"] == "active" and "stderrTail" not in data["servers"][0]
    assert "stderrTail" in manage("test", server_id="demo", include_stderr=True)[1]["servers"][0]
    _, data = manage("stop", server_id="demo")
    assert data["servers"][0]["state"] == "disabled" and data["stopped"] is True
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


def test_a_script_cannot_reach_it_through_the_shell_bridge(make_bench):
    # the managers change what later invocations offer: the model's decision (shell_bridge.SHELL_EXCLUDED)
    bench = make_bench(profile=Profile.default().edit(allow=[MANAGE, "builtin:workspace.shell"]))
    bench.mcp.add("demo", server=build_server())
    inv = bench.invocation("chat")
    shell = inv.call("workspace_shell", {"command": """builtin.mcp.manage '{"action":"list"}'"""})
    assert shell.structured["exitCode"] == 127  # bash's command not found
    assert [str(r.tool_id) for r in inv.records] == ["builtin:workspace.shell"]


_TEXT = st.text(max_size=8)
WORKDIR = Path("/workspace")


@given(st.fixed_dictionaries({"id": st.text(min_size=1, max_size=8)}, optional={
    "command": _TEXT, "url": _TEXT, "args": st.lists(_TEXT, max_size=2), "enabled": st.booleans(),
    "transport": st.sampled_from(["stdio", "http"]), "timeoutMs": st.integers(1, 10**6),
    "cwd": st.sampled_from(["", "a/b", "workspace:x", "file:///tmp/y", "/abs"])}))
def test_config_of_accepts_its_own_output_unchanged(server):
    try:
        once = config_of(server, WORKDIR)
    except ToolError as exc:
        assert exc.code == "mcp.config_invalid"
        return
    assert config_of(once, WORKDIR) == once


def test_a_patch_with_fields_of_the_other_transport_is_refused(bench, manage):
    manage("create", server={"id": "web", "url": "http://127.0.0.1:9/mcp", "enabled": False})
    assert manage("update", server_id="web", patch={"args": ["x"]})[0].error_code == "mcp.config_invalid"
    _, data = manage("update", server_id="web", patch={"command": DEMO_CMD[0], "args": DEMO_CMD[1:]})
    assert data["server"]["serverConfig"]["transport"] == "stdio" and "url" not in data["server"]["serverConfig"]


def test_update_refuses_a_server_id_change(bench, manage):
    assert manage("update", server_id="demo", patch={"id": "renamed"})[0].error_code == "tool.invalid_arguments"
    assert [s.id for s in bench.mcp.servers] == ["demo"]


def test_create_and_update_save_a_resolved_cwd(bench, manage):
    (bench.workspace / "tools" / "mcp").mkdir(parents=True)
    stdio = {"id": "local", "command": DEMO_CMD[0], "args": DEMO_CMD[1:], "cwd": "tools/mcp", "timeoutMs": 20000}
    _, data = manage("create", server=stdio)
    assert data["server"]["serverConfig"]["cwd"] == str(bench.workspace / "tools" / "mcp")
    assert data["server"]["state"] == "active"
    _, data = manage("update", server_id="local", patch={"cwd": f"file://{bench.workspace}/tools", "enabled": False})
    assert data["server"]["serverConfig"]["cwd"] == str(bench.workspace / "tools")


def test_an_inline_test_is_transient(bench, manage):
    server = {"id": "scratch", "command": DEMO_CMD[0], "args": DEMO_CMD[1:], "timeoutMs": 20000}
    result, data = manage("test", server=server)
    assert not result.is_error, result.content
    [tried] = data["servers"]
    assert tried["state"] == "active" and tried["toolCount"] > 0 and data["persisted"] is False
    assert [s.id for s in bench.mcp.servers] == ["demo"]  # never joined the bench's servers
    assert "mcp__scratch__echo" not in bench.invocation("chat").snapshot.call_names


@pytest.mark.parametrize("fields", [
    {"server_id": "x" * 10_000}, {"server_ids": ["x" * 10_000]}, {"server_ids": ["a"] * 51},
    {"server_id": "demo", "patch": {"env": {"A": 1}}}, {"server_id": 3},
])
def test_hostile_arguments_get_a_coded_answer_and_no_call(bench, manage, fields):
    # (the schema check's maxLength message echoes the value whole: core/schema_check's, not this tool's)
    result, _ = manage("update" if "patch" in fields else "read", **fields)
    assert result.error_code == "tool.invalid_arguments"
    assert bench.mcp.info("demo").state == "active"
