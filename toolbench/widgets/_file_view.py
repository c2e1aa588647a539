"""The result viewer's file logic, without widgets: loading a `tool-results/` file (bounded),
its pages, line → page, case-insensitive search, where the model's preview ends, and the rows
the file view draws (`Rows`)."""

from __future__ import annotations

import errno
import html
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

PAGE_LINES = 200
MAX_FILE_BYTES = 64 * 1024 * 1024  # a tool-results/ file can be tens of MB; the viewer holds at most this
MAX_HITS = 10_000
_PROBE_CHARS = 80  # how much of the file's start is looked for in the content
_MAX_CANDIDATES = 20
PREVIEW_END_TEXT = "── the model's preview ends here ──"


@dataclass(frozen=True, slots=True)
class FileText:
    """A text file's lines as loaded: at most `MAX_FILE_BYTES` of its `size` bytes (`cut`)."""

    lines: tuple[str, ...]
    size: int
    cut: bool = False


@dataclass(frozen=True, slots=True)
class Page:
    """Page `number` of `pages`: lines `first`–`last` (1-based) of `total`."""

    number: int
    pages: int
    first: int
    last: int
    total: int


@dataclass(frozen=True, slots=True)
class Hits:
    """The numbers of the lines holding a search's text, at most a limit of them (`capped`)."""

    lines: tuple[int, ...] = ()
    capped: bool = False


@dataclass(frozen=True, slots=True)
class PreviewEnd:
    """The content's preview covers the file up to `line`; `partial` when it stops inside it."""

    line: int
    partial: bool


def split_lines(text: str) -> tuple[str, ...]:
    """Lines at `\\n` only (as the model's read tool numbers them); a final newline ends a line."""
    lines = text.split("\n")
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    return tuple(lines)


