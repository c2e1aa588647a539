"""A model in the loop: toolbench's own cost per round of `inv.run` (everything but the
provider's answer), against the loop a user writes by hand over the same response bodies.

The model answers at once with prepared Chat Completions bodies (one call of a no-op tool per
round, then a text), so what is timed is toolbench's: building the request (the rendered tools,
the transcript), decoding the answer, the gate, budgets, records and log lines, the projection.
The hand loop does what a minimal agent loop does with the raw SDK's dicts: append the message,
json.loads the arguments, call the function, append the tool message. Each run is checked: every
call succeeded and the run ended with the final text, so a rule change cannot make this time
refusals.
"""

from __future__ import annotations

import json
from typing import Any

from . import _common as c

ROUNDS = 5  # calls per run (one per round), then a final answer


def _bodies() -> list[dict[str, Any]]:
    def call(n: int) -> dict[str, Any]:
        return {"id": f"r{n}", "object": "chat.completion", "choices": [{"index": 0, "finish_reason": "tool_calls",
                "message": {"role": "assistant", "content": None, "tool_calls": [
                    {"id": f"call_{n}", "type": "function", "function": {"name": "noop", "arguments": "{}"}}]}}]}

    final = {"id": "rf", "object": "chat.completion", "choices": [
        {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "done"}}]}
    return [*(call(n) for n in range(ROUNDS)), final]


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

    async def send(self, body: dict[str, Any]) -> dict[str, Any]:
        answer = self._bodies[self._n]
        self._n += 1
        return answer


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

        samples = c.interleaved({"inv.run": toolbench_run, "hand loop": hand_loop}, repeats=repeats, inner=1,
                                warmup=2)
    per_round = {name: [s / (ROUNDS + 1) for s in values] for name, values in samples.items()}
    own = c.paired_difference(per_round, "inv.run", "hand loop")
    report.row(case=f"run of {ROUNDS} one-call rounds and a final answer, per round",
               toolbench=c.fmt_seconds(c.median(per_round["inv.run"])),
               baseline=c.fmt_seconds(c.median(per_round["hand loop"])), baseline_is="hand-written loop over dicts",
               overhead=c.fmt_seconds(own), ratio=f"{c.ratio(per_round, 'inv.run', 'hand loop'):.0f}x")
    report.note("a round here is one request: the answer is prepared, so the figure is toolbench's own work "
                "(request body, transcript, decode, gate, records, run-log lines); the hand loop keeps no records, "
                "checks no arguments and writes nothing, which is what the difference buys")
    report.target("toolbench's own cost per round of a run (median)", own * 1e3, 1.0, "ms", shown=c.fmt_seconds(own))
    return report


if __name__ == "__main__":
    raise SystemExit(c.cli(run))
