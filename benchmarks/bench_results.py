"""Long results: projecting and storing a 10 MB result (smoke: 1 MB).

An extension tool returns a prebuilt string; the figure is the whole `inv.call` (projection into
a notice, the `tool-results/` text and JSON files written) minus nothing: the tool itself only
returns the string. Peak memory is the tracemalloc peak during one call, in a separate run so the
tracing does not slow the timed calls.
"""

from __future__ import annotations

import tracemalloc

from . import _common as c


def run(smoke: bool) -> c.Report:
    """Long results: project and store a 10 MB result."""
    from toolbench import Profile, Workbench

    size = 1_000_000 if smoke else 10_000_000
    repeats = 3 if smoke else 7
    report = c.Report("results", f"projecting and storing a {c.fmt_bytes(size)} result", smoke)
    line = "line 00000: the quick brown fox jumps over the lazy dog, again and again\n"
    payload = (line * (size // len(line) + 1))[:size]

    def big() -> str:
        return payload

    profile = Profile.default().edit(max_calls_per_run=1_000_000, max_rounds=1_000_000)
    with Workbench(None, profile) as bench:
        bench.enable(bench.register_tool("bench", big))
        inv = bench.invocation()

        def call() -> None:
            result = inv.call("big", {})
            assert result.structured["externalized"], result.content[:200]

        samples = c.interleaved({"inv.call (project + store)": call}, repeats=repeats)
        bench.flush()
        tracemalloc.start()
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        call()
        peak = tracemalloc.get_traced_memory()[1] - base
        tracemalloc.stop()
    median = c.median(samples["inv.call (project + store)"])
    report.row(case="inv.call (project + store)", result=c.fmt_bytes(size), median=c.fmt_seconds(median),
               peak_memory=c.fmt_bytes(peak), peak_vs_result=f"{peak / size:.2f}x")
    report.target("project + store", median * 1e3, 200, "ms", shown=c.fmt_seconds(median))
    report.target("peak memory / result size", peak / size, 3.0, "x", shown=f"{peak / size:.2f}x")
    return report


if __name__ == "__main__":
    raise SystemExit(c.cli(run))
