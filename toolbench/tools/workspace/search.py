"""`workspace.search_files`: find text (plain or regex) in workspace files, with context lines.

Files are read one at a time as bytes (`os.read`), and only regular ones (O_NONBLOCK and
O_NOFOLLOW, then fstat: a FIFO can neither block the call nor be read), each opened from the
descriptor of its folder that the walk holds (`walk`; a single-file target from the one
`Workspace.locate` holds): nothing is opened by host path, so nothing outside can be read.
`search_plan` says how to scan them: a file holding none of the pattern's required literals
is skipped undecoded; when no match can span lines, only the lines holding one are checked;
anything else runs the RE2 query over the file's bytes. Regular expressions take Python `re`
syntax without the parts only a backtracking engine can run (backreferences, lookaround,
...), so no pattern can take more than linear time. Binaries (NUL in the first 8 KiB) and
files over the size limit are skipped. The scan stops as soon as one match more than
`limit` is found, so `hasMore` costs nothing extra. The query and glob are echoed cut to
200 characters.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Generator
from contextlib import closing
from typing import Any, Final

from ...core.arguments import quote
from ...core.descriptors import ToolDescriptor
from ...core.errors import ToolError
from ...core.fileio import read_capped
from ...core.ids import ToolId
from ...core.results import ToolOutput
from ..base import BuiltinTool, ToolContext, check_deadline
from . import beneath
from .files import split_lines
from .paths import Resolved, Workspace
from .patterns import PatternError, compile_glob
from .regex_query import PatternTooLarge, Unsupported
from .search_plan import Plan, make_plan
from .walk import walk

DEFAULT_LIMIT, MAX_LIMIT = 20, 50
DEFAULT_CONTEXT, MAX_CONTEXT = 2, 5
PREVIEW_CHARS = 400
MAX_QUERY_CHARS: Final = 10_000  # far past any text worth searching for; parsing stays fast
ACCEPTED_REGEX: Final = ("Python `re` syntax without backreferences, lookahead/lookbehind, conditional or "
                         "atomic groups and possessive repeats (the linear-time RE2 engine runs it)")

DESCRIPTOR = ToolDescriptor(
    id=ToolId.builtin("workspace.search_files"),
    description=(
        "Search workspace files for text. `query` is plain text (set `regex: true` for a Python-style regular "
        "expression; no backreferences or lookaround); case-insensitive unless `case_sensitive: true`. Searches "
        "`path` (a folder or one file; default the whole workspace), optionally only files matching `glob` (e.g. "
        "`*.md`). Each hit is shown as `path:line: text` with `context_lines` around it (`path-line- text`)."
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
    example={"query": "dragon"},
)


def _clip(line: str) -> str:
    line = line.rstrip("\r")
    return line if len(line) <= PREVIEW_CHARS else line[:PREVIEW_CHARS] + "..."


def _plan(query: str, regex: bool, case_sensitive: bool) -> Plan:
    """The scan plan, or the coded error that says what is wrong with the query."""
    if query == "":
        raise ToolError("tool.invalid_arguments", "`query` is empty; give the text to search for.")
    if len(query) > MAX_QUERY_CHARS:
        raise ToolError("tool.invalid_arguments", f"`query` is {len(query):,} characters long; the most is "
                        f"{MAX_QUERY_CHARS:,}. Search for a shorter, distinctive part of it.",
                        structured={"query": quote(query)})
    shown = {"query": quote(query)}
    try:
        return make_plan(query, regex, case_sensitive)
    except re.error as exc:
        raise ToolError("workspace.regex_invalid",
                        f"`query` is not a valid regular expression ({exc}); fix it, or search plain text "
                        f"with `regex: false`. Accepted: {ACCEPTED_REGEX}.", structured=shown) from exc
    except Unsupported as exc:
        raise ToolError("workspace.regex_invalid", f"`query` uses {exc}, which this search cannot run. Accepted: "
                        f"{ACCEPTED_REGEX}. Rewrite the pattern, or search plain text with `regex: false`.",
                        structured=shown) from exc
    except (PatternTooLarge, RecursionError) as exc:
        raise ToolError("workspace.regex_invalid", "`query` is too large or nested too deeply for the regex "
                        "engine; search for a shorter pattern.", structured=shown) from exc


def _targets(ws: Workspace, res: Resolved, glob: str | None, notes: list[str]
             ) -> Generator[tuple[str, int, str], None, None]:
    """(workspace path, folder descriptor, name) of each file to search, all opened beneath the
    workspace; the descriptor is valid until the next file is asked for."""
    if res.rel:
        with ws.locate(res.rel) as loc:
            spot, st = loc.spot, loc.spot.st
            if not spot.exists or st is None:
                raise ws.missing_at(loc)  # gone since it was resolved
            if not stat.S_ISDIR(st.st_mode):
                if not stat.S_ISREG(st.st_mode) or spot.name is None:
                    raise ToolError("workspace.file_not_regular", f"`{res.display}` is not a regular file (a FIFO, "
                                    "socket or device); search a folder or a regular file.",
                                    structured={"path": res.display})
                yield res.rel, spot.dir_fd, spot.name  # a single-file target ignores `glob`
                return
    spec = None
    if glob:
        pattern = glob.strip()
        try:
            spec = compile_glob(pattern)
        except PatternError as exc:
            raise ToolError("workspace.glob_invalid", f"`glob` {quote(pattern)!r} cannot be used: {exc}.",
                            structured={"glob": quote(pattern)}) from exc
        if spec is None:  # a comment or blank: it matches no file
            return
    prefix = len(res.rel) + 1 if res.rel else 0
    for e in walk(ws, res, notes=notes):
        if e.kind == "file" and (spec is None or spec.matches(e.rel[prefix:])):
            yield e.rel, e.dir_fd, e.name


def search_files(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    ws = Workspace.of(ctx)
    query = args["query"]
    regex, case_sensitive = args.get("regex", False), args.get("case_sensitive", False)
    limit, context = args.get("limit", DEFAULT_LIMIT), args.get("context_lines", DEFAULT_CONTEXT)
    plan = _plan(query, regex, case_sensitive)
    res = ws.existing(args.get("path", ""))
    notes: list[str] = []
    max_bytes = ws.settings.max_file_bytes
    hits: list[tuple[str, list[str], list[int]]] = []  # (path, lines, matched line indexes)
    found = scanned = skipped = 0
    has_more = False
    with closing(_targets(ws, res, args.get("glob"), notes)) as targets:  # closing: the walk's folders too
        for rel, dir_fd, name in targets:
            check_deadline()
            data = _read(dir_fd, name, max_bytes)
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
    return _render(query, res.display, regex, case_sensitive, hits, found, has_more, context, scanned, skipped,
                   notes)


def _read(dir_fd: int, name: str, max_bytes: int) -> bytes | None:
    """The bytes of the file `name` in the folder `dir_fd`; None when it cannot be read, is not
    a regular file or is over `max_bytes`.

    Opened as the file tools open a file (`beneath.open_regular`: relative to the folder's
    descriptor, not following a link, never waiting on a FIFO or device), read with os.read:
    io.open's buffered file object costs more than reading a small file."""
    try:
        fd, st = beneath.open_regular(dir_fd, name)
    except (OSError, beneath.NotRegular):
        return None
    try:
        return read_capped(fd, max_bytes, st.st_size) if st.st_size <= max_bytes else None
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
    prepared = plan.query.prepare(data)
    return ([], False) if prepared is None else _scan_text(*prepared, room)


