"""What a workspace can hold (links, FIFOs, devices, NFD names, racing swaps) and two writers at
once never freeze a file tool, let it out of the workspace or lose an acknowledged write (issue 12).

Cases that could hang or race run in a child process with a deadline (`tests.deadline`); the
child builds its own bench and calls tools through `inv.call`. A child also caps its address
space, so a device read without end fails with MemoryError instead of filling the machine.
"""

from __future__ import annotations

import errno
import json
import os
import stat
import textwrap
import unicodedata
from pathlib import Path

import pytest

from tests.deadline import run_with_deadline
from toolbench.core import fileio

ALL_WORKSPACE = [f"builtin:workspace.{name}" for name in ("list_files", "read_file", "search_files", "write_file",
                                                          "apply_patch", "commit", "finish", "glob", "delete")]
NFC = unicodedata.normalize("NFC", "café.txt")
NFD = unicodedata.normalize("NFD", "café.txt")

# The child's prelude: argv[1] the allow list, argv[2] a scratch folder; `bench_at` builds a bench.
CHILD = """
import json, os, resource, stat, sys, threading, time
from pathlib import Path
from toolbench import Profile, Workbench
resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
sys.setswitchinterval(1e-5)  # switch threads often: the races below need interleaving
ALLOW, SCRATCH = json.loads(sys.argv[1]), Path(sys.argv[2])
PROFILE = Profile.default().edit(allow=ALLOW, max_calls_per_run=100_000, max_rounds=100_000)
def bench_at(folder):
    return Workbench(SCRATCH / folder, profile=PROFILE)
"""


def _child(script: str, tmp_path: Path, *, deadline: float = 60.0):
    return run_with_deadline(CHILD + textwrap.dedent(script), deadline=deadline,
                             args=(json.dumps(ALL_WORKSPACE), str(tmp_path)))


# links ------------------------------------------------------------------------------------
def test_a_link_planted_at_a_temp_name_cannot_redirect_a_write(call, tmp_path) -> None:
    # An unpacked archive can hold `.<name>.<pid>.tmp` as a link: the write must not follow it.
    victim = tmp_path / "victim.txt"
    victim.write_text("keep\n")
    work = call.bench.workspace / "work"
    (work / f".a.txt.{os.getpid()}.tmp").symlink_to(victim)
    call.ok("write_file", {"path": "work/a.txt", "content": "new\n"})
    assert victim.read_text() == "keep\n"
    assert not (work / "a.txt").is_symlink() and (work / "a.txt").read_text() == "new\n"


def test_a_folder_swapped_for_a_link_never_lets_a_call_out(tmp_path) -> None:
    # One thread swaps work/d (a folder) and work/link (a link to a folder outside) atomically
    # (renameat2 RENAME_EXCHANGE), in a loop; reads, replaces, appends and patches go through
    # work/d meanwhile. None may read a byte outside or change anything there.
    pytest.importorskip("ctypes")
    result = _child("""
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        if not hasattr(libc, "renameat2"):
            report("no renameat2")
            sys.exit(0)
        bench = bench_at("ws")
        work = bench.workspace / "work"
        outside = SCRATCH / "outside"
        outside.mkdir()
        (work / "d").mkdir()
        for name in ("x.txt", "w.txt", "p.txt"):
            (outside / name).write_text("OUTSIDE\\n")
            (work / "d" / name).write_text("inside\\n")
        (work / "link").symlink_to(outside)
        def snapshot():
            return sorted((n, os.lstat(outside / n).st_ino, os.lstat(outside / n).st_mtime_ns)
                          for n in os.listdir(outside))
        before = snapshot()
        stop = threading.Event()
        def swap():
            d, link = os.fsencode(work / "d"), os.fsencode(work / "link")
            while not stop.is_set():
                if libc.renameat2(-100, d, -100, link, 2) != 0:  # AT_FDCWD, RENAME_EXCHANGE
                    raise OSError(ctypes.get_errno(), "renameat2")
        thread = threading.Thread(target=swap)
        thread.start()
        leaks = calls = 0
        codes = {}
        end = time.monotonic() + 5
        calls_of = (
            ("workspace_read_file", {"path": "work/d/x.txt"}),
            ("workspace_read_file", {"path": "work/d/w.txt"}),
            ("workspace_write_file", {"path": "work/d/w.txt", "content": "inside\\n"}),
            ("workspace_write_file", {"path": "work/d/n.txt", "content": "w", "mode": "append"}),
            ("workspace_read_file", {"path": "work/d/p.txt"}),
            ("workspace_apply_patch", {"path": "work/d/p.txt", "old_string": "inside", "new_string": "inside"}),
        )
        try:
            for i in range(3000):
                if time.monotonic() > end:
                    break
                if i % 100 == 0:
                    inv = bench.invocation("session")
                for name, args in calls_of:
                    r = inv.call(name, args)
                    leaks += "OUTSIDE" in r.content
                    codes[r.error_code or "ok"] = codes.get(r.error_code or "ok", 0) + 1
                    calls += 1
        finally:
            stop.set()
            thread.join()
        report({"leaks": leaks, "calls": calls, "changedOutside": snapshot() != before, "codes": codes})
    """, tmp_path)
    if result == "no renameat2":
        pytest.skip("the C library has no renameat2")
    assert result["calls"] >= 600, result
    assert result["leaks"] == 0 and not result["changedOutside"], result
    assert result["codes"].get("ok", 0) > 0 and "tool.internal_error" not in result["codes"], result


