"""Reading a small file the tools keep (a SKILL.md, a memory note) by host path, safely.

Such a file may be planted: a FIFO (reading blocks forever), a device or a link to one
(`/dev/zero` never ends), a sparse file of gigabytes. `read_regular` opens the last name with
O_NOFOLLOW|O_NONBLOCK and keeps it only if fstat says it is a regular file
(`workspace.beneath.open_regular`), then reads at most `limit` bytes (`beneath.read_all`), so
no file can block the call or fill the memory. The callers turn `Unreadable` into their codes.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from .workspace import beneath


class Unreadable(Exception):
    """The file is there but is not read; `reason` completes "`<file>` ..."."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def read_regular(path: Path, limit: int) -> bytes:
    """The bytes of the regular file `path` (its last name not a link), at most `limit` of them.

    FileNotFoundError when it does not exist; Unreadable for a link, folder, FIFO or device, a
    file over `limit` bytes, or an OS refusal."""
    try:
        fd, st = _open(path)
        try:
            data = beneath.read_all(fd, limit, st.st_size)
        finally:
            os.close(fd)
    except beneath.NotRegular:
        raise Unreadable("is not a regular file (a folder, FIFO or device)") from None
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            raise
        raise Unreadable("is a link, which is not followed" if exc.errno == errno.ELOOP else
                         f"cannot be read ({exc.strerror or type(exc).__name__})") from None
    if data is None:
        raise Unreadable(f"is over {limit} bytes")
    return data


def head(path: Path, size: int) -> bytes:
    """The first `size` bytes of the regular file `path`; b"" when it is not one (or is gone)."""
    try:
        fd, _ = _open(path)
        try:
            return os.read(fd, size)
        finally:
            os.close(fd)
    except (OSError, beneath.NotRegular):
        return b""


def _open(path: Path) -> tuple[int, os.stat_result]:
    dir_fd = os.open(path.parent, beneath.DIR_FLAGS)
    try:
        return beneath.open_regular(dir_fd, path.name)
    finally:
        os.close(dir_fd)
