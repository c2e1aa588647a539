"""Table 9.10 rows through the Workbench: sandbox, CAS, auto-publish, cancellation."""

from __future__ import annotations

import asyncio
import hashlib
import threading
import time
from pathlib import Path

from toolbench import Workbench

BOUND = 15.0  # seconds: a cancelled call must be over well within this
LONG_RUN = "python3 -c 'while True: pass'"  # stops only when cancelled (or at the 30 s timeout)


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def cancel_once_written(inv, path: Path) -> threading.Thread:
    """From another thread: wait (bounded) until the shell's file exists, then `inv.cancel()`."""

    def watch() -> None:
        deadline = time.monotonic() + BOUND
        while not path.exists() and time.monotonic() < deadline:
            threading.Event().wait(0.002)
        inv.cancel()

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


def test_runtime_folder_is_invisible_to_the_shell(call) -> None:
    ws = call.bench.workspace
    (ws / "tool-args").mkdir(exist_ok=True)
    (ws / "tool-args" / "secret.json").write_text("{}")
    r = call("shell", {"command": "cp /tool-args/secret.json /work/leaked.json"})
    assert r.is_error
    assert not (ws / "work" / "leaked.json").exists()


def test_python_cannot_write_tool_results(call) -> None:
    r = call("shell", {"command": "python3 -c \"open('/tool-results/forbidden.txt','w').write('x')\""})
    assert r.is_error
    assert not (call.bench.workspace / "tool-results" / "forbidden.txt").exists()


def test_file_pipeline(call) -> None:
    ws = call.bench.workspace
    script = ("mkdir -p /work/d && printf '{\"text\":\"shell draft\"}' > /work/d/in.json && "
              "jq -r .text /work/d/in.json > /output/draft.md && cp /output/draft.md /output/copy.md && "
              "mv /output/copy.md /output/Moved.MD && rm /output/draft.md && cat /output/Moved.MD")
    r = call.ok("shell", {"command": script})
    assert "shell draft" in r.content
    assert (ws / "output" / "Moved.MD").read_text() == "shell draft\n"
    assert not (ws / "output" / "draft.md").exists() and not (ws / "output" / "copy.md").exists()
    out = call.inv.output
    assert (out.path, out.sha256, out.text, out.source) == ("output/Moved.MD", sha("shell draft\n"), "shell draft\n",
                                                            "auto")


def test_shell_write_makes_an_earlier_read_stale(call) -> None:
    ws = call.bench.workspace
    (ws / "output" / "doc.md").write_text("hello\n")
    call.ok("read_file", {"path": "output/doc.md"})
    call.ok("shell", {"command": "python3 -c \"open('doc.md','a').write('more\\n')\"", "workdir": "/output"})
    call.err("apply_patch", {"path": "output/doc.md", "old_string": "hello", "new_string": "bye"},
             "workspace.stale_file")
    call.ok("read_file", {"path": "output/doc.md"})
    call.ok("apply_patch", {"path": "output/doc.md", "old_string": "hello", "new_string": "bye"})
    assert (ws / "output" / "doc.md").read_text() == "bye\nmore\n"


def test_failed_python_keeps_its_write(call) -> None:
    r = call("shell", {"command": "python3 -c \"open('/tmp/x.txt','w').write('kept'); raise ValueError('boom')\""})
    assert r.is_error and r.error_code == "workspace.shell_exit" and r.structured["exitCode"] == 1
    assert (call.bench.workspace / "tmp" / "x.txt").read_text() == "kept"


def test_failed_shell_publishes_neither_candidate_only_the_explicit_commit(call) -> None:
    ws = call.bench.workspace
    fail = ("python3 -c \"open('/output/main.md','w').write('saved despite failure'); "
            "raise ValueError('draft incomplete')\"")
    results = call.inv.turn([
        ("workspace_shell", {"command": "printf 'old candidate' > /output/main.md"}),
        ("workspace_shell", {"command": fail}),
    ])
    assert not results[0].is_error
    assert (results[1].error_code, results[1].structured["exitCode"]) == ("workspace.shell_exit", 1)
    assert (ws / "output" / "main.md").read_text() == "saved despite failure"
    assert call.inv.output is None  # neither the old candidate nor the new write
    call.inv.turn([("workspace_commit", {}), ("workspace_finish", {})])
    out = call.inv.output
    assert (out.source, out.path, out.sha256) == ("commit", "output/main.md", sha("saved despite failure"))


def test_cancelled_shell_is_recorded_and_the_next_call_of_the_round_runs(call) -> None:
    ws = call.bench.workspace
    target = ws / "output" / "main.md"
    watcher = cancel_once_written(call.inv, target)
    started = time.monotonic()
    command = f"printf 'cancelled shell write' > /output/main.md; {LONG_RUN}"
    results = call.inv.turn([
        ("workspace_shell", {"command": command}, "cancel_shell"),
        ("workspace_write_file", {"path": "output/main.md", "content": " + resumed", "mode": "append"}, "after_shell"),
        ("workspace_finish", {}, "finish"),
    ])
    watcher.join(BOUND)
    assert time.monotonic() - started < BOUND
    # finish runs too, and answers the foreground rule: nothing was committed.
    assert [r.error_code for r in results] == ["workspace.shell_cancelled", None, "agent.foreground_commit_required"]
    assert results[0].structured["exitCode"] is None
    assert target.read_text() == "cancelled shell write + resumed"
    assert call.inv.blocked is None and call.inv.output is None  # a cancelled shell sets no candidate
    # Reopened: the cancelled call is a confirmed record, nothing is replayed, calls go on.
    call.bench.flush()
    again = call.bench.open_invocation(call.inv.id)
    assert [(r.call_id, r.result.error_code) for r in again.records] == [
        ("cancel_shell", "workspace.shell_cancelled"), ("after_shell", None),
        ("finish", "agent.foreground_commit_required")]
    assert again.blocked is None
    assert not again.call("workspace_shell", {"command": "cat /output/main.md"}).is_error
    assert target.read_text() == "cancelled shell write + resumed"
    assert sum(r.call_name == "workspace_shell" for r in again.records) == 2


