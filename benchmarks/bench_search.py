"""Search: `workspace.search_files` against GNU `grep -rn` on the same generated tree.

Full size: 10,000 files, 100 MB (smoke: 300 files, 3 MB) of code-like lines, one file in ten
holding non-ASCII text. The tree is generated once into the temp folder and reused. Each
query matches a few dozen lines (under the tool's `limit`, so both sides scan the whole
tree); grep gets the same semantics (case-insensitive unless said, `-F` for plain text, `-P`
for regular expressions).
"""

from __future__ import annotations

import random
import shutil
import subprocess
import tempfile
from pathlib import Path

from . import _common as c

FULL = (10_000, 100_000_000)
SMOKE = (300, 3_000_000)
DIRS = 100
HITS = 30  # files that get each injected line

_WORDS = ("value", "result", "config", "items", "count", "return", "import", "self", "data", "index", "buffer",
          "error", "handle", "request", "render", "stream", "token", "parser", "window", "cache", "entry", "table",
          "print", "format", "update", "delete", "insert", "select", "apply", "merge", "split", "join", "ok",
          "if", "else", "for", "while", "lambda", "yield", "async", "await")
_UNICODE_LINE = "    # naïve café größe 数据 — non-ASCII text, in one file in ten\n"
_INJECTED = (
    "    def parse_config_handler(self, value):  # dispatch entry",
    "    # TODO(bench) remove the fallback once 2024-05-17 has passed",
)
# (label, query, regex, case_sensitive, grep flags)
QUERIES = (
    ("plain", "parse_config_handler", False, False, ["-i", "-F"]),
    ("plain, case-sensitive", "parse_config_handler", False, True, ["-F"]),
    ("regex, literal", r"def \w+_handler\(", True, False, ["-i", "-P"]),
    ("regex, alternation", r"(TODO|FIXME)\(\w+\)", True, False, ["-i", "-P"]),
    ("regex, no literal", r"\b\d{4}[-/]\d{2}[-/]\d{2}\b", True, False, ["-i", "-P"]),
)


def make_tree(files: int, total_bytes: int) -> Path:
    """The generated workspace (reused when it exists): `work/src/dNN/fNNNNN.py`, code-like lines."""
    root = Path(tempfile.gettempdir()) / f"toolbench-bench-search-v2-{files}-{total_bytes}"
    marker = root / ".complete"
    if marker.exists():
        return root
    shutil.rmtree(root, ignore_errors=True)
    rng = random.Random(8)
    pool_lines = []
    for i in range(40_000):
        indent = " " * (4 * rng.randrange(0, 4))
        words = " ".join(rng.choice(_WORDS) for _ in range(rng.randrange(3, 12)))
        pool_lines.append(f"{indent}{words} = {i} + len({rng.choice(_WORDS)})\n")
    pool = "".join(pool_lines)
    per_file = total_bytes // files
    hit_every = max(1, files // HITS)
    for n in range(files):
        folder = root / "work" / "src" / f"d{n % DIRS:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        start = pool.find("\n", rng.randrange(0, len(pool) - per_file * 2)) + 1
        text = pool[start : start + per_file]
        text = text[: text.rfind("\n") + 1]
        if n % 10 == 3:
            text = _UNICODE_LINE + text
        if n % hit_every == 0:
            cut = text.find("\n", len(text) // 2) + 1
            text = text[:cut] + "\n".join(_INJECTED) + "\n" + text[cut:]
        (folder / f"f{n:05d}.py").write_text(text, encoding="utf-8")
    marker.write_text("ok\n")
    return root


def run(smoke: bool) -> c.Report:
    """Search: workspace.search_files against grep -rn."""
    from toolbench import Profile, Workbench

    files, size = SMOKE if smoke else FULL
    report = c.Report("search", "workspace.search_files against GNU grep -rn", smoke)
    root = make_tree(files, size)
    grep = shutil.which("grep")
    report.note(f"tree: {files} files, {c.fmt_bytes(size)}; grep: {grep}")
    profile = Profile.default().edit(allow=["builtin:workspace.search_files"], max_calls_per_run=100_000,
                                     max_rounds=100_000)
    repeats = 3 if smoke else 5
    worst_plain = worst_regex = 0.0
    with Workbench(root, profile) as bench:
        inv = bench.invocation()
        for label, query, regex, case_sensitive, flags in QUERIES:
            args = {"query": query, "regex": regex, "case_sensitive": case_sensitive, "limit": 50, "path": "work"}
            command = [grep or "grep", "-rn", *flags, "--", query, str(root / "work")]
            counts: dict[str, int] = {}

            def tool(args: dict[str, object] = args, counts: dict[str, int] = counts) -> None:
                result = inv.call("workspace_search_files", args)
                assert not result.is_error, result.content
                counts["tool"] = len(result.structured["matches"])

            def run_grep(command: list[str] = command, counts: dict[str, int] = counts) -> None:
                out = subprocess.run(command, capture_output=True, check=False)
                counts["grep"] = out.stdout.count(b"\n")

            samples = c.interleaved({"toolbench": tool, "grep": run_grep}, repeats=repeats)
            r = c.ratio(samples, "toolbench", "grep")
            if regex:
                worst_regex = max(worst_regex, r)
            else:
                worst_plain = max(worst_plain, r)
            report.row(query=label, pattern=query, toolbench=c.fmt_seconds(c.median(samples["toolbench"])),
                       grep=c.fmt_seconds(c.median(samples["grep"])), ratio=f"{r:.2f}x",
                       hits=f"{counts['tool']}/{counts['grep']}")
    report.target("plain search vs grep -rn (worst query)", worst_plain, 3.0, "x", shown=f"{worst_plain:.2f}x")
    report.target("regex search vs grep -rn (worst query)", worst_regex, 3.0, "x", shown=f"{worst_regex:.2f}x")
    return report


if __name__ == "__main__":
    raise SystemExit(c.cli(run))