# concurrent writers -----------------------------------------------------------------------
def test_two_writers_creating_the_same_files_leave_each_whole(tmp_path) -> None:
    # Two invocations create the same 150 files at once: each file is one writer's text, whole;
    # the loser of a race gets a coded refusal (it did not read the file the winner created).
    result = _child("""
        bench = bench_at("ws")
        texts = {"A": "A" * 200_000, "B": "B" * 120_000}
        codes = {}
        def writer(letter):
            inv = bench.invocation("session")
            for i in range(150):
                r = inv.call("workspace_write_file", {"path": f"work/f{i}.txt", "content": texts[letter]})
                codes[r.error_code or "ok"] = codes.get(r.error_code or "ok", 0) + 1
        threads = [threading.Thread(target=writer, args=(k,)) for k in texts]
        for t in threads: t.start()
        for t in threads: t.join()
        torn = [i for i in range(150) if (bench.workspace / "work" / f"f{i}.txt").read_text() not in texts.values()]
        stray = [n for n in os.listdir(bench.workspace / "work") if n.endswith(".tmp")]
        report({"torn": len(torn), "codes": codes, "stray": stray})
    """, tmp_path)
    assert result["torn"] == 0, result
    assert set(result["codes"]) <= {"ok", "workspace.stale_file"}, result
    assert result["stray"] == [], result


def test_two_invocations_appending_keep_every_acknowledged_line(tmp_path) -> None:
    result = _child("""
        bench = bench_at("ws")
        acked, codes = [], {}
        def appender(k):
            inv = bench.invocation("session")
            for i in range(200):
                line = f"t{k}-{i}\\n"
                r = inv.call("workspace_write_file", {"path": "work/log.txt", "content": line, "mode": "append"})
                codes[r.error_code or "ok"] = codes.get(r.error_code or "ok", 0) + 1
                if not r.is_error:
                    acked.append(line)
        threads = [threading.Thread(target=appender, args=(k,)) for k in range(2)]
        for t in threads: t.start()
        for t in threads: t.join()
        lines = (bench.workspace / "work" / "log.txt").read_text().splitlines(keepends=True)
        report({"acked": len(acked), "kept": sum(1 for line in acked if line in set(lines)),
                "total": len(lines), "codes": codes})
    """, tmp_path)
    assert result["acked"] == 400 and result["kept"] == 400 and result["total"] == 400, result


