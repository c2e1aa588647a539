"""What a model or a workspace can send never takes the shell down (issue 12): a FIFO, a file
larger than memory, a root folder removed, a pool of interpreters churned by many workdirs.

Cases that could hang or fill the machine run in a child process with a deadline
(`tests.deadline`); the child builds its own bench on a scratch folder and calls the shell
through `inv.call`, with a 2 s shell timeout so a stuck call is over quickly.
"""

from __future__ import annotations

import os
import textwrap
import threading
import time
from pathlib import Path
from typing import Any, ClassVar

import pytest

from tests.deadline import run_with_deadline
from toolbench.core.shell_settings import ShellSettings
from toolbench.tools.workspace import shell_pool, shell_survey
from toolbench.tools.workspace.shell_engine import Mount, _Job, run_shell_blocking
from toolbench.tools.workspace.shell_pool import _Idle

TIMEOUT = 2.0  # the children's shell timeout, seconds
RSS_BOUND_KB = 200 * 1024  # peak memory a child may grow by while the shell meets a 1 GiB file

# The child's prelude: argv[1] a scratch folder; `bench` is a bench on it, `call` runs the shell
# and returns (error code or "ok", seconds, content); `peak_kb` is the child's VmHWM.
CHILD = f"""
TIMEOUT = {TIMEOUT!r}
import os, sys, threading, time
from pathlib import Path
from toolbench import Profile, Workbench
SCRATCH = Path(sys.argv[1])
PROFILE = Profile.default().edit(allow=["builtin:workspace.shell"], max_calls_per_run=100_000, max_rounds=100_000,
                                 shell={{"timeout_seconds": TIMEOUT}})
bench = Workbench(SCRATCH / "ws", profile=PROFILE)
inv = bench.invocation("chat")
WS = bench.workspace
def call(command, workdir="/"):
    started = time.monotonic()
    r = inv.call("workspace_shell", {{"command": command, "workdir": workdir}})
    return r.error_code or "ok", time.monotonic() - started, r.content
def peak_kb():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
call("echo warm")  # the roots exist and the engine is loaded before anything is measured
"""


def _child(script: str, tmp_path: Path, *, deadline: float = 60.0) -> Any:
    return run_with_deadline(CHILD + textwrap.dedent(script), deadline=deadline, args=(str(tmp_path),))


# ---- FIFOs and a pool churned by workdirs ----


def test_a_call_stuck_on_a_fifo_then_40_workdirs_leave_the_shell_answering(tmp_path: Path) -> None:
    # The FIFO appears while the command runs (after any check made before it), so the read
    # really blocks; the stuck interpreter's configuration is then pushed out of the pool by
    # 40 others. Before the fix the drop blocked under the pool's lock: every later call timed out.
    result = _child("""
        fifo = WS / "work" / "late"
        def plant():
            deadline = time.monotonic() + 20
            while not (WS / "work" / "go").exists() and time.monotonic() < deadline:
                threading.Event().wait(0.002)
            os.mkfifo(fifo)
        threading.Thread(target=plant, daemon=True).start()
        stuck = call("echo > /work/go; until [ -e /work/late ]; do sleep 0.01; done; cat /work/late")
        os.unlink(fifo)  # the blocked open stays blocked; the workspace itself is clean again
        for i in range(40):
            (WS / "work" / f"d{i}").mkdir()
        churn = [call("echo hi | wc -c", f"/work/d{i}")[:2] for i in range(40)]
        report({"stuck": stuck[:2], "churn": churn, "last": call("echo hi")})
    """, tmp_path)
    code, seconds = result["stuck"]
    assert code == "workspace.shell_timeout" and seconds < TIMEOUT + 1.0, result["stuck"]
    assert [c for c, _ in result["churn"]] == ["ok"] * 40, result["churn"]
    assert max(s for _, s in result["churn"]) < TIMEOUT, result["churn"]
    code, seconds, content = result["last"]
    assert code == "ok" and "hi" in content and seconds < TIMEOUT


