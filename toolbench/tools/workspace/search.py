"""`workspace.search_files`: find text (plain or regex) in workspace files, with context lines.

Files are read one at a time as bytes (`os.read`). `search_plan` says how to scan them: a file
holding none of the pattern's required literals is skipped undecoded; when no match can span
lines, only the lines holding one are decoded and checked; a pure-ASCII file is searched with
a bytes regex; anything else decodes the file and runs the str regex over it. All of these
find the same lines. Binaries (NUL in the first 8 KiB) and files over the size limit are
skipped. The scan stops as soon as one match more than `limit` is found, so `hasMore` costs
nothing extra.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import Any

from ...core.descriptors import ToolDescriptor
from ...core.errors import ToolError
from ...core.ids import ToolId
from ..base import BuiltinTool, ToolContext, ToolOutput
from .files import split_lines
from .paths import Workspace
from .search_plan import Plan, make_plan
from .walk import gitignore_spec, walk

DEFAULT_LIMIT, MAX_LIMIT = 20, 50
DEFAULT_CONTEXT, MAX_CONTEXT = 2, 5
PREVIEW_CHARS = 400

DESCRIPTOR = ToolDescriptor(
    id=ToolId.builtin("workspace.search_files"),
    description=(
        "Search workspace files for text. `query` is plain text (set `regex: true` for a Python regular "
        "expression); case-insensitive unless `case_sensitive: true`. Searches `path` (a folder or one file; "
        "default the whole workspace), optionally only files matching `glob` (e.g. `*.md`). Each hit is "
        "shown as `path:line: text` with `context_lines` around it (`path-line- text`)."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "Text to find (a regex when `regex` is true)."},
            "regex": {"type": "boolean", "description": "Treat `query` as a regular expression. Default false."},
            "case_sensitive": {"type": "boolean", "description": "Match case exactly. Default false."},
            "path": {"type": "string", "description": "Folder or file to search; omit for the whole workspace."},
            "glob": {"type": "string", "description": "Only files matching this pattern, e.g. `*.md`."},
            "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT,
                      "description": f"Most matching lines to return (default {DEFAULT_LIMIT}, max {MAX_LIMIT})."},
            "context_lines": {"type": "integer", "minimum": 0, "maximum": MAX_CONTEXT,
                              "description": f"Lines shown before and after each hit (default {DEFAULT_CONTEXT})."},
        },
        "required": ["query"],
        "additionalProperties": False,
    },
    read_only=True,
)


def _clip(line: str) -> str:
    line = line.rstrip("\r")
    return line if len(line) <= PREVIEW_CHARS else line[:PREVIEW_CHARS] + "..."


def search_files(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    ws = Workspace.of(ctx)
    query = args["query"]
    if query == "":
        raise ToolError("tool.invalid_arguments", "`query` is empty; give the text to search for.")
    regex, case_sensitive = args.get("regex", False), args.get("case_sensitive", False)
    limit, context = args.get("limit", DEFAULT_LIMIT), args.get("context_lines", DEFAULT_CONTEXT)
    try:
        plan = make_plan(query, regex, case_sensitive)
    except re.error as exc:
        raise ToolError("workspace.regex_invalid",
                        f"`query` is not a valid regular expression ({exc}); fix it, or search plain text "
                        "with `regex: false`.", structured={"query": query}) from exc
    res = ws.existing(args.get("path", ""))
    glob = args.get("glob")
    if res.real.is_dir():
        spec = None
        if glob:
            try:
                spec = gitignore_spec([glob.strip()])
            except (ValueError, TypeError) as exc:
                raise ToolError("workspace.glob_invalid", f"`glob` {glob!r} is not a valid pattern: {exc}.") from exc
        prefix = len(res.rel) + 1 if res.rel else 0
        targets: Iterator[tuple[str, str]] = ((e.rel, e.path) for e in walk(ws, res) if e.kind == "file"
                   and (spec is None or spec.match_file(e.rel[prefix:])))
    else:
        targets = iter([(res.rel, str(res.real))])  # a single-file target ignores `glob`
    max_bytes = ws.settings.max_file_bytes
    hits: list[tuple[str, list[str], list[int]]] = []  # (path, lines, matched line indexes)
    found = scanned = skipped = 0
    has_more = False
    for rel, host in targets:
        data = _read(host, max_bytes)
        if data is None:
            skipped += 1
            continue
        scanned += 1
        if data.find(b"\x00", 0, 8192) >= 0:
            skipped += 1
            continue
        matched, has_more = _scan(plan, data, limit - found)
        if matched:
            found += len(matched)
            hits.append((rel, split_lines(data.decode("utf-8", "replace")), matched))
        if has_more:
            break
    return _render(query, res.display, regex, case_sensitive, hits, found, has_more, context, scanned, skipped)


_FIRST_READ = 1 << 16  # most files are smaller: one read, no fstat


def _read(host: str, max_bytes: int) -> bytes | None:
    """The file's bytes; None when it cannot be read or is over `max_bytes`.

    os.open/os.read: io.open's buffered file object costs more than reading a small file.
    A read that comes back short reached the end of the file, so only a larger file pays
    for an fstat (and a 64 KiB request stays below malloc's mmap threshold)."""
    try:
        fd = os.open(host, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        want = min(_FIRST_READ, max_bytes + 1)
        data = os.read(fd, want)
        if len(data) < want:
            return data
        if len(data) > max_bytes:
            return None
        size = os.fstat(fd).st_size
        if size > max_bytes:
            return None
        data += os.read(fd, max(size + 1 - len(data), 1))
        if len(data) > size:  # the file grew since fstat: read the rest, as f.read() would
            parts = [data]
            while chunk := os.read(fd, 1 << 20):
                parts.append(chunk)
            data = b"".join(parts)
        return data if len(data) <= max_bytes else None
    except OSError:
        return None
    finally:
        os.close(fd)


def _scan(plan: Plan, data: bytes, room: int) -> tuple[list[int], bool]:
    """The 0-based lines of `data` that match (at most `room`), and whether one more matches."""
    if plan.needles and plan.needle_test_valid(data):
        hay = data.lower() if plan.fold else data
        if not any(n in hay for n in plan.needles):
            return [], False
        # Per-line checks pay off while candidate lines are few; dense ones go to one regex pass.
        if plan.line_local and (plan.literal_only or sum(hay.count(n) for n in plan.needles) <= _MAX_CANDIDATES):
            return _scan_lines(plan, data, hay, room)
    if plan.bytes_ok(data):
        return _scan_text(plan.bytes_pattern, data, b"\n", room)  # type: ignore[arg-type]
    return _scan_text(plan.pattern, data.decode("utf-8", "replace"), "\n", room)


_MAX_CANDIDATES = 64


def _scan_text(pattern: re.Pattern[Any], text: Any, nl: Any, room: int) -> tuple[list[int], bool]:
    """Run the regex over the whole text; each line counts once, the next search starts on the next line."""
    matched: list[int] = []
    pos, line_no, counted_to = 0, 0, 0
    while pos <= len(text):
        m = pattern.search(text, pos)
        if m is None:
            break
        line_no += text.count(nl, counted_to, m.start())
        counted_to = m.start()
        if len(matched) >= room:
            return matched, True
        matched.append(line_no)
        end = text.find(nl, m.start())
        if end < 0:
            break
        line_no += text.count(nl, counted_to, end + 1)
        pos = counted_to = end + 1
    return matched, False


def _scan_lines(plan: Plan, data: bytes, hay: bytes, room: int) -> tuple[list[int], bool]:
    """Check only the lines holding a needle (the plan says no match spans lines)."""
    matched: list[int] = []
    line_no, counted_to, pos = 0, 0, 0
    needles = plan.needles
    while True:
        at = min((i for i in (hay.find(n, pos) for n in needles) if i >= 0), default=-1)
        if at < 0:
            return matched, False
        start = hay.rfind(b"\n", 0, at) + 1
        end = hay.find(b"\n", at)
        if end < 0:
            end = len(hay)
        if plan.literal_only or plan.pattern.search(data[start:end].decode("utf-8", "replace")):
            line_no += hay.count(b"\n", counted_to, start)
            counted_to = start
            if len(matched) >= room:
                return matched, True
            matched.append(line_no)
        pos = end + 1


def _render(query: str, where: str, regex: bool, case_sensitive: bool, hits: list[tuple[str, list[str], list[int]]],
            found: int, has_more: bool, context: int, scanned: int, skipped: int) -> ToolOutput:
    mode = ("regex" if regex else "plain") + (", case-sensitive" if case_sensitive else ", case-insensitive")
    head = f"Search: {query!r} in {where} ({mode}): {found} matching line(s) in {len(hits)} file(s)"
    if has_more:
        head += f"; more matches exist, raise `limit` (max {MAX_LIMIT}) or narrow `path`/`glob`"
    out = [head]
    records = []
    for rel, lines, matched in hits:
        shown: set[int] = set()
        blocks: list[list[str]] = []
        for idx in matched:
            lo, hi = max(0, idx - context), min(len(lines) - 1, idx + context)
            if not blocks or lo > max(shown, default=-2) + 1:
                blocks.append([])
            for i in range(lo, hi + 1):
                if i in shown:
                    continue
                shown.add(i)
                sep = ":" if i in matched else "-"
                blocks[-1].append(f"{rel}{sep}{i + 1}{sep} {_clip(lines[i])}")
            records.append({"path": rel, "line": idx + 1, "text": _clip(lines[idx])})
        for block in blocks:
            out.append("--")
            out.extend(block)
    if not hits:
        out.append("No matches." + (f" ({skipped} binary or oversized file(s) skipped.)" if skipped else ""))
    return ToolOutput(content="\n".join(out), structured={
        "query": query, "path": where, "regex": regex, "caseSensitive": case_sensitive, "matches": records,
        "files": len(hits), "hasMore": has_more, "filesScanned": scanned, "filesSkipped": skipped})


TOOLS = (BuiltinTool(DESCRIPTOR, search_files),)