# FIFOs and devices ------------------------------------------------------------------------
def test_fifos_and_links_to_them_are_refused_without_blocking(tmp_path) -> None:
    result = _child("""
        bench = bench_at("ws")
        work = bench.workspace / "work"
        os.mkfifo(work / "p")
        (work / "lp").symlink_to("p")
        inv = bench.invocation("chat")
        codes = {}
        for path in ("work/p", "work/lp"):
            for name, args in (("workspace_read_file", {}), ("workspace_write_file", {"content": "x"}),
                               ("workspace_write_file", {"content": "x", "mode": "append"}),
                               ("workspace_apply_patch", {"old_string": "a", "new_string": "b"}),
                               ("workspace_commit", {})):
                codes[f"{name} {path} {args.get('mode', '')}"] = inv.call(name, {"path": path, **args}).error_code
        deleted = inv.call("workspace_delete", {"path": "work/p"})
        report({"codes": codes, "deleted": deleted.error_code, "gone": not os.path.lexists(work / "p")})
    """, tmp_path, deadline=30)
    assert set(result["codes"].values()) == {"workspace.file_not_regular"}, result
    assert result["deleted"] is None and result["gone"], result


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="mknod needs root")
def test_a_character_device_is_refused_not_read_forever(tmp_path) -> None:
    result = _child("""
        bench = bench_at("ws")
        os.mknod(bench.workspace / "work" / "zero", stat.S_IFCHR | 0o644, os.makedev(1, 5))
        inv = bench.invocation("session")
        report([inv.call("workspace_read_file", {"path": "work/zero"}).error_code,
                inv.call("workspace_write_file", {"path": "work/zero", "content": "x", "mode": "append"}).error_code])
    """, tmp_path, deadline=30)
    assert result == ["workspace.file_not_regular"] * 2


# NFD and NFC names ------------------------------------------------------------------------
def test_an_nfd_name_is_read_written_and_deleted_by_its_nfc_spelling(call) -> None:
    work = call.bench.workspace / "work"
    (work / NFD).write_text("one\n")
    r = call.ok("read_file", {"path": f"work/{NFC}"})
    assert "one" in r.content
    call.ok("write_file", {"path": f"work/{NFC}", "content": "two\n"})
    call.ok("apply_patch", {"path": f"work/{NFC}", "old_string": "two", "new_string": "three"})
    assert os.listdir(work) == [NFD] and (work / NFD).read_text() == "three\n"
    call.ok("delete", {"path": f"work/{NFC}"})
    assert os.listdir(work) == []


def test_an_nfd_folder_is_written_into_not_twinned(call) -> None:
    work = call.bench.workspace / "work"
    folder = unicodedata.normalize("NFD", "Résumé")
    (work / folder).mkdir()
    call.ok("write_file", {"path": f"work/{unicodedata.normalize('NFC', 'Résumé')}/a.txt", "content": "x"})
    assert os.listdir(work) == [folder] and os.listdir(work / folder) == ["a.txt"]


def test_nfc_and_nfd_twins_are_each_addressed_by_their_own_bytes(call) -> None:
    work = call.bench.workspace / "work"
    (work / NFC).write_text("composed\n")
    (work / NFD).write_text("decomposed\n")
    assert "decomposed" in call.ok("read_file", {"path": f"work/{NFD}"}).content
    assert "decomposed" not in call.ok("read_file", {"path": f"work/{NFC}"}).content
    call.ok("write_file", {"path": f"work/{NFD}", "content": "d2\n"})
    call.ok("delete", {"path": f"work/{NFD}"})
    assert os.listdir(work) == [NFC] and (work / NFC).read_text() == "composed\n"


def test_a_new_file_is_created_with_the_nfc_spelling(call) -> None:
    # Decision: names that do not exist yet are created composed (NFC), whatever form was sent;
    # the decomposed spelling still finds the file afterwards.
    work = call.bench.workspace / "work"
    call.ok("write_file", {"path": f"work/{NFD}", "content": "x\n"})
    assert os.listdir(work) == [NFC]
    assert "x" in call.ok("read_file", {"path": f"work/{NFD}"}).content


