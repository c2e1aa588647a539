"""Footprint: resident memory of a kernel (a python process) holding `Workbench.demo()` with one
MCP server connected (the demo server, `toolbench.examples.demo_mcp`, registered in-process so its
memory counts too), after one call to it. Fresh processes; the median of a few."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys

from . import _common as c

_KERNEL = """
import json
from toolbench import Workbench
from toolbench.examples.demo_mcp import build_server
bench = Workbench.demo()
bench.mcp.add("demo", server=build_server(), id="demo")
bench.enable("mcp/demo:echo")
inv = bench.invocation()
name = next(n for n, t in inv.snapshot.call_names.items() if str(t) == "mcp/demo:echo")
assert inv.call(name, {"text": "hi"}).content == "hi"
inv.call("weather", {"city": "Oslo"})
status = dict(line.split(":", 1) for line in open("/proc/self/status") if ":" in line)
print(json.dumps({k: int(status[k].split()[0]) * 1024 for k in ("VmRSS", "VmHWM")}))
bench.close()
"""
_BASELINE = """
import json
status = dict(line.split(":", 1) for line in open("/proc/self/status") if ":" in line)
print(json.dumps({k: int(status[k].split()[0]) * 1024 for k in ("VmRSS", "VmHWM")}))
"""


def _measure(code: str) -> dict[str, int]:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    return json.loads(out.stdout.strip().splitlines()[-1])


def run(smoke: bool) -> c.Report:
    """Footprint: RSS of a python process holding Workbench.demo() with one MCP server."""
    report = c.Report("footprint", "resident memory of a kernel with Workbench.demo() and one MCP server", smoke)
    runs = 1 if smoke else 3
    kernel = [_measure(_KERNEL) for _ in range(runs)]
    base = [_measure(_BASELINE) for _ in range(runs)]
    rss = statistics.median(k["VmRSS"] for k in kernel)
    report.row(process="python -c (baseline)", rss=c.fmt_bytes(statistics.median(b["VmRSS"] for b in base)),
               peak_rss=c.fmt_bytes(statistics.median(b["VmHWM"] for b in base)))
    report.row(process="Workbench.demo() + MCP demo server", rss=c.fmt_bytes(rss),
               peak_rss=c.fmt_bytes(statistics.median(k["VmHWM"] for k in kernel)))
    report.target("kernel resident memory", rss / 2**20, 300, "MB", shown=c.fmt_bytes(rss))
    return report


if __name__ == "__main__":
    raise SystemExit(c.cli(run))
