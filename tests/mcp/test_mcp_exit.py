"""No server outlives the interpreter: the manager's exit hook stops what `close()` was not called for."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from mcp_support import SERVERS, wait_until

from toolbench.mcp._procs import is_alive

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import sys
from toolbench.mcp import McpManager
from toolbench.core.loop import LoopThread

manager = McpManager(LoopThread(), sys.argv[1])
info = manager.add("stubborn", command=[sys.executable, sys.argv[2]])
print(info.state, info.pid, flush=True)
# no close(): the exit hook has to stop the server, which ignores the end of its stdin
"""


def test_a_server_is_stopped_when_the_interpreter_exits_without_close(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path), str(SERVERS / "stubborn.py")],
        capture_output=True, text=True, timeout=60, env=env, check=False,
    )
    assert done.returncode == 0, done.stderr
    state, pid = done.stdout.split()
    assert state == "active" and pid.isdigit()
    assert wait_until(lambda: not is_alive(int(pid)), 10), "the stdio server outlived the interpreter"
