"""LocalProvider's streams: each protocol's events put back together by the SDK's own accumulator,
the wire (one HTTP chunk per event), and each fault as the real SDK client sees it: what it
raises and what it had read by then. Client timeouts are at most TIMEOUT seconds (STALL_TIMEOUT
where a stall is to time out), so nothing hangs."""

from __future__ import annotations

import asyncio
import base64
import json
import socket
from collections.abc import Callable
from typing import Any

import httpx2
import openai
import pytest
from anthropic.types import RawMessageStreamEvent
from google.genai import errors as genai_errors
from google.genai.types import GenerateContentResponse
from openai.lib.streaming.chat import ChatCompletionStreamState
from openai.lib.streaming.responses._responses import ResponseStreamState
from openai.types.chat import ChatCompletionChunk
from openai.types.responses import ResponseStreamEvent
from pydantic import TypeAdapter

from toolbench import _testing_streams as streams
from toolbench.protocols._bodies import THOUGHT_SIGNATURE
from toolbench.testing import LocalProvider

CALLS = [("dice_roll", {"formula": "2d6"}), ("workspace_list_files", {"path": ".", "glob": "**/*.md"})]
TEXT = "Rolling the dice, then listing the files."
TIMEOUT = 5.0
STALL_TIMEOUT = 0.5
BODIES = {"openai": LocalProvider.chat_calls(CALLS, content=TEXT),
          "openai-responses": LocalProvider.responses_calls(CALLS),
          "anthropic": LocalProvider.anthropic_calls(CALLS, text=TEXT),
          "gemini": LocalProvider.gemini_calls(CALLS)}
PROTOCOLS = tuple(BODIES)
USER = [{"role": "user", "content": "Roll 2d6 and list the files."}]


def flat(value: Any, at: str = "$") -> dict[str, Any]:
    if isinstance(value, dict) and value:
        return {k: v for key, item in value.items() for k, v in flat(item, f"{at}.{key}").items()}
    if isinstance(value, list) and value:
        return {k: v for i, item in enumerate(value) for k, v in flat(item, f"{at}[{i}]").items()}
    return {at: value}


def assert_reassembled(body: dict[str, Any], rebuilt: dict[str, Any], added: dict[str, Any] | None = None) -> None:
    """Every field of `body` is in `rebuilt` with its value; what the SDK adds is None but `added`."""
    sent, got = flat(body), flat(rebuilt)
    assert {k: (v, got.get(k, "<dropped>")) for k, v in sent.items() if got.get(k, "<dropped>") != v} == {}
    assert {k: v for k, v in got.items() if k not in sent and v is not None} == (added or {})


# --- the events, put back together by the SDKs' own accumulators -------------------------------

@pytest.mark.parametrize("chunk", [1, 5, 8, 1000])
@pytest.mark.parametrize("body", [BODIES["openai"], LocalProvider.chat_text(TEXT), LocalProvider.chat_refusal(),
                                  LocalProvider.chat_calls(CALLS, usage=None)], ids=["calls", "text", "refusal",
                                                                                     "no-usage"])
def test_chat_chunks_rebuild_the_completion_in_the_sdks_stream_state(body: dict[str, Any], chunk: int) -> None:
    *chunks, done = streams.events("openai", body, chunk=chunk)
    assert done == (None, streams.DONE)
    state = ChatCompletionStreamState()
    for name, data in chunks:
        assert name is None
        state.handle_chunk(ChatCompletionChunk.model_validate(data))
    calls = body["choices"][0]["message"].get("tool_calls") or []
    indexes = {f"$.choices[0].message.tool_calls[{i}].index": i for i in range(len(calls))}
    assert_reassembled(body, state.get_final_completion().model_dump(mode="json"), indexes)
    first = chunks[0][1]["choices"][0]["delta"]
    assert first["role"] == "assistant" and first["content"] == ("" if body["choices"][0]["message"]["content"]
                                                                else None)
    if "usage" in body:
        assert chunks[-1][1]["choices"] == [] and chunks[-1][1]["usage"] == body["usage"]
        assert all(data["usage"] is None for _, data in chunks[:-1])
    else:
        assert all("usage" not in data for _, data in chunks)


