"""Edit matching: `workspace.apply_patch` on 100 KB, 1 MB and 10 MB files, for each match strategy.

The edited block sits near the end of the file (the matcher scans everything before it). Each
sample is one real `apply_patch` call (read, match, write, version): the edit swaps two blocks
back and forth, so the file keeps its size and every call goes through the same strategy. The
matcher alone (`edit_match.apply_edit`) is shown too.
"""

from __future__ import annotations

from . import _common as c

SIZES = (100_000, 1_000_000, 10_000_000)
SMOKE_SIZES = (20_000, 200_000)
STRATEGIES = ("exact", "line_endings", "trailing_whitespace", "indentation")


def _case(strategy: str, size: int) -> tuple[str, list[tuple[str, str]]]:
    """The file text and the two (old, new) edits that swap its block back and forth."""
    body_line = "    total = compute(value, offset) + 1  # filler line\n"
    lines = [body_line.replace("offset", f"offset_{i}") for i in range(size // len(body_line))]
    a, b = ("def alpha():", "    return 1"), ("def beta():", "    return 2")
    if strategy == "exact":
        block, edits = "\n".join(a) + "\n", [("\n".join(a), "\n".join(b)), ("\n".join(b), "\n".join(a))]
    elif strategy == "line_endings":  # the file is CRLF throughout (converted below), old_string LF
        block = "\n".join(a) + "\n"
        edits = [("\n".join(a), "\n".join(b)), ("\n".join(b), "\n".join(a))]
    elif strategy == "trailing_whitespace":
        block = "  \n".join(a) + "  \n"
        edits = [("\n".join(a), "  \n".join(b) + "  "), ("\n".join(b), "  \n".join(a) + "  ")]
    else:  # indentation: the file has the block four spaces deeper than old_string
        block = "".join(f"    {ln}\n" for ln in a)
        edits = [("\n".join(a), "\n".join(b)), ("\n".join(b), "\n".join(a))]
    eol = "\r\n" if strategy == "line_endings" else "\n"
    text = "".join(lines[:-20]) + block + "".join(lines[-20:])
    return text.replace("\n", eol) if eol != "\n" else text, edits


def run(smoke: bool) -> c.Report:
    """Edit matching: apply_patch per size and strategy."""
    from toolbench import Profile, Workbench
    from toolbench.tools.workspace.edit_match import apply_edit

    sizes = SMOKE_SIZES if smoke else SIZES
    repeats = 3 if smoke else 5
    report = c.Report("edit", "apply_patch per file size and match strategy", smoke)
    profile = Profile.default().edit(allow=["builtin:workspace.write_file", "builtin:workspace.apply_patch"],
                                     max_calls_per_run=1_000_000)
    medians: dict[tuple[str, int], float] = {}
    with Workbench(None, profile) as bench:
        inv = bench.invocation()
        for strategy in STRATEGIES:
            for size in sizes:
                text, edits = _case(strategy, size)
                path = f"work/edit-{strategy}-{size}.py"
                created = inv.call("workspace_write_file", {"path": path, "content": text})
                assert not created.is_error, created.content
                turn = iter(range(10**9))
                seen: set[str] = set()

                def patch(path: str = path, edits: list[tuple[str, str]] = edits, turn=turn, seen=seen) -> None:
                    old, new = edits[next(turn) % 2]
                    result = inv.call("workspace_apply_patch", {"path": path, "old_string": old, "new_string": new})
                    assert not result.is_error, result.content
                    seen.add(result.structured["matchStrategy"])

                def matcher(text: str = text, old: str = edits[0][0], new: str = edits[0][1]) -> None:
                    apply_edit(text, old, new)

                samples = c.interleaved({"apply_patch": patch, "matcher": matcher}, repeats=repeats)
                medians[(strategy, size)] = c.median(samples["apply_patch"])
                report.row(strategy=strategy, size=c.fmt_bytes(size),
                           apply_patch=c.fmt_seconds(medians[(strategy, size)]),
                           matcher=c.fmt_seconds(c.median(samples["matcher"])), used=",".join(sorted(seen)))
    growth = max(medians[(s, sizes[-1])] / medians[(s, sizes[-2])] for s in STRATEGIES)
    step = sizes[-1] / sizes[-2]
    report.target(f"time growth for {step:.0f}x the size (worst strategy)", growth, 1.2 * step, "x",
                  shown=f"{growth:.1f}x")
    at_1mb = max(medians[(s, 1_000_000)] for s in STRATEGIES) if 1_000_000 in sizes else None
    if at_1mb is not None:
        report.target("apply_patch at 1 MB (worst strategy)", at_1mb * 1e3, 100, "ms", shown=c.fmt_seconds(at_1mb))
    return report


if __name__ == "__main__":
    raise SystemExit(c.cli(run))