def test_sync_call_of_the_shell_can_be_cancelled_from_another_thread(call) -> None:
    target = call.bench.workspace / "work" / "partial.txt"
    watcher = cancel_once_written(call.inv, target)
    r = call("shell", {"command": f"echo partial > /work/partial.txt; {LONG_RUN}"})
    watcher.join(BOUND)
    assert r.error_code == "workspace.shell_cancelled" and r.content == "Command cancelled."
    assert target.read_text() == "partial\n"
    call.ok("shell", {"command": "echo next"})  # the invocation is not blocked; a new call is not cancelled


def test_acall_of_the_shell_can_be_cancelled_from_another_thread(call) -> None:
    target = call.bench.workspace / "work" / "partial.txt"

    async def go():
        watcher = cancel_once_written(call.inv, target)
        result = await call.inv.acall("workspace_shell", {"command": f"echo partial > /work/partial.txt; {LONG_RUN}"})
        watcher.join(BOUND)
        return result, await call.inv.acall("workspace_shell", {"command": "echo next"})

    cancelled, after = asyncio.run(go())
    assert cancelled.error_code == "workspace.shell_cancelled"
    assert target.read_text() == "partial\n"
    assert not after.is_error and "next" in after.content


def test_cancel_with_nothing_running_does_not_touch_later_calls(call) -> None:
    call.inv.cancel()
    assert "still runs" in call.ok("shell", {"command": "echo still runs"}).content


# ---- auto-publish (reference §6.3) ----


def test_the_last_shell_that_changed_a_text_file_is_published_at_round_end(call) -> None:
    call.inv.turn([
        ("workspace_shell", {"command": "echo one > /output/a.md"}),
        ("workspace_shell", {"command": "echo two > /work/b.txt; echo '{}' > /work/c.json"}),
        ("workspace_shell", {"command": "cat /output/a.md"}),  # changes nothing: keeps the candidate
    ])
    out = call.inv.output
    assert (out.path, out.text, out.source, out.round, out.call_id) == ("work/b.txt", "two\n", "auto", 1, "call_0002")


def test_a_shell_that_changes_only_data_files_publishes_nothing(call) -> None:
    call.ok("shell", {"command": "echo '{}' > /work/state.json"})
    assert call.inv.output is None


def test_an_explicit_commit_in_the_round_wins_over_the_candidate(call) -> None:
    call.ok("write_file", {"path": "output/main.md", "content": "explicit\n"})
    call.inv.turn([("workspace_commit", {}), ("workspace_shell", {"command": "echo draft > /output/draft.md"})])
    assert (call.inv.output.source, call.inv.output.text) == ("commit", "explicit\n")
    call.ok("list_files", {})  # the candidate did not outlive its round
    assert call.inv.output.source == "commit"


def test_auto_publish_replaces_an_earlier_commit_in_a_later_round(call) -> None:
    call.ok("write_file", {"path": "output/main.md", "content": "first\n"})
    call.ok("commit", {})
    call.ok("shell", {"command": "echo second > /output/main.md"})
    out = call.inv.output
    assert (out.source, out.mode, out.text, out.sha256) == ("auto", "replace", "second\n", sha("second\n"))


def test_session_runs_do_not_auto_publish(bench: Workbench) -> None:
    inv = bench.invocation("session")
    assert not inv.call("workspace_shell", {"command": "echo draft > /output/main.md"}).is_error
    assert inv.output is None


def test_the_published_output_survives_a_reopen(call) -> None:
    call.ok("shell", {"command": "printf 'shell draft\n' > /output/Moved.MD"})
    call.bench.flush()
    again = call.bench.open_invocation(call.inv.id)
    assert again.output == call.inv.output
    assert len(again.records) == 1 and again.budget()["total"] == call.inv.budget()["total"]


def test_slash_tmp_is_workspace_tmp(call) -> None:
    call.ok("shell", {"command": "printf 'saved tmp' > /tmp/check.txt"})
    assert "saved tmp" in call.ok("read_file", {"path": "tmp/check.txt"}).content


def test_slash_tmp_is_workspace_tmp_in_a_session(bench: Workbench) -> None:
    inv = bench.invocation("session")
    assert not inv.call("workspace_shell", {"command": "printf 'saved tmp' > /tmp/check.txt"}).is_error
    assert "saved tmp" in inv.call("workspace_read_file", {"path": "tmp/check.txt"}).content


def test_unknown_argument_is_refused(call) -> None:
    call.err("shell", {"command": "true", "root": "/"}, "tool.invalid_arguments")
