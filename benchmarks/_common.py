"""Timing helpers shared by the benchmark scripts.

Cases that are compared run interleaved (one sample of each per round, the order rotated every
round), so a busy neighbour slows all of them alike; figures are medians, and a ratio is the
median of the per-round ratios. Each script builds a `Report`: rows for the table, targets
(PASS/MISS, never a failing exit), written to `benchmarks/results/<name>.json`.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

RESULTS_DIR = Path(__file__).resolve().parent / "results"
REPORT_KEYS = ("name", "question", "smoke", "machine", "rows", "targets", "notes", "seconds")


def machine() -> dict[str, Any]:
    """What the figures ran on: cores, CPU model, load average, Python."""
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        load = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        load = []
    return {"nproc": os.cpu_count(), "cpu": model, "loadavg": load, "python": platform.python_version(),
            "platform": platform.platform()}


def interleaved(cases: Mapping[str, Callable[[], Any]], *, repeats: int, inner: int = 1,
                warmup: int = 1) -> dict[str, list[float]]:
    """Seconds per call of each case: `repeats` samples, each the mean over `inner` calls.

    Every round takes one sample of every case, in an order rotated by one each round."""
    names = list(cases)
    for _ in range(warmup):
        for name in names:
            for _ in range(inner):
                cases[name]()
    samples: dict[str, list[float]] = {name: [] for name in names}
    for r in range(repeats):
        shift = r % len(names)
        for name in names[shift:] + names[:shift]:
            fn = cases[name]
            start = time.perf_counter()
            for _ in range(inner):
                fn()
            samples[name].append((time.perf_counter() - start) / inner)
    return samples


def median(values: list[float]) -> float:
    return statistics.median(values)


def ratio(samples: Mapping[str, list[float]], a: str, b: str) -> float:
    """The median of the per-round ratios a/b (rounds are paired: they ran side by side)."""
    return statistics.median(x / y for x, y in zip(samples[a], samples[b], strict=True) if y > 0)


def paired_difference(samples: Mapping[str, list[float]], a: str, b: str) -> float:
    """The median of the per-round differences a - b, in seconds."""
    return statistics.median(x - y for x, y in zip(samples[a], samples[b], strict=True))


def fmt_seconds(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.2f} s"


def fmt_bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if abs(n) < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"


@dataclass
class Report:
    """One script's figures: table rows, targets and notes, printed and written as JSON."""

    name: str
    question: str
    smoke: bool
    rows: list[dict[str, Any]] = field(default_factory=list)
    targets: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    started: float = field(default_factory=time.perf_counter)

    def row(self, **values: Any) -> None:
        self.rows.append(values)

    def target(self, what: str, value: float, limit: float, unit: str, *, shown: str | None = None) -> bool:
        """Record a target `value <= limit` (PASS) or not (MISS)."""
        met = value <= limit
        self.targets.append({"target": what, "value": value, "limit": limit, "unit": unit, "met": met,
                             "shown": shown if shown is not None else f"{value:.3g} {unit}"})
        return met

    def note(self, text: str) -> None:
        self.notes.append(text)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "question": self.question, "smoke": self.smoke, "machine": machine(),
                "rows": self.rows, "targets": self.targets, "notes": self.notes,
                "seconds": round(time.perf_counter() - self.started, 2)}

    def finish(self, out_dir: Path = RESULTS_DIR) -> dict[str, Any]:
        """Print the table and the targets, write `<out_dir>/<name>.json`; return the JSON."""
        data = self.to_json()
        print(f"\n== {self.name}: {self.question}" + (" (smoke size)" if self.smoke else ""))
        print(table(self.rows))
        for note in self.notes:
            print(f"note: {note}")
        for t in self.targets:
            print(f"[{'PASS' if t['met'] else 'MISS'}] {t['target']}: {t['shown']} (limit {t['limit']:g} {t['unit']})")
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / f"{self.name}.json").write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n",
                                                   encoding="utf-8")
        return data


def table(rows: list[dict[str, Any]]) -> str:
    """A plain-text table of dict rows (columns in first-seen order)."""
    if not rows:
        return "(no rows)"
    columns: list[str] = []
    for row in rows:
        columns += [k for k in row if k not in columns]
    cells = [[str(row.get(c, "")) for c in columns] for row in rows]
    widths = [max(len(c), *(len(r[i]) for r in cells)) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True)),
             "  ".join("-" * w for w in widths)]
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)) for r in cells]
    return "\n".join(lines)


def cli(run: Callable[[bool], Report], argv: list[str] | None = None) -> int:
    """`python -m benchmarks.bench_x [--smoke] [--out DIR]`: run, print, write the JSON; always exit 0."""
    parser = argparse.ArgumentParser(description=(run.__doc__ or "").strip().splitlines()[0] if run.__doc__ else None)
    parser.add_argument("--smoke", action="store_true", help="small sizes, for CI")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR, help="the folder of the JSON report "
                        "(default benchmarks/results)")
    options = parser.parse_args(argv)
    run(options.smoke).finish(options.out)
    sys.stdout.flush()
    return 0
