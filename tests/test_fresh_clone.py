"""A fresh clone passes the README's test command with nothing done first: here, the MCP tests
that use the npm servers, run from a clone of this repository that has no
`tests/mcp/node/node_modules` (the first of them installs the packages, as on a user's machine)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from deadline import ROOT

# The tests that failed on a fresh clone when they ran before the one that installed the servers.
FIRST_USERS = ["tests/mcp/test_mcp_capabilities.py",
               "tests/mcp/test_mcp_placeholders.py::test_a_server_gets_the_expanded_environment",
               "tests/test_cli_check_features.py"]


def test_a_fresh_clone_installs_the_npm_servers_for_the_first_test_that_needs_them(tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", "--no-hardlinks", str(ROOT), str(clone)], check=True, timeout=300)
    assert not (clone / "tests" / "mcp" / "node" / "node_modules").exists()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "COV_"))}
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "0", *FIRST_USERS],
                          cwd=clone, env=env, capture_output=True, text=True, timeout=1500)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert (clone / "tests" / "mcp" / "node" / "node_modules" / ".bin" / "mcp-server-everything").exists()
