"""Call overhead: `inv.call` of a no-op extension tool against calling the function directly, and a
toolbench MCP call against raw `mcp.Client` calls of the same in-process server.

Four raw baselines, each what some user of the raw SDK pays:

- on a loop thread, called from synchronous code (the way toolbench itself is driven);
- in the caller's own event loop (`asyncio.run` of a loop of `await client.call_tool(...)`,
  timed inside: no thread hop), what a notebook user of the raw SDK pays. `Client(server)` then
  dispatches in-process without JSON-RPC framing;
- the same, over the SDK's in-memory JSON-RPC transport, which toolbench uses for an in-process
  server (so the monitor sees the wire as it does for stdio and HTTP): the difference between
  the last two is the framing;
- on a loop thread over that in-memory transport: framing and hop, as toolbench pays them, so
  the difference to toolbench is toolbench's own.

Rounds are interleaved (one sample of each case per round, the order rotated), as `_common` does.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
import time
from collections.abc import Callable
from typing import Any

from . import _common as c

ARGS = {"text": "hi"}


class _RawClient:
    """A raw `mcp.Client` on the demo server, kept open on an event loop in a thread (`framed`:
    over the SDK's in-memory JSON-RPC transport, as toolbench connects an in-process server)."""

    def __init__(self, framed: bool = False) -> None:
        from mcp import Client
        from mcp.client._memory import InMemoryTransport

        from toolbench.examples.demo_mcp import build_server

        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        opened: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self._stop = asyncio.Event()

        async def hold() -> None:
            server = build_server()
            async with Client(InMemoryTransport(server) if framed else server) as client:
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


def _in_caller_loop(framed: bool, calls: int) -> float:
    """Seconds per call of a raw client in a fresh `asyncio.run`, timed inside (no thread hop)."""
    from mcp import Client
    from mcp.client._memory import InMemoryTransport

    from toolbench.examples.demo_mcp import build_server

    async def main() -> float:
        server = build_server()
        async with Client(InMemoryTransport(server) if framed else server) as client:
            for _ in range(3):  # warm: the first calls compile the schemas
                await client.call_tool("echo", ARGS)
            start = time.perf_counter()
            for _ in range(calls):
                await client.call_tool("echo", ARGS)
            return (time.perf_counter() - start) / calls

    return asyncio.run(main())


def _rounds(timed: dict[str, Callable[[], Any]], self_timed: dict[str, Callable[[int], float]], *,
            repeats: int, inner: int) -> dict[str, list[float]]:
    """`c.interleaved` for a mix of cases: `timed` ones run `inner` times under the clock here,
    `self_timed` ones are given `inner` and report their own seconds per call."""
    names = [*timed, *self_timed]
    samples: dict[str, list[float]] = {name: [] for name in names}
    for r in range(repeats + 1):  # round 0 warms up and is dropped
        shift = r % len(names)
        for name in names[shift:] + names[:shift]:
            if name in timed:
                start = time.perf_counter()
                for _ in range(inner):
                    timed[name]()
                seconds = (time.perf_counter() - start) / inner
            else:
                seconds = self_timed[name](inner)
            if r:
                samples[name].append(seconds)
    return samples


def run(smoke: bool) -> c.Report:
    """Call overhead: toolbench against direct calls and the raw MCP SDK."""
    from toolbench import Profile, Workbench
    from toolbench.examples.demo_mcp import build_server

    report = c.Report("call", "toolbench call overhead against direct calls and the raw MCP client", smoke)
    repeats, inner = (5, 20) if smoke else (21, 200)

    def noop() -> str:
        return ""

    profile = Profile.default().edit(max_calls_per_run=1_000_000, max_rounds=1_000_000)
    with Workbench(None, profile) as bench:
        bench.enable(bench.register_tool("bench", noop))
        bench.mcp.add("demo", server=build_server(), id="demo")
        bench.enable("mcp/demo:echo")
        inv = bench.invocation()
        echo = next(name for name, tool_id in inv.snapshot.call_names.items() if str(tool_id) == "mcp/demo:echo")
        for name, args in (("noop", {}), (echo, ARGS)):  # what is timed must succeed, not time a refusal
            result = inv.call(name, args)
            if result.is_error:
                raise AssertionError(f"the benchmark call {name} failed: {result.error_code}: {result.content}")
        samples = c.interleaved({"inv.call": lambda: inv.call("noop", {}), "direct": noop},
                                repeats=repeats, inner=inner)
        overhead = c.paired_difference(samples, "inv.call", "direct")
        report.row(case="no-op extension tool", toolbench=c.fmt_seconds(c.median(samples["inv.call"])),
                   baseline=c.fmt_seconds(c.median(samples["direct"])), baseline_is="direct call",
                   overhead=c.fmt_seconds(overhead), ratio="")
        raw, raw_framed = _RawClient(), _RawClient(framed=True)
        try:
            mcp_inner = max(1, inner // 10)
            samples = _rounds(
                {"toolbench": lambda: inv.call(echo, ARGS), "raw": lambda: raw.call("echo", ARGS),
                 "raw framed thread": lambda: raw_framed.call("echo", ARGS)},
                {"raw in loop": lambda n: _in_caller_loop(False, n), "raw framed": lambda n: _in_caller_loop(True, n)},
                repeats=repeats, inner=mcp_inner,
            )
        finally:
            raw.close()
            raw_framed.close()
        toolbench = c.fmt_seconds(c.median(samples["toolbench"]))
        r = c.ratio(samples, "toolbench", "raw")
        report.row(case="MCP echo (in-process)", toolbench=toolbench,
                   baseline=c.fmt_seconds(c.median(samples["raw"])), baseline_is="raw mcp.Client",
                   overhead=c.fmt_seconds(c.paired_difference(samples, "toolbench", "raw")), ratio=f"{r:.2f}x")
        in_loop = c.paired_difference(samples, "toolbench", "raw in loop")
        report.row(case="MCP echo (in-process)", toolbench=toolbench,
                   baseline=c.fmt_seconds(c.median(samples["raw in loop"])),
                   baseline_is="raw mcp.Client, caller's loop", overhead=c.fmt_seconds(in_loop),
                   ratio=f"{c.ratio(samples, 'toolbench', 'raw in loop'):.2f}x")
        own = c.paired_difference(samples, "toolbench", "raw framed")
        report.row(case="MCP echo (in-process)", toolbench=toolbench,
                   baseline=c.fmt_seconds(c.median(samples["raw framed"])),
                   baseline_is="raw mcp.Client, caller's loop, JSON-RPC in memory", overhead=c.fmt_seconds(own),
                   ratio=f"{c.ratio(samples, 'toolbench', 'raw framed'):.2f}x")
        hop = c.paired_difference(samples, "raw", "raw in loop")
        framing = c.paired_difference(samples, "raw framed", "raw in loop")
        report.note(f"the same raw client costs {c.fmt_seconds(hop)} more per call driven from sync code through a "
                    "loop thread than in the caller's loop (thread wake-ups; toolbench's sync face pays them too), "
                    f"and {c.fmt_seconds(framing)} more in the caller's loop over the SDK's in-memory JSON-RPC "
                    "transport, which toolbench uses for an in-process server so its wire monitor sees it as it "
                    "sees stdio and HTTP; the two overlap on a thread, so they do not add up")
        # The SDK's framing and the thread hop, which toolbench pays on every sync call of an
        # in-process server, measured on the raw client itself.
        floor = c.ratio(samples, "raw framed thread", "raw")
        share = c.paired_difference(samples, "toolbench", "raw framed thread")
        report.row(case="MCP echo (in-process)", toolbench=toolbench,
                   baseline=c.fmt_seconds(c.median(samples["raw framed thread"])),
                   baseline_is="raw mcp.Client, loop thread, JSON-RPC in memory", overhead=c.fmt_seconds(share),
                   ratio=f"{c.ratio(samples, 'toolbench', 'raw framed thread'):.2f}x")
        report.note(f"the raw client framed as toolbench's costs {floor:.2f}x the unframed one on a loop thread and "
                    f"{c.fmt_seconds(c.paired_difference(samples, 'raw framed thread', 'raw in loop'))} more than "
                    "the unframed one in the caller's loop: the floor of the caller's-loop target for a sync caller "
                    "of a server on the wire; toolbench's own share is the last row's "
                    f"{c.fmt_seconds(share)}")
    report.target("toolbench's own overhead per call (median)", overhead * 1e6, 100, "µs",
                  shown=c.fmt_seconds(overhead))
    report.target("MCP call vs raw mcp.Client", r, 1.2, "x", shown=f"{r:.2f}x")
    report.target("MCP call overhead over the raw client in the caller's loop", in_loop * 1e6, 200, "µs",
                  shown=c.fmt_seconds(in_loop))
    return report


if __name__ == "__main__":
    raise SystemExit(c.cli(run))
