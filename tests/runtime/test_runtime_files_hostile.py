"""Runtime files a hostile workspace plants (a FIFO, a link to /dev/zero or out of the workspace,
a huge sparse file) cannot freeze or exhaust the bench: the roster, the cron store and its logs,
a reopened invocation's snapshot, profile and run log, and attachments are opened as the file
tools open a file (tools/workspace/runtime_files.py). Each case runs in a child process with a
deadline and a memory cap, since the old code hung on a FIFO and read /dev/zero until MemoryError."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from agents_support import WAIT, parent_profile
from deadline import run_with_deadline
from upstream_support import always_return

from toolbench import Profile, ToolbenchError, Workbench
from toolbench.runtime.agents import roster_store as agent_store
from toolbench.tools.workspace.runtime_files import read_runtime_file

DEADLINE = 20
MEMORY_MB = 1024
CAUSE = {"fifo": "storage.not_regular_file", "zero": "storage.link_outside_workspace",
         "outside": "storage.link_outside_workspace", "huge": "storage.file_too_large"}

# `plant(path, kind)` puts the hostile entry at `path`; `outside` is a file beside the workspace
# holding valid content (so following the link would read something), left unchanged.
PLANT = r"""
import hashlib, os, sys
from pathlib import Path

ws, kind, outside = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])

def plant(path, kind, content=""):
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() or path.is_symlink():
        path.unlink()
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "zero":
        path.symlink_to("/dev/zero")
    elif kind == "outside":
        outside.write_text(content)
        path.symlink_to(outside)
    elif kind == "huge":
        with open(path, "wb") as f:
            f.truncate(100 * 1024 * 1024)  # sparse: 100 MB of zeros that take no disk

def outside_digest():
    return hashlib.sha256(outside.read_bytes()).hexdigest() if outside.exists() else None
"""

ROSTER = PLANT + r"""
sys.path.insert(0, "tests")
from agents_support import parent_profile
from upstream_support import always_return
from toolbench import Workbench

intruder = '{"schemaVersion": 1, "children": [{"id": "intruder", "name": null, "role": null, "identity": null, ' \
    '"template": "general", "mode": "readonly", "status": "completed", "context": null}]}'
path = ws / ".toolbench" / "agents" / "roster.json"
plant(path, kind, intruder)
before = outside_digest()
with Workbench(ws, profile=parent_profile(), seed=1) as bench:
    bench.agents.model = always_return()
    result = bench.invocation(id="inv_root").call("agent_delegate", {"agents": [{"id": "scout", "prompt": "look"}]})
    bench.agents.wait(timeout=10)
    report({"error": result.error_code, "roster": [c["id"] for c in bench.agents.roster()],
            "notices": [[n.code, n.cause] for n in bench.agents.notices],
            "replaced": path.is_file() and not path.is_symlink(), "outside_kept": outside_digest() == before})
"""


@pytest.mark.parametrize("kind", ["fifo", "zero", "outside", "huge"])
def test_a_planted_roster_is_a_notice_and_a_fresh_roster(tmp_path: Path, kind: str) -> None:
    got = run_with_deadline(ROSTER, args=(str(tmp_path / "ws"), kind, str(tmp_path / "outside.json")),
                            deadline=DEADLINE, memory_mb=MEMORY_MB)
    assert got == {"error": None, "roster": ["scout"], "notices": [["agent.roster_unreadable", CAUSE[kind]]],
                   "replaced": True, "outside_kept": True}


CRON = PLANT + r"""
from datetime import datetime
from toolbench import Profile, ToolbenchError, Workbench

ALL = ["builtin:cron.create", "builtin:cron.read", "builtin:cron.update", "builtin:cron.delete",
       "builtin:cron.list_logs"]
TASK = {"name": "ping", "cron": "0 0 9 * * *", "type": "prompt", "prompt": "ping"}
with Workbench(ws, profile=Profile.default().edit(allow=ALL)) as bench:
    inv = bench.invocation()
    if sys.argv[4] == "tasks":
        plant(ws / ".toolbench" / "cron" / "tasks.json", kind, '{"next_id": 2, "tasks": []}')
        before = outside_digest()
        codes = [inv.call("cron_read", {}).error_code, inv.call("cron_create", TASK).error_code]
        try:
            bench.cron.run_due(datetime(2026, 3, 10, 9, 0, 0))
            codes.append(None)
        except ToolbenchError as exc:
            codes.append(exc.code)
        report({"codes": codes, "outside_kept": outside_digest() == before})
    else:  # the task's run log
        assert not inv.call("cron_create", TASK).is_error
        plant(ws / ".toolbench" / "cron" / "logs" / "task-0001.jsonl", kind, '{"at": "x", "status": "ok"}\n')
        before = outside_digest()
        runs = bench.cron.run_due(datetime(2026, 3, 10, 9, 0, 0))
        report({"runs": [[r.status, r.extra.get("log_error")] for r in runs],
                "counted": [t.runs for t in bench.cron.tasks()],
                "list_logs": inv.call("cron_list_logs", {"task_id": "task-0001"}).error_code,
                "outside_kept": outside_digest() == before})
