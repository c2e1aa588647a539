"""Evals at the scale users run them: `evals.run` of many attempts against a model whose API
answers after 200 ms, one at a time and `concurrency` in flight, against the loop a user
writes by hand for the same answers (an asyncio semaphore over the model's `send`, no records).

The model is in process (its `send` sleeps on the loop as an HTTP call awaits its answer), so
the figure is what concurrency buys and what toolbench's own work costs beside the wait.
Each attempt is checked: it ended with the final text.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from . import _common as c

LATENCY_S = 0.2  # the API's answer time
CONCURRENCY = 16


class Slow:
    """A Model whose every answer takes `LATENCY_S` (a text answer: one request per attempt)."""

    protocol, model = "openai", "slow"

    def __init__(self) -> None:
        from toolbench.models import OpenAIChat

        shape = OpenAIChat(None, "slow")
        self.read, self.user_message, self.request = shape.read, shape.user_message, shape.request

    async def send(self, body: dict[str, Any]) -> dict[str, Any]:
        await asyncio.sleep(LATENCY_S)
        return {"id": "r", "object": "chat.completion", "choices": [
            {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "done"}}]}


def run(smoke: bool) -> c.Report:
    """Wall time of evals.run at concurrency 1 and 16, against a hand-written asyncio loop."""
    from toolbench import Profile, Workbench, evals

    report = c.Report("evals", "evals.run with a 200 ms model: attempts in flight, against a hand-written loop",
                      smoke)
    attempts = 48 if smoke else 300
    cases = [evals.Case(f"case {n}", "go", expect=[evals.final_contains("done")]) for n in range(attempts)]
    sequential_n = 8 if smoke else 16  # one at a time is measured on a few and scaled: it is linear
    with Workbench(None, Profile.default().edit(allow=[])) as bench:
        started = time.perf_counter()
        one = evals.run(bench, cases[:sequential_n], {"slow": Slow}, concurrency=1)
        per_attempt = (time.perf_counter() - started) / sequential_n
        started = time.perf_counter()
        many = evals.run(bench, cases, {"slow": Slow}, concurrency=CONCURRENCY)
        wall = time.perf_counter() - started
    if not all(a.passed for a in (*one.attempts, *many.attempts)):
        raise AssertionError("the benchmark's attempts did not do their work")

    async def hand(n: int) -> None:
        gate, model = asyncio.Semaphore(CONCURRENCY), Slow()

        async def attempt() -> None:
            async with gate:
                body = model.request(system=None, messages=[model.user_message("go")], tools=[],
                                     tool_choice=None)
                model.read(await model.send(body))

        await asyncio.gather(*(attempt() for _ in range(n)))

    started = time.perf_counter()
    asyncio.run(hand(attempts))
    by_hand = time.perf_counter() - started
    ideal = attempts * LATENCY_S / CONCURRENCY
    report.row(case=f"{attempts} attempts, {CONCURRENCY} in flight", toolbench=f"{wall:.2f} s",
               baseline=f"{by_hand:.2f} s", baseline_is="asyncio semaphore over send, no records",
               ideal=f"{ideal:.2f} s", ratio=f"{wall / by_hand:.2f}x")
    report.row(case=f"{attempts} attempts, one at a time (scaled from {sequential_n})",
               toolbench=f"{per_attempt * attempts:.1f} s", baseline="", baseline_is="",
               ideal=f"{attempts * LATENCY_S:.1f} s",
               ratio=f"{per_attempt * attempts / wall:.1f}x slower than {CONCURRENCY} in flight")
    report.note("each attempt is a fresh invocation (its snapshot, profile and run log written), made on the "
                "caller's thread while the others wait on the bench loop")
    report.target(f"evals.run wall time at concurrency {CONCURRENCY}, against {attempts} x 0.2 s / {CONCURRENCY}",
                  wall / ideal, 1.5, "x", shown=f"{wall:.2f} s = {wall / ideal:.2f}x the ideal {ideal:.2f} s")
    return report


if __name__ == "__main__":
    raise SystemExit(c.cli(run))
