"""Real provider traffic, recorded by public projects' test cassettes (tests/fixtures/recordings/README.md).

Each recording is one request and its response (or its SSE events, `stream`) as the provider sent
them. What must hold: the calls decode with their argument strings as sent, the replies' text and
usage are read, a round goes back with its argument strings and provider fields byte for byte, a
refusal without a message is a refusal, and recorded pairs replay whatever ids the client made.
"""

from __future__ import annotations

import functools
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from toolbench.core.errors import ToolbenchError
from toolbench.models import reader_for
from toolbench.protocols import Exchange, ResultView, decode_response, encode_history

RECORDINGS = Path(__file__).resolve().parent.parent / "fixtures" / "recordings"
KEYS = {"source", "provider", "protocol", "status", "request", "response", "stream", "note"}


@functools.cache
def _load() -> tuple[dict[str, Any], ...]:
    found = []
    for path in sorted(RECORDINGS.glob("*/*.json")):
        recording = json.loads(path.read_text(encoding="utf-8"))
        found.append({**recording, "name": f"{path.parent.name}/{path.stem}"})
    return tuple(found)


def recordings(protocol: str | None = None, *, streamed: bool | None = None) -> list[dict[str, Any]]:
    """The recordings of `protocol` (all when None), whole bodies or streams only when `streamed`
    says so; each carries its `name`, `<api>/<short-name>`."""
    return [r for r in _load() if protocol in (None, r["protocol"])
            and streamed in (None, r["stream"] is not None)]


def cases(found: list[dict[str, Any]]) -> Any:
    return pytest.mark.parametrize("rec", found, ids=[r["name"] for r in found])


def sent_calls(protocol: str, body: dict[str, Any]) -> list[tuple[str, Any, str | None]]:
    """(name, arguments as sent, id or None) of each call a response body holds, read from the wire."""
    if protocol == "openai":
        message = (body.get("choices") or [{}])[0].get("message") or {}
        return [(c["function"]["name"], c["function"].get("arguments"), c.get("id") or None)
                for c in message.get("tool_calls") or []]
    if protocol == "openai-responses":
        return [(o["name"], o["arguments"], o["call_id"]) for o in body["output"] if o["type"] == "function_call"]
    if protocol == "anthropic":
        return [(b["name"], b["input"], b["id"]) for b in body["content"] if b["type"] == "tool_use"]
    parts = ((body.get("candidates") or [{}])[0].get("content") or {}).get("parts") or []
    return [(p["functionCall"]["name"], p["functionCall"].get("args"), p["functionCall"].get("id"))
            for p in parts if "functionCall" in p]


def held_text(protocol: str, body: dict[str, Any]) -> str:
    """The answer's text as the body holds it (Gemini's thought parts are not the answer)."""
    if protocol == "openai":
        content = ((body.get("choices") or [{}])[0].get("message") or {}).get("content")
        return content if isinstance(content, str) else ""
    if protocol == "openai-responses":
        return "".join(p["text"] for o in body["output"] if o["type"] == "message"
                       for p in o["content"] if p["type"] == "output_text")
    if protocol == "anthropic":
        return "".join(b["text"] for b in body["content"] if b["type"] == "text")
    parts = ((body.get("candidates") or [{}])[0].get("content") or {}).get("parts") or []
    return "".join(p.get("text", "") for p in parts if not p.get("thought"))


WITH_CALLS = [r for r in recordings(streamed=False) if sent_calls(r["protocol"], r["response"])]
STRING_ARGUMENTS = [r for r in WITH_CALLS if r["protocol"] in ("openai", "openai-responses")]
NO_MESSAGE = [r for r in recordings("openai", streamed=False)
              if "message" not in r["response"]["choices"][0]
              and r["response"]["choices"][0].get("finish_reason") == "content_filter"]


def test_there_are_recordings_of_every_api_and_the_readme_lists_each():
    readme = (RECORDINGS / "README.md").read_text(encoding="utf-8")
    assert len(_load()) >= 32
    assert {r["protocol"] for r in recordings(streamed=True)} == {"openai", "openai-responses", "anthropic", "gemini"}
    for r in _load():
        assert set(r) - {"name"} == KEYS, r["name"]
        assert (r["response"] is None) != (r["stream"] is None), r["name"]
        assert f"{r['name']}.json" in readme, r["name"]


@cases(WITH_CALLS)
def test_a_recorded_call_decodes_with_its_arguments_as_sent(rec):
    protocol, body = rec["protocol"], rec["response"]
    decoded = decode_response(protocol, body, id_seed="inv_rec_1")
    sent = sent_calls(protocol, body)
    assert [(c.call_name, c.arguments) for c in decoded.calls] == [(name, args) for name, args, _ in sent]
    for call, (_, _, sent_id) in zip(decoded.calls, sent, strict=True):
        assert sent_id is None or call.call_id == sent_id  # an id-less call gets one of ours