"""


@pytest.mark.parametrize("kind", ["fifo", "zero", "outside", "huge"])
def test_a_planted_cron_store_is_refused_by_the_tools_and_run_due(tmp_path: Path, kind: str) -> None:
    got = run_with_deadline(CRON, args=(str(tmp_path / "ws"), kind, str(tmp_path / "outside.json"), "tasks"),
                            deadline=DEADLINE, memory_mb=MEMORY_MB)
    assert got == {"codes": ["cron.store_unreadable"] * 3, "outside_kept": True}


@pytest.mark.parametrize("kind", ["fifo", "outside"])
def test_a_planted_cron_log_neither_blocks_nor_loses_the_run(tmp_path: Path, kind: str) -> None:
    got = run_with_deadline(CRON, args=(str(tmp_path / "ws"), kind, str(tmp_path / "outside.json"), "log"),
                            deadline=DEADLINE, memory_mb=MEMORY_MB)
    # An append never follows a link at the name, inside the workspace or out: a link is not a log.
    assert got == {"runs": [["prompt_due", "storage.not_regular_file"]], "counted": [1],
                   "list_logs": "cron.store_unreadable", "outside_kept": True}


REOPEN = PLANT + r"""
from toolbench import Profile, ToolbenchError, Workbench

profile = Profile.default().edit(allow=["builtin:dice.roll"])
with Workbench(ws, profile=profile, seed=3) as bench:
    bench.invocation(id="inv_keep").call("dice_roll", {"formula": "d6"})
plant(ws / ".toolbench" / "invocations" / "inv_keep" / sys.argv[4], kind, "{}")
with Workbench(ws, profile=profile) as again:
    try:
        again.open_invocation("inv_keep")
        report(None)
    except ToolbenchError as exc:
        report(exc.code)
"""


@pytest.mark.parametrize(("name", "kind"), [("snapshot.json", "fifo"), ("profile.json", "fifo"), ("log.jsonl", "fifo"),
                                            ("snapshot.json", "zero"), ("log.jsonl", "zero"),
                                            ("log.jsonl", "huge")])
def test_reopen_refuses_a_planted_invocation_file(tmp_path: Path, name: str, kind: str) -> None:
    got = run_with_deadline(REOPEN, args=(str(tmp_path / "ws"), kind, str(tmp_path / "outside.json"), name),
                            deadline=DEADLINE, memory_mb=MEMORY_MB)
    assert got == CAUSE[kind]


ATTACHMENT = PLANT + r"""
from toolbench.core.results import AttachmentRef
from toolbench.runtime.attachments import views
from toolbench.runtime.store import Store

