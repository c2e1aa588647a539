"""nbval runs the notebooks as tests (here, not in notebooks/: that folder ships in the wheel).

- The MCP notebook starts the npm reference servers and the conformance suite from the
  checkout (tests/mcp/node), installed first when a fresh clone has none (the same `npm ci` the
  tests use, under its lock).
- `-n auto` (pyproject.toml's addopts) starts one worker more than the cores: about a third of
  the suite waits on other processes (MCP servers, JupyterLab, the browser, npm, the wheel's
  venv), so a spare worker keeps the cores busy (on 2 cores: 5 min 28 s with three workers,
  6 min 40 s with two). `PYTEST_XDIST_AUTO_NUM_WORKERS` or `-n N` still decide.
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


def pytest_xdist_auto_num_workers(config: Any) -> int | None:
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None  # xdist's own hook reads it
    try:  # the cores as xdist's own `auto` counts them (physical, unless `-n logical`), plus one
        import psutil

        cores = psutil.cpu_count(logical=config.option.numprocesses == "logical") or psutil.cpu_count() or 1
    except ImportError:
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return int(cores) + 1


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