# errors name workspace paths, with a code -------------------------------------------------
def test_writing_beneath_a_file_is_parent_not_directory(call) -> None:
    (call.bench.workspace / "work" / "a.txt").write_text("x")
    r = call.err("write_file", {"path": "work/a.txt/b.txt", "content": "y"}, "workspace.parent_not_directory")
    assert str(call.bench.workspace) not in r.content
    call.err("write_file", {"path": "work/a.txt/c/b.txt", "content": "y", "mode": "append"},
             "workspace.parent_not_directory")


def _refuse(monkeypatch, name: str, err: int) -> None:
    real = getattr(os, name)

    def refusing(*args, **kwargs):
        if not str(args[0]).endswith(".tmp"):  # the target, not a temp file being cleaned up
            raise OSError(err, os.strerror(err))
        return real(*args, **kwargs)

    monkeypatch.setattr(fileio.os, name, refusing)


def test_a_failed_write_names_the_workspace_path_not_the_host_path(call, monkeypatch) -> None:
    call.ok("write_file", {"path": "work/a.txt", "content": "x\n"})
    real = os.replace

    def full(src, dst, *args, **kwargs):
        if str(dst).endswith("a.txt"):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(src, dst, *args, **kwargs)

    monkeypatch.setattr(fileio.os, "replace", full)
    r = call.err("write_file", {"path": "work/a.txt", "content": "y\n"}, "workspace.io_error")
    assert str(call.bench.workspace) not in r.content and "work/a.txt" in r.content
    assert [n for n in os.listdir(call.bench.workspace / "work") if n.endswith(".tmp")] == []


@pytest.mark.parametrize("kind", ["file", "folder"])
def test_a_delete_the_os_refuses_is_an_io_error_without_host_path(call, monkeypatch, kind) -> None:
    work = call.bench.workspace / "work"
    if kind == "file":
        (work / "x").write_text("x")
    else:
        (work / "x").mkdir()
    _refuse(monkeypatch, "unlink" if kind == "file" else "rmdir", errno.EPERM)
    r = call.err("delete", {"path": "work/x"}, "workspace.io_error")
    assert str(call.bench.workspace) not in r.content


def test_a_tool_results_link_is_readable_but_a_write_through_it_is_refused(call) -> None:
    ws = call.bench.workspace
    (ws / "tool-results" / "r.txt").write_text("result\n")
    (ws / "work" / "tr").symlink_to(ws / "tool-results")  # absolute, into the workspace
    assert "result" in call.ok("read_file", {"path": "work/tr/r.txt"}).content
    call.err("write_file", {"path": "work/tr/new.txt", "content": "x"}, "workspace.path_not_writable")
    call.err("write_file", {"path": "work/tr/sub/new.txt", "content": "x"}, "workspace.path_not_writable")
    assert sorted(os.listdir(ws / "tool-results")) == ["r.txt"]


def test_a_link_loop_is_a_coded_refusal(call) -> None:
    work = call.bench.workspace / "work"
    (work / "a").symlink_to("b")
    (work / "b").symlink_to("a")
    assert call("read_file", {"path": "work/a"}).error_code.startswith("workspace.")
    assert call("write_file", {"path": "work/a/x", "content": "x"}).error_code.startswith("workspace.")


