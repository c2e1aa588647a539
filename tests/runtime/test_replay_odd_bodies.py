"""bench.replay of bodies off the common path: cut or refused answers, a client's own Gemini ids.

A round whose answer the provider cut (or refused, or whose calls were malformed) ran no calls:
`bench.replay(run)` has nothing of it to replay, and the same round's bodies replayed as pairs
behave the same: the pair is skipped, not `replay.source_invalid`. A body that is not the
provider's shape at all (`model.invalid_response`) is still `replay.source_invalid`.
"""

from __future__ import annotations

from typing import Any

import pytest

from toolbench import Profile, ToolbenchError, Workbench
from toolbench.testing import ScriptedModel

PROTOCOLS = ("openai", "openai-responses", "anthropic", "gemini")


def cut(protocol: str, body: dict[str, Any]) -> dict[str, Any]:
    """`body` as the provider sends it when the output hit the token limit."""
    if protocol == "openai":
        body["choices"][0]["finish_reason"] = "length"
    elif protocol == "openai-responses":
        body.update(status="incomplete", incomplete_details={"reason": "max_output_tokens"})
    elif protocol == "anthropic":
        body["stop_reason"] = "max_tokens"
    else:
        body["candidates"][0]["finishReason"] = "MAX_TOKENS"
    return body


def refused(protocol: str, body: dict[str, Any]) -> dict[str, Any]:
    if protocol == "openai":
        body["choices"][0]["finish_reason"] = "content_filter"
    elif protocol == "openai-responses":
        body.update(status="incomplete", incomplete_details={"reason": "content_filter"})
    elif protocol == "anthropic":
        body["stop_reason"] = "refusal"
    else:
        body["candidates"][0]["finishReason"] = "SAFETY"
    return body


class EndsBadly(ScriptedModel):
    """A scripted model whose last answer is changed by `spoil` (cut, refused)."""

    def __init__(self, turns: list[Any], protocol: str, spoil: Any) -> None:
        super().__init__(turns, protocol=protocol)
        self._spoil = spoil

    async def send(self, body: dict[str, Any]) -> dict[str, Any]:
        answer = await super().send(body)
        return self._spoil(self.protocol, answer) if self.remaining == 0 else answer


def bench_for(make_bench) -> Workbench:
    bench = make_bench(profile=Profile.default().edit(allow=["builtin:dice.roll"]), seed=1)
    bench.enable(bench.register_tool("demo", lambda text: text.upper(), name="shout"))
    return bench


@pytest.mark.parametrize("spoil", [cut, refused])
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_cut_or_refused_round_replays_the_same_as_a_run_and_as_pairs(make_bench, protocol: str, spoil) -> None:
    bench = bench_for(make_bench)
    model = EndsBadly([[("shout", {"text": "hi"})], [("shout", {"text": "yo"})]], protocol, spoil)
    run = bench.invocation().run(model, "go")
    assert run.stop_reason == "provider_error"
    assert run.error.code in ("model.output_truncated", "model.provider_refusal")
    by_run = bench.replay(run)
    pairs = [{"request": r.request, "response": r.response} for r in run.rounds]
    by_pairs = bench.replay(pairs, protocol=protocol)
    assert by_run.ok and by_pairs.ok
    assert [(d.call_name, d.status) for d in by_pairs.diffs] == [(d.call_name, d.status) for d in by_run.diffs] \
        == [("shout", "same")]


def test_a_cut_first_answer_alone_is_an_empty_replay(make_bench) -> None:
    bench = bench_for(make_bench)
    run = bench.invocation().run(EndsBadly([[("shout", {"text": "hi"})]], "openai", cut), "go")
    pairs = [{"request": r.request, "response": r.response} for r in run.rounds]
    assert bench.replay(run).diffs == bench.replay(pairs).diffs == ()


def test_a_body_not_of_the_provider_s_shape_is_still_source_invalid(make_bench) -> None:
    bench = bench_for(make_bench)
    with pytest.raises(ToolbenchError) as caught:
        bench.replay([{"request": {"messages": []}, "response": {"choices": [{"finish_reason": "stop"}]}}])
    assert caught.value.code == "replay.source_invalid"


def test_gemini_calls_a_client_gave_its_own_ids_are_paired_by_order_and_name(make_bench) -> None:
    bench = bench_for(make_bench)
    calls = [{"functionCall": {"name": "shout", "args": {"text": "hi"}}},
             {"functionCall": {"name": "shout", "args": {"text": "yo"}}}]
    echoed = [{"functionCall": {"id": f"adk-{i}", **c["functionCall"]}} for i, c in enumerate(calls)]
    pairs = [
        {"request": {"contents": [{"role": "user", "parts": [{"text": "go"}]}]},
         "response": {"candidates": [{"content": {"role": "model", "parts": calls}, "finishReason": "STOP"}]}},
        {"request": {"contents": [
            {"role": "user", "parts": [{"text": "go"}]}, {"role": "model", "parts": echoed},
            {"role": "user", "parts": [
                {"functionResponse": {"id": "adk-0", "name": "shout", "response": {"output": "HI"}}},
                {"functionResponse": {"id": "adk-1", "name": "shout", "response": {"output": "YO"}}}]}]}},
    ]
    replay = bench.replay(pairs)
    assert replay.ok, replay
    assert [d.after.content for d in replay.diffs] == ["HI", "YO"]
