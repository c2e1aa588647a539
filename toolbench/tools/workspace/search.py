"""`workspace.search_files`: find text (plain or regex) in workspace files, with context lines.

Files are read one at a time as bytes; a file is decoded only when a cheap byte-level test
says it may match (a substring test for plain text, a bytes regex for ASCII case-insensitive
text). Binaries (NUL in the first 8 KiB) and files over the size limit are skipped. The scan
stops as soon as one match more than `limit` is found, so `hasMore` costs nothing extra.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import Any

import pathspec

from ...core.descriptors import ToolDescriptor
from ...core.errors import ToolError
from ...core.ids import ToolId
from ..base import BuiltinTool, ToolContext, ToolOutput
from .files import split_lines
from .paths import Workspace
from .walk import walk

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


def _matchers(query: str, regex: bool, case_sensitive: bool) -> tuple[re.Pattern[str], Callable[[bytes], Any] | None]:
    flags = re.MULTILINE | (0 if case_sensitive else re.IGNORECASE)
    if regex:
        try:
            return re.compile(query, flags), None
        except re.error as exc:
            raise ToolError("workspace.regex_invalid",
                            f"`query` is not a valid regular expression ({exc}); fix it, or search plain text "
                            "with `regex: false`.", structured={"query": query}) from exc
    pattern = re.compile(re.escape(query), flags)
    if case_sensitive:
        needle = query.encode("utf-8")
        return pattern, lambda data: needle in data
    if query.isascii():
        # bytes.lower() folds ASCII only, which is exactly what an ASCII query needs; it runs
        # at memory speed, far faster than an IGNORECASE regex over the bytes.
        lowered = query.lower().encode("ascii")
        return pattern, lambda data: lowered in data.lower()
    return pattern, None


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
    pattern, prefilter = _matchers(query, regex, case_sensitive)
    res = ws.existing(args.get("path", ""))
    glob = args.get("glob")
    if res.real.is_dir():
        spec = None
        if glob:
            try:
                spec = pathspec.PathSpec.from_lines("gitignore", [glob.strip()])
            except (ValueError, TypeError) as exc:
                raise ToolError("workspace.glob_invalid", f"`glob` {glob!r} is not a valid pattern: {exc}.") from exc
        prefix = len(res.rel) + 1 if res.rel else 0
        targets = ((e.rel, e.path) for e in walk(ws, res) if e.kind == "file"
                   and (spec is None or spec.match_file(e.rel[prefix:])))
    else:
        targets = iter([(res.rel, str(res.real))])  # a single-file target ignores `glob`
    max_bytes = ws.settings.max_file_bytes
    hits: list[tuple[str, list[str], list[int]]] = []  # (path, lines, matched line indexes)
    found = scanned = skipped = 0
    has_more = False
    for rel, host in targets:
        try:
            with open(host, "rb") as f:
                # read() sizes its buffer from fstat; read(n) would allocate n bytes for every file.
                if os.fstat(f.fileno()).st_size > max_bytes:
                    skipped += 1
                    continue
                data = f.read()
        except OSError:
            skipped += 1
            continue
        scanned += 1
        if b"\x00" in data[:8192]:
            skipped += 1
            continue
        if prefilter is not None and not prefilter(data):
            continue
        text = data.decode("utf-8", "replace")
        matched: list[int] = []
        pos, line_no, counted_to = 0, 0, 0
        while pos <= len(text):
            m = pattern.search(text, pos)
            if m is None:
                break
            line_no += text.count("\n", counted_to, m.start())
            counted_to = m.start()
            if found >= limit:
                has_more = True
                break
            matched.append(line_no)
            found += 1
            nl = text.find("\n", m.start())
            if nl < 0:
                break
            line_no += text.count("\n", counted_to, nl + 1)
            pos = counted_to = nl + 1
        if matched:
            hits.append((rel, split_lines(text), matched))
        if has_more:
            break
    return _render(query, res.display, regex, case_sensitive, hits, found, has_more, context, scanned, skipped)


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
