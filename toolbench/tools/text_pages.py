"""Numbered line ranges of a text under a character budget (chat messages, world-info entries).

Line numbers are 1-based. `line_count` needs `start_line`; `start_line` past the last line is
an error with the given code and the valid range.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from ..core.errors import ToolError

NUMBERED_WIDTH: Final = 6
LINE_RANGE_SCHEMA: Final[dict[str, Any]] = {
    "start_line": {"type": "integer", "minimum": 1, "description": "First line to return (1-based)."},
    "line_count": {"type": "integer", "minimum": 1,
                   "description": "How many lines to return; needs `start_line`."},
}


@dataclass(frozen=True, slots=True)
class Page:
    """Lines `start`..`end` (1-based, inclusive) of `total`, numbered; `end < start` when empty.

    `cut` is set when line `start` alone was longer than the budget and was shortened."""

    text: str
    start: int
    end: int
    total: int
    chars: int
    cut: bool = False

    @property
    def complete(self) -> bool:
        return self.end >= self.total and not self.cut


def line_range(item: dict[str, Any], where: str) -> tuple[int, int | None]:
    """(start_line, line_count) of a request; `tool.invalid_arguments` for a count without a start."""
    if "line_count" in item and "start_line" not in item:
        raise ToolError("tool.invalid_arguments",
                        f"{where}: `line_count` needs `start_line`; add `start_line` (1 is the first line).")
    return item.get("start_line", 1), item.get("line_count")


def check_start(lines: list[str], start: int, *, code: str, what: str) -> None:
    """`code` when `start` lies past the last line (a text with no lines accepts 1 only)."""
    total = len(lines)
    if start > max(total, 1):
        valid = f"1 to {total}" if total else "1 (it is empty)"
        raise ToolError(code, f"{what} has {total} lines; `start_line` {start} is past the end. "
                        f"Use a start_line from {valid}.", structured={"totalLines": total, "startLine": start})


def page(lines: list[str], start: int, count: int | None, budget: int) -> Page:
    """Numbered lines from `start`, at most `count`, within `budget` characters of line text.

    The first line is always returned (shortened to the budget if it alone is longer), so a
    read never stalls."""
    total = len(lines)
    last = total if count is None else min(total, start - 1 + count)
    out: list[str] = []
    used = 0
    end = start - 1
    cut = False
    for number in range(start, last + 1):
        line = lines[number - 1]
        if out and used + len(line) > budget:
            break
        if not out and len(line) > budget:
            line, cut = line[:budget], True
        out.append(f"{number:>{NUMBERED_WIDTH}}\t{line}")
        used += len(line) + 1
        end = number
        if cut:
            break
    return Page(text="\n".join(out), start=start, end=end, total=total, chars=used, cut=cut)


@dataclass(frozen=True, slots=True)
class Request:
    """One text to read: `label` heads its block, `name` names it in notes (`message #3`), and
    `resume` is the JSON members that address it again (`"index": 3`)."""

    label: str
    name: str
    resume: str
    lines: list[str]
    start: int = 1
    count: int | None = None


def read_many(requests: list[Request], budget: int, call: str) -> tuple[str, list[Page], bool]:
    """The blocks of several reads sharing one character budget: (content, pages read, capped).

    A text that does not fit once something was read is left for the next call (and named),
    rather than cut; a read that stops early says where to continue."""
    blocks: list[str] = []
    pages: list[Page] = []
    left = budget
    capped = False
    for position, req in enumerate(requests):
        if pages and (left <= 0 or (req.lines and len(req.lines[req.start - 1]) > left)):
            capped = True
            rest = ", ".join(r.name for r in requests[position:])
            blocks.append(f"[per-call cap of {budget} characters reached; not read: {rest}. "
                          f"Read them with another `{call}` call.]")
            break
        p = page(req.lines, req.start, req.count, left)
        left -= p.chars
        parts = [f"{req.label} · " + (f"lines {p.start}-{p.end} of {p.total}" if p.total else "empty")]
        if p.total:
            parts.append(p.text)
        wanted_end = p.total if req.count is None else min(p.total, req.start - 1 + req.count)
        if p.cut:
            capped = True
            parts.append(f"[line {p.start} is longer than the per-call cap of {budget} characters; only its "
                         f"first {p.chars - 1} characters are shown.]")
        elif p.end < wanted_end:
            capped = True
            parts.append(f"[per-call cap of {budget} characters reached: {req.name} stopped at line {p.end}; "
                         f"continue with {{{req.resume}, \"start_line\": {p.end + 1}}}.]")
        elif p.end < p.total:
            rest = f"line {p.total}" if p.end + 1 == p.total else f"lines {p.end + 1}-{p.total}"
            parts.append(f"[{req.name} continues: {rest} not shown.]")
        blocks.append("\n".join(parts))
        pages.append(p)
    return "\n\n".join(blocks), pages, capped


def page_json(p: Page) -> dict[str, Any]:
    return {"startLine": p.start, "endLine": p.end, "totalLines": p.total, "cut": p.cut}