ref = AttachmentRef(kind="image", mime_type="image/png", path="tool-results/inv_x/a-1.png", size=5, sha256="0")
plant(ws / ref.path, kind, "hello")
report([v.data is None for v in views(Store(ws), [ref])])
"""


@pytest.mark.parametrize("kind", ["fifo", "zero", "outside", "huge"])
def test_a_planted_attachment_is_left_out(tmp_path: Path, kind: str) -> None:
    got = run_with_deadline(ATTACHMENT, args=(str(tmp_path / "ws"), kind, str(tmp_path / "outside.json")),
                            deadline=DEADLINE, memory_mb=MEMORY_MB)
    assert got == [True]


# Writes: a runtime folder that is a link out of the workspace is refused, and nothing lands outside.

def test_a_roster_folder_linked_out_of_the_workspace_is_not_written(make_bench, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (tmp_path / "ws" / ".toolbench").mkdir(parents=True)
    (tmp_path / "ws" / ".toolbench" / "agents").symlink_to(outside)
    bench = make_bench("ws", profile=parent_profile(), seed=1)
    bench.agents.model = always_return()
    result = bench.invocation(id="inv_root").call("agent_delegate", {"agents": [{"id": "scout", "prompt": "look"}]})
    assert not result.is_error, result.content
    bench.agents.wait(timeout=WAIT)
    assert list(outside.iterdir()) == []
    assert ("agent.roster_write_failed", "storage.link_outside_workspace") in [
        (n.code, n.cause) for n in bench.agents.notices]


def test_a_cron_folder_linked_out_of_the_workspace_is_refused(make_bench, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (tmp_path / "ws" / ".toolbench").mkdir(parents=True)
    (tmp_path / "ws" / ".toolbench" / "cron").symlink_to(outside)
    bench = make_bench("ws", profile=Profile.default().edit(allow=["builtin:cron.create"]))
    task = {"name": "ping", "cron": "0 0 9 * * *", "type": "prompt", "prompt": "ping"}
    assert bench.invocation().call("cron_create", task).error_code == "cron.store_unreadable"
    assert list(outside.iterdir()) == []


def test_an_invocations_folder_linked_out_of_the_workspace_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (tmp_path / "ws" / ".toolbench").mkdir(parents=True)
    (tmp_path / "ws" / ".toolbench" / "invocations").symlink_to(outside)
    profile = Profile.default().edit(allow=["builtin:dice.roll"])
    with Workbench(tmp_path / "ws", profile=profile) as bench, pytest.raises(ToolbenchError) as info:
        bench.invocation(id="inv_x")
    assert info.value.code == "storage.link_outside_workspace"
    assert list(outside.iterdir()) == []


def test_a_roster_written_over_a_planted_fifo_replaces_it(make_bench, tmp_path: Path) -> None:
    # The write never opens the old entry: a FIFO (or link) at the name is replaced by rename.
    path = tmp_path / "ws" / agent_store.ROSTER_PATH
    path.parent.mkdir(parents=True)
    os.mkfifo(path)
    assert agent_store.save(tmp_path / "ws", []) is None
    assert json.loads(path.read_text()) == {"schemaVersion": 1, "children": []}


MCP_LOG = PLANT + r"""
from toolbench.mcp._procs import CappedLog, tail_lines

