"""Child processes and their stderr logs: kill a stdio server's group, keep its stderr in a capped
log, read a log tail.

The server's pid comes from the SDK's stdio transport (`_transport.StdioTransport`); liveness is read
from /proc where there is one (Linux), so a zombie counts as gone.

A log lies in the workspace's runtime folder, where a hostile workspace may have planted a FIFO,
a device or a link at its name: the log removes whatever entry is there (never opening it) and
makes a regular file (`runtime_files.open_log`); when it cannot, the server's stderr is drained
and dropped. The tail is read as a runtime file too (a regular file, its last bytes only).
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from pathlib import Path
from typing import BinaryIO, TextIO

from ..core.errors import ToolbenchError
from ..tools.workspace.runtime_files import open_log, read_runtime_file, remove_runtime_file

LOG_MAX_BYTES = 1 << 20  # per log file; with the one rotated file, a server's stderr keeps at most 2 MiB
_PROC = Path("/proc")


def is_alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    with contextlib.suppress(OSError, IndexError):
        state = (_PROC / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
        return state not in ("Z", "X")
    return True


def kill_group(pid: int) -> None:
    """SIGKILL the process group a stdio server leads (the SDK starts each in its own session)."""
    with contextlib.suppress(OSError):
        if os.getpgid(pid) == pid and pid != os.getpgid(0):
            os.killpg(pid, signal.SIGKILL)
            return
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL)


def tail_lines(path: Path | None, lines: int = 20, max_bytes: int = 16_384) -> tuple[str, ...]:
    """The last `lines` lines of a log file (at most `max_bytes` read), empty if none."""
    if path is None:
        return ()
    try:
        data = read_runtime_file(path.parent, path.name, limit=max_bytes, tail=True)
    except ToolbenchError:  # not a regular file, a link: not a log this bench wrote
        return ()
    if data is None:
        return ()
    text = data.decode("utf-8", errors="replace")
    parts = text.splitlines()
    if len(data) >= max_bytes and parts:
        parts = parts[1:]  # the first line read is probably cut
    return tuple(line[:500] for line in parts[-lines:])


def _fresh_log(path: Path) -> BinaryIO | None:
    """An empty regular file at `path`, whatever entry was there (removed, never opened); None
    when none can be made."""
    try:
        remove_runtime_file(path.parent, path.name)
        fd = open_log(path.parent, path.name)
    except ToolbenchError:
        return None
    try:
        os.ftruncate(fd, 0)  # made again between the two steps: still a fresh log
    except OSError:
        os.close(fd)
        return None
    return os.fdopen(fd, "wb")


class CappedLog:
    """A stderr for a child process that keeps its newest output in `path`, at most 2 files of
    `max_bytes` (`path` and `path.1`): a chatty or looping server cannot fill the disk.

    The child writes to a pipe (`writer`, handed to the SDK as errlog); a daemon thread copies
    the pipe to the log and always drains it, so the child never blocks on its stderr. Call
    `close()` when the connection ends: the copy then ends once the child's end closes too."""

    def __init__(self, path: Path, max_bytes: int = LOG_MAX_BYTES) -> None:
        self.path = path
        self.max_bytes = max_bytes
        with contextlib.suppress(OSError):  # missing, or a planted folder: the log starts anew either way
            os.unlink(f"{path}.1")
        self._log = _fresh_log(path)  # closed by the copy thread; first, so a failure leaks no pipe
        self._size = 0
        read_fd, write_fd = os.pipe()
        self.writer: TextIO = os.fdopen(write_fd, "w", encoding="utf-8", errors="replace")
        self._thread = threading.Thread(target=self._copy, args=(read_fd,), name="toolbench-mcp-stderr", daemon=True)
        self._thread.start()

    def _copy(self, read_fd: int) -> None:
        writable = self._log is not None
        try:
            while chunk := os.read(read_fd, 65536):
                if not writable:
                    continue  # the disk refused the log: drain and drop, so the child never blocks
                try:
                    chunk = chunk[-self.max_bytes:]  # a chunk over the cap keeps its newest part
                    if self._size + len(chunk) > self.max_bytes and self._size:
                        self._rotate()
                    if self._log is None:
                        raise OSError("the log could not be made again after its rotation")
                    self._log.write(chunk)
                    self._log.flush()
                    self._size += len(chunk)
                except OSError:
                    writable = False
        finally:
            os.close(read_fd)
            if self._log is not None:
                with contextlib.suppress(OSError):
                    self._log.close()

    def _rotate(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None
        os.replace(self.path, f"{self.path}.1")
        self._log = _fresh_log(self.path)
        self._size = 0

    def close(self, wait: float = 0.5) -> None:
        """Close this process's end of the pipe and wait (up to `wait` s) for the copy to end,
        which it does once the child's end closes too: a stopped server's last words are in
        the log before its diagnostic reads them."""
        self.writer.close()
        self._thread.join(wait)