def test_each_chat_tool_call_opens_with_its_id_and_name_and_empty_arguments() -> None:
    chunks = [d for _, d in streams.events("openai", BODIES["openai"])[:-1]]
    deltas = [tc for d in chunks for c in d["choices"] for tc in c["delta"].get("tool_calls", [])]
    opening = [tc for tc in deltas if "id" in tc]
    assert [(tc["index"], tc["type"], tc["function"]) for tc in opening] == [
        (0, "function", {"name": "dice_roll", "arguments": ""}),
        (1, "function", {"name": "workspace_list_files", "arguments": ""})]
    fragments = [tc for tc in deltas if "id" not in tc]
    assert all(len(tc["function"]["arguments"]) <= 8 and set(tc) == {"index", "function"} for tc in fragments)


def test_a_vendors_message_fields_stream_as_deltas_of_their_own() -> None:
    body = LocalProvider.chat_text(TEXT)
    body["choices"][0]["message"]["reasoning_content"] = "The user wants a greeting, so greet."
    state = ChatCompletionStreamState()
    for _, data in streams.events("openai", body, chunk=4)[:-1]:
        state.handle_chunk(ChatCompletionChunk.model_validate(data))
    message = state.get_final_completion().choices[0].message
    assert (message.content, getattr(message, "reasoning_content", None)) == (
        TEXT, "The user wants a greeting, so greet.")


RESPONSE_EVENT: TypeAdapter[Any] = TypeAdapter(ResponseStreamEvent)


@pytest.mark.parametrize("body", [BODIES["openai-responses"], LocalProvider.responses_text(TEXT),
                                  LocalProvider.responses_refusal()], ids=["calls", "text", "refusal"])
def test_responses_events_have_the_sdks_shapes_and_complete_with_the_body(body: dict[str, Any]) -> None:
    sent = streams.events("openai-responses", body)
    parsed = [RESPONSE_EVENT.validate_python(data) for _, data in sent]  # the SDK's union, by `type`
    assert [name for name, _ in sent] == [e.type for e in parsed]
    assert [e.sequence_number for e in parsed] == list(range(len(parsed)))
    state: ResponseStreamState[Any] = ResponseStreamState(input_tools=openai.omit, text_format=openai.omit)
    fired = [event for e in parsed for event in state.handle_event(e)]
    completed = fired[-1]
    assert completed.type == "response.completed"
    assert_reassembled(body, completed.response.model_dump(mode="json"))
    items = body["output"]
    # the deltas alone rebuild the strings the completed response carries
    arguments = {e.output_index: e.snapshot for e in fired if e.type == "response.function_call_arguments.delta"}
    assert arguments == {i: item["arguments"] for i, item in enumerate(items) if item["type"] == "function_call"}
    texts = [e.snapshot for e in fired if e.type == "response.output_text.delta"]
    assert texts[-1:] == [p["text"] for item in items if item["type"] == "message" for p in item["content"]
                          if p["type"] == "output_text"]
    summary = "".join(e.delta for e in fired if e.type == "response.reasoning_summary_text.delta")
    assert summary == "".join(s["text"] for item in items if item["type"] == "reasoning" for s in item["summary"])


def test_the_responses_stream_helper_gives_the_body_back_over_http() -> None:
    body = BODIES["openai-responses"]
    with LocalProvider([body]) as provider, provider.openai(timeout=TIMEOUT).responses.stream(
            model="gpt-5-mini", input="Roll") as stream:
        final = stream.get_final_response()
    assert_reassembled(body, final.model_dump(mode="json"))
    assert provider.requests[0].body["stream"] is True and provider.requests[0].streamed


ANTHROPIC_EVENT: TypeAdapter[Any] = TypeAdapter(RawMessageStreamEvent)


