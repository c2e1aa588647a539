"""Child processes and their stderr logs: find a stdio server's pid, kill its group, keep its
stderr in a capped log, read a log tail.

The SDK's stdio transport does not expose the process it starts, so each server is started with
a unique `TOOLBENCH_MCP_TOKEN` in its environment and found again under /proc (Linux). Elsewhere
the pid is unknown and only the SDK's own shutdown stops the server.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from pathlib import Path
from typing import IO

TOKEN_VAR = "TOOLBENCH_MCP_TOKEN"
LOG_MAX_BYTES = 1 << 20  # per log file; with the one rotated file, a server's stderr keeps at most 2 MiB
_PROC = Path("/proc")


def find_child(token: str) -> int | None:
    """The pid of this process's child started with `TOOLBENCH_MCP_TOKEN=<token>`, if any.

    Returns -1 when a child's environment cannot be read yet (it is between fork and exec:
    vfork lets the parent go on before the new program's environment is in place): try again."""
    if not _PROC.is_dir():
        return None
    me = os.getpid()
    needle = f"{TOKEN_VAR}={token}".encode()
    unreadable = False
    for entry in _PROC.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if _parent_of(entry) != me:
                continue
            environ = (entry / "environ").read_bytes()
        except (OSError, ValueError):
            continue
        if needle in environ.split(b"\0"):
            return int(entry.name)
        unreadable = unreadable or not environ
    return -1 if unreadable else None


def _parent_of(entry: Path) -> int:
    stat = (entry / "stat").read_text()
    # `pid (comm) state ppid ...`; comm may hold spaces and parentheses.
    return int(stat.rsplit(")", 1)[1].split()[1])


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
        with path.open("rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - max_bytes))
            data = f.read()
    except OSError:
        return ()
    text = data.decode("utf-8", errors="replace")
    parts = text.splitlines()
    if size > max_bytes and parts:
        parts = parts[1:]  # the first line read is probably cut
    return tuple(line[:500] for line in parts[-lines:])


class CappedLog:
    """A stderr for a child process that keeps its newest output in `path`, at most 2 files of
    `max_bytes` (`path` and `path.1`): a chatty or looping server cannot fill the disk.

    The child writes to a pipe (`writer`, handed to the SDK as errlog); a daemon thread copies
    the pipe to the log and always drains it, so the child never blocks on its stderr. Call
    `close()` once the child has been started: the copy ends when the child's end closes."""

    def __init__(self, path: Path, max_bytes: int = LOG_MAX_BYTES) -> None:
        self.path = path
        self.max_bytes = max_bytes
        read_fd, write_fd = os.pipe()
        self.writer: IO[str] = os.fdopen(write_fd, "w", encoding="utf-8", errors="replace")
        self._thread = threading.Thread(target=self._copy, args=(read_fd,), name="toolbench-mcp-stderr", daemon=True)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(f"{path}.1")
        self._log = open(path, "wb")  # noqa: SIM115 (closed by the copy thread)
        self._size = 0
        self._thread.start()

    def _copy(self, read_fd: int) -> None:
        writable = True
        try:
            while chunk := os.read(read_fd, 65536):
                if not writable:
                    continue  # the disk refused the log: drain and drop, so the child never blocks
                try:
                    chunk = chunk[-self.max_bytes:]  # a chunk over the cap keeps its newest part
                    if self._size + len(chunk) > self.max_bytes and self._size:
                        self._rotate()
                    self._log.write(chunk)
                    self._log.flush()
                    self._size += len(chunk)
                except OSError:
                    writable = False
        finally:
            os.close(read_fd)
            with contextlib.suppress(OSError):
                self._log.close()

    def _rotate(self) -> None:
        self._log.close()
        os.replace(self.path, f"{self.path}.1")
        self._log = open(self.path, "wb")  # noqa: SIM115
        self._size = 0

    def close(self, wait: float = 0.5) -> None:
        """Close this process's end of the pipe and wait (up to `wait` s) for the copy to end,
        which it does once the child's end closes too: a stopped server's last words are in
        the log before its diagnostic reads them."""
        self.writer.close()
        self._thread.join(wait)
