"""`toolbench check`: the example server is clean (exit 0), a server listing broken tools or a
failed smoke call is exit 1, a server that cannot be reached is exit 2 with its coded line on
stderr even when the others are fine. Each run is a child process under a deadline."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

from deadline import ROOT, run_with_deadline

SERVERS = ROOT / "tests" / "mcp" / "servers"

CLI = """
import contextlib, io, sys
from toolbench.cli import main
out, err = io.StringIO(), io.StringIO()
with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
    try:
        code = main(sys.argv[1:])
    except SystemExit as exc:  # argparse errors
        code = exc.code
report([code, out.getvalue(), err.getvalue()])
"""


def demo_server(**extra: Any) -> dict[str, Any]:
    return {"command": sys.executable, "args": ["-m", "toolbench.examples.demo_mcp"],
            "env": {"PYTHONPATH": str(ROOT)}, **extra}


def fault_server(name: str, **extra: Any) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(SERVERS / f"{name}.py")], "cwd": str(SERVERS), **extra}


def cli(tmp_path: Path, servers: dict[str, Any], *args: str) -> tuple[int, str, str]:
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    code, out, err = run_with_deadline(CLI, args=tuple(a.replace("CONFIG", str(config)) for a in args),
                                       deadline=90)
    return code, out, err


def test_the_example_server_with_its_smoke_calls_checks_clean_in_json(tmp_path):
    smoke = {"smoke": [{"tool": "echo", "arguments": {"text": "hi"}},
                       {"tool": "fail", "expectError": True},
                       {"tool": "weather", "arguments": '{"city": "Oslo"}'}]}
    code, out, err = cli(tmp_path, {"demo": demo_server(toolbench=smoke)},
                         "check", "--mcp-config", "CONFIG", "--format", "json")
    report = json.loads(out)
    assert (code, report["exit_code"], err) == (0, 0, "")
    assert report["version"] == 1
    assert report["summary"] == {"servers": 1, "unreachable": 0, "fatal": 0, "repaired": 0, "smoke_failed": 0}
    [server] = report["servers"]
    assert (server["name"], server["state"], server["reachable"], server["error"]) == ("demo", "active", True, None)
    tools = {t["name"]: t for t in server["tools"]}
    assert tools["issue.create"]["tool_id"] == "mcp/demo:issue.create"
    assert all(t["offered"] and t["call_name"] for t in tools.values())
    assert not [p for p in server["problems"] if p["fatal"] and not p["repaired"]]
    assert {p["protocol"] for p in server["problems"]} <= {"mcp", "openai", "openai-responses", "anthropic", "gemini"}
    assert [(s["tool"], s["is_error"], s["error_code"], s["ok"]) for s in server["smoke"]] == [
        ("echo", False, None, True), ("fail", True, "mcp.tool_error", True), ("weather", False, None, True)]
    assert server["smoke"][0]["content"] == "hi"


def test_broken_tools_and_a_failed_smoke_call_exit_1_in_text(tmp_path):
    smoke = {"smoke": [{"tool": "echo", "arguments": {"text": "x"}, "expectError": True},
                       {"tool": "no_such_tool"}, {"tool": "last", "arguments": {"text": "y"}}]}
    code, out, err = cli(tmp_path, {"bad": fault_server("bad_tools", toolbench=smoke)},
                         "check", "--mcp-config", "CONFIG")
    assert (code, err) == (1, "")
    assert "FATAL mcp bad_property: mcp.tool_schema_invalid" in out
    assert "FATAL mcp no_schema: mcp.tool_schema_invalid" in out
    assert 'FATAL mcp "bad\\nname": mcp.tool_name_invalid' in out  # a server's newline forges no line
    assert "smoke echo: ok, FAILED (expected an error)" in out
    assert ("smoke no_such_tool: error model.unknown_tool_call, FAILED (expected ok): the server offers no tool "
            "`no_such_tool`") in out
    assert "smoke last: ok, passed" in out
    assert out.endswith(" unreachable, 6 fatal problem(s), 0 repaired, 2 smoke call(s) failed: exit 1\n")


def test_a_server_that_cannot_be_reached_is_exit_2_even_when_another_is_fine(tmp_path):
    servers = {"gone": {"command": str(tmp_path / "no-such-server")}, "quits": fault_server("exits_at_start"),
               "last": fault_server("bad_tools"),
               "off": {"command": "never-started", "disabled": True, "toolbench": {"smoke": [{"tool": "x"}]}}}
    code, out, err = cli(tmp_path, servers, "check", "--mcp-config", "CONFIG", "--format", "json")
    report = json.loads(out)
    assert (code, report["exit_code"], report["summary"]["unreachable"]) == (2, 2, 2)
    states = {s["name"]: (s["state"], s["reachable"], (s["error"] or {}).get("code")) for s in report["servers"]}
    assert states == {"gone": ("failed", False, "mcp.server_start_failed"),
                      "quits": ("failed", False, "mcp.server_start_failed"), "last": ("active", True, None),
                      "off": ("disabled", True, None)}
    assert report["servers"][3]["smoke"] == []  # a disabled server's smoke calls are not made
    lines = err.splitlines()
    assert [line.split(": ", 2)[:2] for line in lines] == [["toolbench", "mcp.server_start_failed"]] * 2
    assert "MCP server `gone`" in lines[0] and "MCP server `quits`" in lines[1]


def test_server_picks_one_server_and_an_unknown_name_is_a_coded_error(tmp_path):
    servers = {"gone": {"command": str(tmp_path / "no-such-server")}, "bad": fault_server("bad_tools")}
    code, out, _ = cli(tmp_path, servers, "check", "--mcp-config", "CONFIG", "--server", "bad", "--format", "json")
    assert (code, [s["name"] for s in json.loads(out)["servers"]]) == (1, ["bad"])
    code, out, err = cli(tmp_path, servers, "check", "--mcp-config", "CONFIG", "--server", "nope")
    assert (code, out) == (2, "")
    assert err.startswith("toolbench: mcp.server_unknown: ")


def test_a_malformed_smoke_block_is_a_config_error_before_any_server_starts(tmp_path):
    servers = {"gone": {"command": str(tmp_path / "no-such-server"), "toolbench": {"smoke": [{"arguments": {}}]}}}
    code, out, err = cli(tmp_path, servers, "check", "--mcp-config", "CONFIG")
    assert (code, out) == (2, "")
    assert err.startswith("toolbench: mcp.config_invalid: MCP server `gone`: `toolbench.smoke[0]`")
    assert len(err.splitlines()) == 1


def test_a_server_that_never_answers_is_exit_2_within_its_timeout(tmp_path):
    code, out, err = cli(tmp_path, {"stuck": fault_server("hangs_in_init", timeout=2)},
                         "check", "--mcp-config", "CONFIG", "--format", "json")
    [server] = json.loads(out)["servers"]
    assert (code, server["state"], server["error"]["code"]) == (2, "failed", "mcp.server_timeout")
    assert err.startswith("toolbench: mcp.server_timeout: MCP server `stuck`: ")


def test_a_real_stdio_server_on_a_strict_yaml_profile_lists_repaired_findings_without_counting_them(
        tmp_path, monkeypatch):
    server = shutil.which("mcp-server-time")  # a reference server from PyPI, as tests/mcp/real_servers.py uses
    assert server is not None, "`mcp-server-time` is not on PATH: install the test extra (`pip install -e '.[test]'`)"
    monkeypatch.setenv("TOOLBENCH_TEST_TIME_SERVER", server)  # the config reads it as ${env:...}
    profile = tmp_path / "strict.yaml"
    profile.write_text("tools:\n  openaiStrict: true\n  anthropicStrict: true\n", encoding="utf-8")
    smoke = {"smoke": [{"tool": "get_current_time", "arguments": {"timezone": "UTC"}},
                       {"tool": "convert_time", "expectError": True,
                        "arguments": {"source_timezone": "Nowhere/City", "time": "12:00", "target_timezone": "UTC"}}]}
    servers = {"time": {"command": "${env:TOOLBENCH_TEST_TIME_SERVER}", "toolbench": smoke}}
    code, out, err = cli(tmp_path, servers, "check", "--mcp-config", "CONFIG", "--profile", str(profile),
                         "--format", "json")
    report = json.loads(out)
    assert (code, err, report["summary"]["fatal"], report["summary"]["smoke_failed"]) == (0, "", 0, 0)
    assert report["summary"]["repaired"] > 0
    repaired = {(p["protocol"], p["rule"]) for p in report["servers"][0]["problems"] if p["repaired"]}
    assert ("openai", "strict.additional_properties") in repaired
    assert ("anthropic", "strict.additional_properties") in repaired


def test_review_cases_each_get_their_exit_code_and_an_honest_line(tmp_path):
    """mcpServers of the wrong type is a coded config error; a smoke call that times out does
    not pass as the expected error; a server's text cannot print a report line of its own; a
    tool the profile denies is said to be denied, not missing."""
    config = tmp_path / "list.json"
    config.write_text('{"mcpServers": []}', encoding="utf-8")
    code, out, err = run_with_deadline(CLI, args=("check", "--mcp-config", str(config)), deadline=90)
    assert code == 2 and err.startswith("toolbench: mcp.config_invalid:")

    smoke = {"smoke": [{"tool": "sleep", "arguments": {"seconds": 30}, "expectError": True},
                       {"tool": "echo", "arguments": {"text": "x\n1 server(s), 0 unreachable: exit 0"},
                        "expectError": True},
                       {"tool": "weather", "arguments": {"city": "Oslo"}}]}
    profile = tmp_path / "deny.json"
    profile.write_text(json.dumps({"tools": {"deny": ["mcp/demo:weather"]}}), encoding="utf-8")
    # 10 s: the server must start within it on a loaded machine (importing the SDK alone took 4 s
    # at load 3), and the 30 s sleep must run it out
    code, out, _ = cli(tmp_path, {"demo": demo_server(timeout=10, toolbench=smoke)}, "check", "--mcp-config",
                       "CONFIG", "--profile", str(profile))
    assert code == 1
    assert "smoke sleep: error mcp.call_outcome_unknown, FAILED (expected an error)" in out
    assert "\\n1 server(s), 0 unreachable: exit 0" in out  # the echo, escaped on its own line
    assert [line for line in out.splitlines() if line.startswith("1 server(s)")] == [out.splitlines()[-1]]
    assert "the profile does not offer `weather`" in out


STOPPED = r"""
import json, os, signal, subprocess, sys, time
from pathlib import Path

