"""The one builder of provider-shaped answer bodies: `LocalProvider`'s canned bodies and
`ScriptedModel`'s answers are both made here.

The shapes are the providers' own, field for field, as their API references and SDK types
document them and as the recordings in tests/fixtures/protocols hold them: ids, `created`,
`usage` blocks with their detail objects, Anthropic `thinking` blocks with a `signature`,
Responses `reasoning` items with `encrypted_content`, Gemini `thoughtSignature` on a
functionCall part. tests/protocols/test_bodies.py parses every body with the SDK's own types.

What differs between the two users is an option:
- `style`: `PROVIDER` (realistic ids, a clock, the whole documented envelope: service tier,
  fingerprints, annotations, logprobs, usage details) or `SCRIPTED` (short ids derived from the
  answer's number, `created` 0, only the fields the SDK types require);
- `usage`: the token counts, or None for no usage block (Anthropic always has one: its
  `Message.usage` is required, so None is zero tokens);
- the thinking state: `thinking=` (Anthropic), `reasoning=` (Responses), `thought=` and
  `signature=` (Gemini), each None for none.

A call is `(name, arguments)` or `(name, arguments, call_id)`; ids default to ones derived from
`n` (the answer's number) and the call's position, so a script is deterministic. Arguments that
are a str are sent as given (Chat and Responses carry arguments as text; Anthropic and Gemini as
an object, so a str there is a deliberately malformed body).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

CallSpec = Sequence[Any]

# Opaque blobs in the providers' formats (base64 text); a follow-up request must carry them back.
SIGNATURE = "EqQBCkgIBhABGAIiQL2nq0VvW6lWmJ8fB1yX3cB4v0dYkq9mX2oT3rU5sV7wX9yZ1aB3cD5eF7gH9iJ1kL3mN5oP7qR9sT1uV3w="
ENCRYPTED = "gAAAAABo8qG1x7Kp2mQ9vR3sT8uW1yZ4aB6cD0eF2gH5iJ7kL9mN1oP3qR5sT7uV9wX1yZ3aB5cD7eF9gH1iJ3kL5mN7oP9qR1=="
THOUGHT_SIGNATURE = "CqUCAdHtim8Zk3pQ0vX7lR2sT9uW1yZ4aB6cD0eF2gH5iJ7kL9mN1oP3qR5sT7uV9wX1yZ3aB5c="


@dataclass(frozen=True, slots=True)
class Ids:
    """Id templates (`str.format` with `n`, the answer's number, and `i`, the call's position
    from 1); a None template leaves the field out (Gemini's `responseId` is optional)."""

    chat: str
    chat_call: str
    response: str
    reasoning: str
    message: str
    function_call: str
    response_call: str
    anthropic: str
    tool_use: str
    gemini: str | None


@dataclass(frozen=True, slots=True)
class Style:
    """How a body is dressed: its ids, its clock (`created` is `epoch + n`, or 0 with no epoch)
    and whether it carries the documented optional fields (`envelope`)."""

    ids: Ids
    epoch: int | None
    envelope: bool


PROVIDER = Style(Ids(chat="chatcmpl-BmX9rT2vW4nQ{n:04d}", chat_call="call_{n}{i}Xq7vR2sT9w",
                     response="resp_0b9c4e7a2f1d8c3e0068f2a1b4c5d6e7f8a9b0c1d2e3f{n:03d}",
                     reasoning="rs_0b9c4e7a2f1d8c3e0068f2a1b5e6f7a8{n:03d}",
                     message="msg_0b9c4e7a2f1d8c3e0068f2a1b7{n:03d}",
                     function_call="fc_0b9c4e7a2f1d8c3e0068f2a1b6a7b8{n:03d}{i}",
                     response_call="call_W4nX7qR2sT9v{n}{i}", anthropic="msg_01Hq3uJ4cT8nVp2Wx6Yk{n:04d}",
                     tool_use="toolu_01K8pQm3ZxY7vW2t{n}{i}", gemini="Hq3vaL2xNtvUz7IP1pO{n:04d}"),
                 epoch=1760779953, envelope=True)
SCRIPTED = Style(Ids(chat="chatcmpl-scripted-{n}", chat_call="call_{n}_{i}", response="resp_scripted_{n}",
                     reasoning="rs_{n}", message="msg_{n}", function_call="fc_{n}_{i}", response_call="call_{n}_{i}",
                     anthropic="msg_scripted_{n}", tool_use="toolu_{n}_{i}", gemini=None),
                 epoch=None, envelope=False)


def _id(call: CallSpec, template: str, n: int, i: int) -> str:
    return str(call[2]) if len(call) > 2 else template.format(n=n, i=i)


def _created(style: Style, n: int) -> int:
    return 0 if style.epoch is None else style.epoch + n


def _args_text(arguments: Any) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments, separators=(",", ":"))


