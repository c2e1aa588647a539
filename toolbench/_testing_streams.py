"""A full response body as the server-sent events its API streams for it, and the stream faults.

    events("anthropic", bodies.anthropic_calls(CALLS), chunk=8)
    # [("message_start", {...}), ("content_block_start", {...}), ("ping", {...}), ...]

`events(protocol, body, chunk=8)` is pure: it turns a non-streamed body of `protocol` ("openai",
"openai-responses", "anthropic", "gemini") into the `(event name or None, data)` pairs the API
sends, text and argument strings cut into `chunk`-character fragments, so that each SDK's own
accumulator puts the body back together (tests/models/test_local_provider_streams.py):

- Chat Completions: `chat.completion.chunk`s with no event names. The first delta has the role and
  `content` ("" when the body has text, null when it has none) and the message's fields that are
  not strings (`refusal: null`, `annotations`); then the other string fields (`reasoning_content`,
  a refusal, a vendor's field) and the content, in fragments; each tool call as a delta with its
  index, id, type, name and arguments "", then argument fragments; a chunk with `finish_reason`
  (and the choice's `logprobs`); when the body has usage, every chunk says `usage: null` and a last
  chunk has `choices: []` and the usage (what `stream_options.include_usage` asks for); then the
  `[DONE]` sentinel, whose data is the str `DONE`.
- Responses: named events with a `sequence_number` from 0: response.created and .in_progress (the
  body in progress: no output, no usage), per output item `output_item.added`, its content parts
  (`content_part.added`, `output_text.delta`s or `refusal.delta`s, their `.done`,
  `content_part.done`), a function call's `function_call_arguments.delta`s and `.done`, a
  reasoning item's summary parts (`reasoning_summary_part.added`, `reasoning_summary_text.delta`s,
  their `.done`s), `output_item.done` with the whole item; then response.completed with the body.
- Anthropic: named events: message_start (the message with no content, no stop reason, and
  `output_tokens` at most 1), per block `content_block_start` (text "", thinking "" with signature
  "", a tool_use with input {}), its deltas (`text_delta`, `citations_delta`, `thinking_delta` and
  one `signature_delta`, `input_json_delta` fragments of the input's JSON, one "" for {}) and
  `content_block_stop`; a `ping` after the first block starts (as the API does); message_delta
  (stop_reason, stop_sequence, usage with output_tokens); message_stop.
- Gemini: GenerateContentResponse chunks with no event names, each of candidates[0] and one part:
  a text (or thought) part in fragments, its `thoughtSignature` on its last fragment; any other
  part (a functionCall) whole. `modelVersion` and `responseId` are on every chunk; finishReason,
  the candidate's other fields and `usageMetadata` on the last. A body of no parts is one chunk.

`plan(protocol, body, faults)` applies a `Faults` to the events: the events to write and how the
answer ends ("end": cleanly; "cut": the connection closes; "stall": held open, nothing more).
`encode(event)` is one event on the wire.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

Event = tuple[str | None, dict[str, Any] | str]  # data as a str is written as is

DONE = "[DONE]"  # Chat Completions' last event
MALFORMED = "{not json"  # a fault's event: what `data:` carries when the JSON broke off
PROTOCOLS = ("openai", "openai-responses", "anthropic", "gemini")


@dataclass(frozen=True, slots=True)
class Faults:
    """What goes wrong in a stream: after `cut_after` events the connection closes, after
    `stall_after` it stays open with nothing more sent, after `malformed_after` an event of broken
    JSON is the last; the first count reached wins. `drop_final` leaves the closing events out
    (Chat: the finish chunk, the usage chunk and [DONE]; Responses: response.completed; Anthropic:
    message_delta and message_stop; Gemini: the last chunk, the one with finishReason) and ends
    cleanly. `chunk` is the fragment length."""

    cut_after: int | None = None
    stall_after: int | None = None
    malformed_after: int | None = None
    drop_final: bool = False
    chunk: int = 8

    def __post_init__(self) -> None:
        counts = (self.cut_after, self.stall_after, self.malformed_after)
        if any(n is not None and (not isinstance(n, int) or n < 0) for n in counts) or self.chunk < 1:
            raise ValueError(f"event counts are ints >= 0 and the chunk >= 1, not {self!r}")


def events(protocol: str, body: Mapping[str, Any], *, chunk: int = 8) -> list[Event]:
    """The events `protocol`'s API streams for the full `body` (see the module docstring)."""
    if protocol not in _BUILDERS:
        raise ValueError(f"a stream is one of {', '.join(PROTOCOLS)}, not {protocol!r}")
    if chunk < 1:
        raise ValueError(f"a fragment has at least 1 character, not {chunk}")
    return list(_BUILDERS[protocol](body, chunk))


