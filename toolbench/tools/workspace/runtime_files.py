"""The files the runtime reads and writes on its own (the roster, the cron store and logs, an
invocation's snapshot, profile and run log, attachments), opened beneath the workspace.

A workspace may be hostile: anything in it, `.toolbench/` included, can be a FIFO, a device, a
link out of the workspace or a huge file. So every such file goes through the one rule the file
tools use (`beneath`): the path is walked from a descriptor of the workspace (a link may lead
elsewhere inside it, never out), the entry is opened O_NOFOLLOW|O_NONBLOCK and kept only if
fstat says it is a regular file, and a read stops at a size cap the caller names. A write never
opens the old entry: it renames a fresh temp file over the name (`fileio.replace_at`), so a FIFO
or link planted there is replaced, not followed (a remove unlinks the entry itself). An append
(`open_log`) opens the entry the same way as a read, O_RDWR|O_APPEND.

Each refusal is a `ToolbenchError` whose message names the file relative to the workspace (never
a host path): `storage.not_regular_file`, `storage.link_outside_workspace`,
`storage.file_too_large`, `storage.read_failed` (any other OSError), and `storage.write_failed`
for writes. Callers map it to what they do for a corrupt file.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from ...core.errors import ToolbenchError
from ...core.fileio import read_capped, replace_at
from . import beneath

_LOG_FLAGS: Final = (os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0)
                     | getattr(os, "O_CLOEXEC", 0))


def read_runtime_file(root: Path, relative: str, *, limit: int, tail: bool = False) -> bytes | None:
    """The bytes of `root/relative`, None when it (or a folder on its way) does not exist.

    Over `limit` bytes it is `storage.file_too_large`, or with `tail` its last `limit` bytes (a
    log read from its end; its first line is then likely cut)."""
    with _spot(root, relative, create=False, doing="read") as spot:
        if spot is None:
            return None
        try:
            fd, st = beneath.open_regular(spot.dir_fd, spot.name)
        except FileNotFoundError:
            return None
        except beneath.NotRegular as exc:
            raise _not_regular(relative, exc.st) from None
        except OSError as exc:
            raise _failed(relative, exc, "read") from exc
        try:
            if st.st_size > limit and not tail:
                raise _too_large(relative, limit)
            start = max(0, st.st_size - limit) if tail else 0
            if start:
                os.lseek(fd, start, os.SEEK_SET)
            # A log read from its end takes `limit` bytes at most: lines appended meanwhile wait.
            data = _read_upto(fd, limit) if tail else read_capped(fd, limit, min(st.st_size, limit))
        except OSError as exc:
            raise _failed(relative, exc, "read") from exc
        finally:
            os.close(fd)
        if data is None:  # it grew past the cap while being read
            raise _too_large(relative, limit)
        return data


def _read_upto(fd: int, limit: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while size < limit and (chunk := os.read(fd, min(limit - size, 1 << 20))):
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def write_runtime_file(root: Path, relative: str, data: bytes, *, durable: bool = True) -> None:
    """Replace `root/relative` with `data` atomically, making the folders on its way; whatever
    entry had the name (a FIFO, a link) is replaced, never opened."""
    with _spot(root, relative, create=True, doing="write") as spot:
        if spot is None:
            raise ToolbenchError("storage.write_failed", f"cannot write `{relative}`: it names no file")
        try:
            replace_at(spot.dir_fd, spot.name, data, durable=durable)
        except OSError as exc:
            raise _failed(relative, exc, "write") from exc


def open_log(root: Path, relative: str) -> int:
    """A descriptor of the regular file `root/relative` (created if missing) for appending and
    reading back (O_RDWR|O_APPEND, blocking); the caller closes it."""
    with _spot(root, relative, create=True, doing="append to") as spot:
        if spot is None:
            raise ToolbenchError("storage.write_failed", f"cannot write `{relative}`: it names no file")
        try:
            fd = os.open(spot.name, _LOG_FLAGS, 0o644, dir_fd=spot.dir_fd)
        except OSError as exc:  # ENXIO: a FIFO nobody reads; ELOOP: a link put there since
            if exc.errno in (errno.ENXIO, errno.ELOOP):
                raise ToolbenchError("storage.not_regular_file", f"`{relative}` is not a regular file; it is "
                                     "left as it is and nothing was written to it") from exc
            raise _failed(relative, exc, "append to") from exc
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise _not_regular(relative, st)
            fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
        except BaseException:
            os.close(fd)
            raise
        return fd


def make_runtime_folder(root: Path, relative: str) -> None:
    """Make the folder `root/relative` and those on its way, beneath the root (a link on the way
    may lead elsewhere inside, never out); `storage.not_writable` when the disk refuses."""
    with _spot(root, relative, create=True, doing="make") as spot:
        if spot is None:
            return  # the root itself
        if spot.st is not None and not stat.S_ISDIR(spot.st.st_mode):
            raise _not_regular(relative, spot.st, folder=relative)
        try:
            if spot.st is None:
                os.mkdir(spot.name, dir_fd=spot.dir_fd)
        except FileExistsError:
            pass
        except OSError as exc:
            raise _failed(relative, exc, "make") from exc


def remove_runtime_file(root: Path, relative: str) -> None:
    """Remove the entry `root/relative` if there is one (a link itself, never its target)."""
    with _spot(root, relative, create=False, doing="remove") as spot:
        if spot is None:
            return
        try:
            os.unlink(spot.name, dir_fd=spot.dir_fd)
        except FileNotFoundError:
            return
        except OSError as exc:
            raise _failed(relative, exc, "remove") from exc


@contextlib.contextmanager
def _spot(root: Path, relative: str, *, create: bool, doing: str) -> Iterator[_Found | None]:
    """Where `relative` lies beneath `root` (None when it or a folder on its way is missing), its
    descriptors closed afterwards. A read follows a link at the last part (beneath the root
    still); a write or append does not. With `create` the folders are made (the root too). An
    entry that exists and is not a regular file is refused here, before a read or append opens
    it (a write or remove only renames or unlinks the entry)."""
    segs = [p for p in relative.split("/") if p not in ("", ".")]
    try:
        if create:
            root.mkdir(parents=True, exist_ok=True)
        base_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        yield None
        return
    except OSError as exc:
        raise _failed(relative, exc, doing) from exc
    try:
        try:
            spot = beneath.locate(base_fd, os.path.realpath(root), segs, create=create, follow_last=doing == "read")
        except beneath.Outside:
            raise ToolbenchError("storage.link_outside_workspace", f"`{relative}` (or a folder on its way) is a link "
                                 "out of the workspace; the bench does not follow it") from None
        except OSError as exc:
            raise _failed(relative, exc, doing) from exc
        try:
            if spot.rest and spot.st is not None:  # a file where a folder should be
                raise _not_regular(relative, spot.st, folder="/".join((*spot.parts, spot.name or "")))
            if spot.rest or spot.name is None or (spot.st is None and not create):
                yield None
                return
            if spot.st is not None and doing in ("read", "append to") and not stat.S_ISREG(spot.st.st_mode):
                raise _not_regular(relative, spot.st)
            yield _Found(spot.dir_fd, spot.name, spot.st)
        finally:
            spot.close()
    finally:
        os.close(base_fd)


@dataclass(frozen=True, slots=True)
class _Found:
    """The entry `name` of the folder `dir_fd` (its lstat, None if it is to be made)."""

    dir_fd: int
    name: str
    st: os.stat_result | None


def _kind(st: os.stat_result) -> str:
    mode = st.st_mode
    kinds = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
             (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISLNK, "a link"),
             (stat.S_ISREG, "a regular file"))
    return next((name for test, name in kinds if test(mode)), "not a regular file")


def _not_regular(relative: str, st: os.stat_result, folder: str | None = None) -> ToolbenchError:
    if folder is not None:
        return ToolbenchError("storage.not_regular_file", f"`{folder}` is {_kind(st)}, not a folder, so "
                              f"`{relative}` cannot be used; remove or rename it")
    return ToolbenchError("storage.not_regular_file", f"`{relative}` is {_kind(st)}, not a regular file; it is "
                          "left as it is; remove it or put a regular file there")


def _too_large(relative: str, limit: int) -> ToolbenchError:
    return ToolbenchError("storage.file_too_large", f"`{relative}` is over {limit:,} bytes, more than the bench "
                          "reads of it; it is left as it is")


def _failed(relative: str, exc: OSError, doing: str) -> ToolbenchError:
    why = exc.strerror or type(exc).__name__  # never str(exc): it names the host path
    if doing == "make":  # a runtime folder the bench needs
        return ToolbenchError("storage.not_writable", f"cannot create `{relative}`: {why}; the workspace and its "
                              "runtime folders must be writable")
    code = "storage.read_failed" if doing == "read" else "storage.write_failed"
    return ToolbenchError(code, f"cannot {doing} `{relative}`: {why}")
