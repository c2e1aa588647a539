"""The file primitives every part shares: atomic replace, write-once, and a bounded read.

The only module of `core` that touches the disk; everything else in `core` is pure.

Every write goes through a temp file in the target's folder, named `.<name>.<random>.tmp`
(a leading `round-NNN-` of the name stays at its start, so the record store still finds the
round of a temp file) and created with O_CREAT|O_EXCL|O_NOFOLLOW: a link or file planted at a
temp name is never followed or reused, and two writers of one path never share a temp file. A
failed write removes its temp file.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path
from typing import Final

from .errors import ToolbenchError

_TEMP_FLAGS: Final = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_READ_FLAGS: Final = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
_TEMP_TRIES: Final = 8
# The errnos whose `strerror` read_regular_file writes itself: a reason ("a FIFO, not a regular
# file"), not the system's words.
REFUSED: Final = frozenset({errno.ELOOP, errno.EISDIR, errno.EINVAL, errno.EFBIG})
# `.` + stem + `.` + 12 hex digits + `.tmp` must fit the 255 bytes of a file name.
_STEM_BYTES: Final = 255 - 18


def encode_text(text: str) -> bytes:
    """The UTF-8 bytes every text file is written as. backslashreplace: a lone surrogate (half
    an emoji a model sent) becomes `\\udXXX` text, which a JSON string reads back as the same
    character, instead of failing the write."""
    return text.encode("utf-8", "backslashreplace")


def _token() -> str:
    return os.urandom(6).hex()


def _temp_name(name: str) -> str:
    raw = os.fsencode(name)
    stem = name if len(raw) <= _STEM_BYTES else os.fsdecode(raw[:_STEM_BYTES])
    return f".{stem}.{_token()}.tmp"


def open_temp(
    name: str, *, dir_fd: int | None = None, folder: Path | None = None, mode: int = 0o666
) -> tuple[int, str]:
    """Create a fresh temp file for `name` exclusively: (its fd, its name). Raises OSError.

    The temp file lies in `dir_fd` (a descriptor of the folder) or in `folder`; a taken name
    (whatever it is, a link included) is skipped for another random one. `mode` is created
    with (0o600 for a secret: it is never readable by others, not even for a moment)."""
    for attempt in range(_TEMP_TRIES):
        tmp = _temp_name(name)
        try:
            if dir_fd is not None:
                return os.open(tmp, _TEMP_FLAGS, mode, dir_fd=dir_fd), tmp
            return os.open((folder or Path(".")) / tmp, _TEMP_FLAGS, mode), tmp
        except FileExistsError:
            if attempt == _TEMP_TRIES - 1:
                raise
    raise AssertionError("unreachable")


def write_all(fd: int, data: bytes) -> None:
    """Write every byte of `data` to `fd` (os.write may write less than asked)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def replace_at(dir_fd: int, name: str, data: bytes, *, durable: bool = True, mode: int = 0o666) -> os.stat_result:
    """Replace the entry `name` of the folder `dir_fd` with `data`, atomically: gives the new
    file's stat. Raises OSError (the temp file is gone then). A link at `name` is replaced as
    an entry, never followed."""
    fd, tmp = open_temp(name, dir_fd=dir_fd, mode=mode)
    try:
        try:
            write_all(fd, data)
            if durable:
                os.fsync(fd)
            st = os.fstat(fd)
        finally:
            os.close(fd)
        os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dir_fd)
        raise
    return st


def _make_folder(path: Path) -> None:
    """Create `path`'s folder (and its parents); a file in the way is a write failure, not a
    FileExistsError (which write_once reads as "the target exists")."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except FileExistsError as exc:
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(path.parent)) from exc


def write_atomic(path: Path, text: str | bytes, *, durable: bool = True) -> None:
    """Replace `path` with `text` (or bytes): temp file, fsync, rename. Readers see old or new, never torn."""
    data = text if isinstance(text, bytes) else encode_text(text)
    tmp: Path | None = None
    try:
        _make_folder(path)
        fd, name = open_temp(path.name, folder=path.parent)
        tmp = path.parent / name
        try:
            write_all(fd, data)
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
        tmp = None  # it is the target now
    except OSError as exc:
        raise ToolbenchError("storage.write_failed", f"cannot write {path}: {exc.strerror or exc}") from exc
    finally:  # any failure, an interrupt too, takes the temp file back
        if tmp is not None:
            with contextlib.suppress(OSError):
                tmp.unlink()


def write_once(path: Path, text: str | bytes, *, read_only: bool = True) -> None:
    """Create `path` with `text` (or bytes); refuse if it exists. Written whole, then made read-only."""
    data = text if isinstance(text, bytes) else encode_text(text)
    tmp: Path | None = None
    try:
        _make_folder(path)
        fd, name = open_temp(path.name, folder=path.parent)
        tmp = path.parent / name
        try:
            write_all(fd, data)
            if read_only:
                os.fchmod(fd, 0o444)
        finally:
            os.close(fd)
        os.link(tmp, path, follow_symlinks=False)  # fails if path exists: never overwrites
    except FileExistsError as exc:
        raise ToolbenchError("storage.already_exists", f"{path} exists already and is write-once") from exc
    except OSError as exc:
        raise ToolbenchError("storage.write_failed", f"cannot write {path}: {exc.strerror or exc}") from exc
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                tmp.unlink()


def read_regular_file(path: str | Path, limit: int, *, follow_links: bool = True) -> bytes:
    """The bytes of the regular file at `path`, at most `limit` of them.

    Raises OSError, its `strerror` a reason to show: the system's (no such file, permission
    denied), or that the path is not a regular file (EISDIR, EINVAL naming its kind), is a link
    while `follow_links` is false (ELOOP: a file the runtime keeps, where a planted link must not
    be followed), or is over `limit` bytes (EFBIG). Never blocks on a FIFO or a device (see the
    module docstring)."""
    try:
        fd = os.open(path, _READ_FLAGS if follow_links else _READ_FLAGS | os.O_NOFOLLOW)
    except OSError as exc:
        if exc.errno == errno.ELOOP and not follow_links:
            raise OSError(errno.ELOOP, "a link, which is not followed", str(path)) from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            if stat.S_ISDIR(st.st_mode):
                raise IsADirectoryError(errno.EISDIR, "a folder, not a file", str(path))
            raise OSError(errno.EINVAL, f"a {_kind(st.st_mode)}, not a regular file", str(path))
        data = read_capped(fd, limit, st.st_size) if st.st_size <= limit else None
        if data is None:
            raise OSError(errno.EFBIG, f"larger than the {limit:,}-byte limit", str(path))
        return data
    finally:
        os.close(fd)


def read_capped(fd: int, limit: int, size_hint: int = 0) -> bytes | None:
    """The bytes from `fd` to its end, or None once there are more than `limit`.

    `size_hint` (the fstat size) sizes the first read, so a whole file is usually one read: `fd`
    is a regular file, whose reads come up short only at its end. A file that grows meanwhile
    meets the cap."""
    want = min(size_hint, limit) + 1
    chunks: list[bytes] = []
    size = 0
    while chunk := os.read(fd, want):
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            return None
        if len(chunk) < want:
            break
        want = min(limit + 1 - size, 1 << 20)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "FIFO"
    if stat.S_ISSOCK(mode):
        return "socket"
    return "device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "special file"
