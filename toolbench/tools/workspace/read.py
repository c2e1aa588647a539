"""`workspace.read_file`: numbered lines of a text file, paged by line."""

from __future__ import annotations

from typing import Any

from ...core.descriptors import ToolDescriptor
from ...core.errors import ToolError
from ...core.ids import ToolId
from ..base import BuiltinTool, ToolContext, ToolOutput
from .files import call_name, decode, note_read, open_file, split_lines, version_json
from .paths import Workspace

END_MARKER = "[end of file]"

DESCRIPTOR = ToolDescriptor(
    id=ToolId.builtin("workspace.read_file"),
    description=(
        "Read a UTF-8 text file of the workspace as numbered lines (`   12\\tline`). Without `start_line` it "
        "starts at line 1. A large file comes back in parts: the result says which line to pass as "
        "`start_line` next. Read a file to its end before replacing it with write_file or editing it "
        "with apply_patch. Paths are workspace-relative, e.g. `work/notes.md` or `tool-results/...`."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Workspace-relative file path, e.g. `work/notes.md`."},
            "start_line": {"type": "integer", "minimum": 1, "description": "First line to return (1-based)."},
            "line_count": {"type": "integer", "minimum": 1, "description": "How many lines to return at most."},
        },
        "required": ["path"],
        "additionalProperties": False,
    },
    read_only=True,
)


def read_file(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    ws = Workspace.of(ctx)
    with open_file(ws, args["path"]) as f:
        data = f.read(ws)
    res, version = f.res, f.version(data)
    text = decode(res, data)
    lines = split_lines(text)
    total = len(lines)
    start = args.get("start_line", 1)
    if total and start > total:
        raise ToolError("workspace.line_out_of_range",
                        f"`{res.display}` has {total} lines; `start_line` {start} is past the end. "
                        f"Use a start_line from 1 to {total}.", structured={"path": res.display, "totalLines": total})
    want = args.get("line_count") or ws.settings.max_read_lines
    budget = ws.settings.max_read_chars
    out: list[str] = []
    end = start - 1
    used = 0
    for number in range(start, min(total, start - 1 + want) + 1):
        line = lines[number - 1]
        # Always return at least one line, so a read can never stall on a very long line.
        if out and used + len(line) > budget:
            break
        out.append(f"{number:>6}\t{line}")
        used += len(line) + 1
        end = number
    state = note_read(ctx, res, version, start, end, total)
    at_end = end >= total
    header = f"Read: {res.display}\n" + (f"lines={start}-{end} / {total}" if total else "lines=empty (0 lines)")
    body = "\n".join(out) if out else "(empty file)"
    if at_end:
        trailer = END_MARKER
    else:
        trailer = (f"[partial view: lines {start}-{end} of {total}; continue with "
                   f"`{call_name(ctx, 'workspace.read_file')}` path `{res.display}` start_line={end + 1}]")
    structured = {
        "path": res.display, "startLine": start, "endLine": end, "totalLines": total, "nextLine": None if at_end
        else end + 1, "truncated": not at_end, "fullRead": state.full, **version_json(version),
    }
    return ToolOutput(content=f"{header}\n\n{body}\n{trailer}", structured=structured)


TOOLS = (BuiltinTool(DESCRIPTOR, read_file),)