def _extra(style: Style, fields: Mapping[str, Any]) -> dict[str, Any]:
    """The optional documented fields, in a body dressed with its envelope only."""
    return dict(fields) if style.envelope else {}


# OpenAI Chat Completions -----------------------------------------------------------------------

def _chat_usage(usage: tuple[int, int], style: Style) -> dict[str, Any]:
    prompt, completion = usage
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
            **_extra(style, {"prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
                             "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0,
                                                           "accepted_prediction_tokens": 0,
                                                           "rejected_prediction_tokens": 0}})}


def _chat(message: dict[str, Any], finish: str, n: int, usage: tuple[int, int] | None, model: str,
          style: Style) -> dict[str, Any]:
    choice = {"index": 0, "message": {**_extra(style, {"refusal": None, "annotations": []}), **message},
              **_extra(style, {"logprobs": None}), "finish_reason": finish}
    return {"id": style.ids.chat.format(n=n), "object": "chat.completion", "created": _created(style, n),
            "model": model, "choices": [choice],
            **({"usage": _chat_usage(usage, style)} if usage is not None else {}),
            **_extra(style, {"service_tier": "default", "system_fingerprint": "fp_b3f1157249"})}


def chat_calls(calls: Sequence[CallSpec], *, n: int = 1, content: str | None = None,
               usage: tuple[int, int] | None = (82, 43), model: str = "gpt-4.1-2025-04-14",
               style: Style = PROVIDER) -> dict[str, Any]:
    """A chat.completion whose message makes `calls` (parallel when several), finish tool_calls."""
    tool_calls = [{"id": _id(c, style.ids.chat_call, n, i), "type": "function",
                   "function": {"name": c[0], "arguments": _args_text(c[1])}} for i, c in enumerate(calls, 1)]
    return _chat({"role": "assistant", "content": content, "tool_calls": tool_calls}, "tool_calls", n, usage,
                 model, style)


def chat_text(text: str, *, n: int = 2, usage: tuple[int, int] | None = (161, 12),
              model: str = "gpt-4.1-2025-04-14", style: Style = PROVIDER) -> dict[str, Any]:
    """A chat.completion answering `text`, finish stop."""
    return _chat({"role": "assistant", "content": text}, "stop", n, usage, model, style)


def chat_refusal(refusal: str = "I'm sorry, I can't help with that.", *, n: int = 1) -> dict[str, Any]:
    """A chat.completion whose message is a refusal (content null, `refusal` set)."""
    return _chat({"role": "assistant", "content": None, "refusal": refusal}, "stop", n, (40, 9),
                 "gpt-4.1-2025-04-14", PROVIDER)


# OpenAI Responses --------------------------------------------------------------------------------

def _response(output: list[dict[str, Any]], n: int, usage: tuple[int, int, int] | None, model: str,
              style: Style) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": style.ids.response.format(n=n), "object": "response", "created_at": _created(style, n),
        "status": "completed", "model": model, "output": output, "parallel_tool_calls": True,
        "tool_choice": "auto", "tools": [],
        **_extra(style, {"background": False, "error": None, "incomplete_details": None, "instructions": None,
                         "max_output_tokens": None, "previous_response_id": None,
                         "reasoning": {"effort": "medium", "summary": "auto"}, "service_tier": "default",
                         "store": False, "temperature": 1.0, "text": {"format": {"type": "text"},
                                                                      "verbosity": "medium"},
                         "top_p": 1.0, "truncation": "disabled", "user": None, "metadata": {}})}
    if usage is not None:
        inp, out, reasoning = usage  # the detail objects are required by the SDK's ResponseUsage
        body["usage"] = {"input_tokens": inp, "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
                         "output_tokens": out,
                         "output_tokens_details": {"reasoning_tokens": reasoning}, "total_tokens": inp + out}
    return body


