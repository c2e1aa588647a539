"""`toolbench lab`: the working copy of the notebooks, the coded errors, and stopping the server.

The whole path through a real JupyterLab from an installed wheel is tests/test_wheel.py."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from tests.deadline import ROOT, run_with_deadline
from toolbench import lab
from toolbench.core.errors import CODES, ToolbenchError

BUNDLED = sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))


def test_a_checkout_serves_its_own_notebooks_folder() -> None:
    assert lab.bundled_notebooks() == ROOT / "notebooks"


def test_the_copy_holds_every_bundled_notebook_and_is_writable(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b"
    copied = lab.copy_notebooks(target)
    assert [p.name for p in copied] == BUNDLED
    assert (target / BUNDLED[0]).read_bytes() == (ROOT / "notebooks" / BUNDLED[0]).read_bytes()
    assert (target / BUNDLED[0]).stat().st_mode & stat.S_IWUSR


def test_the_copy_never_overwrites_a_users_file(tmp_path: Path) -> None:
    (tmp_path / BUNDLED[0]).write_text("my edits")
    os.symlink(tmp_path / "elsewhere", tmp_path / BUNDLED[1])  # a dangling link is the user's too
    copied = lab.copy_notebooks(tmp_path)
    assert [p.name for p in copied] == BUNDLED[2:]
    assert (tmp_path / BUNDLED[0]).read_text() == "my edits"
    assert not (tmp_path / "elsewhere").exists()
    assert lab.copy_notebooks(tmp_path) == []  # a second start copies nothing


def test_the_installed_notebooks_are_only_read(tmp_path: Path) -> None:
    source = tmp_path / "installed"
    source.mkdir()
    (source / "01-a.ipynb").write_text("{}")
    (source / "01-a.ipynb").chmod(0o444)
    before = (source / "01-a.ipynb").stat()
    lab.copy_notebooks(tmp_path / "copy", source)
    after = (source / "01-a.ipynb").stat()
    assert (after.st_mtime_ns, after.st_mode) == (before.st_mtime_ns, before.st_mode)
    assert (tmp_path / "copy" / "01-a.ipynb").stat().st_mode & stat.S_IWUSR  # the copy is the user's to edit


@pytest.mark.parametrize("where", ["file", "under_a_file"])
def test_a_dir_that_is_a_file_is_refused_with_a_code(tmp_path: Path, where: str) -> None:
    (tmp_path / "f").write_text("x")
    target = tmp_path / "f" if where == "file" else tmp_path / "f" / "nb"
    with pytest.raises(ToolbenchError) as caught:
        lab.copy_notebooks(target)
    assert caught.value.code == "lab.dir_not_a_folder"


def test_the_command_reports_a_file_dir_with_its_code(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "f").write_text("x")
    assert lab.main(["--dir", str(tmp_path / "f")]) == 2
    assert capsys.readouterr().err.startswith("toolbench: lab.dir_not_a_folder: ")


def test_toolbench_lab_goes_to_the_lab_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from toolbench.cli import main

    (tmp_path / "f").write_text("x")
    assert main(["lab", "--dir", str(tmp_path / "f"), "--no-browser"]) == 2
    assert capsys.readouterr().err.startswith("toolbench: lab.dir_not_a_folder: ")


def test_without_jupyterlab_the_command_says_which_extra(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lab, "find_spec", lambda name: None)
    assert lab.main(["--dir", str(tmp_path / "nb")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("toolbench: lab.jupyterlab_missing: ") and "toolbench[lab]" in err
    assert not (tmp_path / "nb").exists()  # nothing copied for a lab that cannot start


def test_the_lab_codes_are_listed() -> None:
    codes = {"lab.jupyterlab_missing", "lab.dir_not_a_folder", "lab.dir_unwritable", "lab.notebooks_missing",
             "lab.address_unavailable"}
    assert codes <= set(CODES)


def test_jupyter_gets_the_port_the_folder_and_the_users_options_but_not_the_token(tmp_path: Path) -> None:
    command = lab.jupyter_command(tmp_path, ip="127.0.0.1", port=8999, extra=["--no-browser"])
    assert command[1:4] == ["-m", "jupyter", "lab"]
    assert {f"--ServerApp.root_dir={tmp_path}", "--ServerApp.port=8999", "--ServerApp.port_retries=0",
            "--no-browser"} <= set(command)
    assert not [part for part in command if "token" in part.lower()]  # `ps` shows a command line to everyone


def test_an_address_that_cannot_be_bound_is_coded(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert lab.main(["--dir", str(tmp_path / "nb"), "--port", str(port)]) == 2
    assert lab.main(["--dir", str(tmp_path / "nb"), "--ip", "no-such-host.invalid"]) == 2
    lines = capsys.readouterr()
    assert lines.err.count("toolbench: lab.address_unavailable:") == 2 and "serving" not in lines.out


# A "server" that ignores SIGTERM and has a child of its own: stopping must still leave nothing.
STUBBORN = r"""
import os, signal, subprocess, sys, threading, time
from pathlib import Path
from toolbench import lab