path = ws / ".toolbench" / "mcp" / "srv.stderr.log"
plant(path, kind, "secret\n")
before = outside_digest()
log = CappedLog(path)
log.writer.write("server says hi\n")
log.close()
report({"tail": list(tail_lines(path)), "outside_kept": outside_digest() == before})
"""


@pytest.mark.parametrize("kind", ["fifo", "zero", "outside"])
def test_a_planted_mcp_stderr_log_is_replaced_not_opened(tmp_path: Path, kind: str) -> None:
    # The planted entry is replaced by a fresh log (never opened, never followed).
    got = run_with_deadline(MCP_LOG, args=(str(tmp_path / "ws"), kind, str(tmp_path / "outside.json")),
                            deadline=DEADLINE, memory_mb=MEMORY_MB)
    assert got == {"tail": ["server says hi"], "outside_kept": True}


# The rule itself (tools/workspace/runtime_files.py), on files that cannot hang it.

def test_read_runtime_file_follows_links_inside_the_workspace_only(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".toolbench").mkdir(parents=True)
    (ws / "real.json").write_text("{}")
    (ws / ".toolbench" / "inside.json").symlink_to("../real.json")
    (tmp_path / "out.json").write_text("{}")
    (ws / ".toolbench" / "out.json").symlink_to(tmp_path / "out.json")
    assert read_runtime_file(ws, ".toolbench/inside.json", limit=10) == b"{}"
    assert read_runtime_file(ws, ".toolbench/missing.json", limit=10) is None
    assert read_runtime_file(ws, "nowhere/missing.json", limit=10) is None
    assert read_runtime_file(ws, "real.json", limit=1, tail=True) == b"}"
    for name, code in [(".toolbench/out.json", "storage.link_outside_workspace"),
                       ("real.json", "storage.file_too_large"), ("real.json/x", "storage.not_regular_file")]:
        with pytest.raises(ToolbenchError) as info:
            read_runtime_file(ws, name, limit=1)
        assert info.value.code == code
        assert str(tmp_path) not in info.value.message  # the message names the file in the workspace


def test_a_long_cron_log_is_read_from_its_end_and_a_torn_line_skipped(make_bench, monkeypatch) -> None:
    from toolbench.tools.cron import tasks

    bench = make_bench(profile=Profile.default().edit(allow=["builtin:cron.create", "builtin:cron.list_logs"]))
    inv = bench.invocation()
    assert not inv.call("cron_create", {"name": "p", "cron": "0 0 9 * * *", "type": "prompt", "prompt": "p"}).is_error
    lines = [json.dumps({"at": f"t{i}", "status": "ok", "output": "x" * 50}) for i in range(40)]
    log = bench.workspace / ".toolbench" / "cron" / "logs" / "task-0001.jsonl"
    log.parent.mkdir(parents=True)
    log.write_text("\n".join(lines) + '\n{"at": "torn', encoding="utf-8")
    monkeypatch.setattr(tasks, "LOG_TAIL_BYTES", 400)  # a log far longer than what is read of it
    result = inv.call("cron_list_logs", {"task_id": "task-0001", "limit": 500})
    assert not result.is_error, result.content
    ats = [e["at"] for e in result.structured["logs"]]
    assert ats[0] == "t39" and 1 < len(ats) < 40 and ats == [f"t{i}" for i in range(39, 39 - len(ats), -1)]


def test_an_mcp_log_folder_linked_out_of_the_workspace_gets_no_log(make_bench, tmp_path: Path) -> None:
    # `.toolbench/mcp` planted as a link to a host folder: a server's stderr is drained, kept nowhere.
    import sys

    outside = tmp_path / "host-logs"
    outside.mkdir()
    (outside / "demo.stderr.log").write_text("precious\n")
    (outside / "demo.stderr.log.1").write_text("precious too\n")
    bench = make_bench(profile=Profile.default())
    (bench.workspace / ".toolbench").mkdir(exist_ok=True)
    (bench.workspace / ".toolbench" / "mcp").symlink_to(outside)
    script = ("import sys; print('noise', file=sys.stderr, flush=True); "
              "from toolbench.examples.demo_mcp import main; main()")
    info = bench.mcp.add("demo", command=sys.executable, args=["-c", script], timeout=20)
    assert info.state == "active"
    assert info.stderr_tail == ()
    assert (outside / "demo.stderr.log").read_text() == "precious\n"
    assert (outside / "demo.stderr.log.1").read_text() == "precious too\n"


def test_a_planted_folder_beside_an_mcp_log_does_not_stop_the_server(make_bench) -> None:
    import sys

    bench = make_bench(profile=Profile.default())
    (bench.workspace / ".toolbench" / "mcp" / "demo.stderr.log.1").mkdir(parents=True)
    info = bench.mcp.add("demo", command=sys.executable, args=["-m", "toolbench.examples.demo_mcp"], timeout=20)
    assert info.state == "active", info.diagnostic


def test_a_cron_log_line_nested_past_the_parser_is_skipped(make_bench) -> None:
    bench = make_bench(profile=Profile.default().edit(allow=["builtin:cron.create", "builtin:cron.list_logs"]))
    inv = bench.invocation()
    assert not inv.call("cron_create", {"name": "p", "cron": "0 0 9 * * *", "type": "prompt", "prompt": "p"}).is_error
    log = bench.workspace / ".toolbench" / "cron" / "logs" / "task-0001.jsonl"
    log.parent.mkdir(parents=True)
    log.write_text(json.dumps({"at": "t0", "status": "ok"}) + "\n" + "[" * 100_000 + "\n", encoding="utf-8")
    result = inv.call("cron_list_logs", {"task_id": "task-0001"})
    assert not result.is_error, result.content
    assert [e["at"] for e in result.structured["logs"]] == ["t0"]


def test_a_log_that_grows_while_its_tail_is_read_gives_the_tail(tmp_path: Path, monkeypatch) -> None:
    # fstat saw 10 bytes; 1,000 more were appended before the read: the last `limit` bytes still come.
    from toolbench.tools.workspace import beneath, runtime_files

    log = tmp_path / "ws" / ".toolbench" / "x.log"
    log.parent.mkdir(parents=True)
    log.write_bytes(b"a" * 10 + b"b" * 1000)
    real = beneath.open_regular

    def stale(dir_fd: int, name: str) -> tuple[int, os.stat_result]:
        fd, st = real(dir_fd, name)
        return fd, os.stat_result((st.st_mode, 0, 0, 0, 0, 0, 10, 0, 0, 0))

    monkeypatch.setattr(runtime_files.beneath, "open_regular", stale)
    assert read_runtime_file(tmp_path / "ws", ".toolbench/x.log", limit=64, tail=True) == b"a" * 10 + b"b" * 54
