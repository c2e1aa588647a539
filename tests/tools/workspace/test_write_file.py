from __future__ import annotations


def test_create_then_replace_needs_a_current_full_read(call) -> None:
    ws = call.bench.workspace
    call.ok("write_file", {"path": "work/new/a.txt", "content": "v1\n"})
    assert (ws / "work" / "new" / "a.txt").read_text() == "v1\n"
    call.ok("write_file", {"path": "work/new/a.txt", "content": "v2\n"})  # own write counts as a read
    (ws / "work" / "new" / "a.txt").write_text("changed outside\n")
    call.err("write_file", {"path": "work/new/a.txt", "content": "v3\n"}, "workspace.stale_file")
    call.ok("read_file", {"path": "work/new/a.txt"})
    call.ok("write_file", {"path": "work/new/a.txt", "content": "v3\n"})


def test_replace_without_read_is_stale(call) -> None:
    (call.bench.workspace / "work" / "a.txt").write_text("x\n")
    call.err("write_file", {"path": "work/a.txt", "content": "y"}, "workspace.stale_file")


def test_append_creates_and_never_adds_newline(call) -> None:
    call.ok("write_file", {"path": "tmp/log.txt", "content": "a", "mode": "append"})
    call.ok("write_file", {"path": "tmp/log.txt", "content": "b", "mode": "append"})
    assert (call.bench.workspace / "tmp" / "log.txt").read_text() == "ab"


def test_write_refusals(call) -> None:
    call.err("write_file", {"path": "tool-results/x.txt", "content": "x"}, "workspace.path_not_writable")
    call.err("write_file", {"path": "skills/x.txt", "content": "x"}, "workspace.path_not_writable")
    call.err("write_file", {"path": "work", "content": "x"}, "workspace.path_is_directory")
    call.err("write_file", {"path": "/etc/passwd", "content": "x"}, "workspace.path_not_visible")
    call.err("write_file", {"path": "work/../x", "content": "x"}, "workspace.invalid_path")
    call.err("write_file", {"path": "work/" + "n" * 300, "content": "x"}, "workspace.invalid_path")


def test_symlink_out_cannot_be_written(call, tmp_path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (call.bench.workspace / "work" / "out").symlink_to(outside)
    call.err("write_file", {"path": "work/out/x.txt", "content": "x"}, "workspace.path_not_visible")
    assert not (outside / "x.txt").exists()


def test_delete(call) -> None:
    ws = call.bench.workspace
    (ws / "work" / "d" / "e").mkdir(parents=True)
    (ws / "work" / "d" / "e" / "f.txt").write_text("x")
    (ws / "work" / "empty").mkdir()
    call.err("delete", {"path": "work"}, "workspace.root_not_deletable")
    call.err("delete", {"path": "work/d"}, "workspace.directory_not_empty")
    call.ok("delete", {"path": "work/empty"})
    call.ok("delete", {"path": "work/d/e/f.txt"})
    call.ok("delete", {"path": "work/d", "recursive": True})
    assert not (ws / "work" / "d").exists()
    call.err("delete", {"path": "work/d"}, "workspace.file_not_found")
    call.err("delete", {"path": "tool-results/x"}, "workspace.path_not_writable")


def test_delete_link_removes_only_the_link(call, tmp_path) -> None:
    target = tmp_path / "keep.txt"
    target.write_text("keep")
    (call.bench.workspace / "work" / "ln").symlink_to(target)
    r = call.ok("delete", {"path": "work/ln"})
    assert r.structured["kind"] == "link" and target.exists()


def test_a_lone_surrogate_is_written_escaped_and_the_file_stays_editable(call) -> None:
    # Half an emoji, as a model can send it: written as `\ud83d` text, never a failed call
    # after the file changed; the version the tools remember is that of the bytes on disk.
    path = call.bench.workspace / "work" / "s.txt"
    r = call.ok("write_file", {"path": "work/s.txt", "content": "q\ud83dx\n"})
    assert path.read_bytes() == b"q\\ud83dx\n" and r.structured["totalLines"] == 1
    call.ok("write_file", {"path": "work/s.txt", "content": "y\udc00\n", "mode": "append"})
    call.ok("read_file", {"path": "work/s.txt"})
    call.ok("apply_patch", {"path": "work/s.txt", "old_string": "x", "new_string": "\ud800"})
    call.ok("apply_patch", {"path": "work/s.txt", "old_string": "y", "new_string": "z"})  # no re-read needed
    assert path.read_bytes() == b"q\\ud83d\\ud800\nz\\udc00\n"
