"""Memory search: `memory.query` search over a store of notes (500; smoke: 40).

Skipped, with a printed note, while no `builtin:memory.*` tool is in the catalog. The issue sets
no target; the figures are for reference.
"""

from __future__ import annotations

from . import _common as c

_TOPICS = ("tabs", "spaces", "dragons", "deploys", "coffee", "tests", "pandas", "widgets", "budgets", "shells")


def run(smoke: bool) -> c.Report:
    """Memory search over a store of notes."""
    from toolbench import Profile, Workbench

    report = c.Report("memory", "memory search", smoke)
    notes = 40 if smoke else 500
    repeats = 3 if smoke else 9
    with Workbench() as bench:
        memory_tools = [str(d.id) for d in bench.catalog() if str(d.id).startswith("builtin:memory.")]
        if not {"builtin:memory.manage", "builtin:memory.query"} <= set(memory_tools):
            report.note("skipped: builtin:memory.manage / builtin:memory.query are not in the catalog")
            report.row(case="memory search", status="skipped")
            print("bench_memory: skipped (no builtin:memory.* tools in the catalog)")
            return report
        bench.profile = Profile.default().edit(allow=["builtin:memory.manage", "builtin:memory.query"],
                                               max_calls_per_run=1_000_000)
        inv = bench.invocation()
        names = {str(t): n for n, t in inv.snapshot.call_names.items()}
        manage, query = names["builtin:memory.manage"], names["builtin:memory.query"]
        for i in range(notes):
            topic = _TOPICS[i % len(_TOPICS)]
            body = "\n".join(f"- note {i} line {j}: the user talked about {topic} and {_TOPICS[j % 10]}"
                             for j in range(20))
            result = inv.call(manage, {"action": "write", "slug": f"note-{i:04d}-{topic}", "scope": "global",
                                       "type": "user", "description": f"What the user said about {topic} ({i})",
                                       "body": body})
            assert not result.is_error, result.content
        cases = {}
        for label, text in (("one word", "dragons"), ("phrase", "talked about widgets"), ("no hit", "zeppelin")):
            def search(text: str = text) -> None:
                result = inv.call(query, {"action": "search", "query": text})
                assert not result.is_error, result.content
            cases[label] = search
        samples = c.interleaved(cases, repeats=repeats)
    for label, values in samples.items():
        report.row(case=f"search: {label}", notes=notes, median=c.fmt_seconds(c.median(values)))
    return report


if __name__ == "__main__":
    raise SystemExit(c.cli(run))
