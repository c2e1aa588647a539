"""Real recorded streams (tests/fixtures/recordings, each with its source) put back together by
each provider's `stream_assembly()`: the body decodes to the calls the deltas carried, the text
is the text deltas joined, and where the SDK has an accumulator of its own (openai's Chat
Completions state, anthropic's `accumulate_event`) the two agree on the same events."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolbench import ToolbenchError
from toolbench.models import reader_for
from toolbench.protocols import StreamDelta, decode_response, get_provider

HERE = Path(__file__).resolve().parents[1] / "fixtures" / "recordings"
STREAMS = sorted(p for p in HERE.glob("*/*.json") if json.loads(p.read_text())["stream"])
# What a recorded stream ends with, when it is not a complete answer.
ENDS = {"groq-stream-error-event": "model.provider_error"}
# OpenRouter (Novita) repeats the whole call in every delta and sends no finish_reason: joined as
# the SDK joins them (the name twice), complete only at the recorded `[DONE]`.
REPEATS = {"openrouter-stream-no-finish"}
# Mistral sends a call whole, without `index`: the openai SDK's accumulator fails on it (TypeError).
SDK_FAILS = {"mistral-stream-one-chunk-call"}


def load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())


def data_of(event: Any) -> Any:
    """A stored event's data: named events are stored as {"event", "data"}."""
    return event["data"] if isinstance(event, dict) and set(event) == {"event", "data"} else event


def assembled(recording: dict[str, Any]) -> tuple[Any, list[StreamDelta]]:
    assembly = get_provider(recording["protocol"]).stream_assembly()
    deltas: list[StreamDelta] = []
    for event in recording["stream"]:
        deltas += assembly.feed(data_of(event))
    return assembly, deltas


def test_there_are_streams_of_every_api() -> None:
    assert {load(p)["protocol"] for p in STREAMS} == {"openai", "openai-responses", "anthropic", "gemini"}
    assert len(STREAMS) >= 15


@pytest.mark.parametrize("path", STREAMS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_a_recorded_stream_assembles_into_a_body_its_deltas_agree_with(path: Path) -> None:
    recording = load(path)
    protocol = recording["protocol"]
    if path.stem in ENDS:
        with pytest.raises(ToolbenchError) as caught:
            assembled(recording)
        assert caught.value.code == ENDS[path.stem]
        return
    assembly, deltas = assembled(recording)
    assert assembly.complete, "the stream's final event was seen"
    body = assembly.body()
    reply = reader_for(protocol)(body)
    assert reply.text == "".join(d.text for d in deltas if d.kind == "text")
    calls = decode_response(protocol, body).calls
    named = [d for d in deltas if d.kind == "arguments" and d.name is not None]
    if path.stem in REPEATS:
        assert [c.call_name for c in calls] == [named[0].name * 2]
    else:
        assert [d.name for d in named] == [c.call_name for c in calls]
    if protocol in ("openai", "openai-responses") and path.stem not in REPEATS:  # as streamed, byte for byte
        for d, call in zip(named, calls, strict=True):
            streamed = "".join(x.text for x in deltas if x.kind == "arguments" and x.index == d.index)
            assert call.arguments == streamed or (streamed == "" and call.arguments is None)
    usage_key = "usageMetadata" if protocol == "gemini" else "usage"
    had_usage = any(isinstance(d := data_of(e), dict) and (d.get(usage_key) or (d.get("response") or {}).get(usage_key)
                    or (d.get("message") or {}).get(usage_key)) for e in recording["stream"])
    assert bool(reply.usage) == bool(had_usage)


CHAT = [p for p in STREAMS if load(p)["protocol"] == "openai" and p.stem not in ENDS]
ANTHROPIC = [p for p in STREAMS if load(p)["protocol"] == "anthropic"]


@pytest.mark.parametrize("path", CHAT, ids=lambda p: p.stem)
def test_chat_assembly_agrees_with_the_openai_sdk_on_real_streams(path: Path) -> None:
    from openai._models import construct_type  # how the SDK's stream builds each chunk
    from openai.lib.streaming.chat import ChatCompletionStreamState
    from openai.types.chat import ChatCompletionChunk

    recording = load(path)
    state = ChatCompletionStreamState()

    def feed_sdk() -> None:
        for event in recording["stream"]:
            data = data_of(event)
            if isinstance(data, dict) and data.get("object", "chat.completion.chunk") == "chat.completion.chunk":
                state.handle_chunk(construct_type(type_=ChatCompletionChunk, value=data))

    if path.stem in SDK_FAILS:
        with pytest.raises(TypeError):
            feed_sdk()
        return
    feed_sdk()
    sdk = state.current_completion_snapshot.to_dict()
    ours, _ = assembled(recording)
    body = ours.body()
    assert body["id"] == sdk["id"] and body.get("usage") == sdk.get("usage")
    for mine, theirs in zip(body["choices"], sdk["choices"], strict=True):
        assert mine.get("finish_reason") == theirs.get("finish_reason")
        message, expected = mine["message"], theirs["message"]
        for key, value in message.items():
            if key != "tool_calls":
                assert value == expected.get(key), key  # vendor fields too: reasoning_content, reasoning
        assert [c.get("function") for c in message.get("tool_calls") or []] == \
            [{k: v for k, v in (c.get("function") or {}).items() if k != "parsed_arguments"}
             for c in expected.get("tool_calls") or []]


@pytest.mark.parametrize("path", ANTHROPIC, ids=lambda p: p.stem)
def test_anthropic_assembly_agrees_with_the_sdk_on_real_streams(path: Path) -> None:
    from anthropic.lib.streaming._messages import accumulate_event

    recording = load(path)
    snapshot, buffers = None, {}
    for event in recording["stream"]:
        snapshot = accumulate_event(event=data_of(event), current_snapshot=snapshot, json_bufs=buffers)
    assert snapshot is not None
    ours, _ = assembled(recording)
    sdk, body = snapshot.to_dict(), ours.body()
    assert body["usage"] == sdk["usage"] and body["stop_reason"] == sdk["stop_reason"]
    def blocks(message: dict[str, Any]) -> list[tuple[Any, ...]]:
        return [(b["type"], b.get("input"), b.get("text"), b.get("thinking"), b.get("signature"))
                for b in message["content"]]

    assert blocks(body) == blocks(sdk)
