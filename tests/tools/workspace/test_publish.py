from __future__ import annotations

from toolbench.tools.workspace.publish import OUTPUT_KEY


def test_commit_publishes_and_append_accumulates(call) -> None:
    call.ok("write_file", {"path": "output/main.md", "content": "part one\n"})
    r = call.ok("commit", {})
    assert r.structured["path"] == "output/main.md"
    call.ok("write_file", {"path": "output/extra.md", "content": "part two\n"})
    call.ok("commit", {"path": "output/extra.md", "mode": "append"})
    assert call.inv.state[OUTPUT_KEY]["text"] == "part one\npart two\n"


def test_commit_missing_file(call) -> None:
    call.err("commit", {"path": "output/none.md"}, "workspace.file_not_found")


def test_finish_must_be_last_of_its_round(call) -> None:
    results = call.inv.turn([("workspace_finish", {}, "c1"), ("workspace_list_files", {}, "c2")])
    assert any(r.error_code == "agent.tool_after_finish" for r in results)
    r = call.ok("finish", {"reason": "done"})
    assert r.structured["finished"] is True


def test_session_scene_drops_commit_and_finish(bench) -> None:
    names = set(bench.invocation(scene="session").snapshot.call_names)
    assert "workspace_commit" not in names and "workspace_finish" not in names
    assert "workspace_read_file" in names