lab.GRACE_SECONDS = 1.0
marks = Path(sys.argv[1])
server = ('import signal, subprocess, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); '
          'child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"]); '
          'open(sys.argv[1], "w").write(f"{child.pid}"); time.sleep(600)')

def stop_soon():
    while not marks.exists() or not marks.read_text():
        time.sleep(0.05)  # bounded by the deadline
    os.kill(os.getpid(), getattr(signal, sys.argv[2]))

threading.Thread(target=stop_soon, daemon=True).start()
status = lab._serve([sys.executable, "-c", server, str(marks)], cwd=marks.parent, env=dict(os.environ),
                    ready=lab.Ready('never printed', 'http://127.0.0.1:9/api/status', 't'))
child = int(marks.read_text())

def alive():  # a zombie waiting for init to reap it is gone too
    try:
        return Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False

until = time.monotonic() + 10  # SIGKILL is delivered at once, but the process takes a moment to die
while alive() and time.monotonic() < until:
    time.sleep(0.05)
report({"status": status, "grandchild_alive": alive()})
"""


@pytest.mark.parametrize(("signame", "status"), [("SIGTERM", 143), ("SIGINT", 130), ("SIGHUP", 129)])
def test_a_stop_signal_stops_the_server_group_even_a_stubborn_one(tmp_path: Path, signame: str, status: int) -> None:
    outcome = run_with_deadline(STUBBORN, deadline=60, args=(str(tmp_path / "pid"), signame))
    assert outcome == {"status": status, "grandchild_alive": False}


# A stop that lands while the server is being started (the reviewer's race: 11 of 20 runs left
# the server running): the signal is sent from inside Popen, before it returns.
STOP_WHILE_STARTING = r"""
import os, signal, subprocess, sys, time
from pathlib import Path
from toolbench import lab

marks = Path(sys.argv[1])
real = subprocess.Popen

def popen(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGTERM)  # noted by the handler; Popen goes on
    return real(*args, **kwargs)

subprocess.Popen = popen
server = 'import sys, time; open(sys.argv[1], "w").write(str(__import__("os").getpid())); time.sleep(600)'
status = lab._serve([sys.executable, "-c", server, str(marks)], cwd=marks.parent, env=dict(os.environ),
                    ready=lab.Ready('never printed', 'http://127.0.0.1:9/api/status', 't'))
until = time.monotonic() + 10
while not marks.exists() and time.monotonic() < until:
    time.sleep(0.05)
pid = int(marks.read_text()) if marks.exists() and marks.read_text() else None
def state(pid):
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return "gone"

alive = pid is not None and state(pid) not in ("Z", "gone")
report({"status": status, "alive": alive})
"""


def test_a_stop_while_the_server_starts_still_stops_it(tmp_path: Path) -> None:
    outcome = run_with_deadline(STOP_WHILE_STARTING, deadline=60, args=(str(tmp_path / "pid"),))
    assert outcome == {"status": 143, "alive": False}


# The parent killed with SIGKILL (no handler runs): the server is told by the kernel
# (PR_SET_PDEATHSIG: Linux, where the suite runs).
KILLED_PARENT = r"""
import os, signal, subprocess, sys, time
from pathlib import Path

marks = Path(sys.argv[1])
server = 'import sys, time; open(sys.argv[1], "w").write(str(__import__("os").getpid())); time.sleep(600)'
serve = ("import os, sys; from toolbench import lab; "
         "lab._serve([sys.executable, '-c', sys.argv[1], sys.argv[2]], cwd='.', env=dict(os.environ), "
         "ready=lab.Ready('never printed', 'http://127.0.0.1:9/api/status', 't'))")
parent = subprocess.Popen([sys.executable, "-c", serve, server, str(marks)])
until = time.monotonic() + 20
while not (marks.exists() and marks.read_text()) and time.monotonic() < until:
    time.sleep(0.05)
pid = int(marks.read_text())
parent.kill()
parent.wait()
def state(pid):
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return "gone"

until = time.monotonic() + 10
while state(pid) not in ("Z", "gone") and time.monotonic() < until:
    time.sleep(0.05)
report(state(pid) in ("Z", "gone"))
"""


def test_a_killed_lab_takes_its_server_with_it(tmp_path: Path) -> None:
    assert run_with_deadline(KILLED_PARENT, deadline=60, args=(str(tmp_path / "pid"),)) is True


def test_copies_that_differ_from_the_bundled_ones_are_named(tmp_path: Path) -> None:
    source = tmp_path / "bundled"
    source.mkdir()
    (source / "a.ipynb").write_text("new a")
    (source / "b.ipynb").write_text("b")
    target = tmp_path / "copy"
    lab.copy_notebooks(target, source)
    (target / "a.ipynb").write_text("my edits of the old a")
    assert lab.stale_copies(target, source) == ["a.ipynb"]


# `toolbench lab` on a stand-in for jupyter lab (argv[2] picks which; another name: the real
# one), with a start limit of argv[3] seconds: the exit status, stdout and stderr.
STAND_IN = r"""
import contextlib, io, sys
from toolbench import lab

