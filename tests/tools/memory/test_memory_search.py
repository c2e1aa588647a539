"""Memory search (reference §5.5): both FTS5 tokenizers, weights, fallback, shadowing, limits, speed."""

from __future__ import annotations

import random
import statistics
import time

from memory_support import NOW, note

from toolbench.core.memory_settings import MemorySettings
from toolbench.tools.memory import MemoryStore
from toolbench.tools.memory.search import raw_score, terms_of, weight


def slugs(result):
    return [m["slug"] for m in result.structured["matches"]]


def test_unicode61_finds_words_without_diacritics(mem):
    mem("write", **note("coffee-order", description="Her order", body="She orders a café crème every day."))
    r = mem("search", query="cafe")
    assert slugs(r) == ["coffee-order"]
    assert "[café]" in r.structured["matches"][0]["snippet"]


def test_trigram_finds_cjk_substrings(mem):
    mem("write", **note("beijing-trip", body="我们下周在北京开会讨论项目计划。"))
    mem("write", **note("other-note", body="Nothing Chinese here."))
    assert slugs(mem("search", query="北京开会")) == ["beijing-trip"]
    assert slugs(mem("search", query="讨论项目")) == ["beijing-trip"]


def test_short_terms_use_the_substring_fallback(mem):
    mem("write", **note("beijing-trip", body="我们下周在北京开会。"))
    r = mem("search", query="京开")
    assert slugs(r) == ["beijing-trip"] and r.structured["usedFallback"] is True
    assert r.structured["matches"][0]["rawScore"] == 1.2


def test_project_entries_shadow_global_ones_and_weigh_more(mem):
    mem("write", **note("tea-habit", scope="global", type="reference", body="Green tea at nine."))
    mem("write", **note("tea-habit", scope="project", type="project", body="Green tea at ten."))
    mem("write", **note("tea-other", scope="global", type="reference", body="Green tea is fine."))
    r = mem("search", query="green tea")
    matches = r.structured["matches"]
    assert ("tea-habit", "project") in [(m["slug"], m["scope"]) for m in matches]
    assert ("tea-habit", "global") not in [(m["slug"], m["scope"]) for m in matches]
    assert mem("search", query="green tea", scope="global").structured["matches"][0]["scope"] == "global"


def test_filters_and_limit(mem):
    for i in range(12):
        mem("write", **note(f"note-{i:02d}", type="user" if i % 2 else "reference", body=f"apple number {i}"))
    assert len(mem("search", query="apple").structured["matches"]) == 8
    assert len(mem("search", query="apple", limit=3).structured["matches"]) == 3
    assert len(mem("search", query="apple", limit=100).structured["matches"]) == 12
    assert {m["type"] for m in mem("search", query="apple", filter_type="user").structured["matches"]} == {"user"}


def test_dailies_weigh_less_and_can_be_left_out(mem):
    mem("update", slug="daily-2026-03-10", mode="append", body="- bought apples")
    mem("write", **note("apple-note", type="reference", body="bought apples"))
    r = mem("search", query="apples")
    assert slugs(r) == ["apple-note", "daily-2026-03-10"]
    assert slugs(mem("search", query="apples", include_daily=False)) == ["apple-note"]


def test_search_text_lists_scores_and_age(mem):
    mem("write", **note(body="The user likes green tea."))
    r = mem("search", query="green tea")
    assert r.content.startswith("1 memory match for 'green tea', substring fallback used:\n1. [prefers-tabs] "
                                "scope=global type=user score=")
    assert "rawScore=" in r.content and "ageDays=0" in r.content
    assert mem("search", query="nothing at all").content == "No memories match 'nothing at all'."
    assert mem("search").error_code == "tool.invalid_arguments"


def test_term_expansion_weights_and_raw_scores():
    assert terms_of("who am i") == sorted({"who am i", "name", "user", "名字", "称呼"})
    assert "偏好" in terms_of("我喜欢什么")
    assert terms_of("tabs") == ["tabs"]
    assert (weight("global", "daily"), weight("project", "user"), weight("global", "user"),
            weight("global", "feedback"), weight("global", "reference")) == (0.35, 1.4, 1.3, 1.25, 1.0)
    assert raw_score(-2.5) == 2.5 and raw_score(1.0) == 0.5


def test_search_stays_fast_at_ten_thousand_memories(tmp_path):
    """10,000 memories written as files, indexed on open; median search well under 10 ms."""
    rng = random.Random(7)
    vocab = [f"w{i}" for i in range(3000)] + ["北京", "上海", "会议", "计划", "咖啡"]
    ranks = [1 / (i + 1) for i in range(len(vocab))]
    base = tmp_path / ".toolbench" / "memory"
    folders = {"project": "project", "global": "reference", "global/user": "user"}
    for folder in folders:
        (base / folder).mkdir(parents=True)
    for i in range(10_000):
        folder = list(folders)[i % 3]
        desc = " ".join(rng.choices(vocab, ranks, k=6))
        (base / folder / f"note-{i:05d}.md").write_text(
            f"---\ndescription: {desc}\ntype: {folders[folder]}\nupdatedAt: '2026-03-01T00:00:00+00:00'\n---\n\n"
            + " ".join(rng.choices(vocab, ranks, k=40)) + f" token{i}\n")
    store = MemoryStore(tmp_path, MemorySettings(), clock=lambda: NOW)
    assert store.list(limit=1000)["quotas"]["project"]["used"] == 3334
    queries = ["token1234", "w500", "w2999", "w10 w11", "北京", "w250", "w1000", "nothing", "i like coffee"]
    timings = []
    for query in queries:
        for _ in range(5):
            started = time.perf_counter()
            store.search(query)
            timings.append(time.perf_counter() - started)
    store.close()
    assert statistics.median(timings) < 0.010
