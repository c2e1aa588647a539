"""`memory.manage` / `memory.query` through an invocation (reference §5.1-§5.6, §9)."""

from __future__ import annotations

import os

import pytest
from memory_support import NOW, note

from toolbench.core.fileio import write_atomic


def files(bench):
    return bench.workspace / ".toolbench" / "memory"


def test_write_then_read_list_and_the_file_format(bench, inv, mem):
    r = mem("write", **note(body="The user prefers tabs.", description="Prefers tabs"))
    assert not r.is_error and r.content.startswith("Created memory `prefers-tabs`")
    assert r.structured["indexUpdated"] is True
    path = files(bench) / "global" / "user" / "prefers-tabs.md"
    text = path.read_text()
    assert text.startswith("---\nname: prefers-tabs\ndescription: Prefers tabs\ntype: user\nscope: global\n")
    assert "createdAt: '2026-03-10T12:00:00+02:00'" in text and text.endswith("---\n\nThe user prefers tabs.\n")
    read = mem("read", slug="prefers-tabs")
    assert read.content == ("Memory: prefers-tabs\nscope=global type=user lines 1-1 of 1\nPrefers tabs\n\n"
                            "The user prefers tabs.")
    listing = mem("list")
    assert listing.content == ("1 memory (quota 1/500; global 1/500, project 0/500)\n"
                               "[prefers-tabs] scope=global type=user — Prefers tabs")
    assert "- [prefers-tabs] type=user — Prefers tabs" in (files(bench) / "global" / "MEMORY.md").read_text()


def test_memory_md_lists_each_scope_newest_first_and_follows_every_change(bench, inv, mem):
    from datetime import timedelta

    clock = iter(NOW + timedelta(minutes=n) for n in range(100))
    inv.state.memory_clock = lambda: next(clock)
    mem("write", **note("alpha", description="First"))
    mem("write", **note("beta", type="reference", description="Second", body="Run sudo before deploys."))
    mem("write", **note("gamma", scope="project", type="project", description="Third"))
    mem("update", slug="daily-2026-03-10", mode="append", body="a journal line")
    mem("write", **note("delta", type="feedback", description="Fourth"))
    base = files(bench)
    assert (base / "global" / "MEMORY.md").read_text() == (
        "# Memory\n\n- [delta] type=feedback — Fourth\n- [beta] type=reference (unreviewed) — Second\n"
        "- [alpha] type=user — First\n")
    assert (base / "project" / "MEMORY.md").read_text() == "# Memory\n\n- [gamma] type=project — Third\n"
    mem("update", slug="alpha", scope="global", body="Changed.")
    mem("delete", slug="delta", scope="global")
    assert (base / "global" / "MEMORY.md").read_text() == (
        "# Memory\n\n- [alpha] type=user — First\n- [beta] type=reference (unreviewed) — Second\n")


def test_layout_puts_each_type_in_its_folder(bench, inv, mem):
    mem("write", **note("proj-note", scope="project", type="project"))
    mem("write", **note("ref-note", scope="global", type="reference"))
    mem("write", **note("fb-note", scope="global", type="feedback"))
    base = files(bench)
    assert (base / "project" / "proj-note.md").is_file()
    assert (base / "global" / "ref-note.md").is_file()
    assert (base / "global" / "user" / "fb-note.md").is_file()


@pytest.mark.parametrize(("fields", "code"), [
    ({"slug": "ab"}, "tool.invalid_arguments"),
    ({"slug": "bad slug!"}, "memory.slug_invalid"),
    ({"slug": "daily-2026-03-10"}, "memory.slug_invalid"),
    ({"scope": "auto"}, "memory.scope_required"),
    ({"scope": None}, "memory.scope_required"),
    ({"type": "daily"}, "tool.invalid_arguments"),
    ({"type": None}, "memory.type_invalid"),
    ({"body": "   "}, "tool.invalid_arguments"),
    ({"body": "x" * 8193}, "memory.body_too_large"),
    ({"body": "my key AKIAABCDEFGHIJKLMNOP"}, "memory.risk_hard_blocked"),
    ({"unknown": 1}, "tool.invalid_arguments"),
])
def test_write_refusals(mem, fields, code):
    args = {k: v for k, v in (note() | fields).items() if v is not None}
    r = mem("write", **args)
    assert r.is_error and r.error_code == code


