"""`snapshot` and `call` see what a notebook sees: `--mcp-config` servers, `--demo` tools; a
workspace that is a file and a YAML profile meet coded errors, not tracebacks."""

from __future__ import annotations

import json
import sys

import pytest
from deadline import ROOT, run_with_deadline

from toolbench import Profile, ToolbenchError, Workbench

CLI = """
import contextlib, io, sys
from toolbench.cli import main
out, err = io.StringIO(), io.StringIO()
with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
    code = main(sys.argv[1:])
report([code, out.getvalue(), err.getvalue()])
"""


def run(*args: str) -> tuple[int, str, str]:
    code, out, err = run_with_deadline(CLI, args=args, deadline=90)
    return code, out, err


def test_snapshot_and_call_take_the_servers_of_an_mcp_config(tmp_path):
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {
        "demo": {"command": sys.executable, "args": ["-m", "toolbench.examples.demo_mcp"],
                 "env": {"PYTHONPATH": str(ROOT)}},
        "off": {"command": "never-started", "disabled": True}}}), encoding="utf-8")
    code, out, err = run("snapshot", "--mcp-config", str(config), "--protocol", "anthropic")
    assert (code, err) == (0, "")
    names = [tool["name"] for tool in json.loads(out)]
    assert "dice_roll" in names and "mcp__demo__echo" in names
    code, out, err = run("call", "mcp__demo__echo", '{"text": "hi"}', "--mcp-config", str(config), "--server", "demo")
    assert (code, err, json.loads(out)["content"]) == (0, "", "hi")


def test_a_server_that_cannot_be_reached_stops_snapshot_with_exit_2(tmp_path):
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"gone": {"command": str(tmp_path / "nope")}}}), encoding="utf-8")
    code, out, err = run("snapshot", "--mcp-config", str(config))
    assert (code, out) == (2, "")
    assert err.startswith("toolbench: mcp.server_start_failed: MCP server `gone`: ")


def test_server_without_mcp_config_is_a_usage_error():
    code, _, err = run_with_deadline(CLI.replace("code = main(sys.argv[1:])", """try:
        code = main(sys.argv[1:])
    except SystemExit as exc:
        code = exc.code"""), args=("snapshot", "--server", "x"))
    assert code == 2 and "--server needs --mcp-config" in err


def test_demo_gives_the_readmes_demo_tools_also_on_a_given_profile(tmp_path):
    code, out, _ = run("call", "weather", '{"city": "Oslo"}', "--demo")
    assert code == 0 and json.loads(json.loads(out)["content"])["city"] == "Oslo"
    profile = tmp_path / "p.yaml"
    profile.write_text("name: mine\ntools:\n  allow: ['builtin:dice.roll']\n", encoding="utf-8")
    code, out, _ = run("snapshot", "--demo", "--profile", str(profile))
    assert code == 0
    assert [t["function"]["name"] for t in json.loads(out)] == ["dice_roll", "weather", "long_report", "fail"]


def test_a_workspace_that_is_a_file_is_one_coded_line_and_exit_2(tmp_path):
    file = tmp_path / "afile"
    file.write_text("x", encoding="utf-8")
    for workspace in (file, file / "below"):
        code, out, err = run("snapshot", "--workspace", str(workspace))
        assert (code, out) == (2, "")
        assert err.startswith("toolbench: storage.workspace_not_directory: ") and len(err.splitlines()) == 1
        with pytest.raises(ToolbenchError) as caught:
            Workbench(workspace)
        assert caught.value.code == "storage.workspace_not_directory"


@pytest.mark.parametrize("suffix", [".yaml", ".yml"])
def test_yaml_profiles_load_and_bad_yaml_is_a_coded_error(tmp_path, suffix):
    path = tmp_path / f"p{suffix}"
    path.write_text("name: mine\ntools:\n  maxCallsPerRun: 5\n", encoding="utf-8")
    profile = Profile.load(path)
    assert (profile.name, profile.tools.max_calls_per_run) == ("mine", 5)
    path.write_text("name: [unclosed\n", encoding="utf-8")
    with pytest.raises(ToolbenchError) as caught:
        Profile.load(path)
    assert caught.value.code == "agent.profile_invalid" and "YAML" in caught.value.message
    path.write_text("!!python/object:os.system {}\n", encoding="utf-8")  # safe_load builds no objects
    with pytest.raises(ToolbenchError) as caught:
        Profile.load(path)
    assert caught.value.code == "agent.profile_invalid"
