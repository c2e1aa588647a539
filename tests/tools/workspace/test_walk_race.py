"""The walking tools (search_files, list_files, glob) never list or read outside the workspace,
whatever is swapped while they walk, and a walk holds one descriptor per folder it is in.

The race runs in a child process with a deadline (`tests.deadline`), as the swap races of the
single-path tools do (test_hostile_files).
"""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import pytest

from tests.deadline import run_with_deadline
from toolbench.core.workspace_settings import WorkspaceSettings
from toolbench.tools.workspace.paths import Workspace
from toolbench.tools.workspace.walk import walk

WALKING_TOOLS = ["builtin:workspace.search_files", "builtin:workspace.list_files", "builtin:workspace.glob"]

RACE = """
import ctypes, json, subprocess, sys, time
from pathlib import Path
from toolbench import Profile, Workbench
if not hasattr(ctypes.CDLL(None), "renameat2"):
    report("no renameat2")
    sys.exit(0)
scratch = Path(sys.argv[2])
profile = Profile.default().edit(allow=json.loads(sys.argv[1]), max_calls_per_run=100_000, max_rounds=100_000)
bench = Workbench(scratch / "ws", profile=profile)
work = bench.workspace / "work"
outside = scratch / "outside"
outside.mkdir()
(work / "d").mkdir()
for i in range(12):
    (outside / f"outside-only-{i}.txt").write_text("needle OUTSIDE-SECRET\\n")
    (work / "d" / f"inside-{i}.txt").write_text("needle inside\\n")
(work / "link").symlink_to(outside)
swapper = subprocess.Popen([sys.executable, "-c", SWAP, str(work / "d"), str(work / "link")],
                           stdout=subprocess.PIPE, text=True)
calls_of = (
    ("workspace_search_files", {"query": "needle", "path": "work", "limit": 50}),
    ("workspace_list_files", {"path": "work", "depth": 3}),
    ("workspace_glob", {"pattern": "*.txt", "path": "work"}),
)
leaks = {name: 0 for name, _ in calls_of}
inside = {name: 0 for name, _ in calls_of}  # calls that saw the folder's own files: the walk went in
codes = {}
calls = 0
try:
    assert swapper.stdout.readline() == "swapping\\n"
    end = time.monotonic() + 5
    for i in range(1500):
        if time.monotonic() > end:
            break
        if i % 100 == 0:
            inv = bench.invocation("session")
        for name, args in calls_of:
            r = inv.call(name, args)
            text = r.content + json.dumps(r.structured)
            leaks[name] += "OUTSIDE-SECRET" in text or "outside-only" in text
            inside[name] += "inside-" in text
            codes[r.error_code or "ok"] = codes.get(r.error_code or "ok", 0) + 1
            calls += 1
finally:
    swapper.kill()
    swapper.wait()
report({"leaks": leaks, "inside": inside, "calls": calls, "codes": codes, "swapping": swapper.returncode == -9})
"""

# The swapper: work/d (a folder) and work/link (a link to the folder outside) trade places
# atomically (renameat2 RENAME_EXCHANGE) in a loop, in a process of its own: a thread would
# swap only when the walking thread lets go of the GIL, and the race would hardly ever be hit.
# It stops by itself when its parent is gone or after 30 s, so a killed test leaves no spinner.
SWAP = """
import ctypes, os, sys, time
exchange = ctypes.CDLL(None, use_errno=True).renameat2
d, link = os.fsencode(sys.argv[1]), os.fsencode(sys.argv[2])
parent, end = os.getppid(), time.monotonic() + 30
print("swapping", flush=True)
while os.getppid() == parent and time.monotonic() < end:
    for _ in range(1000):
        if exchange(-100, d, -100, link, 2) != 0:  # AT_FDCWD, RENAME_EXCHANGE
            sys.exit(1)
"""


def test_a_folder_swapped_for_a_link_mid_walk_never_shows_what_is_outside(tmp_path: Path) -> None:
    # search_files, list_files and glob walk work/ over and over while work/d and a link to a
    # folder outside trade places; no call may list a name from outside or show a line of it.
    result = run_with_deadline(f"SWAP = {SWAP!r}\n" + textwrap.dedent(RACE), deadline=60.0,
                               args=(json.dumps(WALKING_TOOLS), str(tmp_path)))
    if result == "no renameat2":
        pytest.skip("the C library has no renameat2")
    assert result["calls"] >= 300, result
    assert sum(result["leaks"].values()) == 0, result
    assert min(result["inside"].values()) > 0, result  # each tool did walk into the swapped folder
    assert result["swapping"] and set(result["codes"]) == {"ok"}, result


