"""A transport of the user's own, without editing toolbench: a subclass of `McpTransport`, and
`SdkTransport` over a factory of an SDK transport. Both register with `add(name, transport=...)`."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import pytest
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.server.mcpserver import MCPServer
from mcp.shared.message import SessionMessage

from toolbench import Profile, Workbench
from toolbench.core.errors import ToolbenchError
from toolbench.core.ids import ToolId
from toolbench.core.loop import LoopThread
from toolbench.core.results import ToolOutput
from toolbench.mcp import InProcessTransport, McpManager, McpTransport, SdkTransport, TransportContext

ROOT = Path(__file__).resolve().parents[2]


def tiny_server() -> MCPServer:
    server = MCPServer("tiny")

    @server.tool(description="Add two integers.")
    def add(a: int, b: int) -> int:
        return a + b

    return server


class _CountingWrite:
    """A write stream that notes each request's method before passing it on."""

    def __init__(self, inner: Any, methods: list[str]) -> None:
        self._inner, self._methods = inner, methods

    async def send(self, item: SessionMessage, /) -> None:
        method = getattr(item.message, "method", None)
        if method is not None:
            self._methods.append(method)
        await self._inner.send(item)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _CountingWrite:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


@dataclass(frozen=True)
class RecordingTransport(McpTransport):
    """The user's own transport: another transport's streams, with the methods sent written down."""

    kind: ClassVar[str] = "recording"
    inner: McpTransport
    methods: list[str] = field(default_factory=list, compare=False)
    opened: list[int] = field(default_factory=list, compare=False)

    def open(self, context: TransportContext) -> Any:
        self.opened.append(len(self.opened) + 1)
        return self._streams(context)

    @asynccontextmanager
    async def _streams(self, context: TransportContext) -> AsyncIterator[tuple[Any, Any]]:
        async with self.inner.open(context) as (read, write):
            yield read, _CountingWrite(write, self.methods)


def call(loop: LoopThread, manager: McpManager, tool: str, **arguments: Any) -> ToolOutput:
    return loop.run(manager.call(ToolId.parse(tool), arguments))


def test_a_transport_class_of_ones_own_lists_and_calls(loop: LoopThread, manager: McpManager) -> None:
    transport = RecordingTransport(InProcessTransport(tiny_server()))
    info = manager.add("tiny", transport=transport)
    assert (info.state, info.transport, info.id) == ("active", "recording", "tiny"), info.diagnostic
    assert (info.pid, info.log_path) == (None, None)  # no process, no stderr log: the class says so
    assert [t.name for t in info.tools] == ["add"]
    assert call(loop, manager, "mcp/tiny:add", a=2, b=3).content == "5"
    assert "tools/list" in transport.methods and transport.methods[-1] == "tools/call"
    last = manager.trace("tiny")[-1]  # toolbench's monitor watched the user's streams too
    assert (last.direction, last.kind) == ("received", "response") and '"5"' in last.text
    manager.refresh("tiny", restart=True)
    assert transport.opened == [1, 2]  # each connect opens the transport anew


def test_an_sdk_transport_runs_a_server_through_a_factory_of_ones_own(
    loop: LoopThread, manager: McpManager, tmp_path: Path
) -> None:
    errlog = (tmp_path / "server.stderr").open("w", encoding="utf-8")
    params = StdioServerParameters(command=sys.executable, args=["-m", "toolbench.examples.demo_mcp"],
                                   env={"PYTHONPATH": str(ROOT)})
    made: list[int] = []

    def factory() -> Any:
        made.append(1)
        return stdio_client(params, errlog=errlog)

    try:
        info = manager.add("demo", transport=SdkTransport(factory))
        assert (info.state, info.transport) == ("active", "sdk"), info.diagnostic
        assert "echo" in [t.name for t in info.tools] and made == [1]
        assert call(loop, manager, "mcp/demo:echo", text="over the user's transport").content == (
            "over the user's transport")
        manager.remove("demo")  # the SDK stops the process it started (the fixture checks none is left)
    finally:
        errlog.close()


def test_an_sdk_factory_that_gives_no_streams_fails_the_server(manager: McpManager) -> None:
    info = manager.add("odd", transport=SdkTransport(lambda: "not a transport"))  # type: ignore[arg-type, return-value]
    assert (info.state, info.diagnostic_code) == ("failed", "mcp.server_start_failed")
    assert "async context manager" in (info.diagnostic or "")


def test_a_custom_transport_through_a_workbench(tmp_path: Path, profile_with: Callable[..., Profile]) -> None:
    transport = RecordingTransport(InProcessTransport(tiny_server()))
    with Workbench(tmp_path / "ws", profile=profile_with("mcp/tiny:add")) as bench:
        assert bench.mcp.add("tiny", transport=transport).state == "active"
        inv = bench.invocation()
        [name] = [n for n, tool_id in inv.snapshot.call_names.items() if str(tool_id) == "mcp/tiny:add"]
        result = inv.call(name, {"a": 20, "b": 22})
        assert (result.is_error, result.content) == (False, "42")
    assert transport.methods.count("tools/call") == 1


@pytest.mark.parametrize("bad", [object(), "stdio", InProcessTransport])
def test_transport_must_be_a_transport_value(manager: McpManager, bad: Any) -> None:
    with pytest.raises(ToolbenchError) as caught:
        manager.add("x", transport=bad)
    assert caught.value.code == "mcp.config_invalid"
    assert manager.servers == []  # nothing was registered
