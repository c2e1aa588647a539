"""Snapshot: preparing and rendering a snapshot of 2,000 tools (smoke: 200), per protocol."""

from __future__ import annotations

from . import _common as c

PROTOCOLS = ("openai", "openai-responses", "anthropic", "gemini")


def run(smoke: bool) -> c.Report:
    """Snapshot: prepare and render a snapshot of 2,000 tools."""
    from toolbench import Profile, Snapshot, ToolDescriptor, ToolId
    from toolbench.core.snapshot import prepare

    count = 200 if smoke else 2_000
    report = c.Report("snapshot", f"preparing and rendering a snapshot of {count} tools", smoke)
    repeats = 3 if smoke else 7
    schema = {"type": "object", "properties": {
        "query": {"type": "string", "description": "What to look for."},
        "limit": {"type": "integer", "minimum": 1, "maximum": 50},
        "mode": {"type": "string", "enum": ["fast", "full"]},
        "tags": {"type": "array", "items": {"type": "string"}},
    }, "required": ["query"], "additionalProperties": False}
    tools = [ToolDescriptor(id=ToolId.extension(f"ext{i % 20:02d}", f"tool_{i:04d}"),
                            description=f"Tool number {i}: looks things up in source {i % 20}.", input_schema=schema)
             for i in range(count)]
    catalog = {d.id: d for d in tools}
    profile = Profile.default().edit(allow=[str(d.id) for d in tools], max_calls_per_run=1_000, max_rounds=1_000)
    counter = iter(range(10**9))

    def prepared() -> Snapshot:
        return prepare(profile, catalog, snapshot_id=f"inv_bench{next(counter)}", scene="chat", snapshot_type=Snapshot)

    snapshot = prepared()
    cases = {"prepare": prepared}
    for protocol in PROTOCOLS:
        cases[f"prepare + render {protocol}"] = lambda p=protocol: prepared().render(p)
    samples = c.interleaved(cases, repeats=repeats)
    for name, values in samples.items():
        report.row(case=name, tools=len(snapshot.bindings), median=c.fmt_seconds(c.median(values)))
    worst = max(c.median(v) for k, v in samples.items() if k != "prepare")
    report.target(f"prepare + render {count} tools (slowest protocol)", worst * 1e3, 100, "ms",
                  shown=c.fmt_seconds(worst))
    return report


if __name__ == "__main__":
    raise SystemExit(c.cli(run))
