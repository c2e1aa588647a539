"""Helpers for the MCP tests: the fault servers, and bounded waits on child processes (read
from /proc: no sleeps, no psutil)."""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

SERVERS = Path(__file__).parent / "servers"


def fault_server(name: str) -> list[str]:
    """The command that runs `tests/mcp/servers/<name>.py`."""
    return [sys.executable, str(SERVERS / f"{name}.py")]


def child_pids() -> set[int]:
    """This process's live children (zombies included: an unreaped child is a leak too)."""
    me, out = os.getpid(), set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == me:
            out.add(int(entry.name))
    return out


def wait_until(predicate: Callable[[], bool], timeout: float = 10.0) -> bool:
    """Poll `predicate` until it holds or `timeout` seconds pass (a bounded wait, not a sleep)."""
    deadline = time.monotonic() + timeout
    tick = threading.Event()
    while not predicate():
        if time.monotonic() > deadline:
            return False
        tick.wait(0.02)
    return True


def no_new_children(baseline: set[int], timeout: float = 10.0) -> bool:
    return wait_until(lambda: not (child_pids() - baseline), timeout)