def test_body_limit_is_inclusive_and_description_is_cut(mem):
    r = mem("write", **note(body="x" * 8192, description="d" * 200))
    assert not r.is_error
    assert mem("read", slug="prefers-tabs").structured["description"] == "d" * 120


def test_write_twice_says_update(mem):
    mem("write", **note())
    r = mem("write", **note())
    assert r.error_code == "memory.slug_exists"
    assert r.structured["suggested_next_call"]["action"] == "update"


def test_the_quota_counts_non_daily_entries_per_scope(make_bench, mem_profile):
    inv = make_bench(profile=mem_profile(quota_per_scope=2)).invocation()
    inv.state.memory_clock = lambda: NOW
    call = lambda action, **f: inv.call("memory_manage", {"action": action, **f})  # noqa: E731
    assert not call("write", **note("one-note")).is_error
    assert not call("write", **note("two-note")).is_error
    assert call("write", **note("three-note")).error_code == "memory.quota_exceeded"
    assert not call("write", **note("three-note", scope="project", type="project")).is_error
    assert not call("update", slug="daily-2026-03-10", mode="append", body="x").is_error


def test_soft_risk_is_stored_unreviewed_and_accept_clears_it(mem):
    r = mem("write", **note(body="Run sudo before deploys."))
    assert r.structured["unreviewed"] is True and r.structured["riskFlag"] == "low"
    assert "(unreviewed)" in mem("list").content
    assert mem("accept", slug="prefers-tabs", scope="auto").error_code == "memory.scope_required"
    a = mem("accept", slug="prefers-tabs", scope="global")
    assert not a.is_error and a.structured["unreviewed"] is False
    assert "(unreviewed)" not in mem("list").content


def test_evidence_reports_the_applied_confidence(bench, inv, mem):
    r = mem("write", **note(confidence="high", source_quote="tabs", aliases="tabs, indent"))
    assert (r.structured["appliedConfidence"], r.structured["autoDowngraded"]) == ("medium", True)
    text = (files(bench) / "global" / "user" / "prefers-tabs.md").read_text()
    assert "evidence:" not in text  # not in the file's front matter: a block heading the body
    assert text.endswith('---\n\n---\nconfidence: medium\nauto_downgraded: true\nsource_quote: "tabs"\n'
                         'reasoning: ""\naliases: ["tabs", "indent"]\nconflicts_with: []\nsupersedes: ""\n'
                         'override_reject: ""\n---\n\nThe body of prefers-tabs.\n')
    assert mem("read", slug="prefers-tabs").structured["body"].startswith("---\nconfidence: medium\n")
    assert "confidence=medium" in mem("list").content


def test_list_quota_is_the_largest_applicable_scope(mem):
    """upstream list_quota_reports_applicable_scope_usage: one global, one project, one daily."""
    mem("write", **note("user-style", type="feedback"))
    mem("write", **note("project-purpose", scope="project", type="project"))
    mem("update", slug="daily-2026-03-10", mode="append", body="- daily does not count toward ordinary quota")
    listing = mem("list", include_daily=True).structured
    assert listing["quota"] == {"used": 1, "limit": 500}
    assert listing["quotas"] == {"global": {"used": 1, "limit": 500}, "project": {"used": 1, "limit": 500}}
    mem("write", **note("second-global", type="reference"))
    assert mem("list").structured["quota"] == {"used": 2, "limit": 500}
    assert mem("list", scope="project").structured["quota"] == {"used": 1, "limit": 500}


