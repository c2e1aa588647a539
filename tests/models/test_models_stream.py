"""Streamed runs through the real SDK clients (sync and async) against `LocalProvider`'s
server-sent events (issue 27): a streamed run and its unstreamed twin give the same answers,
records and transcript; deltas show text and arguments as they came; a cut, stalled or broken
stream ends the run coded with none of its calls run; and the assembly of each provider agrees
with its SDK's own accumulator."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_models_sdk import ADAPTERS, ANSWERS, CALLS, FINAL, PROMPT, PROTOCOLS, usage_of

from toolbench import Workbench
from toolbench._testing_streams import events
from toolbench.models import Anthropic, OpenAIChat
from toolbench.protocols import StreamDelta, get_provider
from toolbench.testing import LocalProvider, _shape_of

pytestmark = pytest.mark.user_provider  # "mistral": the provider outside the package streams too


@pytest.fixture
def bench(tmp_path: Path) -> Iterator[Workbench]:
    with Workbench(tmp_path / "ws", seed=1) as bench:
        yield bench


def records(inv: Any) -> list[tuple[Any, ...]]:
    return [(r.round, r.call_id, r.call_name, r.arguments, r.result.content, r.result.is_error)
            for r in inv.records]


def run_once(bench: Workbench, protocol: str, aio: bool, stream: bool, answers: list[Any],
             deltas: list[StreamDelta] | None = None) -> tuple[Any, Any, LocalProvider]:
    inv = bench.invocation(id="inv_twins")  # id-less calls get ids seeded by the invocation's id
    with LocalProvider(answers) as provider:
        run = inv.run(ADAPTERS[protocol](provider, aio), PROMPT, stream=stream,
                      on_delta=None if deltas is None else deltas.append)
    return inv, run, provider


@pytest.fixture
def twin(tmp_path: Path) -> Iterator[Workbench]:
    """A second bench of the same seed: its dice roll as the first bench's do."""
    with Workbench(tmp_path / "twin", seed=1) as bench:
        yield bench