def plan(protocol: str, body: Mapping[str, Any], faults: Faults) -> tuple[list[Event], str]:
    """The events to write for `body` with `faults`, and how the answer ends: "end", "cut", "stall"."""
    sent = events(protocol, body, chunk=faults.chunk)
    if faults.drop_final:
        sent = sent[:_final_start(protocol, sent)]
    ends = [(n, how) for n, how in ((faults.cut_after, "cut"), (faults.stall_after, "stall"),
                                    (faults.malformed_after, "malformed")) if n is not None]
    if not ends:
        return sent, "end"
    n, how = min(ends, key=lambda end: end[0])
    if how == "malformed":  # named as the event it stands for: Anthropic's SDK skips unnamed events
        name = sent[n][0] if n < len(sent) else (sent[-1][0] if sent else None)
        return [*sent[:n], (name, MALFORMED)], "end"
    return sent[:n], how


def encode(event: Event) -> bytes:
    """One event as the API writes it: `event: NAME` when named, `data: ...`, a blank line."""
    name, data = event
    text = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
    return ((f"event: {name}\n" if name else "") + f"data: {text}\n\n").encode()


def _pieces(text: str, chunk: int) -> list[str]:
    return [text[i:i + chunk] for i in range(0, len(text), chunk)]


def _final_start(protocol: str, sent: list[Event]) -> int:
    """Where the closing events begin."""
    def first(found: Callable[[str | None, Any], bool]) -> int:
        return next((i for i, (name, data) in enumerate(sent) if found(name, data)), len(sent))

    if protocol == "openai":
        return first(lambda _, d: isinstance(d, dict) and any(c.get("finish_reason") for c in d["choices"]))
    if protocol == "openai-responses":
        return first(lambda n, _: n in ("response.completed", "response.incomplete", "response.failed"))
    if protocol == "anthropic":
        return first(lambda n, _: n == "message_delta")
    return max(0, len(sent) - 1)


# Chat Completions ------------------------------------------------------------------------------

def _chat(body: Mapping[str, Any], chunk: int) -> Iterator[Event]:
    head = {k: v for k, v in body.items() if k not in ("object", "choices", "usage")}
    usage = {"usage": None} if "usage" in body else {}

    def out(choices: list[dict[str, Any]], **fields: Any) -> Event:
        return None, {"id": body.get("id"), "object": "chat.completion.chunk", **head, "choices": choices,
                      **usage, **fields}

    for choice in body.get("choices", []):
        index, message = choice.get("index", 0), dict(choice.get("message") or {})

        odds = {"logprobs": None} if "logprobs" in choice else {}  # a server that sends none streams none

        def delta(d: dict[str, Any], finish: Any = None, _index: int = index, _odds: Any = odds) -> Event:
            return out([{"index": _index, "delta": d, **_odds, "finish_reason": finish}])

        content, calls = message.pop("content", None), message.pop("tool_calls", None) or []
        strings = {k: v for k, v in message.items() if k != "role" and isinstance(v, str)}
        first = {"role": message.pop("role", "assistant"), "content": "" if isinstance(content, str) else None,
                 **{k: v for k, v in message.items() if k not in strings}}
        yield delta(first)
        for key, text in [*strings.items(), ("content", content if isinstance(content, str) else "")]:
            for piece in _pieces(text, chunk):
                yield delta({key: piece})
        for i, call in enumerate(calls):
            function = dict(call.get("function") or {})
            arguments = function.pop("arguments", "")
            yield delta({"tool_calls": [{"index": i, **{k: v for k, v in call.items() if k != "function"},
                                         "function": {**function, "arguments": ""}}]})
            for piece in _pieces(arguments, chunk):
                yield delta({"tool_calls": [{"index": i, "function": {"arguments": piece}}]})
        last = {"logprobs": choice["logprobs"]} if "logprobs" in choice else {}
        yield out([{"index": index, "delta": {}, **last, "finish_reason": choice.get("finish_reason")}])
    if "usage" in body:
        yield out([], usage=body["usage"])
    yield None, DONE


