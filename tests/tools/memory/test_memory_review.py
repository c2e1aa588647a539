"""Extracted (unreviewed) memories and `accept`, dailies outside the quota, the quota summary with
unreviewed counts, and `include_history` over the loaded chat.

Cases from LiveAgent's services/memory/tests.rs (Stack-Cairn/LiveAgent 83bee936):
apply_batch_accept_flips_unreviewed, extractor_upsert_reports_created_and_marks_unreviewed,
extractor_update_defaults_to_merge_when_mode_is_omitted, quota_summary_counts_scopes_and_unreviewed,
list_quota_reports_applicable_scope_usage; and memoryTools.ts's search text for history matches.
"""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from memory_support import NOW, note

from toolbench import Profile
from toolbench.core.errors import ToolbenchError
from toolbench.tools.chat_history import parse_chat
from toolbench.tools.memory import MemoryStore
from toolbench.tools.memory.tool import STORE


@pytest.fixture
def clock():
    now = [NOW]
    return now


@pytest.fixture
def store(tmp_path, clock):
    s = MemoryStore(tmp_path / "ws", Profile.default().memory, clock=lambda: clock[0])
    yield s
    s.close()


def read(store, slug, scope="global"):
    return store.read(slug, scope=scope)


def test_an_extracted_memory_is_unreviewed_until_accepted(store):
    """upstream apply_batch_accept_flips_unreviewed."""
    out = store.write(note("team-workflow", type="feedback", body="Use conventional commits."), actor="extractor")
    assert out["unreviewed"] is True
    assert read(store, "team-workflow")["unreviewed"] is True
    accepted = store.accept({"slug": "team-workflow", "scope": "global"})
    assert accepted["status"] == "accepted" and accepted["unreviewed"] is False
    entry = next(e for e in store.list(scope="global")["entries"] if e["slug"] == "team-workflow")
    assert entry["unreviewed"] is False
    ops = store.index.db.execute("SELECT op, actor FROM memory_audit_log ORDER BY id").fetchall()
    assert [tuple(r) for r in ops] == [("write", "extractor"), ("accept", "user")]


def test_accept_records_the_user_as_the_source(store, tmp_path):
    store.write(note("user-major", body="The user studies computing."), actor="extractor")
    store.accept({"slug": "user-major", "scope": "global"})
    text = next((tmp_path / "ws").rglob("user-major.md")).read_text()
    assert "trigger: user" in text and "unreviewed: false" in text


def test_the_chat_tool_accepts_an_extracted_memory(inv, mem):
    assert inv.state.get(STORE) is None  # opened on first use
    mem("list")
    _, store = inv.state.get(STORE)
    store.write(note("prefers-tabs"), actor="extractor")
    listing = mem("list")
    assert "[prefers-tabs] scope=global type=user (unreviewed)" in listing.content
    assert "Unreviewed (accept to review): global 1 (oldest 0 days)" in listing.content
    assert mem("accept", slug="prefers-tabs", scope="project").error_code == "memory.slug_not_found"
    assert not mem("accept", slug="prefers-tabs", scope="global").is_error
    listing = mem("list")
    assert "(unreviewed)" not in listing.content and "Unreviewed" not in listing.content


def test_a_daily_journal_cannot_be_accepted(mem):
    mem("update", slug="daily-2026-03-10", mode="append", body="- a line")
    assert mem("accept", slug="daily-2026-03-10", scope="global").error_code == "memory.action_not_allowed"


def test_the_extractor_update_merges_and_marks_unreviewed(store):
    """upstream extractor_upsert_reports_created_and_marks_unreviewed and
    extractor_update_defaults_to_merge_when_mode_is_omitted."""
    store.write(note("trip-plan", body="Flight on Monday. Hotel near the station."))
    assert read(store, "trip-plan")["unreviewed"] is False
    out = store.update({"slug": "trip-plan", "scope": "global", "body": "Dinner booked for Tuesday."},
                       actor="extractor")
    assert out["mode"] == "merge" and out["unreviewed"] is True
    body = read(store, "trip-plan")["body"]
    assert "Flight on Monday." in body and "Dinner booked for Tuesday." in body


def test_who_updates_decides_the_review_flag(store):
    store.write(note("pref-a"), actor="extractor")
    store.update({"slug": "pref-a", "scope": "global", "body": "Changed by the tool."})
    assert read(store, "pref-a")["unreviewed"] is True  # the chat tool leaves the flag as it was
    store.update({"slug": "pref-a", "scope": "global", "body": "Changed by the user."}, actor="user")
    assert read(store, "pref-a")["unreviewed"] is False
    store.update({"slug": "pref-a", "scope": "global", "confidence": "high", "source_quote": "I said so"},
                 actor="extractor")
    assert read(store, "pref-a")["unreviewed"] is False  # evidence alone keeps the review


def test_an_unknown_actor_is_a_developer_error(store):
    with pytest.raises(ToolbenchError) as info:
        store.write(note("pref-a"), actor="robot")
    assert info.value.code == "memory.actor_invalid"


