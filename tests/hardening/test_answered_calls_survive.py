"""An answered call is never lost: its run-log line is written before the call returns, a
crash leaves nothing a reopen cannot mend, and storage failures raise coded errors after
releasing what the bench holds."""

from __future__ import annotations

import errno
import os
import signal
from pathlib import Path

import pytest

from tests.deadline import run_with_deadline
from toolbench import Profile, ToolbenchError, Workbench
from toolbench.runtime import records

# 40 answered calls, then SIGKILL before anything else runs: no close, no flush, no atexit.
KILLED_AFTER_CALLS = """
import os, signal, sys
from toolbench import Profile, Workbench
bench = Workbench(sys.argv[1], profile=Profile.default().edit(allow=["builtin:dice.roll"]), seed=1)
inv = bench.invocation("session", id="inv_killed")
for n in range(40):
    assert not inv.call("dice_roll", {"formula": "1d6"}).is_error
print("answered", flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_calls_answered_right_before_a_kill_are_all_in_the_reopened_invocation(tmp_path: Path):
    workspace = tmp_path / "ws"
    run_with_deadline(KILLED_AFTER_CALLS, args=(str(workspace),), deadline=60, returncode=-signal.SIGKILL)
    with Workbench(workspace, profile=Profile.default().edit(allow=["builtin:dice.roll"])) as bench:
        inv = bench.open_invocation("inv_killed")
        assert len(inv.records) == 40
        assert inv.budget()["total"] == inv.snapshot.max_calls_per_invocation - 40  # no budget refunded
        # The record files the kill cut off are rebuilt from the log, one pair per call.
        assert len(list((workspace / "tool-args" / "inv_killed").glob("round-*.json"))) == 40
        assert len(list((workspace / "tool-results" / "inv_killed").glob("round-*.json"))) == 40
        assert not inv.call("dice_roll", {"formula": "1d6"}).is_error
        assert [r.round for r in inv.records] == list(range(1, 42))


def test_a_run_log_that_cannot_be_written_raises_and_every_answered_call_reopens(make_bench, monkeypatch):
    bench = make_bench()
    inv = bench.invocation("session")
    for _ in range(4):
        inv.call("dice_roll", {"formula": "1d6"})
    real_append = records.RunLog.append

    def full_disk(self, entry):
        raise ToolbenchError("storage.write_failed", "cannot append to the run log: No space left on device")

    monkeypatch.setattr(records.RunLog, "append", full_disk)
    for _ in range(4):
        with pytest.raises(ToolbenchError) as info:
            inv.call("dice_roll", {"formula": "1d6"})
        assert info.value.code == "storage.write_failed"
    monkeypatch.setattr(records.RunLog, "append", real_append)
    assert len(inv.records) == 4  # a call whose answer was not recorded was not answered
    bench.flush()
    fresh = make_bench("ws").open_invocation(inv.id)
    assert [r.to_json() for r in fresh.records] == [r.to_json() for r in inv.records]


def test_a_disk_error_on_the_run_log_is_storage_write_failed(make_bench, monkeypatch):
    bench = make_bench()
    inv = bench.invocation("session")
    inv.call("dice_roll", {"formula": "1d6"})
    log_fd = inv._log._fd
    assert log_fd is not None
    real_write = os.write

    def full_disk(fd, data):
        if fd == log_fd:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    monkeypatch.setattr(records.os, "write", full_disk)
    with pytest.raises(ToolbenchError) as info:
        inv.call("dice_roll", {"formula": "1d6"})
    assert info.value.code == "storage.write_failed"
    monkeypatch.undo()
    assert len(inv.records) == 1


def test_committing_a_growing_file_logs_what_each_append_added(make_bench):
    profile = Profile.default().edit(allow=["builtin:workspace.write_file", "builtin:workspace.read_file",
                                            "builtin:workspace.commit"])
    bench = make_bench(profile=profile)
    inv = bench.invocation("chat")
    chunk = "x" * 99_999 + "\n"
    for _ in range(10):
        assert not inv.call("workspace_write_file", {"path": "work/part.md", "content": chunk}).is_error
        assert not inv.call("workspace_commit", {"path": "work/part.md", "mode": "append"}).is_error
    log = inv._log.path
    assert log.stat().st_size < 3 * 10 * len(chunk)  # the 10 chunks (and the write calls' arguments)
    assert inv.output is not None and inv.output.text == chunk * 10
    bench.flush()
    fresh = make_bench("ws", profile=profile).open_invocation(inv.id)
    assert fresh.output == inv.output


def test_reopen_sweeps_what_a_crash_left_half_written(make_bench):
    profile = Profile.default().edit(allow=["extension/e:big"], external_result_inline_char_limit=100)
    bench = make_bench()
    bench.register_tool("e", lambda: "y" * 500, name="big")
    bench.profile = profile
    inv = bench.invocation("session")
    assert inv.call("big", {}).structured["externalized"] is True
    bench.flush()
    results = bench.workspace / "tool-results" / inv.id
    # What a kill can leave: a temp file of a write cut short, and a readable result whose
    # audit file (written first) survived but whose call was never answered.
    (results / ".round-002-call_0000000000000000.txt.abc123.tmp").write_text("half")
    (results / "round-003-call_0000000000000000.txt").write_text("orphan")
    bench.close()
    with Workbench(bench.workspace, profile=profile) as again:
        again.register_tool("e", lambda: "y" * 500, name="big")
        reopened = again.open_invocation(inv.id)
        names = sorted(p.name for p in results.iterdir())
        assert all(not n.startswith(".") for n in names)
        assert all(n[:-4] + ".json" in names for n in names if n.endswith(".txt"))
        assert len(names) == 2  # round 1's readable and audit files
        nxt = reopened.call("big", {})
        assert nxt.structured["path"].startswith(f"tool-results/{inv.id}/round-002-")


def test_close_after_a_storage_failure_releases_the_writer_and_the_loop(make_bench, monkeypatch):
    from toolbench.core import fileio

    bench = make_bench()
    inv = bench.invocation("session")

    def failing(*args, **kwargs):
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(fileio.os, "link", failing)
    inv.call("dice_roll", {"formula": "1d6"})  # its record files are deferred: they fail later
    writer = bench._kernel.store._thread
    assert writer is not None
    assert bench._kernel.loop.loop.is_running()  # started, as any async call starts it
    loop_thread = bench._kernel.loop._thread
    with pytest.raises(ToolbenchError) as info:
        bench.close()
    assert info.value.code == "storage.write_failed"
    assert not writer.is_alive()
    assert loop_thread is not None and not loop_thread.is_alive()
    with pytest.raises(ToolbenchError) as closed:
        bench.invocation("session")
    assert closed.value.code == "bench.closed"


def test_a_read_only_workspace_is_a_storage_error_not_an_os_error(tmp_path: Path, monkeypatch):
    # As a read-only mount answers (the tests may run as root, whom permission bits do not stop).
    workspace = tmp_path / "ws"
    Workbench(workspace).close()
    real_mkdir, real_open = os.mkdir, os.open

    def read_only(call):
        def refuse(path, *args, **kwargs):
            if str(path).startswith(str(workspace)) or kwargs.get("dir_fd") is not None:
                raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))
            return call(path, *args, **kwargs)
        return refuse

    monkeypatch.setattr(os, "mkdir", read_only(real_mkdir))
    monkeypatch.setattr(os, "open", read_only(real_open))
    with Workbench(workspace) as bench:
        with pytest.raises(ToolbenchError) as info:
            bench.invocation("session")
        assert info.value.code == "storage.not_writable"
    with pytest.raises(ToolbenchError) as fresh:
        Workbench(tmp_path / "ws" / "new")  # its folders cannot be made
    assert fresh.value.code == "storage.not_writable"


def test_a_short_write_to_the_run_log_does_not_tear_the_lines_after_it(make_bench, monkeypatch):
    bench = make_bench()
    inv = bench.invocation("session")
    inv.call("dice_roll", {"formula": "1d6"})
    log_fd = inv._log._fd
    real_write = os.write
    cut = []

    def short_once(fd, data):
        if fd == log_fd and not cut:
            cut.append(True)
            return real_write(fd, data[:20])  # the disk filled part way through the line
        return real_write(fd, data)

    monkeypatch.setattr(records.os, "write", short_once)
    with pytest.raises(ToolbenchError):
        inv.call("dice_roll", {"formula": "1d6"})
    monkeypatch.undo()
    for _ in range(2):
        inv.call("dice_roll", {"formula": "1d6"})
    bench.flush()
    fresh = make_bench("ws").open_invocation(inv.id)
    assert [r.to_json() for r in fresh.records] == [r.to_json() for r in inv.records]
    assert len(fresh.records) == 3


def test_reopen_keeps_a_text_attachment(make_bench):
    from toolbench import Attachment, ToolOutput

    bench = make_bench()
    bench.register_tool("e", lambda: ToolOutput("see the file", attachments=[Attachment("blob", "text/plain", b"hi")]),
                        name="note")
    bench.profile = Profile.default().edit(allow=["extension/e:note"])
    inv = bench.invocation("session")
    [ref] = inv.call("note", {}).attachments
    assert ref.path.endswith(".txt")
    bench.close()
    with Workbench(bench.workspace, profile=bench.profile) as again:
        again.open_invocation(inv.id)
        assert (bench.workspace / ref.path).read_bytes() == b"hi"


def test_concurrent_calls_log_their_budget_in_order(make_bench):
    import threading

    profile = Profile.default().edit(allow=["builtin:dice.roll"], max_calls_per_run=10_000, max_rounds=10_000)
    bench = make_bench(profile=profile)
    inv = bench.invocation("session")

    def roll():
        for _ in range(300):
            inv.call("dice_roll", {"formula": "1d6"})

    threads = [threading.Thread(target=roll) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    totals = [e["gate"]["totalCalls"] for e in inv._log.read() if "record" in e]
    assert totals == sorted(totals) and totals[-1] == 900