# Responses ---------------------------------------------------------------------------------------

def _responses(body: Mapping[str, Any], chunk: int) -> Iterator[Event]:
    numbers = itertools.count()

    def ev(kind: str, **fields: Any) -> Event:
        return kind, {"type": kind, "sequence_number": next(numbers), **fields}

    pending = {**body, "status": "in_progress", "output": [], "usage": None}
    yield ev("response.created", response=pending)
    yield ev("response.in_progress", response=pending)
    for at, item in enumerate(body.get("output", [])):
        where = {"item_id": item.get("id"), "output_index": at}
        kind = item.get("type")
        started = {**item, **({"status": "in_progress"} if "status" in item else {})}
        if kind == "message":
            started["content"] = []
        elif kind == "function_call":
            started["arguments"] = ""
        elif kind == "reasoning":
            started["summary"] = []
        yield ev("response.output_item.added", output_index=at, item=started)
        if kind == "message":
            for j, part in enumerate(item.get("content", [])):
                yield from _responses_part(ev, where, j, part, chunk)
        elif kind == "function_call":
            for piece in _pieces(item.get("arguments", ""), chunk):
                yield ev("response.function_call_arguments.delta", **where, delta=piece)
            yield ev("response.function_call_arguments.done", **where, arguments=item.get("arguments", ""))
        elif kind == "reasoning":
            for k, part in enumerate(item.get("summary", [])):
                at_k = {**where, "summary_index": k}
                yield ev("response.reasoning_summary_part.added", **at_k, part={**part, "text": ""})
                for piece in _pieces(part.get("text", ""), chunk):
                    yield ev("response.reasoning_summary_text.delta", **at_k, delta=piece)
                yield ev("response.reasoning_summary_text.done", **at_k, text=part.get("text", ""))
                yield ev("response.reasoning_summary_part.done", **at_k, part=part)
        yield ev("response.output_item.done", output_index=at, item=item)
    yield ev("response.completed", response=dict(body))


def _responses_part(ev: Callable[..., Event], where: dict[str, Any], j: int, part: Mapping[str, Any],
                    chunk: int) -> Iterator[Event]:
    at = {**where, "content_index": j}
    kind = part.get("type")
    key = {"output_text": "text", "refusal": "refusal"}.get(str(kind))
    if key is None:
        yield ev("response.content_part.added", **at, part=part)
    else:
        start = {**part, key: "", **({"annotations": []} if "annotations" in part else {})}
        yield ev("response.content_part.added", **at, part=start)
        text = part.get(key, "")
        logprobs: dict[str, Any] = {"logprobs": []} if key == "text" else {}
        name = "response.output_text" if key == "text" else "response.refusal"
        for piece in _pieces(text, chunk):
            yield ev(f"{name}.delta", **at, delta=piece, **logprobs)
        yield ev(f"{name}.done", **at, **{key: text}, **logprobs)
    yield ev("response.content_part.done", **at, part=part)


# Anthropic Messages ------------------------------------------------------------------------------