@pytest.mark.parametrize("aio", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("body", [BODIES["anthropic"], LocalProvider.anthropic_text(TEXT),
                                  LocalProvider.anthropic_calls([("clock_now", {})], thinking=None)],
                         ids=["thinking-text-calls", "text", "empty-input"])
def test_anthropic_events_rebuild_the_message_in_the_sdks_message_stream(body: dict[str, Any], aio: bool) -> None:
    for name, data in streams.events("anthropic", body):  # the SDK's union has no ping
        assert name == (ANTHROPIC_EVENT.validate_python(data).type if name != "ping" else data["type"])

    async def final_async(provider: LocalProvider) -> Any:
        async with provider.async_anthropic(timeout=TIMEOUT).messages.stream(model="claude-sonnet-4-5", max_tokens=64,
                                                                       messages=USER) as stream:
            return await stream.get_final_message()

    with LocalProvider([body]) as provider:
        if aio:
            final = asyncio.run(final_async(provider))
        else:
            with provider.anthropic(timeout=TIMEOUT).messages.stream(model="claude-sonnet-4-5", max_tokens=64,
                                                               messages=USER) as stream:
                final = stream.get_final_message()
    assert_reassembled(body, final.model_dump(mode="json"))
    assert provider.requests[0].streamed


def gemini_stream(provider: LocalProvider, timeout_ms: int = 5000) -> list[GenerateContentResponse]:
    client = provider.gemini(timeout_ms=timeout_ms)  # held: a collected genai Client closes its transport
    return list(client.models.generate_content_stream(model="gemini-2.5-flash", contents="Roll"))


@pytest.mark.parametrize("body", [BODIES["gemini"], LocalProvider.gemini_text(TEXT)], ids=["calls", "text"])
def test_gemini_streams_the_parts_in_chunks_the_sdk_yields(body: dict[str, Any]) -> None:
    for _, data in streams.events("gemini", body):
        GenerateContentResponse.model_validate(data)  # google.genai's types forbid extras
    with LocalProvider([body]) as provider:
        chunks = gemini_stream(provider)
    request = provider.requests[0]
    assert request.path == "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse" and request.streamed
    parts = [p for c in chunks for p in c.candidates[0].content.parts]
    sent = body["candidates"][0]["content"]["parts"]
    assert "".join(p.text for p in parts if p.text and not p.thought) == "".join(
        p["text"] for p in sent if "text" in p and not p.get("thought"))
    assert "".join(p.text for p in parts if p.thought) == "".join(p["text"] for p in sent if p.get("thought"))
    assert [(p.function_call.name, p.function_call.args) for p in parts if p.function_call] == [
        (p["functionCall"]["name"], p["functionCall"]["args"]) for p in sent if "functionCall" in p]
    signed = [(i, base64.b64encode(p.thought_signature).decode()) for i, p in enumerate(parts) if p.thought_signature]
    assert signed == ([(next(i for i, p in enumerate(parts) if p.function_call), THOUGHT_SIGNATURE)]
                      if "thoughtSignature" in json.dumps(sent) else [])
    assert [c.candidates[0].finish_reason for c in chunks] == [None] * (len(chunks) - 1) + ["STOP"]
    assert [c.usage_metadata is not None for c in chunks] == [False] * (len(chunks) - 1) + [True]
    assert chunks[-1].usage_metadata.total_token_count == body["usageMetadata"]["totalTokenCount"]
    assert {(c.model_version, c.response_id) for c in chunks} == {(body["modelVersion"], body["responseId"])}


# --- the wire -----------------------------------------------------------------------------------

def raw_post(provider: LocalProvider, path: str, body: Any) -> tuple[str, list[bytes], bool]:
    """POST over a bare socket: the head, the HTTP chunks, and whether the body was terminated."""
    payload = json.dumps(body).encode()
    with socket.create_connection(("127.0.0.1", int(provider.url.rsplit(":", 1)[1])), timeout=TIMEOUT) as sock:
        sock.sendall(b"POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
                     % (path.encode(), len(payload), payload))
        received = b""
        while block := sock.recv(65536):
            received += block
    head, _, rest = received.partition(b"\r\n\r\n")
    chunks = []
    while rest:
        size, _, rest = rest.partition(b"\r\n")
        if int(size, 16) == 0:
            return head.decode(), chunks, True
        chunks.append(rest[:int(size, 16)])
        rest = rest[int(size, 16) + 2:]
    return head.decode(), chunks, False


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_stream_request_gets_one_http_chunk_per_event(protocol: str) -> None:
    path = {"openai": "/v1/chat/completions", "openai-responses": "/v1/responses", "anthropic": "/v1/messages",
            "gemini": "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"}[protocol]
    with LocalProvider([BODIES[protocol]]) as provider:
        head, chunks, terminated = raw_post(provider, path, {} if protocol == "gemini" else {"stream": True})
    assert head.startswith("HTTP/1.1 200") and "content-type: text/event-stream" in head.lower()
    assert "transfer-encoding: chunked" in head.lower()
    assert chunks == [streams.encode(e) for e in streams.events(protocol, BODIES[protocol])] and terminated
    assert provider.requests[0].streamed


def test_a_cut_leaves_the_chunked_body_unterminated() -> None:
    body = BODIES["anthropic"]
    with LocalProvider([LocalProvider.stream(body, cut_after=3)]) as provider:
        _, chunks, terminated = raw_post(provider, "/v1/messages", {"stream": True})
    assert chunks == [streams.encode(e) for e in streams.events("anthropic", body)[:3]] and not terminated


def test_a_request_that_does_not_stream_gets_json_and_an_error_answer_to_a_stream_is_json() -> None:
    error = LocalProvider.error(429, LocalProvider.error_body("openai", 429, "Rate limit reached"))
    with LocalProvider([BODIES["openai"], error]) as provider:
        client = provider.openai(timeout=TIMEOUT)
        completion = client.chat.completions.create(model="gpt-4.1", messages=USER)
        with pytest.raises(openai.RateLimitError, match="Rate limit reached"):
            client.chat.completions.create(model="gpt-4.1", messages=USER, stream=True)
    assert completion.choices[0].message.content == TEXT
    assert [r.streamed for r in provider.requests] == [False, True]


def test_a_stream_on_a_path_no_api_streams_on_is_a_500() -> None:
    with LocalProvider([LocalProvider.stream(BODIES["openai"])]) as provider:
        response = httpx2.post(f"{provider.url}/v1/embeddings", json={"stream": True}, timeout=TIMEOUT)
    assert response.status_code == 500 and response.json()["error"]["code"] == "not_scripted"


@pytest.mark.parametrize("faults", [{"cut_after": -1}, {"stall_after": 1.5}, {"chunk": 0}])
def test_fault_counts_are_checked(faults: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        LocalProvider.stream(BODIES["openai"], **faults)


def test_drop_final_leaves_out_each_protocols_closing_events() -> None:
    closing = {"openai": 3, "openai-responses": 1, "anthropic": 2, "gemini": 1}
    for protocol, body in BODIES.items():
        full = streams.events(protocol, body)
        sent, end = streams.plan(protocol, body, streams.Faults(drop_final=True))
        assert (sent, end) == (full[:-closing[protocol]], "end")


def test_a_malformed_event_is_named_as_the_one_it_replaces() -> None:
    sent, end = streams.plan("anthropic", BODIES["anthropic"], streams.Faults(malformed_after=4))
    assert sent[-1] == ("content_block_delta", streams.MALFORMED) and len(sent) == 5 and end == "end"
    assert streams.encode(sent[-1]) == b"event: content_block_delta\ndata: {not json\n\n"


# --- faults, through the real SDK clients ------------------------------------------------------

def mid_arguments(protocol: str) -> int:
    """The count of events up to the first fragment of the first call's arguments (Gemini: the
    first call, which comes whole)."""
    def is_fragment(name: str | None, data: Any) -> bool:
        if protocol == "openai":
            return any("id" not in tc for c in data["choices"] for tc in c["delta"].get("tool_calls", []))
        if protocol == "openai-responses":
            return name == "response.function_call_arguments.delta"
        if protocol == "anthropic":
            return data.get("delta", {}).get("type") == "input_json_delta"
        return "functionCall" in data["candidates"][0]["content"]["parts"][0]

    events = streams.events(protocol, BODIES[protocol])
    return next(i for i, (name, data) in enumerate(events) if data != streams.DONE and is_fragment(name, data)) + 1


def read_chat(provider: LocalProvider, timeout: float) -> dict[str, Any]:
    state = ChatCompletionStreamState()
    try:
        for chunk in provider.openai(timeout=timeout).chat.completions.create(
                model="gpt-4.1", messages=USER, stream=True, stream_options={"include_usage": True}):
            state.handle_chunk(chunk)
        error = None
    except Exception as exc:
        error = exc
    message = state.current_completion_snapshot.choices[0]
    calls = [tc.function.arguments for tc in message.message.tool_calls or []]
    return {"error": error, "text": message.message.content, "calls": calls, "stop": message.finish_reason}


def read_responses(provider: LocalProvider, timeout: float) -> dict[str, Any]:
    fired: list[Any] = []
    try:
        with provider.openai(timeout=timeout).responses.stream(model="gpt-5-mini", input="Roll") as stream:
            fired.extend(stream)
            stream.get_final_response()
        error = None
    except Exception as exc:
        error = exc
    calls = {e.output_index: e.snapshot for e in fired if e.type == "response.function_call_arguments.delta"}
    stop = next((e.response.status for e in fired if e.type == "response.completed"), None)
    return {"error": error, "text": "", "calls": [calls[i] for i in sorted(calls)], "stop": stop}


def read_anthropic(provider: LocalProvider, timeout: float) -> dict[str, Any]:
    with provider.anthropic(timeout=timeout).messages.stream(model="claude-sonnet-4-5", max_tokens=64,
                                                             messages=USER) as stream:
        try:
            stream.until_done()
            error = None
        except Exception as exc:
            error = exc
        message = stream.current_message_snapshot
    return {"error": error, "text": "".join(b.text for b in message.content if b.type == "text"),
            "calls": [b.input for b in message.content if b.type == "tool_use"], "stop": message.stop_reason}


def read_gemini(provider: LocalProvider, timeout: float) -> dict[str, Any]:
    chunks: list[GenerateContentResponse] = []
    client = provider.gemini(timeout_ms=int(timeout * 1000))
    try:
        chunks.extend(client.models.generate_content_stream(model="gemini-2.5-flash", contents="Roll"))
        error = None
    except Exception as exc:
        error = exc
    parts = [p for c in chunks for p in c.candidates[0].content.parts]
    return {"error": error, "text": "".join(p.text for p in parts if p.text and not p.thought),
            "calls": [p.function_call.args for p in parts if p.function_call],
            "stop": next((c.candidates[0].finish_reason for c in chunks if c.candidates[0].finish_reason), None)}


READ: dict[str, Callable[[LocalProvider, float], dict[str, Any]]] = {
    "openai": read_chat, "openai-responses": read_responses, "anthropic": read_anthropic, "gemini": read_gemini}


def run_fault(protocol: str, **faults: Any) -> dict[str, Any]:
    with LocalProvider([LocalProvider.stream(BODIES[protocol], **faults)]) as provider:
        seen = READ[protocol](provider, STALL_TIMEOUT if "stall_after" in faults else TIMEOUT)
    assert len(provider.requests) == 1  # no SDK retried
    return seen


def raised(seen: dict[str, Any]) -> tuple[type[BaseException] | None, type[BaseException] | None]:
    """The error's class, and the class of what it was raised from (httpx2's own errors chain
    httpcore2's: not part of what a caller sees, so left out)."""
    error = seen["error"]
    if error is None:
        return None, None
    cause = error.__cause__ if not isinstance(error, httpx2.HTTPError) else None
    return type(error), (type(cause) if cause is not None else None)


def partial(protocol: str) -> list[Any]:
    """The calls as read up to mid_arguments: the first fragment of the first call's arguments
    (Anthropic's snapshot parses `{"formul` to {}; Gemini's call is whole)."""
    first = CALLS[0][1]
    return {"anthropic": [{}], "gemini": [first]}.get(protocol, [json.dumps(first, separators=(",", ":"))[:8]])


CUT = {"openai": (openai.APIConnectionError, httpx2.RemoteProtocolError),
       "openai-responses": (openai.APIConnectionError, httpx2.RemoteProtocolError),
       "anthropic": (httpx2.RemoteProtocolError, None), "gemini": (httpx2.RemoteProtocolError, None)}
STALL = {"openai": (openai.APITimeoutError, httpx2.ReadTimeout),
         "openai-responses": (openai.APITimeoutError, httpx2.ReadTimeout),
         "anthropic": (httpx2.ReadTimeout, None), "gemini": (httpx2.ReadTimeout, None)}
MALFORMED = {"openai": (json.JSONDecodeError, None), "openai-responses": (json.JSONDecodeError, None),
             "anthropic": (json.JSONDecodeError, None),
             "gemini": (genai_errors.UnknownApiResponseError, json.JSONDecodeError)}


@pytest.mark.parametrize(("fault", "expected"), [("cut_after", CUT), ("stall_after", STALL),
                                                 ("malformed_after", MALFORMED)], ids=["cut", "stall", "malformed"])
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_fault_mid_arguments_raises_and_leaves_what_was_read(protocol: str, fault: str,
                                                               expected: dict[str, Any]) -> None:
    seen = run_fault(protocol, **{fault: mid_arguments(protocol)})
    assert raised(seen) == expected[protocol]
    assert seen["text"] == (TEXT if protocol in ("openai", "anthropic") else "")
    assert (seen["calls"], seen["stop"]) == (partial(protocol), None)


CLEAN_END = {"openai": (None, None), "openai-responses": (RuntimeError, None), "anthropic": (None, None),
             "gemini": (None, None)}


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_stream_without_its_final_events_ends_cleanly_with_no_stop(protocol: str) -> None:
    seen = run_fault(protocol, drop_final=True)
    assert raised(seen) == CLEAN_END[protocol]  # Responses: get_final_response's "Didn't receive..."
    whole = [c[1] for c in CALLS] if protocol in ("anthropic", "gemini") else [
        json.dumps(c[1], separators=(",", ":")) for c in CALLS]
    # Gemini's last chunk carried the last call as well as finishReason
    assert (seen["calls"], seen["stop"]) == (whole[:1] if protocol == "gemini" else whole, None)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_cut_after_the_last_event_goes_unnoticed_only_past_chats_done(protocol: str) -> None:
    seen = run_fault(protocol, cut_after=len(streams.events(protocol, BODIES[protocol])))
    assert raised(seen) == ((None, None) if protocol == "openai" else CUT[protocol])
    assert seen["stop"] == {"openai": "tool_calls", "openai-responses": "completed", "anthropic": "tool_use",
                            "gemini": "STOP"}[protocol]


async def read_async(protocol: str, provider: LocalProvider) -> None:
    if protocol == "openai":
        async for _ in await provider.async_openai(timeout=TIMEOUT).chat.completions.create(
                model="gpt-4.1", messages=USER, stream=True):
            pass
    else:
        async with provider.async_anthropic(timeout=TIMEOUT).messages.stream(
                model="claude-sonnet-4-5", max_tokens=64, messages=USER) as stream:
            await stream.until_done()


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
def test_the_async_clients_raise_as_the_sync_ones_on_a_cut(protocol: str) -> None:
    with LocalProvider([LocalProvider.stream(BODIES[protocol], cut_after=5)]) as provider, \
            pytest.raises(CUT[protocol][0]) as caught:
        asyncio.run(read_async(protocol, provider))
    assert raised({"error": caught.value}) == CUT[protocol]
