"""`workspace.list_files` and `workspace.glob`: what is in the workspace, paged.

Both list names only, through `walk` (folders opened by descriptor beneath the workspace, so
nothing outside is listed). Both say when an ignore file met on the walk was used only in part
(a `Note:` line, and `notes` in the structured result); a glob pattern is echoed cut to 200
characters."""

from __future__ import annotations

from contextlib import closing
from typing import Any

from ...core.arguments import quote
from ...core.descriptors import ToolDescriptor
from ...core.errors import ToolError
from ...core.ids import ToolId
from ...core.results import ToolOutput
from ..base import BuiltinTool, ToolContext
from .paths import Workspace
from .patterns import PatternError, compile_glob
from .walk import Entry, is_folder, walk

MAX_DEPTH = 4
DEFAULT_RESULTS = 200
MAX_RESULTS = 1000

_PAGING = {
    "offset": {"type": "integer", "minimum": 0, "description": "Entries to skip (for the next page). Default 0."},
    "max_results": {"type": "integer", "minimum": 1, "maximum": MAX_RESULTS,
                    "description": f"Entries per page. Default {DEFAULT_RESULTS}."},
}

LIST_DESCRIPTOR = ToolDescriptor(
    id=ToolId.builtin("workspace.list_files"),
    description=(
        "List the files and folders of a workspace folder, sorted by path, folders marked with a trailing `/`. "
        "Omit `path` for the workspace root (work/, tmp/, output/ writable; tool-results/, skills/ read-only). "
        "Entries ignored by .gitignore are left out. Page with `offset` when the result says more entries exist."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Folder (or file) to list; omit for the workspace root."},
            "depth": {"type": "integer", "minimum": 1, "maximum": MAX_DEPTH,
                      "description": "How many levels deep to list (default 2, max 4)."},
            **_PAGING,
        },
        "additionalProperties": False,
    },
    read_only=True,
)

GLOB_DESCRIPTOR = ToolDescriptor(
    id=ToolId.builtin("workspace.glob"),
    description=(
        "Find files by name pattern, gitignore style: `*.md` matches at any depth, `work/**/*.py` and "
        "`notes/*.txt` match relative to `path`. Returns workspace-relative file paths, sorted; page with `offset`."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "Glob pattern, e.g. `*.md` or `src/**/test_*.py`."},
            "path": {"type": "string", "description": "Folder to search from; omit for the whole workspace."},
            **_PAGING,
        },
        "required": ["pattern"],
        "additionalProperties": False,
    },
    read_only=True,
    example={"pattern": "**/*.md"},
)


def _show(entry: Entry) -> str:
    return entry.rel + ("/" if entry.kind == "dir" else " -> (link)" if entry.kind == "link" else "")


def _page(items: Any, offset: int, limit: int) -> tuple[list[Any], int]:
    """The page and the total count (the whole walk is counted)."""
    page: list[Any] = []
    total = 0
    for index, item in enumerate(items):
        if offset <= index < offset + limit:
            page.append(item)
        total = index + 1
    return page, total


def list_files(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    ws = Workspace.of(ctx)
    res = ws.existing(args.get("path", ""))
    offset, limit = args.get("offset", 0), args.get("max_results", DEFAULT_RESULTS)
    if not is_folder(ws, res):
        line = res.display
        return ToolOutput(content=f"List: {line} is a file\n\n{line}",
                          structured={"path": res.display, "targetKind": "file", "entries": [line], "total": 1,
                                      "offset": 0, "hasMore": False})
    notes: list[str] = []
    with closing(walk(ws, res, max_depth=args.get("depth", 2), notes=notes)) as items:
        page, total = _page(items, offset, limit)
    has_more = offset + len(page) < total
    lines = [f"List: {res.display} (entries {offset + 1}-{offset + len(page)} of {total})" if page
             else f"List: {res.display} ({total} entries; none from offset {offset})"]
    lines += [_show(e) for e in page]
    if has_more:
        lines.append(f"[{total - offset - len(page)} more entries; call again with offset={offset + len(page)}]")
    return _with_notes(ToolOutput(content="\n".join(lines), structured={
        "path": res.display, "targetKind": "dir", "entries": [_show(e) for e in page], "total": total,
        "offset": offset, "hasMore": has_more}), notes)


def _with_notes(out: ToolOutput, notes: list[str]) -> ToolOutput:
    if not notes:
        return out
    return ToolOutput(content=out.content + "".join(f"\nNote: {n}" for n in notes),
                      structured={**out.structured, "notes": notes})


def glob(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    ws = Workspace.of(ctx)
    pattern = args["pattern"].strip().replace("\\", "/")
    if not pattern:
        raise ToolError("workspace.glob_invalid", "`pattern` is empty; give a pattern such as `*.md`.")
    try:
        spec = compile_glob(pattern)
    except PatternError as exc:
        raise ToolError("workspace.glob_invalid", f"`pattern` {quote(pattern)!r} cannot be used: {exc}.",
                        structured={"pattern": quote(pattern)}) from exc
    res = ws.existing(args.get("path", ""))
    note = ""
    if not is_folder(ws, res):
        parent = res.rel.rsplit("/", 1)[0] if "/" in res.rel else ""
        note = f" (`{res.display}` is a file; searched its folder)"
        res = ws.existing(parent)
    prefix = len(res.rel) + 1 if res.rel else 0
    offset, limit = args.get("offset", 0), args.get("max_results", DEFAULT_RESULTS)
    notes: list[str] = []
    page: list[str] = []
    total = 0
    if spec is not None:  # None: a comment or blank pattern, which matches nothing
        with closing(walk(ws, res, notes=notes)) as entries:
            page, total = _page((e.rel for e in entries if e.kind == "file" and spec.matches(e.rel[prefix:])),
                                offset, limit)
    has_more = offset + len(page) < total
    lines = [f"Glob: {quote(pattern)} in {res.display}{note}: {total} file(s)", *page]
    if has_more:
        lines.append(f"[{total - offset - len(page)} more; call again with offset={offset + len(page)}]")
    return _with_notes(ToolOutput(content="\n".join(lines), structured={
        "pattern": quote(pattern), "path": res.display, "files": page, "total": total, "offset": offset,
        "hasMore": has_more}), notes)


TOOLS = (BuiltinTool(LIST_DESCRIPTOR, list_files), BuiltinTool(GLOB_DESCRIPTOR, glob))