def test_a_fifo_in_a_writable_root_refuses_readers_at_once_and_can_be_removed(tmp_path: Path) -> None:
    result = _child("""
        os.mkfifo(WS / "work" / "f")
        (WS / "work" / "notes.txt").write_text("notes\\n")
        report({name: call(command)[:2] for name, command in [
            ("cat", "cat /work/f"),
            ("grep", "grep -r x /work"),
            ("python", "python3 -c \\"print(open('/work/f').read())\\""),
            ("ls_rm", "ls -l /work && stat /work/f > /dev/null && rm /work/f"),
            ("after", "cat /work/notes.txt"),
        ]})
    """, tmp_path)
    for name in ("cat", "grep", "python"):
        code, seconds = result[name]
        assert code == "workspace.shell_failed" and seconds < TIMEOUT / 2, (name, result[name])
    assert result["ls_rm"][0] == "ok" and result["after"][0] == "ok", result


def test_a_fifo_in_a_read_only_root_cannot_be_opened_and_blocks_nothing(tmp_path: Path) -> None:
    result = _child("""
        (WS / "tool-results" / "deep").mkdir()
        os.mkfifo(WS / "tool-results" / "deep" / "f")
        (WS / "tool-results" / "r1.txt").write_text("stored\\n")
        os.symlink("deep", WS / "tool-results" / "alias")  # another name for the FIFO's folder
        report({name: call(command) for name, command in [
            ("cat", "cat /tool-results/deep/f"),
            ("alias", "cat /tool-results/alias/f"),
            ("grep", "grep -r zzz /tool-results; echo done"),
            ("other", "cat /tool-results/r1.txt"),
        ]})
    """, tmp_path)
    for name in ("cat", "alias"):
        code, seconds, _ = result[name]
        assert code == "workspace.shell_exit" and seconds < TIMEOUT / 2, (name, result[name])
    assert result["grep"][0] == "ok" and result["grep"][1] < TIMEOUT / 2, result["grep"]
    assert result["other"][0] == "ok" and "stored" in result["other"][2]


# ---- files larger than memory ----


def test_a_1_gib_sparse_file_is_never_loaded(tmp_path: Path) -> None:
    # bashkit reads a mounted file whole: `head -c 16` of it grew the process by 1 GiB.
    result = _child("""
        with open(WS / "work" / "big.bin", "wb") as f:
            f.truncate(1 << 30)
        (WS / "tool-results" / "data").mkdir()
        with open(WS / "tool-results" / "data" / "big.bin", "wb") as f:
            f.truncate(1 << 30)
        os.symlink("data", WS / "tool-results" / "alias")
        (WS / "work" / "small.txt").write_text("small\\n")
        before = peak_kb()
        codes = {name: call(command)[0] for name, command in [
            ("work", "head -c 16 /work/big.bin | wc -c"),
            ("grep", "grep -rc zzz /"),
            ("append", "echo x >> /work/big.bin"),
            ("remove", "ls -l /work; rm /work/big.bin"),  # opens no file: runs, and frees the shell
            ("after", "head -c 5 /work/small.txt"),
            ("read_only", "head -c 16 /tool-results/data/big.bin"),
            ("alias", "head -c 16 /tool-results/alias/big.bin"),
            ("cp", "cp /tool-results/data/big.bin /tmp/copy.bin"),
            ("grep_again", "grep -rc zzz /tool-results"),
        ]}
        report({"codes": codes, "grownKb": peak_kb() - before, "copied": (WS / "tmp" / "copy.bin").exists()})
    """, tmp_path)
    codes = result["codes"]
    assert result["grownKb"] < RSS_BOUND_KB, result
    assert codes["work"] == codes["grep"] == codes["append"] == "workspace.shell_failed", codes
    assert codes["remove"] == codes["after"] == "ok", codes
    assert codes["read_only"] == codes["alias"] == codes["cp"] == "workspace.shell_exit", codes
    assert codes["grep_again"] == "workspace.shell_exit", codes  # grep -c: no match is exit 1, nothing hangs
    assert not result["copied"]


# ---- root folders ----


