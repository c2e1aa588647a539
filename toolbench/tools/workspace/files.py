"""Opening, reading and atomically replacing workspace files; their text; the read state (CAS).

`open_file` is how every single-path file tool (read_file, write_file, apply_patch, commit,
the shell's auto-publish) reaches a file: through `Workspace.locate` (descriptors, no host
path opened by name), refusing anything but a regular file before reading, and, for a write,
holding the folder's lock across read, check and replace.

The read state lives in `ctx.state` (one invocation): for each real path, the version the
model has seen (mtime_ns, sha256 of the bytes) and how far from the start of line 1 it has read
contiguously: whole lines, then possibly the first characters of the next line (read_file pages
inside a line longer than its budget). A line shown only in part is not read; it is once its
last character was shown by pages that continue one another. A version read to its end is a
*full read*; write_file (replace) and
apply_patch require a full read that is still current, else `workspace.stale_file`.
Upstream calls the apply_patch code `workspace.patch_stale_file`; toolbench uses
`workspace.stale_file` for both (the rule and the remedy are the same).
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Final

from ...core.errors import ToolError
from ...core.fileio import encode_text, read_capped, replace_at
from ..base import ToolContext, check_deadline
from ..state import StateKey
from . import beneath
from .paths import Located, Resolved, Workspace, io_error, is_folder, not_regular

_OPEN_TRIES: Final = 8


@dataclass(frozen=True, slots=True)
class Version:
    mtime_ns: int
    sha256: str


@dataclass(slots=True)
class ReadState:
    version: Version
    lines_read: int  # lines 1..lines_read were returned for this version
    total_lines: int
    chars_read: int = 0  # and the first chars_read characters of line lines_read + 1

    @property
    def full(self) -> bool:
        return self.lines_read >= self.total_lines


def version_of(mtime_ns: int, data: bytes) -> Version:
    return Version(mtime_ns, hashlib.sha256(data).hexdigest())


class OpenFile:
    """A workspace file opened through the resolver (`open_file`); close it, or use `with`.

    `fd` and `st` (its fstat) are None when the file does not exist yet (a write that creates
    it). A file opened for writing holds the lock of its folder until it is closed, so a
    read-check-replace (CAS, append) is atomic against the other file tools."""

    __slots__ = ("_locked", "fd", "loc", "st")

    def __init__(self, loc: Located, fd: int | None, st: os.stat_result | None, locked: bool) -> None:
        self.loc, self.fd, self.st, self._locked = loc, fd, st, locked

    @property
    def res(self) -> Resolved:
        return self.loc.res

    def read(self, ws: Workspace) -> bytes:
        """The file's bytes (at most the profile's max_file_bytes, else workspace.file_too_large)."""
        assert self.fd is not None and self.st is not None
        limit = ws.settings.max_file_bytes
        data = None
        if self.st.st_size <= limit:
            try:
                data = read_capped(self.fd, limit, self.st.st_size)
            except OSError as exc:
                raise io_error(self.res.display, exc) from exc
        if data is None:
            size = max(self.st.st_size, limit + 1)
            raise ToolError("workspace.file_too_large",
                            f"`{self.res.display}` has {size} bytes, over the {limit}-byte limit of the file tools; "
                            "search it, or use the shell (head, sed -n) to look at parts.",
                            structured={"path": self.res.display, "sizeBytes": size})
        return data

    def version(self, data: bytes) -> Version:
        assert self.st is not None
        return version_of(self.st.st_mtime_ns, data)

    def replace(self, ws: Workspace, text: str) -> tuple[bytes, Version]:
        """Atomic replace (temp file in the same folder, rename); gives the bytes written and
        their version. A storage failure becomes workspace.io_error for the model.

        A file over the profile's max_file_bytes is refused (workspace.file_too_large): the file
        tools could not read it back, and the shell must never be handed one."""
        data = encode_text(text)
        limit = ws.settings.max_file_bytes
        if len(data) > limit:
            raise ToolError("workspace.file_too_large",
                            f"`{self.res.display}` would have {len(data)} bytes, over the {limit}-byte limit of the "
                            "file tools; write it in smaller files.",
                            structured={"path": self.res.display, "sizeBytes": len(data)})
        spot = self.loc.spot
        assert spot.name is not None
        try:
            st = replace_at(spot.dir_fd, spot.name, data, durable=False)
        except OSError as exc:
            raise io_error(self.res.display, exc, "written") from exc
        return data, version_of(st.st_mtime_ns, data)

    def close(self) -> None:
        if self.fd is not None:
            fd, self.fd = self.fd, None
            os.close(fd)
        if self._locked:
            self._locked = False
            beneath.unlock_folder(self.loc.spot.dir_fd)
        self.loc.close()

    def __enter__(self) -> OpenFile:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()


def open_file(ws: Workspace, raw: object, *, field: str = "path", write: bool = False,
              create: bool = False) -> OpenFile:
    """Open the regular file `raw` names, through the workspace resolver (nothing is opened by
    host path). workspace.* ToolError when it is missing, a folder, not a regular file (FIFO,
    device: file_not_regular, checked without blocking), not visible, or (`write`) not
    writable. `write` also takes the folder's lock; `create` lets it not exist yet (parent
    folders are made; a file in the way is workspace.parent_not_directory)."""
    for _ in range(_OPEN_TRIES):
        loc = ws.locate(raw, field=field, write=write, create=create)
        try:
            opened = _open(ws, loc, write=write, create=create)
        except BaseException:
            loc.close()
            raise
        if opened is not None:
            return opened
        loc.close()  # the entry changed between the walk and the open (a link, gone): walk again
    raise ToolError("workspace.io_error", f"`{loc.res.display}` kept changing while it was opened; try again.",
                    structured={"path": loc.res.display})


def _open(ws: Workspace, loc: Located, *, write: bool, create: bool) -> OpenFile | None:
    spot, res = loc.spot, loc.res
    if create and spot.st is not None and spot.rest:
        raise ToolError("workspace.parent_not_directory",
                        f"`{res.display}` cannot be written: its parent `{spot.name}` is a file, not a folder.",
                        structured={"path": res.display})
    if create and (not spot.parts or (spot.st is not None and stat.S_ISDIR(spot.st.st_mode))):  # a root, a folder
        raise ToolError("workspace.path_is_directory",
                        f"`{res.display}` is a folder; write a file inside it, e.g. `{res.display}/notes.md`.",
                        structured={"path": res.display})
    if not (create and spot.st is None):
        ws.check_file(loc)
    if write:
        ws.writable(res)
        try:
            beneath.lock_folder(spot.dir_fd, waiting=check_deadline)
        except OSError as exc:
            raise io_error(res.display, exc, "locked for writing") from exc
    assert spot.name is not None
    try:
        fd, st = beneath.open_regular(spot.dir_fd, spot.name)
        return OpenFile(loc, fd, st, write)
    except beneath.NotRegular as exc:
        error = is_folder(res.display) if stat.S_ISDIR(exc.st.st_mode) else not_regular(res.display)
    except FileNotFoundError:
        if create:
            return OpenFile(loc, None, None, write)
        error = None
    except OSError as exc:
        error = None if exc.errno == errno.ELOOP else io_error(res.display, exc)
    if write:
        beneath.unlock_folder(spot.dir_fd)
    if error is not None:
        raise error
    return None


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
# workspace.read_file's read states (path -> what was returned of which version), per invocation.
READS: StateKey[dict[str, ReadState]] = StateKey("workspace.reads", dict)


def _reads(ctx: ToolContext) -> dict[str, ReadState]:
    return ctx.state.get(READS)


def note_read(ctx: ToolContext, res: Resolved, version: Version, start: int, end: int, total: int, *,
              start_char: int = 0, end_char: int | None = None) -> ReadState:
    """Record that lines start..end of this version were returned; gives the updated state.

    `start_char`: line `start` was shown from that character (0-based) on. `end_char`: line
    `end` was shown only up to that character (exclusive; below the line's length), so it is
    not read yet. The contiguous prefix grows only when this page begins inside it."""
    reads = _reads(ctx)
    key = str(res.real)
    state = reads.get(key)
    if state is None or state.version != version:
        state = ReadState(version, 0, total)
    reached = (state.lines_read + 1, state.chars_read)  # the first position not yet shown
    if (start, start_char) <= reached:
        line, char = max(reached, (end + 1, 0) if end_char is None else (end, end_char))
        state.lines_read, state.chars_read = line - 1, char
    state.total_lines = total
    reads[key] = state
    return state


def note_written(ctx: ToolContext, res: Resolved, version: Version, total_lines: int) -> Version:
    """After a tool wrote `version` (of `total_lines` lines) to `res`: the model knows it in full."""
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


def knows(ctx: ToolContext, res: Resolved, current: Version) -> bool:
    """Whether the model has read `current` (the file's version now) in full."""
    state = _reads(ctx).get(str(res.real))
    return state is not None and state.full and state.version == current


def require_current(ctx: ToolContext, res: Resolved, current: Version, *, action: str) -> None:
    """workspace.stale_file unless the model fully read `current`, the file's version now."""
    read_name = ctx.call_name_of("builtin:workspace.read_file") or "workspace_read_file"
    state = _reads(ctx).get(str(res.real))
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


def call_name(ctx: ToolContext, native: str) -> str:
    return ctx.call_name_of(f"builtin:{native}") or native.replace(".", "_")


def version_json(version: Version) -> dict[str, Any]:
    return {"mtimeNs": version.mtime_ns, "sha256": version.sha256}
