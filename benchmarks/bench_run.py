"""A model in the loop: toolbench's own cost per round of `inv.run` (everything but the
provider's answer), against the loop a user writes by hand over the same response bodies.

The model answers at once with prepared Chat Completions bodies (one call of a no-op tool per
round, then a text), so what is timed is toolbench's: building the request (the rendered tools,
the transcript), decoding the answer, the gate, budgets, records and log lines, the projection.
The hand loop does what a minimal agent loop does with the raw SDK's dicts: append the message,
json.loads the arguments, call the function, append the tool message. Each run is checked: every
call succeeded and the run ended with the final text, so a rule change cannot make this time
refusals.

The streamed variant answers each round as Chat Completions chunks (the call's id and name,
its arguments in fragments, the finish; the final text in word-sized deltas), against the loop a
user writes over an SDK stream: join the content deltas, merge the tool-call deltas by index.
"""

from __future__ import annotations

import json
from typing import Any

from . import _common as c

ROUNDS = 5  # calls per run (one per round), then a final answer
WORDS = 40  # the final answer's text deltas in the streamed variant


def _bodies() -> list[dict[str, Any]]:
    def call(n: int) -> dict[str, Any]:
        return {"id": f"r{n}", "object": "chat.completion", "choices": [{"index": 0, "finish_reason": "tool_calls",
                "message": {"role": "assistant", "content": None, "tool_calls": [
                    {"id": f"call_{n}", "type": "function", "function": {"name": "noop", "arguments": "{}"}}]}}]}

    final = {"id": "rf", "object": "chat.completion", "choices": [
        {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "done"}}]}
    return [*(call(n) for n in range(ROUNDS)), final]


def _chunks(body: dict[str, Any]) -> list[dict[str, Any]]:
    """A prepared body as the chunks a server streams it in."""
    message = body["choices"][0]["message"]
    head = {"id": body["id"], "object": "chat.completion.chunk", "created": 0, "model": "instant"}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    out = [chunk({"role": "assistant", "content": None if message.get("tool_calls") else ""})]
    for i, tc in enumerate(message.get("tool_calls") or ()):
        out.append(chunk({"tool_calls": [{"index": i, "id": tc["id"], "type": "function",
                                          "function": {"name": tc["function"]["name"], "arguments": ""}}]}))
        out += [chunk({"tool_calls": [{"index": i, "function": {"arguments": ch}}]})
                for ch in tc["function"]["arguments"]]
    if message.get("content"):
        out += [chunk({"content": word}) for word in [f"w{n} " for n in range(WORDS - 1)] + [message["content"]]]
    return [*out, chunk({}, body["choices"][0]["finish_reason"])]


class Instant:
    """A Model that answers every request at once with the next prepared body."""

    protocol, model = "openai", "instant"

    def __init__(self, bodies: list[dict[str, Any]]) -> None:
        from toolbench.models import OpenAIChat

        self._shape = OpenAIChat(None, "instant")
        self._bodies = bodies
        self._n = 0
        self.read = self._shape.read
        self.user_message = self._shape.user_message
        self.request = self._shape.request
        self._streams: list[list[dict[str, Any]]] = []

    async def send(self, body: dict[str, Any]) -> dict[str, Any]:
        answer = self._bodies[self._n]
        self._n += 1
        return answer

    async def stream(self, body: dict[str, Any]) -> Any:
        for chunk in self._streams[self._n]:
            yield chunk
        self._n += 1


class InstantStream(Instant):
    """The same answers, streamed."""

    def __init__(self, bodies: list[dict[str, Any]], streams: list[list[dict[str, Any]]]) -> None:
        super().__init__(bodies)
        self._streams = streams