@pytest.mark.parametrize("command", [
    "rm -rf /work",
    "rm -rf /work/",
    "cd /work && rm -rf .",
    "rm -r /work",
    "find /work -delete",
    "rm -rf /work/sub /work/a.txt; python3 -c \"import pathlib; pathlib.Path('/work').rmdir()\"",
])
def test_removing_a_root_empties_it_and_keeps_the_folder(call, command: str) -> None:
    work = call.bench.workspace / "work"
    (work / "sub").mkdir(parents=True)
    (work / "a.txt").write_text("a\n")
    call("shell", {"command": command})
    assert work.is_dir() and not any(work.iterdir())
    assert call.ok("shell", {"command": "echo again > /work/b.txt; cat /work/b.txt"}).content.endswith("again\n")


@pytest.mark.parametrize("command", ["mv /work /x", "mv /work /tmp/x", "mv /work /work2", "mv /tmp /work/t"])
def test_a_root_cannot_be_renamed(call, command: str) -> None:
    ws = call.bench.workspace
    (ws / "work" / "a.txt").write_text("a\n")
    call.err("shell", {"command": command}, "workspace.shell_exit")
    assert (ws / "work" / "a.txt").read_text() == "a\n" and (ws / "tmp").is_dir()


# ---- the engine: the pool never waits on an interpreter ----


class _SlowToDrop:
    """An interpreter stand-in whose drop blocks (as a real one stuck on a FIFO does) until
    `let_go` is set, at most 10 s."""

    let_go: ClassVar[threading.Event] = threading.Event()
    dropped_on: ClassVar[list[str]] = []

    def reset(self) -> None:
        pass

    def __del__(self) -> None:
        self.dropped_on.append(threading.current_thread().name)
        self.let_go.wait(10)


def test_evicting_an_interpreter_never_blocks_the_caller_or_the_pool(tmp_path: Path) -> None:
    idle = _Idle()
    settings = ShellSettings()
    mounts = (Mount(tmp_path, "/work", True),)
    try:
        idle.give((mounts, settings, "/", ()), [_SlowToDrop()], keep=True)
        started = time.monotonic()
        for n in range(shell_pool._MAX_CONFIGS + 1):  # the first configuration is evicted
            idle.give((mounts, settings, f"/d{n}", ()), [_SlowToDrop()], keep=True)
        idle.give((mounts, settings, "/x", ()), [_SlowToDrop()], keep=False)  # not kept: dropped too
        assert time.monotonic() - started < 2.0
        taken = idle.take((mounts, settings, "/d5", ()))  # the pool still answers
        assert isinstance(taken, _SlowToDrop)
        idle.give((mounts, settings, "/d5", ()), [taken], keep=True)
        del taken
        deadline = time.monotonic() + 10
        while len(_SlowToDrop.dropped_on) < 2 and time.monotonic() < deadline:
            threading.Event().wait(0.002)
        assert len(_SlowToDrop.dropped_on) >= 2
        assert all(name == "toolbench-shell-reaper" for name in _SlowToDrop.dropped_on)
    finally:
        _SlowToDrop.let_go.set()


def _run_job(mounts: tuple[Mount, ...], command: str, settings: ShellSettings) -> tuple[str, Any]:
    job = _Job(command, "/", mounts, settings)
    outcome = job._run()
    bash = job._used
    job.release()
    return outcome.status, bash


def test_an_interpreter_that_timed_out_is_not_reused(tmp_path: Path) -> None:
    mounts = (Mount(tmp_path, "/work", True),)
    settings = ShellSettings(timeout_seconds=0.3, max_commands=123_457)  # this test's own configuration
    status, used = _run_job(mounts, "while true; do sleep 0.05; done", settings)
    assert status == "timed_out"
    status, fresh = _run_job(mounts, "echo on", settings)
    assert status == "exited" and fresh is not used
    del used


def test_an_interpreter_its_caller_gave_up_on_is_not_reused(tmp_path: Path) -> None:
    mounts = (Mount(tmp_path, "/work", True),)
    settings = ShellSettings(timeout_seconds=5, max_commands=123_458)
    job = _Job("sleep 0.3; echo late", "/", mounts, settings)
    job.abandon()  # the caller stopped waiting before the command ran
    job._run()
    given_up = job._used
    job.release()
    status, fresh = _run_job(mounts, "echo on", settings)
    _, again = _run_job(mounts, "echo on", settings)
    assert status == "exited" and fresh is not given_up
    assert again is fresh  # a normal call's interpreter is kept
    del given_up


