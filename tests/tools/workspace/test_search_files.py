from __future__ import annotations

import os


def _files(ws) -> None:
    (ws / "work" / "a.md").write_text("alpha\nbeta\nGamma ray\ndelta\n")
    (ws / "work" / "b.txt").write_text("gamma\n")
    (ws / "work" / "bin.dat").write_bytes(b"gamma\x00\x01")


def test_plain_case_insensitive_by_default_with_context(call) -> None:
    _files(call.bench.workspace)
    r = call.ok("search_files", {"query": "gamma", "context_lines": 1})
    assert [(m["path"], m["line"]) for m in r.structured["matches"]] == [("work/a.md", 3), ("work/b.txt", 1)]
    assert "work/a.md-2- beta" in r.content and "work/a.md:3: Gamma ray" in r.content
    assert r.structured["filesSkipped"] >= 1  # the binary


def test_case_sensitive_and_regex(call) -> None:
    _files(call.bench.workspace)
    r = call.ok("search_files", {"query": "gamma", "case_sensitive": True})
    assert [m["path"] for m in r.structured["matches"]] == ["work/b.txt"]
    r = call.ok("search_files", {"query": r"^(alpha|delta)$", "regex": True})
    assert [m["line"] for m in r.structured["matches"]] == [1, 4]
    r = call.ok("search_files", {"query": "a.", "regex": False, "path": "work"})
    assert r.structured["matches"] == []


def test_glob_path_and_limit(call) -> None:
    _files(call.bench.workspace)
    r = call.ok("search_files", {"query": "a", "glob": "*.txt"})
    assert {m["path"] for m in r.structured["matches"]} == {"work/b.txt"}
    r = call.ok("search_files", {"query": "a", "path": "work/a.md", "limit": 2})
    assert len(r.structured["matches"]) == 2 and r.structured["hasMore"]


def test_bad_regex_and_limit(call) -> None:
    call.err("search_files", {"query": "(", "regex": True}, "workspace.regex_invalid")
    call.err("search_files", {"query": "x", "limit": 51}, "tool.invalid_arguments")
    call.err("search_files", {"query": "x", "path": "../"}, "workspace.invalid_path")


def test_search_skips_runtime_folders(call) -> None:
    (call.bench.workspace / "tool-args").mkdir(exist_ok=True)
    (call.bench.workspace / "tool-args" / "x.json").write_text("secretword\n")
    r = call.ok("search_files", {"query": "secretword"})
    assert r.structured["matches"] == []


_FIRST_READ = 1 << 16  # sizes around a 64 KiB read, where a chunked reader would turn


def test_read_takes_whole_files_and_refuses_those_over_the_limit(tmp_path) -> None:
    from toolbench.tools.workspace.search import _read

    sizes = (0, 10, _FIRST_READ - 1, _FIRST_READ, _FIRST_READ + 1, 3 * _FIRST_READ + 5)
    folder = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for size in sizes:
            path = tmp_path / f"f{size}"
            path.write_bytes(bytes(i % 251 for i in range(size)))
            assert _read(folder, path.name, 10**9) == path.read_bytes()
            assert _read(folder, path.name, size) == path.read_bytes()  # exactly at the limit
            if size:
                assert _read(folder, path.name, size - 1) is None
        assert _read(folder, "missing", 100) is None
        assert _read(folder, ".", 100) is None  # a folder
    finally:
        os.close(folder)


def test_a_hit_past_the_first_read_is_found(call) -> None:
    body = "filler line\n" * (_FIRST_READ // 6)
    (call.bench.workspace / "work" / "big.txt").write_text(body + "the NEEDLE at the end\n")
    r = call.ok("search_files", {"query": "needle"})
    assert [(m["path"], m["line"]) for m in r.structured["matches"]] == [("work/big.txt", _FIRST_READ // 6 + 1)]