def test_a_merge_update_keeps_the_evidence_block_whole(mem):
    mem("write", **note(body="Drinks green tea. Lives in Paris.", confidence="high", source_quote="green tea please"))
    before = mem("read", slug="prefers-tabs").structured["body"]
    block = before.split("\n\n", 1)[0]
    mem("update", slug="prefers-tabs", mode="merge", body="Drinks black tea.")
    after = mem("read", slug="prefers-tabs").structured["body"]
    assert after == block + "\n\nDrinks black tea.\n\nLives in Paris."
    assert "confidence=high" in mem("list").content


def test_a_merge_with_a_block_in_the_body_keeps_unrelated_details(mem):
    """upstream merge_update_preserves_unrelated_trip_details, in English."""
    block = ('---\nconfidence: high\nsource_quote: "remember my plan"\nreasoning: "asked to remember"\n'
             'aliases: []\nconflicts_with: []\nsupersedes: ""\noverride_reject: ""\n---\n\n')
    mem("write", **note("user-trip-plan", body=block + "A trip to Beijing in July to see friends.\n"
                        "Maybe a classmate, maybe my tutor, but surely the Palace Museum.\n"
                        "Day one the Palace Museum, day two the Great Wall, day three home."))
    moved = block.replace("high", "medium").replace("remember my plan", "moved to August, work is busy")
    r = mem("update", slug="user-trip-plan", mode="merge", description="The trip moved from July to August",
            body=moved + "A trip to Beijing in August to see friends, moved from July as work is busy.")
    assert not r.is_error
    body = mem("read", slug="user-trip-plan").structured["body"]
    assert "in August to see friends" in body and "day two the Great Wall" in body
    assert "surely the Palace Museum" in body and "in July to see friends." not in body
    assert body.startswith(moved) and "confidence=medium" in mem("list").content


def test_an_evidence_only_update_refreshes_the_block_and_keeps_the_text(mem):
    mem("write", **note(body="The user may study computer science.", confidence="low"))
    r = mem("update", slug="prefers-tabs", confidence="medium", source_quote="I study CS")
    assert r.structured["appliedConfidence"] == "medium"
    body = mem("read", slug="prefers-tabs").structured["body"]
    assert "confidence: medium" in body and "confidence: low" not in body
    assert body.endswith("\n\nThe user may study computer science.")


def test_a_replace_update_replaces_the_block_too(mem):
    mem("write", **note(body="Old text.", confidence="high", source_quote="old words"))
    mem("update", slug="prefers-tabs", body="New text.")
    assert mem("read", slug="prefers-tabs").structured["body"] == "New text."
    assert "confidence=" not in mem("list").content


def test_a_file_with_the_older_evidence_key_reads_as_a_block(bench, inv, mem):
    """Files written before evidence moved into the body keep their confidence."""
    mem("write", **note(body="Uses tabs."))
    path = files(bench) / "global" / "user" / "prefers-tabs.md"
    write_atomic(path, path.read_text().replace(
        "links: []\n", "evidence:\n  confidence: high\n  source_quote: tabs!\n  aliases: [tabs]\nlinks: []\n"))
    call = lambda **f: bench.invocation().call("memory_manage", f)  # noqa: E731
    assert "confidence=high" in call(action="list").content
    body = call(action="read", slug="prefers-tabs").structured["body"]
    assert body.startswith('---\nconfidence: high\nsource_quote: "tabs!"\n') and body.endswith("\n\nUses tabs.")
    assert 'aliases: ["tabs"]' in body


def test_update_replace_merge_and_append(mem):
    mem("write", **note(body="Drinks green tea. Lives in Paris."))
    r = mem("update", slug="prefers-tabs", body="Drinks black tea.")
    assert not r.is_error and r.structured["mode"] == "replace"
    assert mem("read", slug="prefers-tabs").structured["body"] == "Drinks black tea."
    mem("update", slug="prefers-tabs", mode="merge", body="Drinks black tea daily. Works remotely.")
    assert mem("read", slug="prefers-tabs").structured["body"] == "Drinks black tea daily.\n\nWorks remotely."
    assert mem("update", slug="prefers-tabs", mode="append", body="x").error_code == "memory.mode_invalid"
    assert mem("update", slug="prefers-tabs").error_code == "tool.invalid_arguments"