def run(smoke: bool) -> c.Report:
    """Per-round cost of inv.run against a hand-written loop."""
    from toolbench import Profile, Workbench

    report = c.Report("run", "toolbench's own cost per round of a model run, against a hand-written loop", smoke)
    repeats = 5 if smoke else 21
    bodies = _bodies()

    def noop() -> str:
        return ""

    profile = Profile.default().edit(max_calls_per_run=1_000_000, max_rounds=1_000_000)
    with Workbench(None, profile) as bench:
        bench.enable(bench.register_tool("bench", noop))
        tools = bench.invocation().snapshot.render("openai")
        fresh = iter([bench.invocation() for _ in range(repeats * 3 + 10)])  # made ahead: not a round's cost

        def toolbench_run() -> None:
            result = next(fresh).run(Instant(bodies), "go")
            if result.stop_reason != "final" or len(result.calls) != ROUNDS or any(
                    r.is_error for r in result.results):
                raise AssertionError(f"the benchmark run did not do its work: {result!r} {result.results[:1]}")

        def hand_loop() -> None:
            messages: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
            for answer in bodies:
                _request = {"model": "instant", "messages": messages, "tools": tools}
                message = answer["choices"][0]["message"]
                if not message.get("tool_calls"):
                    break
                messages.append(message)
                for tc in message["tool_calls"]:
                    out = noop(**json.loads(tc["function"]["arguments"]))
                    messages.append({"role": "tool", "tool_call_id": tc["id"], "content": out})

        streams = [_chunks(b) for b in bodies]

        def toolbench_streamed() -> None:
            result = next(fresh).run(InstantStream(bodies, streams), "go", stream=True)
            if result.stop_reason != "final" or len(result.calls) != ROUNDS or not result.final_text.endswith("done"):
                raise AssertionError(f"the streamed benchmark run did not do its work: {result!r}")

        def hand_stream_loop() -> None:
            messages: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
            for chunks in streams:
                _request = {"model": "instant", "messages": messages, "tools": tools, "stream": True}
                text, calls = "", {}  # type: ignore[var-annotated]
                for chunk in chunks:
                    delta = chunk["choices"][0]["delta"]
                    text += delta.get("content") or ""
                    for tc in delta.get("tool_calls") or ():
                        call = calls.setdefault(tc["index"], {"id": "", "name": "", "arguments": ""})
                        call["id"] = tc.get("id") or call["id"]
                        call["name"] = tc.get("function", {}).get("name") or call["name"]
                        call["arguments"] += tc.get("function", {}).get("arguments") or ""
                if not calls:
                    break
                messages.append({"role": "assistant", "content": text or None, "tool_calls": [
                    {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
                    for c in calls.values()]})
                for call in calls.values():
                    out = noop(**json.loads(call["arguments"]))
                    messages.append({"role": "tool", "tool_call_id": call["id"], "content": out})

        samples = c.interleaved({"inv.run": toolbench_run, "hand loop": hand_loop,
                                 "inv.run streamed": toolbench_streamed, "hand stream loop": hand_stream_loop},
                                repeats=repeats, inner=1, warmup=2)
    per_round = {name: [s / (ROUNDS + 1) for s in values] for name, values in samples.items()}
    own = c.paired_difference(per_round, "inv.run", "hand loop")
    report.row(case=f"run of {ROUNDS} one-call rounds and a final answer, per round",
               toolbench=c.fmt_seconds(c.median(per_round["inv.run"])),
               baseline=c.fmt_seconds(c.median(per_round["hand loop"])), baseline_is="hand-written loop over dicts",
               overhead=c.fmt_seconds(own), ratio=f"{c.ratio(per_round, 'inv.run', 'hand loop'):.0f}x")
    streamed = c.paired_difference(per_round, "inv.run streamed", "hand stream loop")
    report.row(case=f"the same run streamed ({WORDS} text deltas in the final answer), per round",
               toolbench=c.fmt_seconds(c.median(per_round["inv.run streamed"])),
               baseline=c.fmt_seconds(c.median(per_round["hand stream loop"])),
               baseline_is="hand-written loop over SDK stream chunks", overhead=c.fmt_seconds(streamed),
               ratio=f"{c.ratio(per_round, 'inv.run streamed', 'hand stream loop'):.0f}x")
    report.note("a round here is one request: the answer is prepared, so the figure is toolbench's own work "
                "(request body, transcript, decode, gate, records, run-log lines); the hand loop keeps no records, "
                "checks no arguments and writes nothing, which is what the difference buys")
    report.target("toolbench's own cost per round of a run (median)", own * 1e3, 1.0, "ms", shown=c.fmt_seconds(own))
    report.target("toolbench's own cost per streamed round of a run (median)", streamed * 1e3, 1.0, "ms",
                  shown=c.fmt_seconds(streamed))
    return report


if __name__ == "__main__":
    raise SystemExit(c.cli(run))