@pytest.mark.parametrize("aio", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_streamed_run_is_its_unstreamed_twin(bench: Workbench, twin: Workbench, protocol: str,
                                               aio: bool) -> None:
    calls_body, text_body = ANSWERS[protocol]
    answers = [calls_body(CALLS), text_body(FINAL)]
    plain_inv, plain, _ = run_once(twin, protocol, aio, False, answers)
    deltas: list[StreamDelta] = []
    inv, run, provider = run_once(bench, protocol, aio, True, answers, deltas)
    assert [r.streamed for r in provider.requests] == [True, True]  # the SDK asked for a stream
    assert run.stop_reason == plain.stop_reason == "final" and run.final_text == plain.final_text == FINAL
    assert [r.response for r in run.rounds] == [r.response for r in plain.rounds] == answers
    assert [r.request for r in run.rounds] == [r.request for r in plain.rounds]
    assert records(inv) == records(plain_inv) and len(inv.records) == len(CALLS)
    assert inv.transcript(protocol) == plain_inv.transcript(protocol)
    assert run.usage == plain.usage and run.rounds[0].usage == usage_of(protocol, answers[0])
    again = bench.open_invocation(inv.id).runs[-1]  # the log keeps the assembled body
    assert [r.response for r in again.rounds] == answers and again.final_text == FINAL
    # the deltas: the final text as it came, each call's arguments as sent, the round they belong to
    assert "".join(d.text for d in deltas if d.kind == "text" and d.round == 2) == FINAL
    named = [d for d in deltas if d.kind == "arguments" and d.name is not None]
    assert [d.name for d in named] == [name for name, _ in CALLS] and {d.round for d in named} == {1}
    for d, record in zip(named, inv.records, strict=True):
        fragments = "".join(x.text for x in deltas if x.kind == "arguments" and x.index == d.index and x.round == 1)
        assert json.loads(fragments) == record.arguments.value
        if protocol != "gemini":  # Gemini sends calls without ids
            assert d.call_id == record.call_id


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_the_assembly_gives_back_the_body_the_events_were_made_from(protocol: str) -> None:
    calls_body, text_body = ANSWERS[protocol]
    for body in (calls_body(CALLS), text_body(FINAL)):
        assembly = get_provider(protocol).stream_assembly()
        for _, data in events(_shape_of(protocol), body, chunk=3):
            if isinstance(data, dict):
                assembly.feed(data)
        assert assembly.complete and assembly.body() == body


def test_the_chat_assembly_agrees_with_the_openai_sdk_accumulator() -> None:
    from openai.lib.streaming.chat import ChatCompletionStreamState
    from openai.types.chat import ChatCompletionChunk

    body = LocalProvider.chat_calls(CALLS)
    body["choices"][0]["message"]["reasoning_content"] = "Two dice, then the files."  # DeepSeek's field
    state, assembly = ChatCompletionStreamState(), get_provider("openai").stream_assembly()
    for _, data in events("openai", body, chunk=4):
        if isinstance(data, dict):
            state.handle_chunk(ChatCompletionChunk.construct(**data))  # as the SDK builds them
            assembly.feed(data)
    sdk = state.get_final_completion().to_dict()
    ours = assembly.body()
    for key in ("id", "model", "created", "usage"):
        assert ours[key] == sdk[key]
    mine, theirs = ours["choices"][0], sdk["choices"][0]
    assert mine["finish_reason"] == theirs["finish_reason"]
    assert mine["message"]["reasoning_content"] == theirs["message"]["reasoning_content"] == "Two dice, then the files."
    assert [c["function"] for c in mine["message"]["tool_calls"]] == \
        [{k: v for k, v in c["function"].items() if k != "parsed_arguments"} for c in theirs["message"]["tool_calls"]]


def test_the_anthropic_assembly_agrees_with_the_sdk_accumulator() -> None:
    from anthropic.lib.streaming._messages import accumulate_event

    body = LocalProvider.anthropic_calls(CALLS)
    snapshot, buffers, assembly = None, {}, get_provider("anthropic").stream_assembly()
    for _, data in events("anthropic", body, chunk=5):
        snapshot = accumulate_event(event=data, current_snapshot=snapshot, json_bufs=buffers)  # type: ignore[arg-type]
        assembly.feed(data)
    assert snapshot is not None
    sdk = snapshot.to_dict()
    ours = assembly.body()
    assert [b.get("input") for b in ours["content"]] == [b.get("input") for b in sdk["content"]]
    assert ours["usage"] == sdk["usage"] and ours["stop_reason"] == sdk["stop_reason"]
    assert ours == body


# --- faults: a call runs only once its answer is complete -------------------------------------------

FAULTS = {"cut": ({"cut_after": 6}, "model.stream_interrupted"),
          "no final event": ({"drop_final": True}, "model.stream_interrupted"),
          "malformed": ({"malformed_after": 4}, "model.stream_malformed"),
          "stalled": ({"stall_after": 4}, "model.stream_stalled")}


@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("aio", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_broken_stream_ends_the_run_coded_and_runs_nothing(bench: Workbench, protocol: str, aio: bool,
                                                             fault: str) -> None:
    options, code = FAULTS[fault]
    calls_body, text_body = ANSWERS[protocol]
    inv = bench.invocation()
    with LocalProvider([LocalProvider.stream(calls_body(CALLS), chunk=2, **options)]) as provider:
        model = ADAPTERS[protocol](provider, aio)
        if fault == "stalled":
            _short_timeout(model)
        run = inv.run(model, PROMPT, stream=True)
        assert run.stop_reason == "provider_error" and run.error is not None, run
        assert run.error.code == code, run.error
        assert not inv.records and run.rounds[0].results == ()  # half a call never runs
        provider.add(text_body(FINAL))  # recoverable: the invocation goes on
        # with the client's own timeout: a loaded machine must not time the good answer out
        again = inv.run(ADAPTERS[protocol](provider, aio), PROMPT, stream=True)
    assert again.stop_reason == "final" and again.final_text == FINAL


def _short_timeout(model: Any) -> None:
    """A stalled stream ends at the client's read timeout: make it short."""
    client = model.client
    if hasattr(client, "with_options"):
        model.client = client.with_options(timeout=1.0)
    else:  # google-genai: the client's http_options (milliseconds)
        api = client._api_client
        api._http_options.timeout = 1000


def test_anthropic_with_a_long_max_tokens_runs_because_it_streams(bench: Workbench) -> None:
    inv = bench.invocation()
    with LocalProvider([LocalProvider.anthropic_calls(CALLS), LocalProvider.anthropic_text(FINAL)]) as provider:
        model = Anthropic(provider.anthropic(), "claude-sonnet-4-5", max_tokens=64_000)  # as llm-anthropic sends
        run = inv.run(model, PROMPT)  # not asked to stream: the SDK refuses this unstreamed
    assert run.stop_reason == "final" and run.final_text == FINAL, run.error
    assert [r.streamed for r in provider.requests] == [True, True] and len(inv.records) == 2


def test_a_model_that_cannot_stream_is_a_misuse(bench: Workbench) -> None:
    from toolbench import ToolbenchError
    from toolbench.testing import ScriptedModel

    class Plain:
        protocol, model = "openai", "plain"
        _shape = OpenAIChat(None, "plain")
        user_message, request, read = _shape.user_message, _shape.request, _shape.read

        async def send(self, body: dict[str, Any]) -> dict[str, Any]:
            await asyncio.sleep(0)
            return LocalProvider.chat_text("hi")

    with pytest.raises(ToolbenchError) as caught:
        bench.invocation().run(Plain(), "go", stream=True)
    assert caught.value.code == "bench.misuse"
    assert bench.invocation().run(ScriptedModel(["hi"]), "go", stream=True).final_text == "hi"
