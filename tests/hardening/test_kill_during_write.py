"""`kill -9` while a workspace write runs: the file is the old or the new text, never torn, and
a fresh bench reopens the invocation from its run log (a torn last line is dropped) and goes on."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

from toolbench import Profile, Workbench

INVOCATION = "inv_killed"
TARGET = "work/story.md"
LINES = 400
TEXTS = (("A" * 999 + "\n") * LINES, ("B" * 999 + "\n") * LINES)

# Reads the file in full (so the replace passes the stale-file check), replaces it with the
# other text, prints the number of writes done; forever, until killed.
SCRIPT = """
import sys
from toolbench import Profile, Workbench

workspace, invocation_id = sys.argv[1], sys.argv[2]
texts = (("A" * 999 + "\\n") * {lines}, ("B" * 999 + "\\n") * {lines})
profile = Profile.parse({profile!r})
bench = Workbench(workspace, profile=profile)
try:
    inv = bench.open_invocation(invocation_id)
except Exception:
    inv = bench.invocation("session", id=invocation_id)
done = 0
while True:
    if (bench.workspace / {target!r}).exists():
        read = inv.call("workspace_read_file", {{"path": {target!r}}})
        assert not read.is_error, read.content
    wrote = inv.call("workspace_write_file", {{"path": {target!r}, "content": texts[done % 2]}})
    assert not wrote.is_error, wrote.content
    done += 1
    print(done, flush=True)
"""


def _profile() -> Profile:
    return Profile.default().edit(allow=["builtin:workspace.read_file", "builtin:workspace.write_file"],
                                  workspace={"max_read_chars": 1_000_000})


def _run_until_killed(workspace: Path, writes: int, log: Path) -> None:
    """Start the writer, wait (bounded) for `writes` progress lines, then SIGKILL it."""
    script = SCRIPT.format(lines=LINES, target=TARGET, profile=_profile().model_dump(mode="json"))
    with open(log, "ab") as stderr:
        proc = subprocess.Popen([sys.executable, "-c", script, str(workspace), INVOCATION],
                                stdout=subprocess.PIPE, stderr=stderr)
    assert proc.stdout is not None
    try:
        deadline = time.monotonic() + 30
        seen = 0
        while seen < writes:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([proc.stdout], [], [], max(left, 0))
            assert ready, f"no progress from the writer within 30 s: {log.read_text()[-2000:]}"
            line = proc.stdout.readline()
            assert line, f"the writer exited: {log.read_text()[-2000:]}"
            seen = int(line)
        os.kill(proc.pid, signal.SIGKILL)  # lands somewhere in the next read or write
    finally:
        proc.kill()
        proc.wait(timeout=10)
        proc.stdout.close()
    assert proc.returncode == -signal.SIGKILL


def test_kill_during_writes_leaves_old_or_new_file_and_a_reopenable_log(tmp_path):
    workspace = tmp_path / "ws"
    for writes in (1, 2, 3):
        _run_until_killed(workspace, writes, tmp_path / "writer.log")
        assert (workspace / TARGET).read_text() in TEXTS  # whole, never torn

    with Workbench(workspace, profile=_profile()) as bench:
        inv = bench.open_invocation(INVOCATION)
        records = inv.records
        assert records, "the writes before the kills are in the run log"
        assert all(not r.result.is_error for r in records)
        assert {r.call_name for r in records} <= {"workspace_read_file", "workspace_write_file"}
        rounds = [r.round for r in records]
        assert rounds == sorted(set(rounds))  # one call per round, in order, none twice
        assert len({r.call_id for r in records}) == len(records)

        # The reopened invocation goes on where the log ends; its new record files do not clash.
        current = (workspace / TARGET).read_text()
        assert not inv.call("workspace_read_file", {"path": TARGET}).is_error
        other = TEXTS[1] if current == TEXTS[0] else TEXTS[0]
        assert not inv.call("workspace_write_file", {"path": TARGET, "content": other}).is_error
        bench.flush()
        assert (workspace / TARGET).read_text() == other
        count = len(inv.records)

    with Workbench(workspace, profile=_profile()) as bench:
        again = bench.open_invocation(INVOCATION)
        assert [r.to_json() for r in again.records[:len(records)]] == [r.to_json() for r in records]
        assert len(again.records) == count


def _two_rolls(make_bench, profile_with):
    bench = make_bench("ws", profile=profile_with())
    inv = bench.invocation("session", id=INVOCATION)
    inv.call("dice_roll", {"formula": "d6"})
    inv.call("dice_roll", {"formula": "d6"})
    bench.close()
    return bench.workspace / ".toolbench" / "invocations" / INVOCATION / "log.jsonl"


def test_a_torn_last_log_line_is_cut_before_the_next_append(make_bench, profile_with):
    log = _two_rolls(make_bench, profile_with)
    lines = log.read_text().splitlines(keepends=True)
    log.write_text(lines[0] + lines[1][: len(lines[1]) // 2])  # killed mid-append
    bench = make_bench("ws", profile=profile_with())
    inv = bench.open_invocation(INVOCATION)
    assert len(inv.records) == 1
    assert not inv.call("dice_roll", {"formula": "d6"}).is_error
    bench.close()
    again = make_bench("ws", profile=profile_with()).open_invocation(INVOCATION)
    assert [r.round for r in again.records] == [1, 3]  # round 2's record files exist: not reused


def test_record_files_of_a_call_whose_log_line_was_lost_are_not_overwritten(make_bench, profile_with):
    log = _two_rolls(make_bench, profile_with)
    log.write_text(log.read_text().splitlines(keepends=True)[0])  # the second line never made it
    bench = make_bench("ws", profile=profile_with())
    inv = bench.open_invocation(INVOCATION)
    assert not inv.call("dice_roll", {"formula": "d6"}).is_error
    bench.flush()  # would raise storage.already_exists if round 2's files were written again
    assert [r.round for r in inv.records] == [1, 3]