def responses_calls(calls: Sequence[CallSpec], *, n: int = 1, reasoning: str | None = "I'll call the tools.",
                    text: str | None = None, usage: tuple[int, int, int] | None = (913, 402, 320),
                    model: str = "gpt-5-mini-2025-08-07", style: Style = PROVIDER) -> dict[str, Any]:
    """A response whose output is a reasoning item (summary and `encrypted_content`, unless
    `reasoning=None`), an assistant message of `text` (if given) and one function_call item per call."""
    output: list[dict[str, Any]] = []
    if reasoning is not None:
        output.append({"type": "reasoning", "id": style.ids.reasoning.format(n=n),
                       "summary": [{"type": "summary_text", "text": reasoning}], "encrypted_content": ENCRYPTED})
    if text is not None:
        output.append(_output_message({"type": "output_text", "text": text, "annotations": []}, n, style))
    output += [{"type": "function_call", "id": style.ids.function_call.format(n=n, i=i),
                "call_id": _id(c, style.ids.response_call, n, i), "name": c[0], "arguments": _args_text(c[1]),
                "status": "completed"} for i, c in enumerate(calls, 1)]
    return _response(output, n, usage, model, style)


def _output_message(part: dict[str, Any], n: int, style: Style) -> dict[str, Any]:
    return {"type": "message", "id": style.ids.message.format(n=n), "role": "assistant", "status": "completed",
            "content": [part]}


def responses_text(text: str, *, n: int = 2, usage: tuple[int, int, int] | None = (1402, 38, 0),
                   model: str = "gpt-5-mini-2025-08-07", style: Style = PROVIDER) -> dict[str, Any]:
    """A response whose output is one assistant message of `text`."""
    part = {"type": "output_text", "text": text, "annotations": [], **_extra(style, {"logprobs": []})}
    return _response([_output_message(part, n, style)], n, usage, model, style)


def responses_refusal(refusal: str = "I'm sorry, I can't help with that.", *, n: int = 1) -> dict[str, Any]:
    """A response whose assistant message holds a `refusal` content part."""
    message = _output_message({"type": "refusal", "refusal": refusal}, n, PROVIDER)
    return _response([message], n, (40, 9, 0), "gpt-5-mini-2025-08-07", PROVIDER)


# Anthropic Messages ------------------------------------------------------------------------------

def _message(content: list[dict[str, Any]], stop: str, n: int, usage: tuple[int, int] | None, model: str,
             style: Style) -> dict[str, Any]:
    inp, out = usage if usage is not None else (0, 0)  # Message.usage is required: no usage is zero tokens
    return {"id": style.ids.anthropic.format(n=n), "type": "message", "role": "assistant", "model": model,
            "content": content, "stop_reason": stop, **_extra(style, {"stop_sequence": None}),
            "usage": {"input_tokens": inp, **_extra(style, {"cache_creation_input_tokens": 0,
                                                           "cache_read_input_tokens": 0}),
                      "output_tokens": out, **_extra(style, {"service_tier": "standard"})}}


def _text_block(text: str, style: Style) -> dict[str, Any]:
    return {"type": "text", "text": text, **_extra(style, {"citations": None})}


def anthropic_calls(calls: Sequence[CallSpec], *, n: int = 1, thinking: str | None = "I'll call the tools.",
                    text: str | None = None, usage: tuple[int, int] | None = (1462, 312),
                    model: str = "claude-sonnet-4-5-20250929", style: Style = PROVIDER) -> dict[str, Any]:
    """A message of a thinking block with its `signature` (unless `thinking=None`), an optional
    text block, and one tool_use block per call; stop_reason tool_use."""
    content: list[dict[str, Any]] = []
    if thinking is not None:
        content.append({"type": "thinking", "thinking": thinking, "signature": SIGNATURE})
    if text is not None:
        content.append(_text_block(text, style))
    content += [{"type": "tool_use", "id": _id(c, style.ids.tool_use, n, i), "name": c[0], "input": c[1]}
                for i, c in enumerate(calls, 1)]
    return _message(content, "tool_use", n, usage, model, style)


def anthropic_text(text: str, *, n: int = 2, usage: tuple[int, int] | None = (1820, 25),
                   model: str = "claude-sonnet-4-5-20250929", style: Style = PROVIDER) -> dict[str, Any]:
    """A message of one text block; stop_reason end_turn."""
    return _message([_text_block(text, style)], "end_turn", n, usage, model, style)