def read_in_workspace(root: Path, relative: str, limit: int) -> bytes:
    """At most `limit` + 1 bytes of the regular file `relative` under `root`.

    What a result names is data from a tool: a path that leaves the workspace (`..`, an
    absolute path, a symlink out) or a file that is not regular (a FIFO would block the
    kernel) raises OSError instead of being read."""
    base = root.resolve()
    full = (base / relative).resolve()
    if not full.is_relative_to(base):
        raise OSError(errno.EACCES, "outside the workspace")
    fd = os.open(full, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        chunks: list[bytes] = []
        left = limit + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def load_file(root: Path, relative: str, limit: int = MAX_FILE_BYTES) -> FileText:
    """The lines of the file `relative` under `root`, reading at most `limit` bytes, decoded
    as UTF-8 (bad bytes replaced). Raises OSError when it cannot (or may not) be read."""
    data = read_in_workspace(root, relative, limit)
    size = max((root / relative).stat().st_size, len(data))
    cut = len(data) > limit
    return FileText(split_lines(data[:limit].decode("utf-8", errors="replace")), size, cut)


def page_count(total: int, size: int = PAGE_LINES) -> int:
    return max(1, -(-total // size))


def page_of_line(line: int, size: int = PAGE_LINES) -> int:
    """The page holding line `line` (1-based)."""
    return (max(1, line) - 1) // size + 1


def page_of(total: int, page: int, size: int = PAGE_LINES) -> Page:
    """Page `page` of a file of `total` lines, clamped to the pages there are."""
    pages = page_count(total, size)
    number = min(max(page, 1), pages)
    first = (number - 1) * size + 1
    last = min(total, number * size)
    return Page(number, pages, first if last else 0, last, total)


def fold(lines: tuple[str, ...]) -> str:
    """The text to search: casefolding keeps every newline, so line numbers stay aligned."""
    return "\n".join(lines).casefold()


def search_in(folded: str, query: str, limit: int = MAX_HITS) -> Hits:
    """The lines of `folded` (from `fold`) holding `query`, case-insensitively, each once.

    Linear: one `str.find` per hit line and one newline count between hits."""
    needle = query.casefold()
    if not needle:
        return Hits()
    found: list[int] = []
    line, start = 1, 0  # `start` is where line `line` begins
    while True:
        at = folded.find(needle, start)
        if at == -1:
            return Hits(tuple(found))
        if len(found) == limit:
            return Hits(tuple(found), capped=True)
        line += folded.count("\n", start, at)
        found.append(line)
        end = folded.find("\n", at)
        if end == -1:
            return Hits(tuple(found))
        line, start = line + 1, end + 1


def preview_end(content: str, lines: tuple[str, ...]) -> PreviewEnd | None:
    """How far into the file the preview at the end of `content` reaches, or None when the
    content holds no preview of it. The file may have long lines broken where the preview
    has none (the runtime wraps lines over 3,000 characters); that is allowed for."""
    head = "\n".join(lines[:3])[:_PROBE_CHARS]
    if not head:
        return None
    at = content.find(head)
    for _ in range(_MAX_CANDIDATES):
        if at == -1:
            return None
        end = _covered(content, at, lines)
        if end is not None:
            return end
        at = content.find(head, at + 1)
    return None


def _covered(content: str, at: int, lines: tuple[str, ...]) -> PreviewEnd | None:
    """The end of the preview `content[at:]` in `lines`, if all of it is the file's start."""
    n = len(content)
    for number, line in enumerate(lines, 1):
        rest = n - at
        if rest <= len(line):
            return PreviewEnd(number, rest < len(line)) if content.startswith(line[:rest], at) else None
        if not content.startswith(line, at):
            return None
        at += len(line)
        if content[at] == "\n":
            at += 1  # else the file broke a long line here
        elif not line:
            return None  # an empty line cannot be a long line's break: each step must move on
        if at == n:
            return PreviewEnd(number, False)
    return None


def page_label(page: Page) -> str:
    if not page.total:
        return "the file is empty"
    return f"page {page.number:,} of {page.pages:,} · lines {page.first:,}–{page.last:,} of {page.total:,}"


def hits_label(hits: Hits, index: int | None) -> str:
    if not hits.lines:
        return "no hits"
    count = f"{len(hits.lines):,}{'+' if hits.capped else ''}"
    noun = "hit" if count == "1" else "hits"
    return f"{index + 1:,} of {count} {noun}" if index is not None else f"{count} {noun}"


MAX_ROW_CHARS = 5_000  # of one line drawn; the rest is counted, and the model's read tool pages it


@dataclass(frozen=True, slots=True)
class Rows:
    """What the file view draws: one row per line, plus a separator row after the line where
    the model's preview ends. Rows count from 0; lines from 1. Every rule of how a row looks
    lives here; the browser only lays rows out (static/file_view.js)."""

    lines: tuple[str, ...] = ()
    preview: PreviewEnd | None = None
    query: str = ""
    hits: frozenset[int] = frozenset()
    current: int | None = None
    marked: int | None = None

    @property
    def count(self) -> int:
        return len(self.lines) + (self.preview is not None and bool(self.lines))

    def row_of(self, line: int) -> int:
        """The row showing line `line`."""
        line = min(max(line, 1), max(len(self.lines), 1))
        return line - 1 + (self.preview is not None and line > self.preview.line)

    def line_of(self, row: int) -> int:
        """The line shown at row `row` (the separator belongs to the line before it)."""
        after = self.preview is not None and row > self.preview.line - 1
        return min(max(row + 1 - after, 1), max(len(self.lines), 1))

    def html(self, first: int, last: int) -> list[str]:
        """The HTML of rows `first` up to (not including) `last`."""
        pattern = re.compile(re.escape(self.query), re.IGNORECASE) if self.query else None
        return [self._row(row, pattern) for row in range(max(first, 0), min(last, self.count))]

    def page_html(self, page: Page) -> str:
        """The rows of lines `page.first`–`page.last`, as one block (what a page shows)."""
        if not page.total:
            return ""
        rows = self.html(self.row_of(page.first), self.row_of(page.last) + 1)
        return '<pre class="tb-pre tb-file-text">' + "\n".join(rows) + "</pre>"

    def _row(self, row: int, pattern: re.Pattern[str] | None) -> str:
        preview = self.preview
        if preview is not None and row == preview.line:
            where = f" (partway through line {preview.line:,})" if preview.partial else ""
            return f"<span class='tb-preview-end'>{html.escape(PREVIEW_END_TEXT)}{where}</span>"
        number = self.line_of(row)
        line, more = self.lines[number - 1], ""
        if len(line) > MAX_ROW_CHARS:
            left = len(line) - MAX_ROW_CHARS
            line, more = line[:MAX_ROW_CHARS], f"<span class='tb-muted'> … {left:,} more characters</span>"
        body = _highlight(line, pattern) if number in self.hits and pattern is not None else html.escape(line)
        classes = " ".join(c for c, on in (("tb-hit-current", number == self.current),
                                           ("tb-line-mark tb-file-mark", number == self.marked)) if on)
        if classes:
            body = f"<span class='{classes}'>{body}</span>"
        return f"<span class='tb-line-no'>{number:>7}</span>  {body}{more}"


def _highlight(line: str, pattern: re.Pattern[str]) -> str:
    parts, start = [], 0
    for match in pattern.finditer(line):
        parts += [html.escape(line[start:match.start()]), f"<mark>{html.escape(match.group())}</mark>"]
        start = match.end()
    if not parts:  # a casefold-only match (ß ~ ss): mark the whole line
        return f"<mark>{html.escape(line)}</mark>"
    return "".join([*parts, html.escape(line[start:])])
