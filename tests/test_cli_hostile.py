"""The command line on hostile input: a server's text reaches the terminal with its control
characters escaped, a config's `${env:...}` values are shown as written (never expanded), and a
config that cannot be read (nested 100,000 deep, not UTF-8, a FIFO, a folder, huge) is exit 2
with one coded line. Each run is `python -m toolbench` in a child process under a timeout."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from deadline import ROOT

SERVERS = ROOT / "tests" / "mcp" / "servers"
ESCAPES = str(SERVERS / "escapes.py")
SECRET = "sk-test-9f8e7d6c5b4a3210"  # what a token looks like; it must never be printed
# Anything a terminal could act on (C0 but the newline, DEL, C1, line and bidi controls), or a
# lone surrogate (which could not even be written as UTF-8).
CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def toolbench(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """Run the command; its exit status, stdout and stderr (UTF-8, strictly)."""
    child_env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUTF8": "1", **(env or {})}
    done = subprocess.run([sys.executable, "-m", "toolbench", *args], capture_output=True, timeout=60,
                          cwd=tmp_path, env=child_env)
    return done.returncode, done.stdout.decode("utf-8"), done.stderr.decode("utf-8")


def write_config(tmp_path: Path, servers: dict[str, Any], name: str = "mcp.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    return str(path)


def escapes_server(*args: str, **extra: Any) -> dict[str, Any]:
    return {"command": sys.executable, "args": [ESCAPES, *args], "cwd": str(SERVERS), **extra}


def assert_clean(*texts: str) -> None:
    for text in texts:
        assert not CONTROL.search(text), repr(text)


# -- a server's text ------------------------------------------------------------------------------

SMOKE = {"smoke": [{"tool": "echo", "arguments": {"text": "hi\x1b[2K\rexit 0"}, "expectError": True},
                   {"tool": "ok", "arguments": {"text": "x"}}]}


@pytest.mark.parametrize("output", ["text", "json"])
def test_check_escapes_every_text_a_server_sends(tmp_path, output):
    config = write_config(tmp_path, {"gone\x1b[31m\x9b": escapes_server("exit"),
                                     "esc": escapes_server(toolbench=SMOKE)})
    code, out, err = toolbench(tmp_path, "check", "--mcp-config", config, "--format", output)
    assert_clean(out, err)
    assert code == 2
    [line] = err.splitlines()  # one coded line for the one unreachable server
    assert line.startswith("toolbench: mcp.server_start_failed: ") and "\\x1b" in line
    if output == "json":
        report = json.loads(out)
        assert report["servers"][0]["name"] == "gone\x1b[31m\x9b"  # the JSON still holds the text itself
        assert report["servers"][1]["smoke"][0]["content"].startswith("hi\x1b[2K\rexit 0")
    else:
        assert out.splitlines()[-1].startswith("2 server(s), 1 unreachable")
        assert "smoke echo: ok, FAILED (expected an error): hi\\x1b[2K\\rexit 0\\x1b[1A\\x9b2K" in out
    assert not [line for line in (out + err).splitlines() if line.lstrip().startswith("exit 0")]  # no fake line


def test_snapshot_and_call_escape_a_servers_text(tmp_path):
    config = write_config(tmp_path, {"esc": escapes_server()})
    code, out, err = toolbench(tmp_path, "snapshot", "--mcp-config", config)
    assert_clean(out, err)
    assert code == 0
    [ok] = [t for t in json.loads(out) if t["function"]["name"] == "mcp__esc__ok"]
    assert ok["function"]["description"].startswith("Echo.\x1b[1A\x9b")
    code, out, err = toolbench(tmp_path, "call", "mcp__esc__echo", '{"text": "hi"}', "--mcp-config", config)
    assert_clean(out, err)
    assert (code, json.loads(out)["content"][:4]) == (0, "hi\x1b[")
    config = write_config(tmp_path, {"gone\x1b[31m": escapes_server("exit")})
    for command in (("snapshot",), ("call", "dice_roll", "{}")):
        code, out, err = toolbench(tmp_path, *command, "--mcp-config", config)
        assert_clean(out, err)
        assert (code, out, len(err.splitlines())) == (2, "", 1)


# -- a config's variables -------------------------------------------------------------------------

def test_a_configs_variables_are_shown_as_written_never_expanded(tmp_path):
    env = {"TB_SECRET": SECRET}
    echo_env = "import os, sys; sys.stderr.write(os.environ['TOK'])"
    running = write_config(tmp_path, {
        "cmd": {"command": "${env:TB_SECRET}/bin/server"},
        "cwd": {"command": sys.executable, "cwd": "${env:TB_SECRET}/work"},
        "echo": {"command": sys.executable, "args": ["-c", echo_env], "env": {"TOK": "${TB_SECRET}"}}})
    env_file = write_config(tmp_path, {"file": {"command": sys.executable, "envFile": "${env:TB_SECRET}/.env"}},
                            name="envfile.json")
    runs = [("check", "--mcp-config", running), ("check", "--mcp-config", running, "--format", "json"),
            ("snapshot", "--mcp-config", running), ("call", "dice_roll", "{}", "--mcp-config", running),
            ("check", "--mcp-config", env_file), ("snapshot", "--mcp-config", env_file)]
    for args in runs:
        code, out, err = toolbench(tmp_path, *args, env=env)
        assert code == 2, (args, err)
        assert SECRET not in out + err, (args, out, err)
        assert "${env:TB_SECRET}" in err, (args, err)  # what the config says, as written (its first form)


# -- a config that cannot be read -----------------------------------------------------------------

DEEP = 100_000


def unreadable(tmp_path: Path, kind: str) -> str:
    path = tmp_path / "mcp.json"
    if kind == "deep args":
        path.write_text('{"mcpServers": {"a": {"command": "x", "args": ' + "[" * DEEP + "]" * DEEP + "}}}")
    elif kind == "deep document":
        path.write_text("{" + '"a": {' * DEEP + "}" * DEEP + "}")
    elif kind == "not UTF-8":
        path.write_bytes(b'\xff\xfe{"mcpServers": {}}')
    elif kind == "FIFO":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    elif kind == "huge":
        path.write_bytes(b'{"mcpServers": {}}' + b" " * (64 << 20))
    return str(path)


@pytest.mark.parametrize("command", [("check",), ("snapshot",), ("call", "dice_roll", "{}")])
@pytest.mark.parametrize("kind", ["deep args", "deep document", "not UTF-8", "FIFO", "folder", "huge"])
def test_a_config_that_cannot_be_read_is_exit_2_with_one_coded_line(tmp_path, kind, command):
    config = unreadable(tmp_path, kind)
    code, out, err = toolbench(tmp_path, *command, "--mcp-config", config)
    assert (code, out) == (2, ""), err[-2000:]
    [line] = err.splitlines()
    assert line.startswith("toolbench: mcp.config_invalid: ")