def test_a_regular_file_keeps_working_through_an_inside_link(call) -> None:
    work = call.bench.workspace / "work"
    (work / "real.txt").write_text("v1\n")
    (work / "ln.txt").symlink_to("real.txt")
    call.ok("read_file", {"path": "work/ln.txt"})
    call.ok("write_file", {"path": "work/ln.txt", "content": "v2\n"})
    assert (work / "ln.txt").is_symlink() and (work / "real.txt").read_text() == "v2\n"
    assert stat.S_ISREG(os.lstat(work / "real.txt").st_mode)


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts descriptors in /proc")
def test_no_call_leaves_a_descriptor_open(tmp_path) -> None:
    # In a child: a FIFO is among the paths, and a regression must fail, not hang the suite.
    result = _child("""
        bench = bench_at("ws")
        work = bench.workspace / "work"
        (work / "d").mkdir()
        (work / "d" / "a.txt").write_text("a\\n")
        (work / "file").write_text("x")
        (work / "out").symlink_to(SCRATCH)
        os.mkfifo(work / "p")
        calls = [("read_file", {"path": "work/d/a.txt"}), ("write_file", {"path": "work/d/a.txt", "content": "b\\n"}),
                 ("write_file", {"path": "work/d/n.txt", "content": "c", "mode": "append"}),
                 ("apply_patch", {"path": "work/d/a.txt", "old_string": "b", "new_string": "c"}),
                 ("read_file", {"path": "work/out/x"}), ("read_file", {"path": "work/p"}),
                 ("write_file", {"path": "work/file/x", "content": "x"}), ("read_file", {"path": "work/none/x"}),
                 ("write_file", {"path": "tool-results/x", "content": "x"}), ("delete", {"path": "work/d/n.txt"}),
                 ("delete", {"path": "work/none"}), ("read_file", {"path": "work/caf\\u00e9.txt"})]
        inv = bench.invocation("session")
        for name, args in calls:  # once to warm up (the run log, lazy imports), then counted
            inv.call("workspace_" + name, args)
        before = len(os.listdir("/proc/self/fd"))
        for _ in range(3):
            for name, args in calls:
                inv.call("workspace_" + name, args)
        report([before, len(os.listdir("/proc/self/fd"))])
    """, tmp_path, deadline=30)
    assert result[0] == result[1], result


def test_a_lone_surrogate_in_a_path_is_an_invalid_path(call) -> None:
    for name in ("read_file", "delete"):
        call.err(name, {"path": "work/\ud83d.txt"}, "workspace.invalid_path")
    call.err("write_file", {"path": "work/\ud83d.txt", "content": "x"}, "workspace.invalid_path")


def test_a_folder_locked_by_another_process_times_out_instead_of_freezing(tmp_path) -> None:
    # A process outside holds the folder's flock for good: the write ends with a coded result
    # at the builtin time limit, and writes nothing.
    result = _child("""
        import subprocess
        profile = PROFILE.edit(tools={"builtin_timeout_seconds": 1.0})
        bench = Workbench(SCRATCH / "ws", profile=profile)
        hold = ("import fcntl, os, sys; fd = os.open(sys.argv[1], os.O_RDONLY); fcntl.flock(fd, fcntl.LOCK_EX);"
                " print('held', flush=True); sys.stdin.read()")
        holder = subprocess.Popen([sys.executable, "-c", hold, str(bench.workspace / "work")],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert holder.stdout.readline() == "held\\n"
        started = time.monotonic()
        r = bench.invocation("session").call("workspace_write_file", {"path": "work/a.txt", "content": "x"})
        holder.kill()
        holder.wait()
        report({"code": r.error_code, "seconds": time.monotonic() - started,
                "written": (bench.workspace / "work" / "a.txt").exists()})
    """, tmp_path, deadline=30)
    assert result["code"] == "tool.timeout" and result["seconds"] < 10 and not result["written"], result


def test_a_write_past_the_file_size_limit_is_refused(tmp_path: Path) -> None:
    # The shell is never handed a file over max_file_bytes, so the file tools never make one.
    from toolbench import Profile, Workbench

    profile = Profile.default().edit(workspace={"max_file_bytes": 1024})
    with Workbench(tmp_path / "ws", profile=profile) as bench:
        inv = bench.invocation("chat")
        big = inv.call("workspace_write_file", {"path": "work/sub/big.txt", "content": "x" * 5000})
        assert big.error_code == "workspace.file_too_large"
        assert not (bench.workspace / "work" / "sub" / "big.txt").exists()
        assert inv.call("workspace_write_file", {"path": "work/a.txt", "content": "y" * 1000}).error_code is None
        more = inv.call("workspace_write_file", {"path": "work/a.txt", "content": "y" * 100, "mode": "append"})
        assert more.error_code == "workspace.file_too_large"
        assert (bench.workspace / "work" / "a.txt").read_text() == "y" * 1000
