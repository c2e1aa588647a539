"""Edit matching: `workspace.apply_patch` on 100 KB, 1 MB and 10 MB files, for each match strategy,
and the matcher on the pathological inputs of issue 15 at four sizes.

Per strategy: the edited block sits near the end of the file (the matcher scans everything
before it). Each sample is one real `apply_patch` call (read, match, write, version): the edit
swaps two blocks back and forth, so the file keeps its size and every call goes through the same
strategy. The matcher alone (`edit_match.apply_edit`) is shown too.

Pathological inputs (`PATHOLOGICAL`, the matcher alone, each at sizes s, 2s, 4s and 10s with 10s
about 1 MB; the smoke run uses a tenth of the sizes and of the old_string heights): dense
repeated lines with trailing whitespace and a 4,000-line old_string (a hit and a near miss),
YAML-like lines with a 200- and a 2,000-line old_string that only the indentation pass finds,
a CRLF file with a near-miss 4,000-line LF old_string, a 5,000-line old_string whose lines all
occur in the file (the precheck), a no-match that builds the closest-region hint, and an
indentation pass whose every window is rejected (tabs vs spaces). Each was quadratic before
issue 15; the targets: 10x the size costs at most 12x the time, and none takes 200 ms at 1 MB.
"""

from __future__ import annotations

from collections.abc import Callable

from . import _common as c

SIZES = (100_000, 1_000_000, 10_000_000)
SMOKE_SIZES = (20_000, 200_000)
STRATEGIES = ("exact", "line-endings", "trailing-whitespace", "indentation")
SCALES = (1, 2, 4, 10)  # the pathological inputs' sizes, as multiples of the first
BASE_SIZE, SMOKE_BASE_SIZE = 100_000, 10_000


