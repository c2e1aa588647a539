"""nbval runs the notebooks as tests (here, not in notebooks/: that folder ships in the wheel).

- The MCP notebook starts the npm reference servers and the conformance suite from the
  checkout (tests/mcp/node), installed first when a fresh clone has none (the same `npm ci` the
  tests use, under its lock).
- nbval kills each notebook's kernel (`shutdown_kernel(now=True)`), so a demo bench's own
  workspace, removed at interpreter exit, would stay behind in the temp folder: the kernels get a
  temp folder of this session's, removed when it ends.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from typing import Any

NEEDS_NODE = {"09-mcp.ipynb"}
_KERNEL_TMP: dict[str, str] = {}


def _notebook(item: Any) -> bool:
    return item.path.suffix == ".ipynb"


def pytest_runtest_setup(item: Any) -> None:
    if not _notebook(item):
        return
    if item.path.name in NEEDS_NODE:
        from tests.node_servers import ensure_node_servers

        ensure_node_servers()
    if "dir" not in _KERNEL_TMP:
        _KERNEL_TMP["dir"] = tempfile.mkdtemp(prefix="toolbench-nbval-")
    _KERNEL_TMP.setdefault("was", os.environ.get("TMPDIR", ""))
    os.environ["TMPDIR"] = _KERNEL_TMP["dir"]  # the kernel starts with the first cell's setup


def pytest_runtest_teardown(item: Any) -> None:
    if _notebook(item) and "was" in _KERNEL_TMP:
        was = _KERNEL_TMP.pop("was")
        if was:
            os.environ["TMPDIR"] = was
        else:
            os.environ.pop("TMPDIR", None)


def pytest_sessionfinish(session: Any) -> None:
    if "dir" in _KERNEL_TMP:
        shutil.rmtree(_KERNEL_TMP.pop("dir"), ignore_errors=True)