def test_quota_summary_counts_scopes_and_unreviewed(store, clock):
    """upstream quota_summary_counts_scopes_and_unreviewed (here the project scope is always the
    workspace's, so both scopes are reported)."""
    store.write(note("reviewed-entry", type="reference"), actor="user")
    store.write(note("unreviewed-entry"), actor="extractor")
    store.update({"slug": "daily-2026-03-10", "mode": "append", "body": "- not counted"})
    clock[0] = NOW + timedelta(days=3)
    glob, project = store.quota_summary()["scopes"]
    assert glob == {"scope": "global", "workdirHash": "", "used": 2, "limit": 500, "headroom": 498,
                    "archivedCount": 0, "unreviewedCount": 1, "oldestUnreviewedAgeDays": 3.0}
    store.write(note("project-entry", scope="project", type="project"), actor="user")
    project = store.quota_summary()["scopes"][1]
    assert (project["scope"], project["used"], project["unreviewedCount"], project["oldestUnreviewedAgeDays"]) \
        == ("project", 1, 0, None)
    assert len(project["workdirHash"]) == 16


def test_dailies_append_outside_a_full_quota(make_bench, mem_profile):
    inv = make_bench(profile=mem_profile(quota_per_scope=1)).invocation()
    inv.state.memory_clock = lambda: NOW
    call = lambda action, **f: inv.call("memory_manage", {"action": action, **f})  # noqa: E731
    assert not call("write", **note("one-note")).is_error
    assert call("write", **note("two-note")).error_code == "memory.quota_exceeded"
    for line in ("- first", "- second"):
        assert not call("update", slug="daily-2026-03-10", mode="append", body=line).is_error
    listing = call("list", include_daily=True).structured
    assert listing["summary"]["scopes"][0]["used"] == 1 and listing["summary"]["scopes"][0]["headroom"] == 0
    assert call("read", slug="daily-2026-03-10").structured["body"] == "- first\n\n- second"


def test_an_extracted_daily_line_records_the_extractor(store, tmp_path):
    store.update({"slug": "daily-2026-03-10", "mode": "append", "body": "- learned"}, actor="extractor")
    text = (tmp_path / "ws").rglob("2026-03-10.md").__next__().read_text()
    assert "trigger: extractor" in text


# include_history ----------------------------------------------------------------------------
def chat(*messages):
    return parse_chat("\n".join(json.dumps({"role": r, "content": c}) for r, c in messages) + "\n", source="c.jsonl")


def test_include_history_searches_the_loaded_chat(inv, mem):
    inv.state.chat = chat(("user", "I moved to Lisbon last spring."), ("assistant", "Noted."),
                          ("user", "Lisbon is sunny; I like the trams."))
    r = mem("search", query="Lisbon trams", include_history=True)
    assert not r.is_error
    hist = r.structured["historyMatches"]
    assert [h["messageIndex"] for h in hist] == [2, 0]  # both words first, then one of two
    assert hist[0]["role"] == "user" and hist[0]["score"] == 1.0 and hist[1]["score"] == 0.5
    assert "untrusted past conversation records" in r.content
    assert "[history:chat] message=2 role=user" in r.content


def test_history_is_searched_only_when_asked(inv, mem):
    inv.state.chat = chat(("user", "Lisbon"))
    r = mem("search", query="Lisbon")
    assert "historyMatches" not in r.structured and "history" not in r.content


def test_include_history_without_a_chat_says_so(inv, mem):
    r = mem("search", query="Lisbon", include_history=True)
    assert not r.is_error and r.structured["historyAvailable"] is False and r.structured["historyMatches"] == []
    assert "No chat history is loaded" in r.content


def test_history_matches_keep_their_limit(inv, mem):
    inv.state.chat = chat(*[("user", f"tea number {i}") for i in range(30)])
    assert len(mem("search", query="tea", include_history=True).structured["historyMatches"]) == 6
    assert len(mem("search", query="tea", include_history=True, limit=32).structured["historyMatches"]) == 12
    assert len(mem("search", query="tea", include_history=True, limit=2).structured["historyMatches"]) == 2


@pytest.mark.parametrize("query", ["(a+)+$", "[", "\\", "*" * 500])
def test_hostile_history_queries_are_plain_text(inv, mem, query):
    inv.state.chat = chat(("user", "a" * 5000 + "["))
    r = mem("search", query=query, include_history=True)
    assert not r.is_error and isinstance(r.structured["historyMatches"], list)


def test_reading_a_missing_daily_suggests_a_history_search(mem):
    """upstream read_missing_daily_suggests_time_filtered_history_search (no time filters here)."""
    r = mem("read", slug="daily-2026-03-09", scope="global")
    assert r.error_code == "memory.slug_not_found"
    assert r.structured["suggested_next_call"] == {"action": "search", "query": "2026-03-09", "include_history": True}
