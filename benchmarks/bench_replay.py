"""Replays at the scale users run them: a corpus of recorded runs (JSONL request/response
pairs, several rounds each, all four protocols) replayed with `bench.replay_many`, one at a
time, 8 and 32 in flight, and on a local Ray cluster; and the peak memory of replaying 1k and
10k of them, each in a fresh child process.

The recordings are made with LocalProvider and the providers' real SDK clients: 20 runs (5 per
protocol, 3 rounds, calls that read, list, miss a file and name an unknown tool), then cycled
to the corpus size (each file its own copy on disk). The baseline is the floor of any replay:
reading and parsing every file with `json`, nothing run. Each replay is checked: every call is
as recorded (`same`; the unknown name's `missing`: a pair file
does not say the name was unknown).
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from . import _common as c

VARIANTS = [  # the calls of rounds 1 and 2; round 3 answers with text
    [[("workspace_read_file", {"path": "work/notes.md"})], [("workspace_list_files", {"path": "work"})]],
    [[("workspace_list_files", {"path": "work"}), ("workspace_read_file", {"path": "work/notes.md"})],
     [("workspace_read_file", {"path": "work/missing.md"})]],
    [[("no_such_tool", {"x": 1})], [("workspace_read_file", {"path": "work/notes.md", "offset": 2})]],
    [[("workspace_search_files", {"pattern": "dragon"})], [("workspace_list_files", {"path": "skills"})]],
    [[("workspace_read_file", {"path": "../outside.md"})], [("workspace_list_files", {"path": "output"})]],
]
TOOLS = ["builtin:workspace.read_file", "builtin:workspace.list_files", "builtin:workspace.search_files"]
IN_FLIGHT = (1, 8, 32)


def _adapters(provider: Any) -> dict[str, Any]:
    from toolbench.models import Anthropic, Gemini, OpenAIChat, OpenAIResponses

    return {"openai": OpenAIChat(provider.openai(), "gpt-4.1"),
            "openai-responses": OpenAIResponses(provider.openai(), "gpt-5-mini", store=False),
            "anthropic": Anthropic(provider.anthropic(), "claude-sonnet-4-5", max_tokens=512),
            "gemini": Gemini(provider.gemini(), "gemini-2.5-flash")}


def _answers(protocol: str, rounds: list[list[tuple[str, dict[str, Any]]]]) -> list[dict[str, Any]]:
    from toolbench.testing import LocalProvider

    return [*(LocalProvider.calls_body(protocol, calls, n=n, usage=(120, 30)) for n, calls in enumerate(rounds, 1)),
            LocalProvider.text_body(protocol, "done", n=len(rounds) + 1, usage=(160, 8))]


def _bench(folder: Path) -> Any:
    from toolbench import Profile, Workbench

    bench = Workbench(folder, Profile.default().edit(allow=TOOLS))
    (bench.workspace / "work" / "notes.md").write_text("a dragon sleeps\nunder the hill\n" * 20, encoding="utf-8")
    return bench


def record(folder: Path) -> list[bytes]:
    """The recordings, as the bytes of their JSONL pair files (through the real SDKs)."""
    from toolbench.testing import LocalProvider

    recordings = []
    with _bench(folder) as bench:
        for protocol in ("openai", "openai-responses", "anthropic", "gemini"):
            for rounds in VARIANTS:
                with LocalProvider(_answers(protocol, rounds)) as provider:
                    run = bench.invocation().run(_adapters(provider)[protocol], "Look around")
                if run.stop_reason != "final" or len(run.rounds) != 3:
                    raise AssertionError(f"a recording did not run its three rounds: {run!r}")
                lines = [json.dumps({"request": r.request, "response": r.response}) for r in run.rounds]
                recordings.append(("\n".join(lines) + "\n").encode())
    return recordings


def corpus(recordings: list[bytes], folder: Path, n: int) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = [folder / f"run-{i:05d}.jsonl" for i in range(n)]
    for i, path in enumerate(paths):
        path.write_bytes(recordings[i % len(recordings)])
    return paths


def _checked(replays: list[Any], n: int) -> int:
    calls = sum(len(r.diffs) for r in replays)
    # As recorded: `same`, or `missing` for the unknown name (a pair file does not say it was unknown).
    kept = [all(d.status in ("same", "missing") for d in r.diffs) for r in replays]
    if len(replays) != n or not all(kept):
        bad = next((r.report() for r, k in zip(replays, kept, strict=True) if not k), "")
        raise AssertionError(f"the replays did not all come back the same ({len(replays)} of {n}): {bad}")
    return calls


def peak(workspace: str, corpus_folder: str, n: int, loaded: bool = False) -> None:
    """In a child process: replay the first `n` files 8 in flight (or, `loaded`, only parse them
    all into one list first, as a loop that loads its corpus does); print the peak RSS in bytes."""
    paths = sorted(Path(corpus_folder).iterdir())[:n]
    with _bench(Path(workspace)) as bench:
        if loaded:
            held = [[json.loads(line) for line in p.read_bytes().splitlines()] for p in paths]
            assert len(held) == n
        else:
            _checked(bench.replay_many(iter(paths), concurrency=8), n)
    print(_high_water())


def _high_water() -> int:
    """This process's peak RSS in bytes: VmHWM on Linux (ru_maxrss keeps the forking parent's)."""
    status = Path("/proc/self/status")
    if status.exists():
        line = next(x for x in status.read_text().splitlines() if x.startswith("VmHWM:"))
        return int(line.split()[1]) * 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def _peak_in_child(workspace: Path, folder: Path, n: int, loaded: bool = False) -> int:
    code = f"from benchmarks.bench_replay import peak; peak({str(workspace)!r}, {str(folder)!r}, {n}, {loaded})"
    out = subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).resolve().parents[1], check=True,
                         capture_output=True, text=True, timeout=1800)
    return int(out.stdout.split()[-1])


def run(smoke: bool) -> c.Report:
    report = c.Report("replay", "replay_many over a recorded corpus: in flight, on Ray, and its memory", smoke)
    size, small = (100, 40) if smoke else (10_000, 1_000)
    with tempfile.TemporaryDirectory(prefix="tb-replay-") as tmp:
        root = Path(tmp)
        recordings = record(root / "recorder")
        paths = corpus(recordings, root / "corpus", size)
        started = time.perf_counter()
        parsed = sum(len([json.loads(line) for line in p.read_bytes().splitlines()]) for p in paths)
        floor = time.perf_counter() - started
        timings: dict[str, float] = {}
        with _bench(root / "replayer") as bench:
            for n in IN_FLIGHT:
                started = time.perf_counter()
                calls = _checked(bench.replay_many(paths, concurrency=n), size)
                timings[f"{n} in flight"] = time.perf_counter() - started
            if not smoke:  # a cluster's start is seconds: the smoke run leaves it to tests/runtime/test_on_ray.py
                timings.update(_on_ray(bench, paths, size))
        for what, seconds in timings.items():
            report.row(case=f"{size:,} runs ({calls:,} calls), {what}", toolbench=f"{size / seconds:,.0f} runs/s",
                       baseline=f"{size / floor:,.0f} runs/s", baseline_is=f"json.loads of every line ({parsed:,})",
                       ratio=f"{seconds / floor:.0f}x the parse")
        peaks = {n: _peak_in_child(root / f"peak-{n}", root / "corpus", n) for n in (small, size)}
        loaded = {n: _peak_in_child(root / f"loaded-{n}", root / "corpus", n, True) for n in (small, size)}
    per_run = (peaks[size] - peaks[small]) / (size - small)
    per_loaded = (loaded[size] - loaded[small]) / (size - small)
    file_size = sum(map(len, recordings)) / len(recordings)
    for n in (small, size):
        report.row(case=f"peak RSS, {n:,} runs replayed", toolbench=c.fmt_bytes(peaks[n]),
                   baseline=c.fmt_bytes(loaded[n]), baseline_is="the same corpus parsed into one list, nothing run",
                   ratio=f"{peaks[n] / loaded[n]:.2f}x")
    report.row(case=f"memory each run adds ({small:,} -> {size:,})", toolbench=c.fmt_bytes(per_run),
               baseline=c.fmt_bytes(per_loaded),
               baseline_is=f"the parsed recording (its file: {c.fmt_bytes(file_size)})",
               ratio=f"{per_run / per_loaded:.2f}x")
    report.note("what grows with the corpus is the list of replays returned (each call's recorded and replayed "
                "text), not the recordings: each file is read when its replay starts and dropped when it ends, and "
                "the bench keeps no replay's invocation (Replay.invocation_id names it)")
    report.note("the tools are local and quick, so a replay is CPU work under the GIL: in flight on one loop gains "
                "nothing; on Ray the driver reads and pickles every recording and the workers (each building its "
                "bench from the recipe first) share the same two cores with it")
    best = min(s / calls for w, s in timings.items() if "in flight" in w)
    report.target(f"replay_many time per recorded call in process, best of {', '.join(map(str, IN_FLIGHT))} in "
                  "flight, against the 1.2 ms a call measured when the issue was filed (5,000 calls in 6 s)",
                  best * 1000, 1.2, "ms", shown=f"{best * 1000:.2f} ms a call ({size / (best * calls):,.0f} runs/s)")
    report.target(f"memory each replayed run adds, against its recording's file size (streamed: well under it; "
                  f"loaded, {per_loaded / file_size:.1f}x it)", per_run / file_size, 0.5, "x",
                  shown=f"{c.fmt_bytes(per_run)} a run = {per_run / file_size:.2f}x its {c.fmt_bytes(file_size)} file")
    return report


def _on_ray(bench: Any, paths: list[Path], size: int) -> dict[str, float]:
    """Each in flight per worker; the first run pays the workers' start (their benches built)."""
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    timings = {}
    try:
        for n in (1, 8):
            started = time.perf_counter()
            _checked(bench.replay_many(paths, concurrency=n, executor="ray"), size)
            timings[f"Ray, 2 CPUs, {n} in flight a worker"] = time.perf_counter() - started
        return timings
    finally:
        ray.shutdown()


if __name__ == "__main__":
    raise SystemExit(c.cli(run))
