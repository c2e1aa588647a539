from __future__ import annotations

from toolbench import Profile, Workbench


def test_read_returns_numbered_lines_and_end_marker(call) -> None:
    (call.bench.workspace / "work" / "a.txt").write_text("one\ntwo\n")
    r = call.ok("read_file", {"path": "work/a.txt"})
    assert "     1\tone\n     2\ttwo\n[end of file]" in r.content
    assert r.structured["fullRead"] is True and r.structured["totalLines"] == 2


def test_paged_read_gives_next_line_and_full_read_when_contiguous(call) -> None:
    (call.bench.workspace / "work" / "a.txt").write_text("".join(f"l{i}\n" for i in range(1, 11)))
    r = call.ok("read_file", {"path": "work/a.txt", "line_count": 4})
    assert r.structured["nextLine"] == 5 and r.structured["fullRead"] is False
    assert "start_line=5" in r.content
    r = call.ok("read_file", {"path": "work/a.txt", "start_line": 5})
    assert r.structured["fullRead"] is True


def test_large_read_stops_at_the_char_budget(tmp_path) -> None:
    profile = Profile.default().edit(workspace={"max_read_chars": 1000})
    with Workbench(tmp_path / "ws", profile) as bench:
        (bench.workspace / "work" / "big.txt").write_text("x" * 99 + "\n" * 1 + ("y" * 99 + "\n") * 50)
        r = bench.invocation().call("workspace_read_file", {"path": "work/big.txt"})
        assert not r.is_error and r.structured["truncated"] and r.structured["nextLine"] == 11


def test_read_errors(call) -> None:
    ws = call.bench.workspace
    (ws / "work" / "bin.dat").write_bytes(b"\x00\x01\x02")
    (ws / "work" / "latin.txt").write_bytes("café".encode("latin-1"))
    call.err("read_file", {"path": "work/bin.dat"}, "workspace.file_not_text")
    call.err("read_file", {"path": "work/latin.txt"}, "workspace.file_not_text")
    call.err("read_file", {"path": "work"}, "workspace.path_is_directory")
    call.err("read_file", {"path": "work/none.txt"}, "workspace.file_not_found")
    call.err("read_file", {"path": "../../etc/passwd"}, "workspace.invalid_path")
    call.err("read_file", {"path": "/etc/passwd"}, "workspace.path_not_visible")
    call.err("read_file", {"path": "tool-args/x.json"}, "workspace.path_not_visible")
    call.err("read_file", {"path": "work/\x00x"}, "workspace.invalid_path")


def test_symlink_to_etc_cannot_be_read(call) -> None:
    (call.bench.workspace / "work" / "pw").symlink_to("/etc/passwd")
    call.err("read_file", {"path": "work/pw"}, "workspace.path_not_visible")


def test_externalised_result_is_read_back_in_full(tmp_path) -> None:
    """Table 9.9: 60,000 × '界' over a 10,000-char limit, then read_file to its end."""
    profile = Profile.default().edit(external_result_inline_char_limit=10_000)
    with Workbench(tmp_path / "ws", profile) as bench:
        bench.register_tool("big", lambda: "界" * 60_000, name="dump")
        bench.enable("extension/big:dump")
        inv = bench.invocation()
        name = next(n for n, t in inv.snapshot.call_names.items() if str(t) == "extension/big:dump")
        long = inv.call(name, {})
        path = long.structured["path"]
        assert long.structured["externalized"] is True and path.startswith("tool-results/")
        r = inv.call("workspace_read_file", {"path": path})
        assert not r.is_error, r.content
        assert r.structured["fullRead"] is True
        assert r.content.count("界") == 60_000 and "[end of file]" in r.content