def anthropic_refusal(*, n: int = 1) -> dict[str, Any]:
    """A message the model stopped with stop_reason refusal (the streaming classifiers' stop)."""
    return _message([], "refusal", n, (120, 0), "claude-sonnet-4-5-20250929", PROVIDER)


# Gemini generateContent --------------------------------------------------------------------------

def _candidate(parts: list[dict[str, Any]] | None, finish: str, usage: tuple[int, int, int] | None,
               model: str, n: int, style: Style) -> dict[str, Any]:
    candidate = {**({"content": {"role": "model", "parts": parts}} if parts is not None else {}),
                 "finishReason": finish, **_extra(style, {"index": 0})}
    body: dict[str, Any] = {"candidates": [candidate]}
    if usage is not None:
        prompt, candidates, thoughts = usage
        body["usageMetadata"] = {"promptTokenCount": prompt, "candidatesTokenCount": candidates,
                                 "totalTokenCount": prompt + candidates + thoughts,
                                 **_extra(style, {"promptTokensDetails": [{"modality": "TEXT",
                                                                           "tokenCount": prompt}]}),
                                 **({"thoughtsTokenCount": thoughts} if thoughts else {})}
    body["modelVersion"] = model
    if style.ids.gemini is not None:
        body["responseId"] = style.ids.gemini.format(n=n)
    return body


def gemini_calls(calls: Sequence[CallSpec], *, n: int = 1, thought: str | None = "I should call the tools.",
                 signature: str | None = THOUGHT_SIGNATURE, text: str | None = None,
                 usage: tuple[int, int, int] | None = (388, 44, 169),
                 model: str = "gemini-2.5-flash", style: Style = PROVIDER) -> dict[str, Any]:
    """A candidate of a thought summary part (unless `thought=None`), a text part (if `text`) and
    one functionCall part per call, the first carrying `signature` as its `thoughtSignature` (as
    Gemini 2.5 sends them on parallel calls; None: no signature)."""
    parts: list[dict[str, Any]] = [{"text": thought, "thought": True}] if thought is not None else []
    if text is not None:
        parts.append({"text": text})
    for i, c in enumerate(calls):
        call = {"name": c[0], "args": c[1], **({"id": str(c[2])} if len(c) > 2 else {})}
        signed = {"thoughtSignature": signature} if i == 0 and signature is not None else {}
        parts.append({"functionCall": call, **signed})
    return _candidate(parts, "STOP", usage, model, n, style)


def gemini_text(text: str, *, n: int = 2, usage: tuple[int, int, int] | None = (512, 18, 0),
                model: str = "gemini-2.5-flash", style: Style = PROVIDER) -> dict[str, Any]:
    """A candidate of one text part; finishReason STOP."""
    return _candidate([{"text": text}], "STOP", usage, model, n, style)


def gemini_safety(*, n: int = 1) -> dict[str, Any]:
    """A candidate blocked by the safety filters (finishReason SAFETY, no content parts)."""
    body = _candidate(None, "SAFETY", (64, 0, 0), "gemini-2.5-flash", n, PROVIDER)
    body["candidates"][0]["safetyRatings"] = [{"category": "HARM_CATEGORY_DANGEROUS_CONTENT",
                                               "probability": "HIGH", "blocked": True}]
    return body


# Errors ------------------------------------------------------------------------------------------

_OPENAI_TYPES = {400: "invalid_request_error", 401: "invalid_request_error", 429: "requests", 500: "server_error"}
_ANTHROPIC_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
                    404: "not_found_error", 429: "rate_limit_error", 500: "api_error", 529: "overloaded_error"}
_GEMINI_STATUS = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
                  429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}


def anthropic_error(status: int, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": _ANTHROPIC_TYPES.get(status, "api_error"), "message": message},
            "request_id": "req_011CSHoEeqs5C35K2UUqR7Fy"}


def gemini_error(status: int, message: str) -> dict[str, Any]:
    return {"error": {"code": status, "message": message, "status": _GEMINI_STATUS.get(status, "UNKNOWN")}}


def openai_error(status: int, message: str) -> dict[str, Any]:
    """Chat Completions' and Responses' error body."""
    code: Mapping[int, str] = {401: "invalid_api_key", 429: "rate_limit_exceeded"}
    return {"error": {"message": message, "type": _OPENAI_TYPES.get(status, "invalid_request_error"),
                      "param": None, "code": code.get(status)}}