_MAX_CANDIDATES = 64


def _scan_text(pattern: Any, text: bytes, text_end: int, room: int) -> tuple[list[int], bool]:
    """Run the regex over the whole text; each line counts once, the next search starts on the next line.

    A match at the text's end (`text_end`: where it starts in `text`, see `Query.prepare`) after
    a final newline, or in an empty file, is on no line (`split_lines` has none there): no hit."""
    matched: list[int] = []
    pos, line_no, counted_to = 0, 0, 0
    last_line_ended = text_end == 0 or text[text_end - 1:text_end] == b"\n"
    while pos <= len(text):
        m = pattern.search(text, pos)
        if m is None or (m.start() >= text_end and last_line_ended):
            break
        line_no += text.count(b"\n", counted_to, m.start())
        counted_to = m.start()
        if len(matched) >= room:
            return matched, True
        matched.append(line_no)
        end = text.find(b"\n", m.start())
        if end < 0:
            break
        line_no += text.count(b"\n", counted_to, end + 1)
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
        if plan.literal_only or plan.query.matches(data[start:end]):
            line_no += hay.count(b"\n", counted_to, start)
            counted_to = start
            if len(matched) >= room:
                return matched, True
            matched.append(line_no)
        pos = end + 1


def _render(query: str, where: str, regex: bool, case_sensitive: bool, hits: list[tuple[str, list[str], list[int]]],
            found: int, has_more: bool, context: int, scanned: int, skipped: int, notes: list[str]) -> ToolOutput:
    mode = ("regex" if regex else "plain") + (", case-sensitive" if case_sensitive else ", case-insensitive")
    echo = quote(query)
    head = f"Search: {echo!r} in {where} ({mode}): {found} matching line(s) in {len(hits)} file(s)"
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
    out.extend(f"Note: {note}" for note in notes)
    structured: dict[str, Any] = {
        "query": echo, "path": where, "regex": regex, "caseSensitive": case_sensitive, "matches": records,
        "files": len(hits), "hasMore": has_more, "filesScanned": scanned, "filesSkipped": skipped}
    if notes:
        structured["notes"] = notes
    return ToolOutput(content="\n".join(out), structured=structured)


TOOLS = (BuiltinTool(DESCRIPTOR, search_files),)
