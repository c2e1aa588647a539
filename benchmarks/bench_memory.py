"""Memory search: `memory.query` search over a store of 10,000 memories (smoke: 300).

The store is written as Markdown files first, in the memory tools' own format (as a store
carried over from LiveAgent would be), and the first memory call indexes them; writing
10,000 entries through `memory.manage` would mostly time the MEMORY.md refresh every write
does (upstream's rule, linear in the store's size). Each memory is a note about one topic
among ten ("The user talked about <topic>"), so a topic word or phrase matches a tenth of the
store, and 19 lines of words drawn (seeded) from a 3,000-word vocabulary with Zipf-like
frequencies. The profile's quota per scope is raised to hold them all. Target: a search under
10 ms median.

For reference, not for the target: a word in every memory ("user"), where FTS5 ranks all
10,000 matches by bm25 before it keeps the best 32, and one `memory.manage` write into the
full store.
"""

from __future__ import annotations

import random
import time
from datetime import UTC, datetime, timedelta

from . import _common as c

_TOPICS = ("tabs", "spaces", "dragons", "deploys", "coffee", "tests", "pandas", "widgets", "budgets", "shells")
_EPOCH = datetime(2026, 1, 1, tzinfo=UTC)
_EVERYWHERE = "a word in every memory (reference)"


def _vocabulary(rng: random.Random, size: int = 3_000) -> list[str]:
    syllables = [c + v for c in "bcdfghjklmnprstvz" for v in "aeiou"]
    return list(dict.fromkeys("".join(rng.choices(syllables, k=rng.randint(2, 4))) for _ in range(size)))


def _write_store(layout: object, notes: int) -> None:
    from toolbench.core.fileio import write_atomic
    from toolbench.tools.memory.files import Entry, render_entry

    rng = random.Random(8)
    words = _vocabulary(rng)
    weights = [1 / (rank + 1) for rank in range(len(words))]  # Zipf-like, as words in notes are
    for i in range(notes):
        topic = _TOPICS[i % len(_TOPICS)]
        lines = [f"- The user talked about {topic} ({i})."]
        lines += ["- " + " ".join(rng.choices(words, weights, k=rng.randint(6, 12))) for _ in range(19)]
        body = "\n".join(lines)
        stamp = (_EPOCH + timedelta(minutes=i)).isoformat()
        entry = Entry(slug=f"note-{i:05d}-{topic}", scope="global", type="user", body=body,
                      description=f"What the user said about {topic} ({i})", created_at=stamp, updated_at=stamp,
                      source={"trigger": "tool", "conversationId": "bench", "model": None, "risk_flag": "none",
                              "unreviewed": False})
        write_atomic(layout.path_for(entry), render_entry(entry), durable=False)  # type: ignore[attr-defined]


def run(smoke: bool) -> c.Report:
    """Memory search over a store of 10,000 memories."""
    from toolbench import Profile, Workbench
    from toolbench.tools.memory.files import Layout

    report = c.Report("memory", "memory search over 10,000 memories", smoke)
    notes = 300 if smoke else 10_000
    repeats = 5 if smoke else 21
    profile = Profile.default().edit(allow=["builtin:memory.manage", "builtin:memory.query"],
                                     max_calls_per_run=1_000_000, max_rounds=1_000_000,
                                     memory={"quota_per_scope": notes + 10})
    with Workbench(None, profile) as bench:
        _write_store(Layout.of(bench.workspace, profile.memory), notes)
        inv = bench.invocation()
        names = {str(t): n for n, t in inv.snapshot.call_names.items()}
        manage, query = names["builtin:memory.manage"], names["builtin:memory.query"]
        started = time.perf_counter()
        listed = inv.call(query, {"action": "list", "limit": 1})  # the first call opens and indexes the store
        opened = time.perf_counter() - started
        assert not listed.is_error and listed.structured["quota"]["used"] == notes, listed.content
        cases = {}
        for label, text in (("one word", "dragons"), ("phrase", "talked about widgets"), ("no hit", "zeppelin"),
                            (_EVERYWHERE, "user")):
            def search(text: str = text) -> None:
                result = inv.call(query, {"action": "search", "query": text})
                assert not result.is_error, result.content
            cases[label] = search
        samples = c.interleaved(cases, repeats=repeats)
        started = time.perf_counter()
        wrote = inv.call(manage, {"action": "write", "slug": "one-more", "scope": "global", "type": "user",
                                  "description": "One more note", "body": "- the user talked about zeppelins"})
        write_seconds = time.perf_counter() - started
        assert not wrote.is_error, wrote.content
    report.row(case="first call (index the files)", memories=notes, median=c.fmt_seconds(opened))
    for label, values in samples.items():
        report.row(case=f"search: {label}", memories=notes, median=c.fmt_seconds(c.median(values)))
    report.row(case="write one more (memory.manage)", memories=notes, median=c.fmt_seconds(write_seconds))
    slowest = max(c.median(values) for label, values in samples.items() if label != _EVERYWHERE)
    report.target("memory search, slowest query (median)", slowest * 1e3, 10.0, "ms", shown=c.fmt_seconds(slowest))
    return report


if __name__ == "__main__":
    raise SystemExit(c.cli(run))