def _anthropic(body: Mapping[str, Any], chunk: int) -> Iterator[Event]:
    def ev(kind: str, **fields: Any) -> Event:
        return kind, {"type": kind, **fields}

    usage = dict(body.get("usage") or {})
    output_tokens = usage.get("output_tokens", 0)
    yield ev("message_start", message={**body, "content": [], "stop_reason": None, "stop_sequence": None,
                                       "usage": {**usage, "output_tokens": min(1, output_tokens)}})
    blocks = body.get("content", [])
    if not blocks:
        yield ev("ping")
    for i, block in enumerate(blocks):
        kind = block.get("type")
        if kind == "text":
            start = {k: v for k, v in block.items() if k != "citations" or not v}  # citations come as deltas
            yield ev("content_block_start", index=i, content_block={**start, "text": ""})
        elif kind == "thinking":
            yield ev("content_block_start", index=i, content_block={"type": "thinking", "thinking": "",
                                                                    "signature": ""})
        elif kind in ("tool_use", "server_tool_use"):
            yield ev("content_block_start", index=i, content_block={**block, "input": {}})
        else:
            yield ev("content_block_start", index=i, content_block=block)
        if i == 0:
            yield ev("ping")

        def delta(kind: str, _index: int = i, **fields: Any) -> Event:
            return ev("content_block_delta", index=_index, delta={"type": kind, **fields})

        if kind == "text":
            yield from (delta("text_delta", text=piece) for piece in _pieces(block.get("text", ""), chunk))
            yield from (delta("citations_delta", citation=c) for c in block.get("citations") or [])
        elif kind == "thinking":
            yield from (delta("thinking_delta", thinking=p) for p in _pieces(block.get("thinking", ""), chunk))
            yield delta("signature_delta", signature=block.get("signature", ""))
        elif kind in ("tool_use", "server_tool_use"):
            raw = block.get("input", {})
            text = raw if isinstance(raw, str) else ("" if raw == {} else json.dumps(raw))
            yield from (delta("input_json_delta", partial_json=p) for p in _pieces(text, chunk) or [""])
        yield ev("content_block_stop", index=i)
    stop = {k: body[k] for k in ("stop_details", "container") if k in body}
    yield ev("message_delta", delta={"stop_reason": body.get("stop_reason"),
                                     "stop_sequence": body.get("stop_sequence"), **stop},
             usage={"output_tokens": output_tokens})
    yield ev("message_stop")


# Gemini ------------------------------------------------------------------------------------------

_EVERY_CHUNK = ("modelVersion", "responseId", "createTime")


def _gemini(body: Mapping[str, Any], chunk: int) -> Iterator[Event]:
    candidates = body.get("candidates") or []
    parts = (candidates[0].get("content") or {}).get("parts") if len(candidates) == 1 else None
    if not parts:
        yield None, dict(body)
        return
    candidate = candidates[0]
    content = {k: v for k, v in candidate["content"].items() if k != "parts"}
    index = {"index": candidate["index"]} if "index" in candidate else {}
    every = {k: body[k] for k in _EVERY_CHUNK if k in body}
    fragments: list[dict[str, Any]] = []
    for part in parts:
        if isinstance(part.get("text"), str) and part["text"]:
            pieces = _pieces(part["text"], chunk)
            rest = {k: v for k, v in part.items() if k not in ("text", "thoughtSignature")}
            signed = {"thoughtSignature": part["thoughtSignature"]} if "thoughtSignature" in part else {}
            fragments += [{"text": p, **rest, **(signed if n == len(pieces) - 1 else {})} for n, p in enumerate(pieces)]
        else:
            fragments.append(dict(part))  # a functionCall comes whole
    last = {k: v for k, v in candidate.items() if k not in ("content", "index")}
    closing = {k: v for k, v in body.items() if k != "candidates" and k not in _EVERY_CHUNK}
    for n, part in enumerate(fragments):
        final = n == len(fragments) - 1
        out = {"candidates": [{"content": {"parts": [part], **content}, **(last if final else {}), **index}]}
        yield None, {**out, **(closing if final else {}), **every}


_BUILDERS: dict[str, Callable[[Mapping[str, Any], int], Iterator[Event]]] = {
    "openai": _chat, "openai-responses": _responses, "anthropic": _anthropic, "gemini": _gemini}
