from __future__ import annotations


def _tree(ws) -> None:
    for rel in ("work/a.md", "work/sub/b.md", "work/sub/deep/c.md", "work/sub/deep/more/d.md", "work/skip.log",
                "work/build/out.txt"):
        p = ws / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("x\n")
    (ws / "work" / ".gitignore").write_text("*.log\nbuild/\n")


def test_root_lists_only_visible_roots(call) -> None:
    r = call.ok("list_files", {"depth": 1})
    assert r.structured["entries"] == ["output/", "skills/", "tmp/", "tool-results/", "work/"]


def test_depth_and_gitignore(call) -> None:
    _tree(call.bench.workspace)
    r = call.ok("list_files", {"path": "work", "depth": 2})
    entries = r.structured["entries"]
    assert "work/a.md" in entries and "work/sub/b.md" in entries and "work/sub/deep/" in entries
    assert "work/sub/deep/c.md" not in entries
    assert not any("skip.log" in e or "build" in e for e in entries)


def test_paging(call) -> None:
    _tree(call.bench.workspace)
    first = call.ok("list_files", {"path": "work", "depth": 4, "max_results": 2})
    assert first.structured["hasMore"] and len(first.structured["entries"]) == 2
    second = call.ok("list_files", {"path": "work", "depth": 4, "offset": 2, "max_results": 100})
    assert not second.structured["hasMore"]
    assert first.structured["total"] == 2 + len(second.structured["entries"])


def test_depth_over_max_is_invalid(call) -> None:
    call.err("list_files", {"depth": 5}, "tool.invalid_arguments")


def test_glob_matches_relative_to_base(call) -> None:
    _tree(call.bench.workspace)
    r = call.ok("glob", {"pattern": "*.md", "path": "work/sub"})
    assert r.structured["files"] == ["work/sub/b.md", "work/sub/deep/c.md", "work/sub/deep/more/d.md"]
    r = call.ok("glob", {"pattern": "*.log"})
    assert r.structured["files"] == []


def test_list_missing_path_suggests(call) -> None:
    _tree(call.bench.workspace)
    r = call.err("list_files", {"path": "work/sbu"}, "workspace.file_not_found")
    assert "sub" in r.structured["didYouMean"]
