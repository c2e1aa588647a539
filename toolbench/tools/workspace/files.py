"""Reading workspace files as text, the read state (CAS) and atomic writes.

The read state lives in `ctx.state` (one invocation): for each real path, the version the
model has seen (mtime_ns, sha256 of the bytes) and how many lines from line 1 it has read
contiguously. A version read to its end is a *full read*; write_file (replace) and
apply_patch require a full read that is still current, else `workspace.stale_file`.
Upstream calls the apply_patch code `workspace.patch_stale_file`; toolbench uses
`workspace.stale_file` for both (the rule and the remedy are the same).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from ...core.errors import ToolbenchError, ToolError
from ...core.fileio import encode_text, write_atomic
from ..base import ToolContext
from .paths import Resolved, Workspace

_STATE_KEY: Final = "workspace.reads"


@dataclass(frozen=True, slots=True)
class Version:
    mtime_ns: int
    sha256: str


@dataclass(slots=True)
class ReadState:
    version: Version
    lines_read: int  # lines 1..lines_read were returned for this version
    total_lines: int

    @property
    def full(self) -> bool:
        return self.lines_read >= self.total_lines


def version_of(path: Path, data: bytes) -> Version:
    return Version(os.stat(path).st_mtime_ns, hashlib.sha256(data).hexdigest())


def read_bytes(ws: Workspace, res: Resolved) -> bytes:
    size = res.real.stat().st_size
    if size > ws.settings.max_file_bytes:
        raise ToolError("workspace.file_too_large",
                        f"`{res.display}` has {size} bytes, over the {ws.settings.max_file_bytes}-byte limit of the "
                        "file tools; search it, or use the shell (head, sed -n) to look at parts.",
                        structured={"path": res.display, "sizeBytes": size})
    try:
        return res.real.read_bytes()
    except OSError as exc:
        raise ToolError("workspace.io_error", f"`{res.display}` could not be read: {exc.strerror or exc}.") from exc


def decode(res: Resolved, data: bytes) -> str:
    if b"\x00" in data[:8192]:
        raise _not_text(res, "looks binary (it has NUL bytes)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _not_text(res, f"is not UTF-8 text (bad byte at offset {exc.start})") from exc


def _not_text(res: Resolved, why: str) -> ToolError:
    return ToolError("workspace.file_not_text",
                     f"`{res.display}` {why}; the file tools handle UTF-8 text only. "
                     "Use the shell (e.g. `xxd`, `file`) to inspect it.", structured={"path": res.display})


def count_lines(text: str) -> int:
    """`len(split_lines(text))` without making the lines."""
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def split_lines(text: str) -> list[str]:
    """Lines split at `\\n`, each without its `\\n` (a `\\r` stays); "" has no lines."""
    if not text:
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


# read state ------------------------------------------------------------------------------
def _reads(ctx: ToolContext) -> dict[str, ReadState]:
    reads = ctx.state.get(_STATE_KEY)
    if reads is None:
        reads = ctx.state[_STATE_KEY] = {}
    return reads


def note_read(ctx: ToolContext, res: Resolved, version: Version, start: int, end: int, total: int) -> ReadState:
    """Record that lines start..end of this version were returned; gives the updated state."""
    reads = _reads(ctx)
    key = str(res.real)
    state = reads.get(key)
    if state is None or state.version != version:
        state = ReadState(version, 0, total)
    if start <= state.lines_read + 1:
        state.lines_read = max(state.lines_read, end)
    state.total_lines = total
    reads[key] = state
    return state


def note_written(ctx: ToolContext, res: Resolved, data: bytes, total_lines: int) -> Version:
    """After a tool wrote `data` (of `total_lines` lines) to `res`: the model knows this version in full."""
    version = version_of(res.real, data)
    _reads(ctx)[str(res.real)] = ReadState(version, total_lines, total_lines)
    return version


def forget(ctx: ToolContext, real: Path) -> None:
    reads = _reads(ctx)
    prefix = str(real) + os.sep
    for key in [k for k in reads if k == str(real) or k.startswith(prefix)]:
        del reads[key]


def drop_stale(ctx: ToolContext) -> int:
    """Forget every read whose file changed (mtime) since; after a shell run. Gives the count."""
    reads = _reads(ctx)
    dropped = 0
    for key, state in list(reads.items()):
        try:
            current = os.stat(key).st_mtime_ns
        except OSError:
            current = None
        if current != state.version.mtime_ns:
            del reads[key]
            dropped += 1
    return dropped


def clear_reads(ctx: ToolContext) -> None:
    _reads(ctx).clear()


def require_current(ctx: ToolContext, res: Resolved, data: bytes, *, action: str) -> None:
    """workspace.stale_file unless the model fully read this exact version of the file."""
    read_name = ctx.call_name_of("builtin:workspace.read_file") or "workspace_read_file"
    state = _reads(ctx).get(str(res.real))
    current = version_of(res.real, data)
    if state is None or not state.full:
        why = "has not been read in full in this invocation" if state is None or state.version == current else (
            "changed since it was read")
        raise ToolError("workspace.stale_file",
                        f"`{res.display}` {why}; {action} needs a full, current read. Call `{read_name}` on "
                        f"`{res.display}` (to its end), then retry.", structured={"path": res.display})
    if state.version != current:
        raise ToolError("workspace.stale_file",
                        f"`{res.display}` changed on disk since you last read it; call `{read_name}` on it again "
                        "and re-derive your change from the new text.", structured={"path": res.display})


def write_text(res: Resolved, text: str) -> bytes:
    """Atomic replace; gives the bytes written. Storage failures become a recoverable error for the model."""
    data = encode_text(text)
    try:
        write_atomic(res.real, data, durable=False)
    except ToolbenchError as exc:
        raise ToolError("workspace.io_error", f"`{res.display}` could not be written: {exc.message}") from exc
    return data


def call_name(ctx: ToolContext, native: str) -> str:
    return ctx.call_name_of(f"builtin:{native}") or native.replace(".", "_")


def version_json(version: Version) -> dict[str, Any]:
    return {"mtimeNs": version.mtime_ns, "sha256": version.sha256}
