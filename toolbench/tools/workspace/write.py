"""`workspace.write_file` (replace or append, atomic) and `workspace.delete`."""

from __future__ import annotations

import os
import shutil
from typing import Any

from ...core.descriptors import ToolDescriptor
from ...core.errors import ToolError
from ...core.ids import ToolId
from ..base import BuiltinTool, ToolContext, ToolOutput
from .files import (
    _reads,
    count_lines,
    decode,
    forget,
    note_written,
    read_bytes,
    require_current,
    version_json,
    version_of,
    write_text,
)
from .paths import Resolved, Workspace, split_path

WRITE_DESCRIPTOR = ToolDescriptor(
    id=ToolId.builtin("workspace.write_file"),
    description=(
        "Write a UTF-8 text file under work/, tmp/ or output/ (parent folders are created). `mode: replace` "
        "(default) writes the whole file; replacing an existing file needs a full read of its current version "
        "first (read_file to its end). `mode: append` adds `content` at the end as is (no newline is added) "
        "and creates the file if missing. For small changes to an existing file prefer apply_patch."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Workspace-relative file path, e.g. `output/main.md`."},
            "content": {"type": "string", "description": "The text to write."},
            "mode": {"type": "string", "enum": ["replace", "append"], "description": "Default `replace`."},
        },
        "required": ["path", "content"],
        "additionalProperties": False,
    },
)

DELETE_DESCRIPTOR = ToolDescriptor(
    id=ToolId.builtin("workspace.delete"),
    description=(
        "Delete a file, an empty folder, or a folder with everything in it (`recursive: true`) under work/, "
        "tmp/ or output/. A link is removed as a link. The roots themselves cannot be deleted."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Workspace-relative path to delete."},
            "recursive": {"type": "boolean", "description": "Delete a non-empty folder. Default false."},
        },
        "required": ["path"],
        "additionalProperties": False,
    },
)


def _target(ws: Workspace, raw: Any) -> Resolved:
    res = ws.resolve(raw, write=True)
    if res.rel == "" or res.is_root:
        raise ToolError("workspace.path_is_directory",
                        f"`{res.display}` is a folder; write a file inside it, e.g. `{res.rel or 'work'}/notes.md`.",
                        structured={"path": res.display})
    ws.writable(res)
    if res.real.is_dir():
        raise ToolError("workspace.path_is_directory",
                        f"`{res.display}` is a folder; write a file inside it, e.g. `{res.display}/notes.md`.",
                        structured={"path": res.display})
    return res


def write_file(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    ws = Workspace.of(ctx)
    res = _target(ws, args["path"])
    content, mode = args["content"], args.get("mode", "replace")
    existed = res.real.exists()
    if existed:
        data = read_bytes(ws, res)
        if mode == "replace":
            require_current(ctx, res, data, action="replacing it")
            text = content
        else:
            old = decode(res, data)
            state = _reads(ctx).get(str(res.real))
            knew = state is not None and state.full and state.version == version_of(res.real, data)
            text = old + content
    else:
        text = content
    written = write_text(res, text)
    lines = count_lines(text)
    if not existed or mode == "replace" or knew:
        version = note_written(ctx, res, written, lines)
    else:
        version = version_of(res.real, written)
    verb = "Created" if not existed else ("Appended to" if mode == "append" else "Replaced")
    return ToolOutput(
        content=f"{verb} `{res.display}` ({len(content)} characters written; the file has {lines} lines).",
        structured={"path": res.display, "mode": mode, "existedBefore": existed, "charsWritten": len(content),
                    "totalLines": lines, **version_json(version)},
        resource_refs=(res.display,),
    )


def delete(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    ws = Workspace.of(ctx)
    segs = split_path(args["path"], host_prefix=str(ws.base))
    rel = "/".join(segs)
    if len(segs) <= 1:
        raise ToolError("workspace.root_not_deletable",
                        f"`{rel or '.'}` is a workspace root and cannot be deleted; delete what is inside it.",
                        structured={"path": rel or "."})
    # The parent is resolved and confined; the target itself is not followed (a link goes as a link).
    parent = ws.writable(ws.existing("/".join(segs[:-1])))
    target = parent.real / segs[-1]
    segs_res = Resolved(rel, target, parent.root, parent.writable)
    if not os.path.lexists(target):
        raise ws.missing(segs_res)
    if target.is_symlink() or target.is_file():
        kind = "link" if target.is_symlink() else "file"
        target.unlink()
    elif target.is_dir():
        kind = "folder"
        if any(target.iterdir()):
            if not args.get("recursive", False):
                raise ToolError("workspace.directory_not_empty",
                                f"`{segs_res.display}` is a folder that is not empty; pass `recursive: true` to "
                                "delete it with everything in it.", structured={"path": segs_res.display})
            shutil.rmtree(target)
        else:
            target.rmdir()
    else:
        raise ToolError("workspace.invalid_path", f"`{segs_res.display}` is not a file, folder or link.")
    forget(ctx, target)
    return ToolOutput(content=f"Deleted {kind} `{segs_res.display}`.",
                      structured={"path": segs_res.display, "kind": kind}, resource_refs=(segs_res.display,))


TOOLS = (BuiltinTool(WRITE_DESCRIPTOR, write_file), BuiltinTool(DELETE_DESCRIPTOR, delete))
