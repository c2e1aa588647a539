"""`workspace.write_file` (replace or append, atomic) and `workspace.delete`."""

from __future__ import annotations

import os
import shutil
import stat
from typing import Any

from ...core.descriptors import ToolDescriptor
from ...core.errors import ToolError
from ...core.ids import ToolId
from ...core.results import ToolOutput
from ..base import BuiltinTool, ToolContext
from .beneath import DIR_FLAGS, Spot
from .files import count_lines, decode, forget, knows, note_written, open_file, require_current, version_json
from .paths import Resolved, Workspace, io_error, split_path

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
    example={"path": "work/example.txt", "content": "hello\n"},
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
    example={"path": "work/example.txt"},
)


def write_file(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    ws = Workspace.of(ctx)
    content, mode = args["content"], args.get("mode", "replace")
    # The folder's lock is held from the read to the replace: an append never loses another
    # call's text, and a replace's CAS check still holds when it writes.
    with open_file(ws, args["path"], write=True, create=True) as f:
        res = f.res
        existed = f.fd is not None
        knew = True
        if existed:
            data = f.read(ws)
            current = f.version(data)
            if mode == "replace":
                require_current(ctx, res, current, action="replacing it")
                text = content
            else:
                text = decode(res, data) + content
                knew = knows(ctx, res, current)
        else:
            text = content
        version = f.replace(ws, text)[1]
    lines = count_lines(text)
    if knew:
        note_written(ctx, res, version, lines)
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
    if len(segs) <= 1:
        rel = "/".join(segs) or "."
        raise ToolError("workspace.root_not_deletable",
                        f"`{rel}` is a workspace root and cannot be deleted; delete what is inside it.",
                        structured={"path": rel})
    # The parent is walked and confined; the entry itself is not followed (a link goes as a link).
    with ws.locate(args["path"], write=True, follow_last=False) as loc:
        res, spot = loc.res, loc.spot
        if not spot.exists:
            raise ws.missing_at(loc)
        if not spot.parts:  # through a link to the workspace folder: a root
            raise ToolError("workspace.root_not_deletable",
                            f"`{res.display}` leads to a workspace root, which cannot be deleted.",
                            structured={"path": res.display})
        ws.writable(res)
        try:
            kind = _remove(spot, res, recursive=bool(args.get("recursive", False)))
        except OSError as exc:
            raise io_error(res.display, exc, "deleted") from exc
    forget(ctx, res.real)
    shown = "special file" if kind == "special" else kind
    return ToolOutput(content=f"Deleted {shown} `{res.display}`.",
                      structured={"path": res.display, "kind": kind}, resource_refs=(res.display,))


def _remove(spot: Spot, res: Resolved, *, recursive: bool) -> str:
    """Remove the entry; its kind: `file`, `link`, `folder`, or `special` (a FIFO, socket or device)."""
    assert spot.name is not None and spot.st is not None
    mode = spot.st.st_mode
    if not stat.S_ISDIR(mode):
        os.unlink(spot.name, dir_fd=spot.dir_fd)
        return "link" if stat.S_ISLNK(mode) else "file" if stat.S_ISREG(mode) else "special"
    fd = os.open(spot.name, DIR_FLAGS, dir_fd=spot.dir_fd)
    try:
        full = bool(os.listdir(fd))
    finally:
        os.close(fd)
    if not full:
        os.rmdir(spot.name, dir_fd=spot.dir_fd)
    elif not recursive:
        raise ToolError("workspace.directory_not_empty",
                        f"`{res.display}` is a folder that is not empty; pass `recursive: true` to "
                        "delete it with everything in it.", structured={"path": res.display})
    else:
        shutil.rmtree(spot.name, dir_fd=spot.dir_fd)  # fd-based: it never follows a link out
    return "folder"


TOOLS = (BuiltinTool(WRITE_DESCRIPTOR, write_file), BuiltinTool(DELETE_DESCRIPTOR, delete))