def _case(strategy: str, size: int) -> tuple[str, list[tuple[str, str]]]:
    """The file text and the two (old, new) edits that swap its block back and forth."""
    body_line = "    total = compute(value, offset) + 1  # filler line\n"
    lines = [body_line.replace("offset", f"offset_{i}") for i in range(size // len(body_line))]
    a, b = ("def alpha():", "    return 1"), ("def beta():", "    return 2")
    if strategy == "exact":
        block, edits = "\n".join(a) + "\n", [("\n".join(a), "\n".join(b)), ("\n".join(b), "\n".join(a))]
    elif strategy == "line-endings":  # the file is CRLF throughout (converted below), old_string LF
        block = "\n".join(a) + "\n"
        edits = [("\n".join(a), "\n".join(b)), ("\n".join(b), "\n".join(a))]
    elif strategy == "trailing-whitespace":
        block = "  \n".join(a) + "  \n"
        edits = [("\n".join(a), "  \n".join(b) + "  "), ("\n".join(b), "  \n".join(a) + "  ")]
    else:  # indentation: the file has the block four spaces deeper than old_string
        block = "".join(f"    {ln}\n" for ln in a)
        edits = [("\n".join(a), "\n".join(b)), ("\n".join(b), "\n".join(a))]
    eol = "\r\n" if strategy == "line-endings" else "\n"
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
                                     max_calls_per_run=1_000_000, max_rounds=1_000_000)
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
    _pathological(report, smoke)
    return report


# --- the pathological inputs of issue 15 -------------------------------------------------------------

Case = tuple[str, str, str]  # file text, old_string, new_string


def _dense(size: int, scale: float, hit: bool) -> Case:
    """Repeated lines with trailing whitespace; old_string is 4,000 of them (without it) and one
    other line, which ends the file's last stretch (a hit) or starts the file (a near miss)."""
    line, height = "    item = value  \n", int(4_000 * scale)
    count = size // len(line)
    if hit:
        text = line * (count - height) + line * (height - 1) + "    item = other  \n"
    else:
        text = "    item = other  \n" + line * (count - 1)
    old = "    item = value\n" * (height - 1) + "    item = other\n"
    return text, old, "    item = changed\n"


_ITEM = ("- name: item{i}\n  kind: service\n  description: a generic service entry here\n  enabled: true\n"
         "  ports:\n    - 80\n    - 443\n  labels:\n    app: web\n    tier: frontend\n")


def _yaml(size: int, scale: float, height: int) -> Case:
    """YAML-like lines (most of them repeated every ten lines); old_string is a stretch near the
    end indented two spaces deeper than the file's, so only the indentation pass finds it."""
    items: list[str] = []
    total = 0
    while total < size:
        items.append(_ITEM.format(i=len(items)))
        total += len(items[-1])
    lines = "".join(items).splitlines(keepends=True)
    height = int(height * scale)
    start = len(lines) - height - 37
    start -= start % 10
    old = "".join("  " + line if line.strip() else line for line in lines[start : start + height])
    return "".join(lines), old, old.replace("enabled: true", "enabled: false")


def _crlf(size: int, scale: float) -> Case:
    """A CRLF file of one repeated line; old_string, LF, is 4,000 of them and one that differs."""
    line, height = "x = f(a, b);\r\n", int(4_000 * scale)
    return line * (size // len(line)), "x = f(a, b);\n" * (height - 1) + "x = f(a, c);\n", "y\n"


def _precheck(size: int, scale: float) -> Case:
    """5,000 distinct lines, every one in the file (at its end, indented): each trimmed line of
    old_string is a file line, and only the indentation pass finds the block."""
    block = "".join(f"f{i}=c({i})\n" for i in range(int(5_000 * scale)))
    filler = "    total = compute(value, offset) + 1  # filler line\n"
    indented = "".join("    " + line for line in block.splitlines(keepends=True))
    text = filler * max(0, (size - len(indented)) // len(filler)) + indented
    return text, block, block.replace("f17=", "g17=")


def _no_match(size: int, scale: float) -> Case:
    """30 lines of the file, shifted and with one line changed: no pass matches, and the error
    shows the closest region of the file."""
    body = [f"    total_{i} = compute(value, offset_{i % 97}) + {i % 13}\n" for i in range(size // 48)]
    k = len(body) * 3 // 4
    block = body[k : k + 30]
    block[14] = "    this line is not in the file\n"
    return "".join(body), "".join(line[2:] for line in block), "x\n"


def _tabs(size: int, scale: float) -> Case:
    """A tab-indented file of one repeated line; old_string is 2,000 of them space-indented, so
    every line starts an indentation window that its shift then rejects."""
    return "\tvalue = 1\n" * (size // 11), "  value = 1\n" * int(2_000 * scale), "x\n"


PATHOLOGICAL: dict[str, Callable[[int, float], Case]] = {
    "dense lines, trailing ws, 4,000-line old: hit": lambda size, scale: _dense(size, scale, True),
    "dense lines, trailing ws, 4,000-line old: near miss": lambda size, scale: _dense(size, scale, False),
    "YAML, 200-line old, indentation": lambda size, scale: _yaml(size, scale, 200),
    "YAML, 2,000-line old, indentation": lambda size, scale: _yaml(size, scale, 2_000),
    "CRLF, 4,000-line near-miss LF old": _crlf,
    "precheck: 5,000-line old, all lines in the file": _precheck,
    "no match: the closest-region hint": _no_match,
    "indentation: every window rejected (tabs)": _tabs,
}


def _outcome(apply_edit: Callable[..., object], case: Case) -> str:
    from toolbench.core.errors import ToolError

    try:
        return str(apply_edit(*case).strategy)  # type: ignore[attr-defined]
    except ToolError as exc:
        return exc.code.removeprefix("workspace.")


def _pathological(report: c.Report, smoke: bool) -> None:
    """Each pathological input at sizes s, 2s, 4s, 10s (the matcher alone)."""
    from toolbench.tools.workspace.edit_match import apply_edit

    base, scale = (SMOKE_BASE_SIZE, 0.1) if smoke else (BASE_SIZE, 1.0)
    repeats = 3 if smoke else 5
    worst_ratio = worst_time = 0.0
    for name, make in PATHOLOGICAL.items():
        cases = [make(base * k, scale) for k in SCALES]

        def timed(case: Case) -> Callable[[], None]:
            def call() -> None:
                _outcome(apply_edit, case)

            return call

        samples = c.interleaved({str(k): timed(case) for k, case in zip(SCALES, cases, strict=True)},
                                repeats=repeats)
        times = [c.median(samples[str(k)]) for k in SCALES]
        ratio = times[-1] / times[0]
        worst_ratio, worst_time = max(worst_ratio, ratio), max(worst_time, times[-1])
        report.row(strategy=f"pathological: {name}", size=" / ".join(c.fmt_bytes(len(case[0])) for case in cases),
                   matcher=" / ".join(c.fmt_seconds(t) for t in times), growth=f"{ratio:.1f}x",
                   used=_outcome(apply_edit, cases[-1]))
    report.target(f"pathological inputs: time growth for {SCALES[-1]}x the size (worst input)", worst_ratio,
                  1.2 * SCALES[-1], "x", shown=f"{worst_ratio:.1f}x")
    largest = base * SCALES[-1]
    report.target(f"pathological inputs at {c.fmt_bytes(largest)} (worst input)", worst_time * 1e3, 200, "ms",
                  shown=c.fmt_seconds(worst_time))


if __name__ == "__main__":
    raise SystemExit(c.cli(run))