@cases(recordings(streamed=False))
def test_a_recorded_reply_reads_its_text_and_usage(rec):
    protocol, body = rec["protocol"], rec["response"]
    reply = reader_for(protocol)(body)
    assert reply.text == held_text(protocol, body)
    block = body.get("usageMetadata" if protocol == "gemini" else "usage")
    if block:
        assert reply.usage


@cases(NO_MESSAGE)
def test_a_content_filter_finish_without_a_message_is_a_provider_refusal(rec):
    with pytest.raises(ToolbenchError) as caught:
        decode_response("openai", rec["response"])
    assert caught.value.code == "model.provider_refusal"


def answered(rec: dict[str, Any]) -> tuple[list[dict[str, Any]], list[tuple[str, Any, str | None]]]:
    """The history of the recorded round with every call answered, and the calls as they were sent."""
    protocol, body = rec["protocol"], rec["response"]
    decoded = decode_response(protocol, body, id_seed="inv_rec_1")
    exchanges = [Exchange(c.call_id, c.call_name, json.loads(c.arguments) if isinstance(c.arguments, str) else {},
                          ResultView("ok"), arguments_text=c.arguments if isinstance(c.arguments, str) else None)
                 for c in decoded.calls]  # the text as the runtime's records keep it
    return encode_history(protocol, [exchanges], turns=[decoded.assistant]), sent_calls(protocol, body)


@cases(STRING_ARGUMENTS)
def test_a_recorded_argument_string_goes_back_byte_for_byte(rec):
    history, sent = answered(rec)
    if rec["protocol"] == "openai":
        back = [c["function"]["arguments"] for c in history[0]["tool_calls"]]
    else:
        back = [item["arguments"] for item in history if item.get("type") == "function_call"]
    assert back == [args for _, args, _ in sent]


@cases([r for r in WITH_CALLS if r["provider"] == "deepseek" and r["protocol"] == "openai"])
def test_deepseek_reasoning_content_goes_back_on_the_assistant_message(rec):
    history, _ = answered(rec)
    reasoning = rec["response"]["choices"][0]["message"]["reasoning_content"]
    assert history[0]["role"] == "assistant"
    assert history[0].get("reasoning_content") == reasoning


def conversations() -> list[list[dict[str, Any]]]:
    """The whole-body recordings of each cassette holding several, in their order: one conversation."""
    by_cassette: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for r in recordings(streamed=False):
        by_cassette[r["source"]["repo"], r["source"]["path"]].append(r)
    return [sorted(found, key=lambda r: r["source"]["interaction"]) for found in by_cassette.values() if len(found) > 1]


@pytest.mark.parametrize("chain", conversations(), ids=[chain[0]["name"] for chain in conversations()])
def test_a_recorded_conversation_replays_with_each_call_paired_to_its_result(make_bench, chain):
    """Each round's request carries the calls and results of the one before, with the ids the client
    gave them: Gemini's id-less calls come back under the client's ids (pydantic-ai) or none (ADK)."""
    protocol = chain[0]["protocol"]
    pairs = [{"request": r["request"], "response": r["response"]} for r in chain]
    replay = make_bench().replay(pairs, protocol=protocol)  # replay.result_missing: a call lost its result
    calls = [name for r in chain[:-1] for name, _, _ in sent_calls(protocol, r["response"])]
    assert [d.call_name for d in replay.diffs] == calls


def last_event(stream: list[Any]) -> Any:
    """The last event, past a closing `[DONE]`."""
    events = [e for e in stream if (e.get("data") if isinstance(e, dict) and "event" in e else e) != "[DONE]"]
    return events[-1]


@cases(recordings(streamed=True))
def test_a_recorded_stream_is_a_list_of_events_that_ends_as_its_api_ends(rec):
    stream, protocol = rec["stream"], rec["protocol"]
    assert stream
    last = last_event(stream)
    if protocol == "openai":
        named = [e for e in stream if isinstance(e, dict) and "event" in e]
        assert stream[-1] == "[DONE]" or (named == [last] and last["event"] == "error")
        assert all("choices" in e for e in stream if isinstance(e, dict) and "event" not in e)
    elif protocol == "openai-responses":
        assert stream[0]["data"]["type"] == "response.created"
        assert last["data"]["type"] == "response.completed"
    elif protocol == "anthropic":
        assert [stream[0]["event"], last["event"]] == ["message_start", "message_stop"]
        assert all(e["event"] == e["data"]["type"] for e in stream)
    else:
        assert all("candidates" in chunk for chunk in stream)
        assert last["candidates"][0]["finishReason"] == "STOP"
