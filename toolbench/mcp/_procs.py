"""Child processes and their stderr logs: find a stdio server's pid, kill its group, read a log tail.

The SDK's stdio transport does not expose the process it starts, so each server is started with
a unique `TOOLBENCH_MCP_TOKEN` in its environment and found again under /proc (Linux). Elsewhere
the pid is unknown and only the SDK's own shutdown stops the server.
"""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path

TOKEN_VAR = "TOOLBENCH_MCP_TOKEN"
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