def test_update_resolution_ambiguous_and_not_found(mem):
    mem("write", **note("shared-slug", scope="global", type="reference"))
    mem("write", **note("shared-slug", scope="project", type="project"))
    assert mem("update", slug="shared-slug", body="x").error_code == "memory.scope_ambiguous"
    assert not mem("update", slug="shared-slug", scope="project", body="x").is_error
    r = mem("update", slug="shared-slg", body="x")
    assert r.error_code == "memory.slug_not_found"
    assert r.structured["candidates"] == ["shared-slug"]
    assert r.structured["suggested_next_call"] == {"action": "search", "query": "shared slg"}
    # read: the project entry shadows the global one
    assert mem("read", slug="shared-slug").structured["scope"] == "project"


def test_update_type_moves_the_file(bench, inv, mem):
    mem("write", **note(type="user"))
    mem("update", slug="prefers-tabs", type="reference")
    base = files(bench) / "global"
    assert (base / "prefers-tabs.md").is_file() and not (base / "user" / "prefers-tabs.md").exists()


def test_delete_moves_the_file_to_the_trash(bench, inv, mem):
    mem("write", **note())
    r = mem("delete", slug="prefers-tabs", scope="global")
    assert not r.is_error and r.content.startswith("Deleted memory")
    base = files(bench) / "global"
    assert not (base / "user" / "prefers-tabs.md").exists()
    assert [p.name.split(".")[0] for p in (base / ".trash").iterdir()] == ["prefers-tabs"]
    assert mem("read", slug="prefers-tabs").error_code == "memory.slug_not_found"
    assert mem("search", query="body").structured["matches"] == []


def test_daily_journal_appends(bench, inv, mem):
    slug = "daily-2026-03-10"
    assert mem("update", slug=slug, body="- met Bob").error_code == "memory.mode_invalid"
    r = mem("update", slug=slug, mode="append", body="  - met Bob  ")
    assert not r.is_error and r.structured["appendCount"] == 1
    r = mem("update", slug=slug, mode="append", body="- lunch with Ann", confidence="high")
    assert r.structured["appendCount"] == 2 and "Evidence fields were ignored" in r.content
    path = files(bench) / "global" / "daily" / "2026-03-10.md"
    text = path.read_text()
    assert "appendCount: 2" in text and text.endswith("\n\n- met Bob\n\n- lunch with Ann\n")
    assert "date: '2026-03-10'" in text
    assert mem("list").structured["count"] == 0
    daily = mem("list", include_daily=True)
    assert "[daily-2026-03-10] scope=global type=daily — 2026-03-10" in daily.content
    assert mem("accept", slug=slug, scope="global").error_code == "memory.action_not_allowed"
    assert mem("update", slug=slug, mode="append", scope="project", body="x").error_code == "memory.scope_invalid"


def test_daily_limits(mem):
    slug = "daily-2026-03-10"
    r = mem("update", slug=slug, mode="append", body="x" * (28 * 1024))
    assert not r.is_error and "characters" in r.structured["warnings"][0]
    r = mem("update", slug=slug, mode="append", body="y" * (4 * 1024))
    assert r.error_code == "memory.body_too_large"


def test_old_dailies_are_archived_and_read_only(make_bench, mem_profile):
    bench = make_bench(profile=mem_profile())
    old = bench.workspace / ".toolbench/memory/global/daily/2025-11-01.md"
    write_atomic(old, "---\nname: daily-2025-11-01\ntype: daily\n---\n\n- old\n")
    inv = bench.invocation()
    inv.state.memory_clock = lambda: NOW
    r = inv.call("memory_manage", {"action": "update", "slug": "daily-2025-11-01", "mode": "append", "body": "x"})
    assert r.error_code == "memory.read_only"
    assert (bench.workspace / ".toolbench/memory/global/daily/.archive/2025/2025-11-01.md").is_file()
    found = inv.call("memory_manage", {"action": "read", "slug": "daily-2025-11-01"})
    assert found.structured["archived"] is True and found.structured["body"] == "- old"
    gone = inv.call("memory_manage", {"action": "delete", "slug": "daily-2025-11-01", "scope": "global"})
    assert gone.error_code == "memory.read_only"


