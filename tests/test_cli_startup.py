"""Start-up of the `toolbench` command: asking for help imports only what the parser needs,
never the runtime, pydantic, the MCP SDK, jsonschema or pandas."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("pydantic", "mcp", "pandas", "jsonschema", "jsonschema_rs", "toolbench.runtime", "toolbench.mcp")

_PROBE = """\
import contextlib, io, json, runpy, sys
sys.argv = ["toolbench", *{argv!r}]
out = io.StringIO()
try:
    with contextlib.redirect_stdout(out):
        runpy.run_module("toolbench", run_name="__main__", alter_sys=True)
except SystemExit as exc:
    status = exc.code
heavy = {heavy!r}
loaded = sorted(m for m in sys.modules if m in heavy or m.startswith(tuple(h + "." for h in heavy)))
print(json.dumps([status, out.getvalue().startswith("usage: toolbench"), loaded]))
"""


@pytest.mark.parametrize("argv", [["--help"], ["lab", "--help"], ["check", "--help"], ["snapshot", "--help"]])
def test_help_imports_no_heavy_module(argv: list[str]) -> None:
    code = _PROBE.format(argv=argv, heavy=HEAVY)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert json.loads(out.stdout) == [0, True, []]


@pytest.mark.parametrize("argv", [["--help"], ["lab", "--help"]])
def test_top_level_help_imports_no_provider(argv: list[str]) -> None:
    """The providers load when `--protocol` is checked or `snapshot --help` lists their names."""
    code = _PROBE.format(argv=argv, heavy=("toolbench.protocols",))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert json.loads(out.stdout) == [0, True, []]


def test_the_probe_sees_a_command_that_opens_a_bench() -> None:
    """The same probe on `snapshot` finds the runtime loaded: the check above can fail."""
    code = _PROBE.format(argv=["snapshot"], heavy=HEAVY)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    status, _, loaded = json.loads(out.stdout)
    assert status == 0 and "pydantic" in loaded and "toolbench.runtime" in loaded
