from __future__ import annotations

import hashlib


def test_commit_publishes_and_append_accumulates(call) -> None:
    call.ok("write_file", {"path": "output/main.md", "content": "part one\n"})
    r = call.ok("commit", {})
    assert r.structured["path"] == "output/main.md"
    call.ok("write_file", {"path": "output/extra.md", "content": "part two\n"})
    call.ok("commit", {"path": "output/extra.md", "mode": "append"})
    assert call.inv.state.output["text"] == "part one\npart two\n"


def test_commit_missing_file(call) -> None:
    call.err("commit", {"path": "output/none.md"}, "workspace.file_not_found")


def test_finish_must_be_last_of_its_round(call) -> None:
    results = call.inv.turn([("workspace_finish", {}, "c1"), ("workspace_list_files", {}, "c2")])
    assert any(r.error_code == "agent.tool_after_finish" for r in results)
    call.ok("write_file", {"path": "output/main.md", "content": "answer\n"})
    call.ok("commit", {})
    r = call.ok("finish", {"reason": "done"})
    assert r.structured["finished"] is True


# ---- the finish rule: foreground runs commit first (upstream tool_execution.rs and its loop test) ----


def test_foreground_finish_too_early_then_recover(call) -> None:
    call.err("finish", {}, "agent.foreground_commit_required")
    assert not call.inv.state.finished
    call.ok("write_file", {"path": "output/main.md", "content": "answer\n"})
    results = call.inv.turn([("workspace_commit", {}, "c1"), ("workspace_finish", {}, "c2")])
    assert [r.is_error for r in results] == [False, False] and call.inv.state.finished
    assert call.inv.output.commits == 1


def test_a_background_run_finishes_without_a_commit(bench) -> None:
    bench.profile = bench.profile.edit(presentation="background")
    result = bench.invocation().call("workspace_finish", {})
    assert not result.is_error and result.structured["committedPath"] is None


def test_an_auto_publish_is_not_a_commit(call) -> None:
    call.ok("shell", {"command": "mkdir -p output && echo draft > output/main.md"})
    assert call.inv.output.source == "auto" and call.inv.output.commits == 0
    call.err("finish", {}, "agent.foreground_commit_required")


def test_a_commit_before_a_later_auto_publish_still_counts(call) -> None:
    call.ok("write_file", {"path": "output/main.md", "content": "answer\n"})
    call.ok("commit", {})
    call.ok("shell", {"command": "echo more > output/main.md"})
    assert call.inv.output.source == "auto" and call.inv.output.commits == 1
    call.ok("finish", {})


def test_the_commit_count_survives_a_reopen(call) -> None:
    call.ok("write_file", {"path": "output/main.md", "content": "answer\n"})
    call.ok("commit", {})
    call.bench.flush()
    assert not call.bench.open_invocation(call.inv.id).call("workspace_finish", {}).is_error


def test_session_scene_drops_commit_and_finish(bench) -> None:
    names = set(bench.invocation(scene="session").snapshot.call_names)
    assert "workspace_commit" not in names and "workspace_finish" not in names
    assert "workspace_read_file" in names


def test_commit_records_how_it_was_published(call) -> None:
    call.ok("write_file", {"path": "output/main.md", "content": "answer\n"})
    call.ok("commit", {"reason": "done"})
    out = call.inv.output
    assert (out.path, out.text, out.source, out.mode, out.round, out.call_id, out.reason) == (
        "output/main.md", "answer\n", "commit", "replace", 2, "call_0002", "done")
    assert out.sha256 == hashlib.sha256(b"answer\n").hexdigest()


def test_append_commits_continue_after_a_reopen(call) -> None:
    call.ok("write_file", {"path": "output/main.md", "content": "part one\n"})
    call.ok("commit", {})
    call.bench.flush()
    again = call.bench.open_invocation(call.inv.id)
    assert again.output == call.inv.output
    assert not again.call("workspace_write_file", {"path": "output/extra.md", "content": "part two\n"}).is_error
    assert not again.call("workspace_commit", {"path": "output/extra.md", "mode": "append"}).is_error
    assert again.output.text == "part one\npart two\n"


# ---- table 9.13 (session) ----


def test_session_offers_no_chat_readers_and_no_publishing(bench) -> None:
    allowed = ["builtin:workspace.read_file", "builtin:workspace.write_file", "builtin:workspace.shell",
               "builtin:workspace.commit", "builtin:workspace.finish", "builtin:chat.search",
               "builtin:worldinfo.read_activated"]
    bench.profile = bench.profile.edit(allow=allowed)
    names = set(bench.invocation("session").snapshot.call_names)
    assert names == {"workspace_read_file", "workspace_write_file", "workspace_shell"}
    assert {"workspace_commit", "workspace_finish"} <= set(bench.invocation("chat").snapshot.call_names)


def test_session_tool_results_stay_listed_in_later_runs(bench) -> None:
    tool_id = bench.register_tool("contract", lambda: "x" * 120, name="long")
    bench.profile = bench.profile.edit(allow=[*bench.profile.tools.allow, str(tool_id)],
                                       external_result_inline_char_limit=50)
    session = bench.invocation("session")
    result = session.call("long", {})
    path = result.structured["path"]
    assert path.startswith(f"tool-results/{session.id}/")
    later = bench.invocation("session")
    listing = later.call("workspace_list_files", {"path": f"tool-results/{session.id}"})
    assert path.rsplit("/", 1)[1] in listing.content
    assert "x" * 120 in later.call("workspace_read_file", {"path": path}).content