def test_the_survey_refuses_readers_past_its_entry_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shell_survey, "_MAX_SURVEY_ENTRIES", 20)
    for n in range(30):
        (tmp_path / f"f{n}.txt").write_text("x\n")
    mounts = [Mount(tmp_path, "/work", True)]
    refused = run_shell_blocking("cat /work/f1.txt", mounts=mounts, settings=ShellSettings())
    assert refused.status == "failed"
    listed = run_shell_blocking("ls /work | wc -l", mounts=mounts, settings=ShellSettings())
    assert listed.status == "failed"  # wc could read a file
    removed = run_shell_blocking("rm /work/f1*.txt; ls /work", mounts=mounts, settings=ShellSettings())
    assert (removed.status, removed.exit_code) == ("exited", 0)
    assert run_shell_blocking("cat /work/f1.txt", mounts=mounts, settings=ShellSettings()).status == "exited"


def test_the_file_limit_is_the_callers(tmp_path: Path) -> None:
    (tmp_path / "mid.bin").write_bytes(b"x" * 5000)
    mounts = [Mount(tmp_path, "/work", True)]
    small = run_shell_blocking("wc -c < /work/mid.bin", mounts=mounts, settings=ShellSettings(), max_file_bytes=4096)
    large = run_shell_blocking("wc -c < /work/mid.bin", mounts=mounts, settings=ShellSettings(), max_file_bytes=8192)
    assert small.status == "failed" and (large.status, large.stdout.strip()) == ("exited", "5000")


def test_a_refusal_names_the_file(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    outcome = run_shell_blocking("cat /work/pipe", mounts=[Mount(tmp_path, "/work", True)], settings=ShellSettings())
    assert outcome.status == "failed" and "/work/pipe" in outcome.stderr


def test_the_async_entry_point_ends_a_stuck_call_at_its_timeout_or_its_cancel(tmp_path: Path) -> None:
    # run_shell on an event loop: a read stuck on a FIFO (made after the survey) ends at the
    # deadline, a cancel ends it within the grace, and the next call answers at once.
    result = run_with_deadline("""
        import asyncio, os, sys, threading, time
        from pathlib import Path
        from toolbench.core.shell_settings import ShellSettings
        from toolbench.tools.workspace.shell_engine import Mount, run_shell
        work = Path(sys.argv[1])
        mounts = [Mount(work, "/work", True)]
        settings = ShellSettings(timeout_seconds=1.5)
        command = "echo > /work/go; until [ -e /work/late ]; do sleep 0.01; done; cat /work/late"
        def plant():
            deadline = time.monotonic() + 20
            while not (work / "go").exists() and time.monotonic() < deadline:
                threading.Event().wait(0.002)
            os.mkfifo(work / "late")
        async def run(cancel_after=None):
            event = asyncio.Event()
            if cancel_after is not None:
                asyncio.get_running_loop().call_later(cancel_after, event.set)
            started = time.monotonic()
            outcome = await run_shell(command, mounts=mounts, settings=settings, cancel=event)
            return outcome.status, time.monotonic() - started
        out = {}
        for name, cancel_after in (("timeout", None), ("cancel", 0.5)):
            (work / "go").unlink(missing_ok=True)
            threading.Thread(target=plant, daemon=True).start()
            out[name] = asyncio.run(run(cancel_after))
            os.unlink(work / "late")
        started = time.monotonic()
        after = asyncio.run(run_shell("echo hi", mounts=mounts, settings=settings))
        out["after"] = (after.status, after.stdout, time.monotonic() - started)
        report(out)
    """, deadline=60, args=(str(tmp_path),))
    status, seconds = result["timeout"]
    assert status == "timed_out" and seconds < 1.5 + 1.0, result
    status, seconds = result["cancel"]
    assert status == "cancelled" and seconds < 1.5, result  # the grace, not the deadline
    status, stdout, seconds = result["after"]
    assert (status, stdout) == ("exited", "hi\n") and seconds < 1.5