def test_read_windows(mem):
    mem("write", **note(body="\n".join(f"line {i}" for i in range(1, 11))))
    r = mem("read", slug="prefers-tabs", offset=3, length=2)
    assert r.structured["body"] == "line 3\nline 4" and "lines 3-4 of 10" in r.content
    assert mem("read", slug="prefers-tabs", offset=11).error_code == "memory.line_out_of_range"
    assert mem("read", slug="prefers-tabs", length=501).error_code == "tool.invalid_arguments"


def test_read_only_modes(make_bench, mem_profile, inv, mem):
    q = inv.call("memory_query", {"action": "write", **note()})
    assert q.error_code == "tool.invalid_arguments"
    mem("write", **note())
    assert not inv.call("memory_query", {"action": "search", "query": "body"}).is_error
    inv.state.memory_read_only = True
    assert mem("delete", slug="prefers-tabs", scope="global").error_code == "memory.read_only"
    assert not mem("list").is_error
    assert inv.snapshot.bindings[1].descriptor.read_only is True


def test_files_are_the_truth_the_index_follows_them(bench, make_bench, mem_profile, inv, mem):
    mem("write", **note(body="Original text."))
    path = files(bench) / "global" / "user" / "prefers-tabs.md"
    path.write_text(path.read_text().replace("Original text.", "Edited by hand with zucchini."))
    write_atomic(files(bench) / "project" / "hand-made.md", "---\ndescription: Made by hand\ntype: project\n"
                 "---\n\nPumpkin soup recipe.")
    inv2 = bench.invocation()
    call = lambda **f: inv2.call("memory_manage", f)  # noqa: E731
    assert call(action="search", query="zucchini").structured["matches"][0]["slug"] == "prefers-tabs"
    assert call(action="search", query="pumpkin").structured["matches"][0]["slug"] == "hand-made"
    (files(bench) / "index.sqlite3").write_bytes(b"not a database")
    for suffix in ("-wal", "-shm"):
        (files(bench) / f"index.sqlite3{suffix}").unlink(missing_ok=True)
    inv3 = bench.invocation()
    assert inv3.call("memory_manage", {"action": "list"}).structured["count"] == 2


def test_an_interrupted_write_leaves_the_old_file_whole(bench, inv, mem, monkeypatch):
    mem("write", **note(body="Old body."))
    path = files(bench) / "global" / "user" / "prefers-tabs.md"
    before = path.read_text()

    def crash(src, dst):
        raise OSError(5, "simulated power cut")

    monkeypatch.setattr(os, "replace", crash)
    r = mem("update", slug="prefers-tabs", body="New body.")
    monkeypatch.undo()
    assert r.error_code == "storage.write_failed"
    assert path.read_text() == before
    assert not [p for p in path.parent.iterdir() if p.name.endswith(".tmp")]
    assert mem("read", slug="prefers-tabs").structured["body"] == "Old body."
    assert not mem("update", slug="prefers-tabs", body="New body.").is_error
    assert mem("read", slug="prefers-tabs").structured["body"] == "New body."


def test_memory_files_are_invisible_to_the_file_tools(make_bench, mem_profile):
    profile = mem_profile().edit(allow=["builtin:memory.manage", "builtin:workspace.read_file"])
    inv = make_bench(profile=profile).invocation()
    inv.call("memory_manage", {"action": "write", **note()})
    r = inv.call("workspace_read_file", {"path": ".toolbench/memory/global/user/prefers-tabs.md"})
    assert r.is_error and r.error_code == "workspace.path_not_visible"


def test_search_reads_the_text_not_the_evidence_block(mem):
    mem("write", **note(body="Uses tabs.", confidence="high", source_quote="always tabs", reasoning="zucchini"))
    assert mem("search", query="zucchini").structured["matches"] == []
    assert mem("search", query="tabs").structured["matches"][0]["slug"] == "prefers-tabs"