# descriptors -----------------------------------------------------------------------------
def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.fixture
def deep_ws(tmp_path: Path) -> Workspace:
    base = tmp_path / "ws"
    for root in ("work", "tmp", "output", "tool-results", "skills"):
        (base / root).mkdir(parents=True)
    for rel in ("work/a.txt", "work/s/b.txt", "work/s/t/c.txt", "work/s/t/u/d.txt", "work/z.txt", "tmp/e.txt"):
        (base / rel).parent.mkdir(parents=True, exist_ok=True)
        (base / rel).write_text("x\n")
    (base / "work" / "s" / ".gitignore").write_text("ignored.txt\n")
    (base / "work" / "s" / "ignored.txt").write_text("x\n")
    return Workspace(base, WorkspaceSettings())


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts descriptors in /proc/self/fd")
def test_a_walk_holds_one_descriptor_per_folder_it_is_in(deep_ws: Workspace) -> None:
    before = _open_fds()
    seen = []
    for entry in walk(deep_ws, deep_ws.resolve("work")):
        assert _open_fds() - before <= entry.depth, entry  # the start folder and the folders down to this entry's
        seen.append(entry.rel)
    assert seen == ["work/a.txt", "work/s", "work/s/.gitignore", "work/s/b.txt", "work/s/t", "work/s/t/c.txt",
                    "work/s/t/u", "work/s/t/u/d.txt", "work/z.txt"]
    assert _open_fds() == before


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts descriptors in /proc/self/fd")
def test_a_walk_stopped_half_way_closes_its_folders(deep_ws: Workspace) -> None:
    before = _open_fds()
    for start in ("work", ""):
        entries = walk(deep_ws, deep_ws.resolve(start))
        for entry in entries:
            if entry.rel == "work/s/t/u/d.txt":
                assert _open_fds() > before
                break
        entries.close()
        assert _open_fds() == before


def test_an_entry_opens_beneath_its_folder(deep_ws: Workspace) -> None:
    # What a consumer reads is the entry `name` of the folder `dir_fd`, while the walk is there.
    texts = {}
    for entry in walk(deep_ws, deep_ws.resolve("")):
        if entry.kind == "file":
            fd = os.open(entry.name, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=entry.dir_fd)
            with os.fdopen(fd) as f:
                texts[entry.rel] = f.read()
        elif entry.depth == 1:  # a root: opened by the walk itself, as `.` of its own descriptor
            assert entry.name == "." and os.path.samestat(os.fstat(entry.dir_fd), os.stat(deep_ws.base / entry.rel))
    assert sorted(texts) == ["tmp/e.txt", "work/a.txt", "work/s/.gitignore", "work/s/b.txt", "work/s/t/c.txt",
                             "work/s/t/u/d.txt", "work/z.txt"]


def test_the_ancestors_ignore_files_apply_where_the_start_folder_really_lies(deep_ws: Workspace) -> None:
    # Read on the way down to the start folder: the workspace's, work/'s and work/s/'s own.
    (deep_ws.base / ".gitignore").write_text("/work/s/t/c.txt\n")
    (deep_ws.base / "work" / ".gitignore").write_text("s/t/u/\n")
    (deep_ws.base / "work" / "alias").symlink_to("s")  # a start reached through a link inside
    for start in ("work/s", "work/alias"):
        seen = [e.rel for e in walk(deep_ws, deep_ws.resolve(start))]
        assert seen == [f"{start}/.gitignore", f"{start}/b.txt", f"{start}/t"], seen


def test_a_root_that_is_a_link_out_of_the_workspace_is_not_walked(deep_ws: Workspace, tmp_path: Path) -> None:
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("x\n")
    (deep_ws.base / "tmp" / "e.txt").unlink()
    (deep_ws.base / "tmp").rmdir()
    (deep_ws.base / "tmp").symlink_to(tmp_path / "outside")
    seen = [e.rel for e in walk(deep_ws, deep_ws.resolve(""))]
    assert "work/a.txt" in seen and not any(rel.startswith("tmp") for rel in seen), seen
