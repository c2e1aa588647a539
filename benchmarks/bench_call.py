"""Call overhead: `inv.call` of a no-op extension tool against calling the function directly, and a
toolbench MCP call against a raw `mcp.Client` call of the same in-process server.

Both MCP sides are called from synchronous code: toolbench through its own loop thread, the raw
client through a loop thread the benchmark runs (the way a notebook would drive it).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from typing import Any

from . import _common as c


class _RawClient:
    """A raw `mcp.Client` on the demo server, kept open on an event loop in a thread."""

    def __init__(self) -> None:
        from mcp import Client

        from toolbench.examples.demo_mcp import build_server

        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        opened: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self._stop = asyncio.Event()

        async def hold() -> None:
            async with Client(build_server()) as client:
                opened.set_result(client)
                await self._stop.wait()

        self._held = asyncio.run_coroutine_threadsafe(hold(), self.loop)
        self.client = opened.result(timeout=30)

    def call(self, name: str, arguments: dict[str, Any]) -> Any:
        return asyncio.run_coroutine_threadsafe(self.client.call_tool(name, arguments), self.loop).result(30)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self._stop.set)
        self._held.result(timeout=30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)


def run(smoke: bool) -> c.Report:
    """Call overhead: toolbench against direct calls and the raw MCP SDK."""
    from toolbench import Profile, Workbench
    from toolbench.examples.demo_mcp import build_server

    report = c.Report("call", "toolbench call overhead against direct calls and the raw MCP client", smoke)
    repeats, inner = (5, 20) if smoke else (21, 200)

    def noop() -> str:
        return ""

    profile = Profile.default().edit(max_calls_per_run=1_000_000)
    with Workbench(None, profile) as bench:
        bench.enable(bench.register_tool("bench", noop))
        bench.mcp.add("demo", server=build_server(), id="demo")
        bench.enable("mcp/demo:echo")
        inv = bench.invocation()
        echo = next(name for name, tool_id in inv.snapshot.call_names.items() if str(tool_id) == "mcp/demo:echo")
        samples = c.interleaved({"inv.call": lambda: inv.call("noop", {}), "direct": noop},
                                repeats=repeats, inner=inner)
        overhead = c.paired_difference(samples, "inv.call", "direct")
        report.row(case="no-op extension tool", toolbench=c.fmt_seconds(c.median(samples["inv.call"])),
                   baseline=c.fmt_seconds(c.median(samples["direct"])), baseline_is="direct call",
                   overhead=c.fmt_seconds(overhead), ratio="")
        raw = _RawClient()
        try:
            args = {"text": "hi"}
            mcp_inner = max(1, inner // 10)
            samples = c.interleaved({"toolbench": lambda: inv.call(echo, args), "raw": lambda: raw.call("echo", args)},
                                    repeats=repeats, inner=mcp_inner)
        finally:
            raw.close()
        r = c.ratio(samples, "toolbench", "raw")
        report.row(case="MCP echo (in-process)", toolbench=c.fmt_seconds(c.median(samples["toolbench"])),
                   baseline=c.fmt_seconds(c.median(samples["raw"])), baseline_is="raw mcp.Client",
                   overhead=c.fmt_seconds(c.paired_difference(samples, "toolbench", "raw")), ratio=f"{r:.2f}x")
    report.target("toolbench's own overhead per call (median)", overhead * 1e6, 100, "µs",
                  shown=c.fmt_seconds(overhead))
    report.target("MCP call vs raw mcp.Client", r, 1.2, "x", shown=f"{r:.2f}x")
    return report


if __name__ == "__main__":
    raise SystemExit(c.cli(run))
