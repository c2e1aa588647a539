"""The npm packages the tests run (the reference MCP servers, the MCP conformance suite and the
Node 22 it needs), pinned by `tests/mcp/node/package-lock.json` and installed with `npm ci` by
whichever test needs them first: a fresh clone passes the README's test command with nothing
done before. A file lock keeps two test processes (pytest-xdist workers) from installing at once.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from filelock import FileLock

NODE_DIR = Path(__file__).parent / "mcp" / "node"
NODE_BIN = NODE_DIR / "node_modules" / ".bin"
NPM_PACKAGES = ("mcp-server-everything", "mcp-server-filesystem", "mcp-server-memory", "conformance", "node")


def ensure_node_servers() -> Path:
    """`tests/mcp/node/node_modules/.bin`, installed with `npm ci` when missing; a clear failure
    (never a skip) when it cannot be."""
    if not _installed():
        with FileLock(str(NODE_DIR / ".npm-ci.lock"), timeout=1200):
            if not _installed():  # another process may have installed them while this one waited
                _install()
    if shutil.which("node") is None:
        pytest.fail("node is not on PATH: the npm MCP servers need Node.js")
    return NODE_BIN


def node_bin(name: str) -> str:
    """`tests/mcp/node/node_modules/.bin/<name>`, installing the packages first when missing."""
    return str(ensure_node_servers() / name)


def _installed() -> bool:
    return all((NODE_BIN / name).exists() for name in NPM_PACKAGES)


def _install() -> None:
    npm = shutil.which("npm")
    if npm is None:
        pytest.fail(f"the npm MCP servers are not installed in {NODE_DIR} and npm is not on PATH: install "
                    f"Node.js (with npm), then run `npm ci --prefix {NODE_DIR} --no-audit --no-fund`")
    # --prefer-offline: npm's cache answers when it holds the pinned tarballs (a second clone, CI's cache)
    done = subprocess.run([npm, "ci", "--prefix", str(NODE_DIR), "--no-audit", "--no-fund", "--prefer-offline"],
                          capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        pytest.fail(f"`npm ci --prefix {NODE_DIR}` failed ({done.returncode}):\n{done.stderr[-2000:]}")
