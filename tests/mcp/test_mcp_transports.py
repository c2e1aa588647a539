"""The demo server as a real stdio subprocess and over streamable HTTP, next to the in-process one."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from mcp_support import child_pids, no_new_children, wait_until

from toolbench.core.errors import OutcomeUnknown, ToolError
from toolbench.core.ids import ToolId
from toolbench.core.loop import LoopThread
from toolbench.core.results import ToolOutput
from toolbench.examples.demo_mcp import build_server, stdio_config
from toolbench.mcp import McpManager
from toolbench.mcp._procs import is_alive


@pytest.fixture(scope="module")
def bench_loop() -> Iterator[LoopThread]:
    thread = LoopThread("test-mcp-transports")
    yield thread
    thread.close()


@pytest.fixture(scope="module")
def demo(bench_loop: LoopThread, tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpManager]:
    """One manager with the demo over stdio (started once: it takes a second) and in-process."""
    before = child_pids()
    manager = McpManager(bench_loop, tmp_path_factory.mktemp("mcp-logs"))
    manager.add("demo stdio", **stdio_config())
    manager.add("demo memory", server=build_server())
    yield manager
    pid = manager.info("demo stdio").pid
    manager.close()
    assert pid is None or not is_alive(pid)
    assert no_new_children(before), "the stdio demo outlived its manager"


def run(loop: LoopThread, manager: McpManager, tool_id: str, **arguments: Any) -> ToolOutput:
    return loop.run(manager.call(ToolId.parse(tool_id), arguments))


def test_the_stdio_demo_runs_as_a_child_with_a_log(demo: McpManager) -> None:
    info = demo.info("demo stdio")
    assert (info.id, info.state, info.transport) == ("demo-stdio", "active", "stdio")
    assert info.pid is not None and info.pid in child_pids()
    assert info.log_path is not None and info.log_path.exists()
    assert info.server_info is not None and info.server_info["name"] == "toolbench-demo"
    names = [d.id.name for d in demo.descriptors() if d.id.source_id == "demo-stdio"]
    assert names == ["echo", "issue.create", "weather", "image", "long_text", "fail", "sleep", "empty"]


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [("issue.create", {"title": "t"}), ("weather", {"city": "Oslo"}), ("image", {}), ("empty", {}),
     ("long_text", {"size": 60_000})],
)
def test_stdio_and_in_process_results_read_the_same(
    bench_loop: LoopThread, demo: McpManager, tool: str, arguments: dict[str, Any]
) -> None:
    over_stdio = run(bench_loop, demo, f"mcp/demo-stdio:{tool}", **arguments)
    in_process = run(bench_loop, demo, f"mcp/demo-memory:{tool}", **arguments)
    assert over_stdio.content == in_process.content
    assert over_stdio.structured == in_process.structured


def test_a_stdio_tool_error_keeps_its_text(bench_loop: LoopThread, demo: McpManager) -> None:
    with pytest.raises(ToolError) as caught:
        run(bench_loop, demo, "mcp/demo-stdio:fail", message="quota exceeded")
    assert caught.value.code == "mcp.tool_error" and "quota exceeded" in caught.value.message
    assert not isinstance(caught.value, OutcomeUnknown)


def test_stdio_calls_are_serialised_while_another_server_runs_alongside(
    bench_loop: LoopThread, demo: McpManager
) -> None:
    """The server reports its own clock (CLOCK_MONOTONIC is shared by the processes of one host)."""
    stdio, memory = ToolId.parse("mcp/demo-stdio:sleep"), ToolId.parse("mcp/demo-memory:sleep")

    async def together() -> list[ToolOutput]:
        return list(await asyncio.gather(demo.call(stdio, {"seconds": 0.3}), demo.call(stdio, {"seconds": 0.3}),
                                         demo.call(memory, {"seconds": 0.3})))

    first, second, other = [
        (o.structured["structuredContent"]["started"], o.structured["structuredContent"]["ended"])
        for o in bench_loop.run(together())
    ]
    assert first[1] <= second[0] or second[1] <= first[0], "two calls to the stdio server overlapped"
    assert any(other[0] < s[1] and s[0] < other[1] for s in (first, second)), "the two servers did not overlap"


class HttpDemo:
    """The demo served over streamable HTTP by uvicorn on a thread (no child process)."""

    def __init__(self) -> None:
        config = uvicorn.Config(build_server().streamable_http_app(), host="127.0.0.1", port=0, log_level="error")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, name="demo-http", daemon=True)
        self.thread.start()
        assert wait_until(lambda: self.server.started, 15), "the HTTP demo did not start"
        self.url = f"http://127.0.0.1:{self.server.servers[0].sockets[0].getsockname()[1]}/mcp"

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(15)
        assert not self.thread.is_alive()


@pytest.fixture
def http_demo() -> Iterator[HttpDemo]:
    web = HttpDemo()
    yield web
    web.stop()


def test_streamable_http_serves_the_demo(loop: LoopThread, manager: McpManager, http_demo: HttpDemo) -> None:
    info = manager.add("web", url=http_demo.url, headers={"X-Toolbench-Test": "1"}, timeout=10)
    assert (info.state, info.transport, info.id) == ("active", "http", "web")
    assert run(loop, manager, "mcp/web:echo", text="over http").content == "over http"
    assert "issueId" in run(loop, manager, "mcp/web:issue.create", title="x").content
    http_demo.stop()
    with pytest.raises(ToolError) as caught:
        run(loop, manager, "mcp/web:echo", text="gone")
    assert caught.value.code in ("mcp.call_not_sent", "mcp.server_unavailable")  # refused: it never ran
    assert wait_until(lambda: manager.info("web").state == "failed")


def test_an_unreachable_url_fails_within_its_timeout(manager: McpManager, tmp_path: Path) -> None:
    info = manager.add("nowhere", url="http://127.0.0.1:9/mcp", timeout=5)
    assert (info.state, info.diagnostic_code) == ("failed", "mcp.server_start_failed")
    assert manager.add("demo", server=build_server()).state == "active"
