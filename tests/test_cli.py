"""`toolbench snapshot` and `toolbench call` as a new user meets them: why a tool is missing is
said on stderr, the exit status tells a script whether the call's result is an error, and a
result that names files in a temporary workspace says they are gone at exit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolbench import CODES
from toolbench.cli import main

DENIED = {"name": "mine", "tools": {"allow": ["extension/demo:weather", "builtin:dice.roll"],
                                    "deny": ["builtin:dice.roll"]}}
MISSING = {"tools": {"allow": ["mcp/notes:search", "extension/mine:foo"]}}


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def codes(err: str) -> list[str]:
    """The code of each `toolbench: <code>: ...` line of stderr."""
    return [line.split(": ", 2)[1] for line in err.splitlines() if line.startswith("toolbench: ")]


def profile(tmp_path: Path, data: dict[str, object]) -> str:
    path = tmp_path / "p.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize(("data", "expected"), [
    (DENIED, ["extension.tool_unavailable", "cli.snapshot_empty"]),
    (MISSING, ["mcp.tool_unavailable", "extension.tool_unavailable", "cli.snapshot_empty"])])
def test_snapshot_says_on_stderr_why_the_profiles_tools_are_missing(tmp_path, capsys, data, expected):
    code, out, err = run(capsys, "snapshot", "--profile", profile(tmp_path, data))
    assert (code, json.loads(out), codes(err)) == (0, [], expected)
    assert "extension/" in err.splitlines()[-2]  # each line names the tool it is about


@pytest.mark.parametrize("data", [DENIED, MISSING])
def test_snapshot_check_fails_when_the_snapshot_offers_no_tool(tmp_path, capsys, data):
    code, out, err = run(capsys, "snapshot", "--check", "--profile", profile(tmp_path, data))
    assert (code, json.loads(out), codes(err)[-1]) == (1, [], "cli.snapshot_empty")


def test_a_snapshot_with_tools_and_no_diagnostics_is_quiet(capsys):
    code, out, err = run(capsys, "snapshot", "--check")
    assert (code, err, json.loads(out)) == (0, "", [])


def test_the_cli_codes_are_listed():
    assert {"cli.snapshot_empty", "cli.result_files_removed"} <= set(CODES)


@pytest.mark.parametrize(("argv", "error_code"), [
    (("dice_roll", '{"formula":'), "tool.invalid_arguments"),
    (("nosuch", "{}"), "model.unknown_tool_call")])
def test_call_exits_1_when_its_result_is_an_error(capsys, argv, error_code):
    code, out, _ = run(capsys, "call", *argv)
    assert (code, json.loads(out)["errorCode"]) == (1, error_code)


def test_call_exits_0_on_a_result_that_is_no_error_and_2_on_a_config_error(tmp_path, capsys):
    code, out, _ = run(capsys, "call", "dice_roll", '{"formula": "1d6"}', "--seed", "1")
    assert (code, json.loads(out)["isError"]) == (0, False)
    code, out, err = run(capsys, "call", "dice_roll", "{}", "--profile", str(tmp_path / "none.json"))
    assert (code, out, len(codes(err))) == (2, "", 1)


def test_a_result_naming_files_of_a_temporary_workspace_says_they_are_removed(capsys):
    code, out, err = run(capsys, "call", "long_report", "{}", "--demo")
    assert (code, codes(err)) == (0, ["cli.result_files_removed"])
    assert json.loads(out)["resourceRefs"] and "--workspace" in err


def test_a_result_in_a_given_workspace_keeps_its_files_and_says_nothing(tmp_path, capsys):
    code, out, err = run(capsys, "call", "long_report", "{}", "--demo", "--workspace", str(tmp_path))
    refs = json.loads(out)["resourceRefs"]
    assert (code, err) == (0, "")
    assert refs and all((tmp_path / ref).is_file() for ref in refs)


@pytest.mark.parametrize("command", ["snapshot", "call"])
def test_every_option_of_snapshot_and_call_is_described(capsys, command):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    text = capsys.readouterr().out
    entries = text.split("options:", 1)[1].split("\n  -")  # one entry per option, its help wrapped within
    for option in ("-profile", "-workspace", "-scene"):
        entry = next(e for e in entries if e.startswith(option + " "))
        assert len(entry.split()) > 2, entry  # more than the option and its metavar
    if command == "call":
        assert "exit" in text and " 1 " in " ".join(text.split())
