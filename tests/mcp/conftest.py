"""Fixtures for the MCP tests: a bench loop, a manager on `tmp_path` that checks no server
process outlives it, and a `call` helper."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp_support import child_pids, no_new_children

from toolbench.core.ids import ToolId
from toolbench.core.loop import LoopThread
from toolbench.core.results import ToolOutput
from toolbench.mcp import McpManager


@pytest.fixture
def loop() -> Iterator[LoopThread]:
    thread = LoopThread("test-mcp-loop")
    yield thread
    thread.close()


@pytest.fixture
def manager(loop: LoopThread, tmp_path: Path) -> Iterator[McpManager]:
    baseline = child_pids()
    mcp = McpManager(loop, tmp_path / "mcp-logs")
    yield mcp
    mcp.close()
    assert no_new_children(baseline), "a server process outlived the manager"


@pytest.fixture
def call(loop: LoopThread, manager: McpManager) -> Callable[..., ToolOutput]:
    """`call("mcp/demo:echo", text="hi")` runs one call on the bench loop and waits for it."""

    def run(tool_id: str, arguments: dict[str, Any] | None = None, **kwargs: Any) -> ToolOutput:
        return loop.run(manager.call(ToolId.parse(tool_id), {**(arguments or {}), **kwargs}))

    return run


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """The conformance suite's side-by-side table (toolbench and the raw SDK), when it ran."""
    from real_servers import CONFORMANCE_TABLE

    table = terminalreporter.config.stash.get(CONFORMANCE_TABLE, None)
    if table is not None:
        terminalreporter.write_sep("=", "MCP conformance suite: client scenarios (toolbench | the raw mcp SDK)")
        terminalreporter.write_line(table)
