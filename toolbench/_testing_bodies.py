"""Canned provider response bodies for `LocalProvider` (and any test of a provider's shape).

The shapes are the providers' own, field for field, as their API references document them and
as the recordings in tests/fixtures/protocols hold them: ids, `created`, `usage` blocks with
their detail objects, Anthropic `thinking` blocks with a `signature`, Responses `reasoning`
items with `encrypted_content`, Gemini `thoughtSignature` on a functionCall part.

A call is `(name, arguments)` or `(name, arguments, call_id)`; ids default to ones derived from
`n` (the answer's number) and the call's position, so a script is deterministic.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

CallSpec = Sequence[Any]

# Opaque blobs in the providers' formats (base64 text); a follow-up request must carry them back.
SIGNATURE = "EqQBCkgIBhABGAIiQL2nq0VvW6lWmJ8fB1yX3cB4v0dYkq9mX2oT3rU5sV7wX9yZ1aB3cD5eF7gH9iJ1kL3mN5oP7qR9sT1uV3w="
ENCRYPTED = "gAAAAABo8qG1x7Kp2mQ9vR3sT8uW1yZ4aB6cD0eF2gH5iJ7kL9mN1oP3qR5sT7uV9wX1yZ3aB5cD7eF9gH1iJ3kL5mN7oP9qR1=="
THOUGHT_SIGNATURE = "CqUCAdHtim8Zk3pQ0vX7lR2sT9uW1yZ4aB6cD0eF2gH5iJ7kL9mN1oP3qR5sT7uV9wX1yZ3aB5c="


def _id(call: CallSpec, default: str) -> str:
    return str(call[2]) if len(call) > 2 else default


def _args_text(arguments: Any) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments, separators=(",", ":"))


# OpenAI Chat Completions -----------------------------------------------------------------------

def _chat_usage(prompt: int, completion: int) -> dict[str, Any]:
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
            "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0, "accepted_prediction_tokens": 0,
                                          "rejected_prediction_tokens": 0}}


def _chat(message: dict[str, Any], finish: str, n: int, usage: dict[str, Any], model: str) -> dict[str, Any]:
    return {"id": f"chatcmpl-BmX9rT2vW4nQ{n:04d}", "object": "chat.completion", "created": 1760779953 + n,
            "model": model, "choices": [{"index": 0, "message": {"refusal": None, "annotations": [], **message},
                                         "logprobs": None, "finish_reason": finish}],
            "usage": usage, "service_tier": "default", "system_fingerprint": "fp_b3f1157249"}


def chat_calls(calls: Sequence[CallSpec], *, n: int = 1, content: str | None = None,
               usage: tuple[int, int] = (82, 43), model: str = "gpt-4.1-2025-04-14") -> dict[str, Any]:
    """A chat.completion whose message makes `calls` (parallel when several), finish tool_calls."""
    tool_calls = [{"id": _id(c, f"call_{n}{i}Xq7vR2sT9w"), "type": "function",
                   "function": {"name": c[0], "arguments": _args_text(c[1])}} for i, c in enumerate(calls, 1)]
    return _chat({"role": "assistant", "content": content, "tool_calls": tool_calls}, "tool_calls", n,
                 _chat_usage(*usage), model)


def chat_text(text: str, *, n: int = 2, usage: tuple[int, int] = (161, 12),
              model: str = "gpt-4.1-2025-04-14") -> dict[str, Any]:
    """A chat.completion answering `text`, finish stop."""
    return _chat({"role": "assistant", "content": text}, "stop", n, _chat_usage(*usage), model)


def chat_refusal(refusal: str = "I'm sorry, I can't help with that.", *, n: int = 1) -> dict[str, Any]:
    """A chat.completion whose message is a refusal (content null, `refusal` set)."""
    body = _chat({"role": "assistant", "content": None}, "stop", n, _chat_usage(40, 9), "gpt-4.1-2025-04-14")
    body["choices"][0]["message"]["refusal"] = refusal
    return body


# OpenAI Responses --------------------------------------------------------------------------------

def _response(output: list[dict[str, Any]], n: int, usage: tuple[int, int, int], model: str) -> dict[str, Any]:
    inp, out, reasoning = usage
    return {"id": f"resp_0b9c4e7a2f1d8c3e0068f2a1b4c5d6e7f8a9b0c1d2e3f{n:03d}", "object": "response",
            "created_at": 1760779953 + n, "status": "completed", "background": False, "error": None,
            "incomplete_details": None, "instructions": None, "max_output_tokens": None, "model": model,
            "output": output, "parallel_tool_calls": True, "previous_response_id": None,
            "reasoning": {"effort": "medium", "summary": "auto"}, "service_tier": "default", "store": False,
            "temperature": 1.0, "text": {"format": {"type": "text"}, "verbosity": "medium"}, "tool_choice": "auto",
            "tools": [], "top_p": 1.0, "truncation": "disabled",
            "usage": {"input_tokens": inp, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": out,
                      "output_tokens_details": {"reasoning_tokens": reasoning}, "total_tokens": inp + out},
            "user": None, "metadata": {}}


def responses_calls(calls: Sequence[CallSpec], *, n: int = 1, reasoning: str | None = "I'll call the tools.",
                    usage: tuple[int, int, int] = (913, 402, 320),
                    model: str = "gpt-5-mini-2025-08-07") -> dict[str, Any]:
    """A response whose output is a reasoning item (summary and `encrypted_content`, unless
    `reasoning=None`) and one function_call item per call."""
    output: list[dict[str, Any]] = []
    if reasoning is not None:
        output.append({"id": f"rs_0b9c4e7a2f1d8c3e0068f2a1b5e6f7a8{n:03d}", "type": "reasoning",
                       "encrypted_content": ENCRYPTED, "summary": [{"type": "summary_text", "text": reasoning}]})
    output += [{"id": f"fc_0b9c4e7a2f1d8c3e0068f2a1b6a7b8{n:03d}{i}", "type": "function_call", "status": "completed",
                "arguments": _args_text(c[1]), "call_id": _id(c, f"call_W4nX7qR2sT9v{n}{i}"), "name": c[0]}
               for i, c in enumerate(calls, 1)]
    return _response(output, n, usage, model)


def responses_text(text: str, *, n: int = 2, usage: tuple[int, int, int] = (1402, 38, 0),
                   model: str = "gpt-5-mini-2025-08-07") -> dict[str, Any]:
    """A response whose output is one assistant message of `text`."""
    message = {"id": f"msg_0b9c4e7a2f1d8c3e0068f2a1b7{n:03d}", "type": "message", "status": "completed",
               "role": "assistant", "content": [{"type": "output_text", "text": text, "annotations": [],
                                                 "logprobs": []}]}
    return _response([message], n, usage, model)


def responses_refusal(refusal: str = "I'm sorry, I can't help with that.", *, n: int = 1) -> dict[str, Any]:
    """A response whose assistant message holds a `refusal` content part."""
    message = {"id": f"msg_0b9c4e7a2f1d8c3e0068f2a1b7{n:03d}", "type": "message", "status": "completed",
               "role": "assistant", "content": [{"type": "refusal", "refusal": refusal}]}
    return _response([message], n, (40, 9, 0), "gpt-5-mini-2025-08-07")


# Anthropic Messages ------------------------------------------------------------------------------

def _message(content: list[dict[str, Any]], stop: str, n: int, usage: tuple[int, int], model: str) -> dict[str, Any]:
    return {"id": f"msg_01Hq3uJ4cT8nVp2Wx6Yk{n:04d}", "type": "message", "role": "assistant", "model": model,
            "content": content, "stop_reason": stop, "stop_sequence": None,
            "usage": {"input_tokens": usage[0], "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
                      "output_tokens": usage[1], "service_tier": "standard"}}


def anthropic_calls(calls: Sequence[CallSpec], *, n: int = 1, thinking: str | None = "I'll call the tools.",
                    text: str | None = None, usage: tuple[int, int] = (1462, 312),
                    model: str = "claude-sonnet-4-5-20250929") -> dict[str, Any]:
    """A message of a thinking block with its `signature` (unless `thinking=None`), an optional
    text block, and one tool_use block per call; stop_reason tool_use."""
    content: list[dict[str, Any]] = []
    if thinking is not None:
        content.append({"type": "thinking", "thinking": thinking, "signature": SIGNATURE})
    if text is not None:
        content.append({"type": "text", "text": text, "citations": None})
    content += [{"type": "tool_use", "id": _id(c, f"toolu_01K8pQm3ZxY7vW2t{n}{i}"), "name": c[0],
                 "input": c[1]} for i, c in enumerate(calls, 1)]
    return _message(content, "tool_use", n, usage, model)


def anthropic_text(text: str, *, n: int = 2, usage: tuple[int, int] = (1820, 25),
                   model: str = "claude-sonnet-4-5-20250929") -> dict[str, Any]:
    """A message of one text block; stop_reason end_turn."""
    return _message([{"type": "text", "text": text, "citations": None}], "end_turn", n, usage, model)


def anthropic_refusal(*, n: int = 1) -> dict[str, Any]:
    """A message the model stopped with stop_reason refusal (the streaming classifiers' stop)."""
    return _message([], "refusal", n, (120, 0), "claude-sonnet-4-5-20250929")


# Gemini generateContent --------------------------------------------------------------------------

def _candidate(parts: list[dict[str, Any]], finish: str, usage: tuple[int, int, int],
               model: str, n: int) -> dict[str, Any]:
    prompt, candidates, thoughts = usage
    meta: dict[str, Any] = {"promptTokenCount": prompt, "candidatesTokenCount": candidates,
                            "totalTokenCount": prompt + candidates + thoughts,
                            "promptTokensDetails": [{"modality": "TEXT", "tokenCount": prompt}]}
    if thoughts:
        meta["thoughtsTokenCount"] = thoughts
    return {"candidates": [{"content": {"parts": parts, "role": "model"}, "finishReason": finish, "index": 0}],
            "usageMetadata": meta, "modelVersion": model, "responseId": f"Hq3vaL2xNtvUz7IP1pO{n:04d}"}


def gemini_calls(calls: Sequence[CallSpec], *, n: int = 1, thought: str | None = "I should call the tools.",
                 usage: tuple[int, int, int] = (388, 44, 169), model: str = "gemini-2.5-flash") -> dict[str, Any]:
    """A candidate of a thought summary part (unless `thought=None`) and one functionCall part per
    call, the first carrying a `thoughtSignature` (as Gemini 2.5 sends them on parallel calls)."""
    parts: list[dict[str, Any]] = [{"text": thought, "thought": True}] if thought is not None else []
    for i, c in enumerate(calls):
        call = {"name": c[0], "args": c[1], **({"id": str(c[2])} if len(c) > 2 else {})}
        parts.append({"functionCall": call, **({"thoughtSignature": THOUGHT_SIGNATURE} if i == 0 else {})})
    return _candidate(parts, "STOP", usage, model, n)


def gemini_text(text: str, *, n: int = 2, usage: tuple[int, int, int] = (512, 18, 0),
                model: str = "gemini-2.5-flash") -> dict[str, Any]:
    """A candidate of one text part; finishReason STOP."""
    return _candidate([{"text": text}], "STOP", usage, model, n)


def gemini_safety(*, n: int = 1) -> dict[str, Any]:
    """A candidate blocked by the safety filters (finishReason SAFETY, no content parts)."""
    body = _candidate([], "SAFETY", (64, 0, 0), "gemini-2.5-flash", n)
    candidate = body["candidates"][0]
    del candidate["content"]
    candidate["safetyRatings"] = [{"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH",
                                   "blocked": True}]
    return body


# Errors ------------------------------------------------------------------------------------------

_OPENAI_TYPES = {400: "invalid_request_error", 401: "invalid_request_error", 429: "requests", 500: "server_error"}
_ANTHROPIC_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
                    404: "not_found_error", 429: "rate_limit_error", 500: "api_error", 529: "overloaded_error"}
_GEMINI_STATUS = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
                  429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}


def error_body(protocol: str, status: int, message: str) -> dict[str, Any]:
    """The error body `protocol`'s API answers with `status` ("openai" and "openai-responses",
    "anthropic", "gemini")."""
    if protocol == "anthropic":
        return {"type": "error", "error": {"type": _ANTHROPIC_TYPES.get(status, "api_error"), "message": message},
                "request_id": "req_011CSHoEeqs5C35K2UUqR7Fy"}
    if protocol == "gemini":
        return {"error": {"code": status, "message": message, "status": _GEMINI_STATUS.get(status, "UNKNOWN")}}
    code: Mapping[int, str] = {401: "invalid_api_key", 429: "rate_limit_exceeded"}
    return {"error": {"message": message, "type": _OPENAI_TYPES.get(status, "invalid_request_error"),
                      "param": None, "code": code.get(status)}}
