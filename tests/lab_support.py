"""Drive a `toolbench lab` process the way a user does: read its URL, open it, stop it.

`drive_lab` runs inside a `tests/deadline.py` child (it starts servers and sends signals), so
a server that never answers or never stops fails the test instead of freezing the suite.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

URL_LINE = re.compile(r"^toolbench lab: serving (?P<dir>.+) at (?P<url>http://127\.0\.0\.1:(?P<port>\d+)/lab\?token=(?P<token>\w+))$")
START_S = 90.0  # JupyterLab's first start on 2 busy cores
STOP_S = 30.0


def drive_lab(command: list[str], *, cwd: str, env: dict[str, str], notebook: str) -> dict[str, Any]:
    """Start `command` (a `toolbench lab ...`), wait for its URL line, GET the URL and the
    contents API entry of `notebook`, send SIGTERM, and report what was seen and what is left."""
    with tempfile.TemporaryFile("w+") as log:  # Jupyter's log: a file, so a full pipe never blocks the server
        return _drive(command, cwd=cwd, env=env, notebook=notebook, log=log)


def _drive(command: list[str], *, cwd: str, env: dict[str, str], notebook: str, log: Any) -> dict[str, Any]:
    lab = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=log, text=True)
    try:
        assert lab.stdout is not None
        first = lab.stdout.readline().rstrip("\n")  # the URL line, printed once the server answers
        match = URL_LINE.match(first)
        if match is None:
            lab.kill()
            lab.wait()
            raise AssertionError(f"no URL line: {first!r}; stderr:\n{_tail(log)}")
        url, port, token = match["url"], int(match["port"]), match["token"]
        page = _get_when_up(url, lab)
        contents = json.loads(_get(f"http://127.0.0.1:{port}/api/contents/{notebook}?content=0", token)[1])
        servers = _children(lab.pid)
        lab.send_signal(signal.SIGTERM)
        lab_status = lab.wait(timeout=STOP_S)
        until = time.monotonic() + 10  # a killed process takes a moment to die
        while (left := [pid for pid in servers if _alive(pid) or _group_members(pid)]) and time.monotonic() < until:
            time.sleep(0.05)
        return {"dir": match["dir"], "page_status": page, "contents": contents, "servers": servers,
                "lab_status": lab_status, "left": left, "port_open": _port_open(port),
                "stderr": _tail(log)}
    finally:
        if lab.poll() is None:
            lab.kill()
            lab.wait()


def _tail(log: Any) -> str:
    log.seek(0)
    return str(log.read())[-3000:]


def _get(url: str, token: str | None = None) -> tuple[int, str]:
    request = urllib.request.Request(url, headers={"Authorization": f"token {token}"} if token else {})
    with urllib.request.urlopen(request, timeout=5) as response:
        return response.status, response.read().decode()


def _get_when_up(url: str, lab: subprocess.Popen[str]) -> int:
    deadline = time.monotonic() + START_S
    while time.monotonic() < deadline:
        if lab.poll() is not None:
            raise AssertionError(f"toolbench lab exited {lab.returncode} before answering")
        try:
            return _get(url)[0]
        except OSError:
            time.sleep(0.25)  # polling a server that is starting: a bounded wait, not a sleep-for-correctness
    raise AssertionError(f"{url} did not answer in {START_S} s")


def _stat(pid: int) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2:].split()  # after "pid (comm) ": state, ppid, pgrp, ...


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (fields := _stat(int(entry))) is not None and fields[1] == str(pid):
            found.append(int(entry))
    return found


def _alive(pid: int) -> bool:
    fields = _stat(pid)
    return fields is not None and fields[0] != "Z"


def _group_members(pgid: int) -> list[int]:
    return [int(e) for e in os.listdir("/proc")
            if e.isdigit() and (fields := _stat(int(e))) is not None and fields[2] == str(pgid) and fields[0] != "Z"]


def _port_open(port: int) -> bool:
    with socket.socket() as probe:
        probe.settimeout(2)
        return probe.connect_ex(("127.0.0.1", port)) == 0