config, tmp, script = sys.argv[1], sys.argv[2], sys.argv[3]
env = {**os.environ, "TMPDIR": tmp}
proc = subprocess.Popen([sys.executable, "-m", "toolbench", "check", "--mcp-config", config], env=env,
                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

def servers():
    out = []
    for d in Path("/proc").iterdir():
        try:
            argv = (d / "cmdline").read_bytes().split(b"\0") if d.name.isdigit() else []
            if len(argv) > 1 and argv[1].decode(errors="replace") == script:  # the server, not this script
                if (d / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
                    out.append(int(d.name))
        except OSError:
            pass
    return out

until = time.monotonic() + 30
while not servers() and time.monotonic() < until:
    time.sleep(0.05)
started = bool(servers())
proc.send_signal(signal.SIGTERM)
_, err = proc.communicate(timeout=30)
until = time.monotonic() + 10
while servers() and time.monotonic() < until:
    time.sleep(0.05)
report({"started": started, "code": proc.returncode, "left": servers(),
        "folders": sorted(p.name for p in Path(tmp).iterdir() if p.name.startswith("toolbench-")),
        "traceback": "Traceback" in err})
"""


def test_sigterm_to_check_closes_the_bench(tmp_path):
    """A CI cancel (SIGTERM) unwinds: the server the check started is stopped and the temporary
    workspace removed; exit 143, no traceback."""
    import shutil

    tmp = tmp_path / "tmp"
    tmp.mkdir()
    # A copy of its own: the test finds the server by its script, and other tests (tests/mcp, in
    # another worker) start hangs_in_init.py too; seeing one of theirs, it signalled the check
    # before its interpreter had started (-15, not 143).
    script = str(shutil.copy(SERVERS / "hangs_in_init.py", tmp_path / "stuck_server.py"))
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"stuck": {**fault_server("hangs_in_init", timeout=60),
                                                           "args": [script]}}}))
    seen = run_with_deadline(STOPPED, args=(str(config), str(tmp), script), deadline=90)
    assert seen == {"started": True, "code": 143, "left": [], "folders": [], "traceback": False}


def test_a_config_with_no_server_is_a_problem_and_the_summary_says_why(tmp_path):
    code, out, _ = cli(tmp_path, {}, "check", "--mcp-config", "CONFIG")
    assert code == 1 and out.endswith("0 server(s), 0 unreachable, 0 fatal problem(s), 0 repaired, "
                                      "0 smoke call(s) failed: exit 1 (the config names no server)\n")


def test_timeout_bounds_the_servers_that_set_none(tmp_path):
    """--timeout is the limit of a server without its own `timeout`: one stuck in its start is
    unreachable after it (exit 2), not after the default 60 s; a bad value is a usage error."""
    import time

    started = time.monotonic()
    code, _, err = cli(tmp_path, {"stuck": fault_server("hangs_in_init")}, "check", "--mcp-config", "CONFIG",
                       "--timeout", "1.5")
    assert code == 2 and "mcp.server_timeout" in err and time.monotonic() - started < 30
    code, _, err = cli(tmp_path, {"stuck": fault_server("hangs_in_init")}, "check", "--mcp-config", "CONFIG",
                       "--timeout", "-1")
    assert code == 2 and "a positive number of seconds" in err  # argparse's usage error, no server started


def test_demo_checks_the_packaged_demo_server_without_a_checkout(tmp_path):
    """`check --demo` needs no file: the demo server runs with this interpreter, its smoke
    calls pass; --demo and --mcp-config together are a usage error."""
    code, out, err = run_with_deadline(CLI, args=("check", "--demo", "--format", "json"), deadline=90)
    report = json.loads(out)
    assert (code, report["exit_code"], err) == (0, 0, "")
    [server] = report["servers"]
    assert (server["name"], server["state"]) == ("demo", "active")
    assert [(s["tool"], s["ok"]) for s in server["smoke"]] == [("echo", True), ("fail", True)]
    code, _, err = cli(tmp_path, {}, "check", "--demo", "--mcp-config", "CONFIG")
    assert code == 2 and "not allowed with argument" in err


def test_the_text_report_collapses_a_rule_repeated_in_one_tool_and_the_json_keeps_each(tmp_path):
    code, out, _ = cli(tmp_path, {"demo": demo_server()}, "check", "--mcp-config", "CONFIG")
    assert code == 0
    nested = [line for line in out.splitlines() if "schema.title_nested" in line]
    assert len(nested) == 6  # one per tool with properties (8 properties), not one per property
    [issue] = [line for line in nested if " issue.create:" in line]
    assert "schema.title_nested (2x) at /properties/title/title, /properties/body/title:" in issue
    code, out, _ = cli(tmp_path, {"demo": demo_server()}, "check", "--mcp-config", "CONFIG", "--format", "json")
    [server] = json.loads(out)["servers"]
    paths = [p["path"] for p in server["problems"]
             if p["rule"] == "schema.title_nested" and p["tool"] == "issue.create"]
    assert paths == ["/properties/title/title", "/properties/body/title"]


def test_capability_not_offered_is_reported_only_for_a_server_that_asked(tmp_path):
    code, out, _ = cli(tmp_path, {"demo": demo_server()}, "check", "--mcp-config", "CONFIG", "--format", "json")
    assert code == 0
    assert "mcp.capability_not_offered" not in out  # the demo server never asks for sampling
    smoke = {"smoke": [{"tool": "sample", "expectError": False}]}
    code, out, _ = cli(tmp_path, {"asks": fault_server("asks_anyway", toolbench=smoke)}, "check", "--mcp-config",
                       "CONFIG", "--format", "json")
    [server] = json.loads(out)["servers"]
    [note] = [p for p in server["problems"] if p["rule"] == "mcp.capability_not_offered"]
    assert (note["tool"], note["fatal"], code) == (None, False, 0)
    assert "sampling" in note["message"] and "elicitation" not in note["message"]
    assert "bench.mcp" not in note["message"] and "informational" in note["message"].lower()


def test_tools_whose_call_name_is_not_prefix_plus_name_are_reported_with_why(tmp_path):
    code, out, _ = cli(tmp_path, {"weird": fault_server("weird_names")}, "check", "--mcp-config", "CONFIG",
                       "--format", "json")
    [server] = json.loads(out)["servers"]
    renamed = {p["tool"]: p for p in server["problems"] if p["rule"] == "mcp.tool_renamed"}
    assert code == 0 and not any(p["fatal"] for p in renamed.values())
    cut = "mcp__weird__" + "x" * 52
    assert {tool: p["call_name"] for tool, p in renamed.items()} == {
        "bad name!": "mcp__weird__bad_name", "bad.name": "mcp__weird__bad_name__2",
        "x" * 80: cut, "x" * 79 + "1": cut[:-3] + "__2"}
    assert "sanitised" in renamed["bad name!"]["message"] and "de-duplicated" not in renamed["bad name!"]["message"]
    assert "sanitised" in renamed["bad.name"]["message"] and "de-duplicated" in renamed["bad.name"]["message"]
    assert "the order the server lists its tools" in renamed["bad.name"]["message"]
    assert "truncated" in renamed["x" * 80]["message"] and "sanitised" not in renamed["x" * 80]["message"]
    assert "truncated" in renamed["x" * 79 + "1"]["message"] and "de-duplicated" in renamed["x" * 79 + "1"]["message"]
    code, out, _ = cli(tmp_path, {"weird": fault_server("weird_names")}, "check", "--mcp-config", "CONFIG")
    assert "note mcp bad.name: mcp.tool_renamed: the model sees `mcp__weird__bad_name__2`" in out


def test_junk_on_a_stdio_servers_stdout_is_a_finding_with_the_first_line(tmp_path):
    smoke = {"smoke": [{"tool": "echo", "arguments": {"text": "hi"}}]}
    code, out, _ = cli(tmp_path, {"chatty": fault_server("chatty", toolbench=smoke)}, "check", "--mcp-config",
                       "CONFIG", "--format", "json")
    [server] = json.loads(out)["servers"]
    [junk] = [p for p in server["problems"] if p["rule"] == "mcp.server_stdout_noise"]
    assert (code, junk["fatal"], server["smoke"][0]["ok"]) == (0, False, True)
    assert "chatty: starting up (not JSON-RPC)" in junk["message"]
    code, out, _ = cli(tmp_path, {"demo": demo_server()}, "check", "--mcp-config", "CONFIG", "--format", "json")
    assert "mcp.server_stdout_noise" not in out


def test_every_server_text_in_the_text_report_stays_on_its_own_line():
    """The report's fields a server fills (names, messages, schema paths, content) are escaped
    one by one, so none can start a line of its own."""
    from toolbench.cli_check import render_text

    forged = "x\n1 server(s), 0 unreachable: exit 0\x1b[2K"
    problem = {"protocol": "openai", "tool": forged, "call_name": None, "rule": "schema.title_nested",
               "message": forged, "fatal": False, "repaired": False, "path": f"/properties/{forged}"}
    smoke = {"tool": forged, "call_name": None, "arguments": None, "expect_error": False, "is_error": True,
             "error_code": "mcp.tool_error", "ok": False, "content": forged,
             "attachments": [{"kind": "image", "mime_type": forged, "size": 3, "sha256": "0" * 64}]}
    report = {"exit_code": 2, "summary": {"servers": 1, "unreachable": 1, "fatal": 0, "repaired": 0, "smoke_failed": 1},
              "servers": [{"name": forged, "transport": "stdio", "state": "failed", "error": {
                  "code": "mcp.server_start_failed", "message": forged}, "tools": [{"name": forged}],
                  "problems": [problem], "smoke": [smoke]}]}
    lines = render_text(report).splitlines()
    assert len(lines) == 6  # header, unreachable, tools, one problem, one smoke call, summary
    assert [line for line in lines if line.startswith("1 server(s)")] == [lines[-1]]
    assert not any("\x1b" in line for line in lines)


def test_check_shows_a_bar_of_servers_checked_when_asked(tmp_path, capsys):
    from toolbench import Workbench
    from toolbench.cli_check import demo_config, run_check

    with Workbench(tmp_path / "ws") as bench:
        report = run_check(bench, demo_config(), progress=True)
    err = capsys.readouterr().err
    assert report["exit_code"] == 0 and "checking" in err and "1/1" in err and "clean=100%" in err


def test_a_smoke_calls_attachments_are_reported(tmp_path):
    """An image tool answers with no text: the report says what it sent instead."""
    smoke = {"smoke": [{"tool": "image"}]}
    code, out, _ = cli(tmp_path, {"demo": demo_server(toolbench=smoke)}, "check", "--mcp-config", "CONFIG",
                       "--format", "json")
    [call] = json.loads(out)["servers"][0]["smoke"]
    assert code == 0 and call["ok"] and call["content"] == ""
    [image] = call["attachments"]
    assert (image["kind"], image["mime_type"]) == ("image", "image/png") and image["size"] > 0
    assert len(image["sha256"]) == 64
    code, out, _ = cli(tmp_path, {"demo": demo_server(toolbench=smoke)}, "check", "--mcp-config", "CONFIG")
    assert f"smoke image: ok, passed, image image/png {image['size']:,} bytes" in out


def test_a_configs_relative_args_mean_the_same_from_any_folder(tmp_path):
    """`check --mcp-config ../x/mcp.json` starts the server in the config's folder, as the
    clients that read a project's `.mcp.json` do: `server.py` is the one beside the file."""
    (tmp_path / "x").mkdir()
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "x" / "server.py").write_text(
        'import runpy\nrunpy.run_module("toolbench.examples.demo_mcp", run_name="__main__")\n', encoding="utf-8")
    (tmp_path / "x" / "mcp.json").write_text(json.dumps({"mcpServers": {"mine": {
        "command": sys.executable, "args": ["server.py"], "env": {"PYTHONPATH": str(ROOT)}}}}), encoding="utf-8")
    code, out, err = run_with_deadline(CLI, args=("check", "--mcp-config", "../x/mcp.json", "--format", "json"),
                                       cwd=tmp_path / "elsewhere", deadline=90)
    [server] = json.loads(out)["servers"]
    assert (code, server["state"]) == (0, "active"), err
