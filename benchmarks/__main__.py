"""`python -m benchmarks [--smoke] [--out DIR] [names...]`: run the benchmark scripts, then list every target.

Each script's figures go to `benchmarks/results/<name>.json` (or `DIR/<name>.json`: the test's
smoke run writes to its own folder, never over the figures a person measured). The exit status is 0 whatever the
targets say (a benchmark reports; a loaded machine must not fail CI); a script that crashes is
reported and makes the status 1.
"""

from __future__ import annotations

import argparse
import importlib
import time
import traceback
from pathlib import Path

from . import _common as c

SCRIPTS = ("call", "run", "evals", "replay", "shell", "search", "edit", "snapshot", "results", "memory", "startup",
           "footprint")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description="Run toolbench's benchmarks.")
    parser.add_argument("--smoke", action="store_true", help="small sizes, for CI")
    parser.add_argument("--out", type=Path, default=c.RESULTS_DIR, help="the folder of the JSON reports "
                        "(default benchmarks/results)")
    parser.add_argument("names", nargs="*", metavar="name",
                        help=f"scripts to run (default all): {', '.join(SCRIPTS)}")
    options = parser.parse_args(argv)
    unknown = [n for n in options.names if n not in SCRIPTS]
    if unknown:
        parser.error(f"unknown benchmark(s): {', '.join(unknown)}; choose from {', '.join(SCRIPTS)}")
    started = time.perf_counter()
    summary: list[dict[str, str]] = []
    failed = False
    for name in options.names or SCRIPTS:
        module = importlib.import_module(f"benchmarks.bench_{name}")
        try:
            data = module.run(options.smoke).finish(options.out)
        except Exception:
            traceback.print_exc()
            summary.append({"benchmark": name, "target": "(the script failed)", "figure": "", "status": "ERROR"})
            failed = True
            continue
        for t in data["targets"]:
            summary.append({"benchmark": name, "target": t["target"], "figure": t["shown"],
                            "limit": f"{t['limit']:g} {t['unit']}", "status": "PASS" if t["met"] else "MISS"})
    m = c.machine()
    print(f"\n== summary ({time.perf_counter() - started:.0f} s; {m['nproc']} cores, {m['cpu']}, "
          f"load {m['loadavg']})")
    print(c.table(summary))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
