from __future__ import annotations

import pytest


def _prep(call, text: str, name: str = "a.py") -> str:
    (call.bench.workspace / "work" / name).write_bytes(text.encode())
    call.ok("read_file", {"path": f"work/{name}"})
    return f"work/{name}"


@pytest.mark.parametrize(("text", "old", "new", "strategy", "after"), [
    ("a = 1\nb = 2\n", "b = 2", "b = 3", "exact", "a = 1\nb = 3\n"),
    ("a = 1\r\nb = 2\r\n", "a = 1\nb = 2\n", "a = 9\nb = 2\n", "line-endings", "a = 9\r\nb = 2\r\n"),
    ("a = 1   \nb = 2\n", "a = 1\nb = 2\n", "a = 5\nb = 2\n", "trailing-whitespace", "a = 5\nb = 2\n"),
    ("    if x:\n        y()\n", "if x:\n    y()\n", "if x:\n    z()\n", "indentation", "    if x:\n        z()\n"),
])
def test_each_strategy_through_the_tool(call, text, old, new, strategy, after) -> None:
    path = _prep(call, text)
    r = call.ok("apply_patch", {"path": path, "old_string": old, "new_string": new})
    assert r.structured["matchStrategy"] == strategy
    assert (call.bench.workspace / path).read_bytes().decode() == after
    if strategy != "exact":
        assert f"matchStrategy={strategy}" in r.content


def test_dry_run_returns_diff_and_writes_nothing(call) -> None:
    path = _prep(call, "a\nb\n")
    r = call.ok("apply_patch", {"path": path, "old_string": "b", "new_string": "c", "dry_run": True})
    assert "-b\n+c\n" in r.structured["diff"] and "-b" in r.content
    assert (call.bench.workspace / path).read_text() == "a\nb\n"


def test_consecutive_patches_need_no_reread(call) -> None:
    path = _prep(call, "a\nb\n")
    call.ok("apply_patch", {"path": path, "old_string": "a", "new_string": "x"})
    call.ok("apply_patch", {"path": path, "old_string": "b", "new_string": "y"})
    assert (call.bench.workspace / path).read_text() == "x\ny\n"


def test_stale_and_unread(call) -> None:
    ws = call.bench.workspace
    (ws / "work" / "u.txt").write_text("a\n")
    call.err("apply_patch", {"path": "work/u.txt", "old_string": "a", "new_string": "b"}, "workspace.stale_file")
    path = _prep(call, "a\n")
    (ws / path).write_text("a\nchanged\n")
    call.err("apply_patch", {"path": path, "old_string": "a", "new_string": "b"}, "workspace.stale_file")


def test_ambiguous_count_and_no_match(call) -> None:
    path = _prep(call, "x\nx\n")
    call.err("apply_patch", {"path": path, "old_string": "x", "new_string": "y"}, "workspace.edit_ambiguous")
    call.err("apply_patch", {"path": path, "old_string": "x", "new_string": "y", "replace_all": True,
                             "expected_replacements": 3}, "workspace.edit_count_mismatch")
    call.err("apply_patch", {"path": path, "old_string": "zz", "new_string": "y"}, "workspace.edit_no_match")
    r = call.ok("apply_patch", {"path": path, "old_string": "x", "new_string": "y", "replace_all": True})
    assert r.structured["replacements"] == 2


def test_read_only_root_is_refused(call) -> None:
    (call.bench.workspace / "tool-results" / "r.txt").write_text("a\n")
    call.err("apply_patch", {"path": "tool-results/r.txt", "old_string": "a", "new_string": "b"},
             "workspace.path_not_writable")
