"""The benchmarks run at smoke size and each writes its JSON (the targets are not asserted), into
the test's folder: the figures a person measured in benchmarks/results stay as they were."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from benchmarks import __main__ as bench_main
from benchmarks._common import REPORT_KEYS

ROOT = Path(__file__).resolve().parents[1]


def test_smoke_run_writes_every_report(tmp_path: Path) -> None:
    results = ROOT / "benchmarks" / "results"
    before = {p.name: p.read_bytes() for p in results.glob("*.json")} if results.is_dir() else {}
    proc = subprocess.run([sys.executable, "-m", "benchmarks", "--smoke", "--out", str(tmp_path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=150)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    for name in bench_main.SCRIPTS:
        path = tmp_path / f"{name}.json"
        assert path.exists(), name
        data = json.loads(path.read_text(encoding="utf-8"))
        assert set(REPORT_KEYS) <= set(data) and data["name"] == name and data["smoke"] is True
        assert {"nproc", "cpu", "loadavg"} <= set(data["machine"])
        assert data["rows"], name
        for target in data["targets"]:
            assert {"target", "value", "limit", "unit", "met"} <= set(target)
    after = {p.name: p.read_bytes() for p in results.glob("*.json")} if results.is_dir() else {}
    assert after == before  # nothing measured before was overwritten
    assert "summary" in proc.stdout