answers = '''
import http.server, os, sys
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        ok = self.path == "/api/status" and self.headers["Authorization"] == "token " + os.environ["JUPYTER_TOKEN"]
        self.send_response(200 if ok else 403)
        self.end_headers()
        self.server.answered = ok
    def log_message(self, *args):
        pass
server = http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Handler)
server.answered = False
while not server.answered:
    server.handle_request()
'''
elsewhere = '''
import http.server, sys
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # a server under a base_url: our /api/status is not there
        self.send_response(404)
        self.end_headers()
    def log_message(self, *args):
        pass
server = http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Handler)
server.handle_request()
'''
servers = {
    "elsewhere": elsewhere,
    "exits": "import sys; print('jupyter: unrecognized arguments: --foo-bar', file=sys.stderr); sys.exit(2)",
    "answers": answers,
    "silent": "import time; time.sleep(600)",
}
if sys.argv[2] in servers:
    lab.jupyter_command = lambda root, *, ip, port, extra: [sys.executable, "-c", servers[sys.argv[2]], str(port)]
lab.START_SECONDS = float(sys.argv[3])
out, err = io.StringIO(), io.StringIO()
with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
    code = lab.main(["--dir", sys.argv[1], "--foo-bar", "--no-browser"])
report([code, out.getvalue(), err.getvalue()])
"""


def lab_with(tmp_path: Path, server: str, start_seconds: float = 60) -> tuple[int, str, str]:
    code, out, err = run_with_deadline(STAND_IN, deadline=120, args=(str(tmp_path / "nb"), server, str(start_seconds)))
    return code, out, err


@pytest.mark.parametrize("server", ["exits", "jupyter lab"])
def test_a_server_that_exits_before_answering_prints_no_url_but_its_status(tmp_path: Path, server: str) -> None:
    code, out, err = lab_with(tmp_path, server)  # "jupyter lab": the real one, which refuses --foo-bar
    assert (code, out) == (2, "")
    assert err.startswith("toolbench: lab.server_exited: ") and "status 2" in err


def test_the_url_is_printed_once_the_server_answers_with_the_token(tmp_path: Path) -> None:
    code, out, err = lab_with(tmp_path, "answers")
    assert (code, err) == (0, "")
    assert out.startswith("toolbench lab: serving ") and "/lab?token=" in out and len(out.splitlines()) == 1


def test_a_server_whose_url_the_users_options_changed_is_announced_and_kept(tmp_path: Path) -> None:
    code, out, err = lab_with(tmp_path, "elsewhere")  # it exits by itself after one answer
    assert (code, len(out.splitlines())) == (0, 1) and "/lab?token=" in out
    assert "answered 404 where that URL expects 200" in err and "server_not_answering" not in err


def test_a_server_that_never_answers_is_stopped_at_the_start_limit(tmp_path: Path) -> None:
    code, out, err = lab_with(tmp_path, "silent", start_seconds=1)
    assert (code, out) == (2, "")
    assert err.startswith("toolbench: lab.server_not_answering: ")


def test_the_status_probe_asks_the_loopback_of_a_wildcard_address() -> None:
    assert lab._url(lab._PROBE_HOSTS.get("::", "::"), 8888) == "http://[::1]:8888"
    assert lab._url(lab._PROBE_HOSTS.get("0.0.0.0", "0.0.0.0"), 8888) == "http://127.0.0.1:8888"


@pytest.mark.parametrize("given", [["--ServerApp.port_retries=3"], ["--ServerApp.port_retries", "3"],
                                   ["--port-retries=3"]])
def test_an_option_the_user_gives_wins_over_toolbenchs_own(tmp_path: Path, given: list[str]) -> None:
    command = lab.jupyter_command(tmp_path, ip="127.0.0.1", port=8999, extra=given)
    assert not [a for a in command if a.startswith("--ServerApp.port_retries=0")]  # traitlets takes one only
    assert command[-len(given):] == given or command[-len(given) - 1:-1] == given
    assert "--ServerApp.port=8999" in command and f"--ServerApp.root_dir={tmp_path}" in command
    mine = lab.jupyter_command(tmp_path, ip="0.0.0.0", port=1, extra=["--ServerApp.root_dir=/srv", "--ip=::1"])
    assert not [a for a in mine if a.startswith(("--ServerApp.root_dir=" + str(tmp_path), "--ServerApp.ip="))]


def test_the_shipped_notebooks_hold_no_widget_state() -> None:
    """`nbconvert --execute` saves every widget's state into the notebook (megabytes of it) unless
    told not to (CONTRIBUTING's command); JupyterLab saves none by default. A shipped notebook
    holds only its outputs."""
    for name in BUNDLED:
        notebook = json.loads((ROOT / "notebooks" / name).read_text(encoding="utf-8"))
        assert "widgets" not in notebook["metadata"], f"{name} carries widget state: re-execute it as CONTRIBUTING says"
