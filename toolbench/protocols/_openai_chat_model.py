"""The model side of the Chat Completions shape (`ModelSide`): `choices[0].message` read back,
the `system` message at the head of `messages`, MCP sampling as content parts, and the answer
bodies of `ScriptedModel` and `LocalProvider`. `ChatCompletionsProvider` inherits it, so an API
of this shape registered under its own name (Mistral, a local server) reads and answers as
OpenAI's does."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from . import _bodies as bodies
from ._model_side import ModelSide, wire_text, with_tools
from ._reading import first, name_or_none, texts, usage_of
from .types import ModelReply


def chat_content(blocks: Sequence[Any]) -> str | list[dict[str, Any]]:
    """MCP content blocks as a Chat Completions message's content: a text, or content parts
    when a block is not text (images as data URLs, audio as `input_audio`)."""
    parts: list[dict[str, Any]] = []
    for block in blocks:
        b: Mapping[str, Any] = block if isinstance(block, Mapping) else {}
        kind = b.get("type")
        if kind == "text":
            parts.append({"type": "text", "text": str(b.get("text", ""))})
        elif kind == "image":
            url = f"data:{b.get('mimeType', 'image/png')};base64,{b.get('data', '')}"
            parts.append({"type": "image_url", "image_url": {"url": url}})
        elif kind == "audio":
            subtype = str(b.get("mimeType", "audio/wav")).rpartition("/")[2]
            parts.append({"type": "input_audio", "input_audio": {"data": b.get("data", ""), "format": subtype}})
        else:  # tool use / tool results: toolbench does not offer sampling with tools
            parts.append({"type": "text", "text": f"[{kind or 'unknown'} content left out]"})
    if all(p["type"] == "text" for p in parts):
        return "\n\n".join(p["text"] for p in parts)
    return parts


def openai_error(status: int, message: str) -> dict[str, Any]:
    """The error body OpenAI's two APIs answer with `status`."""
    return bodies.openai_error(status, message)


class ChatModelSide(ModelSide):
    """Chat Completions: the model-facing methods (see `ModelSide`)."""

    def read_reply(self, body: Mapping[str, Any]) -> ModelReply:
        message = first(dict(body), "choices", 0, "message")
        content = first(message, "content")
        return ModelReply(dict(body), content if isinstance(content, str) else texts(content, "type", "text"),
                          usage_of(body.get("usage")), name_or_none(first(dict(body), "choices", 0, "finish_reason")))

    def system_messages(self, system: str | None) -> list[dict[str, Any]]:
        return [{"role": "system", "content": system}] if system else []

    def request_body(self, model: str, *, system: str | None, messages: Sequence[Mapping[str, Any]],
                     tools: Sequence[Mapping[str, Any]], tool_choice: Any) -> dict[str, Any]:
        body: dict[str, Any] = {"model": model, "messages": [*self.system_messages(system), *messages]}
        return with_tools(body, tools, tool_choice)

    def sampling_message(self, role: str, blocks: Sequence[Any]) -> dict[str, Any]:
        return {"role": role, "content": chat_content(blocks)}

    def sampling_limits(self, body: dict[str, Any], *, max_tokens: int | None, temperature: float | None,
                        stop: Sequence[str] | None) -> dict[str, Any]:
        out = dict(body)
        if max_tokens is not None:  # the newer field when the adapter's options use it
            out["max_completion_tokens" if "max_completion_tokens" in body else "max_tokens"] = max_tokens
        if temperature is not None:
            out["temperature"] = temperature
        if stop is not None:
            out["stop"] = list(stop)
        return out

    def answer_messages(self, body: Mapping[str, Any], text: str) -> list[dict[str, Any]]:
        return [{"role": "assistant", "content": text}]  # an empty answer is kept too: the API takes it

    def looks_like(self, pair: Mapping[str, Any]) -> bool:
        response, request = pair.get("response"), pair.get("request") or {}
        if isinstance(response, Mapping):
            return "choices" in response
        messages = request.get("messages") if isinstance(request, Mapping) else None
        return isinstance(messages, list) and any(isinstance(m, Mapping) and m.get("role") == "tool"
                                                  for m in messages)

    def text_body(self, text: str, *, n: int = 1, usage: tuple[int, int] | None = None,
                  model: str = "scripted") -> dict[str, Any]:
        return bodies.chat_text(text, n=n, usage=usage, model=model, style=bodies.SCRIPTED)

    def calls_body(self, calls: Sequence[Sequence[Any]], *, n: int = 1, text: str | None = None,
                   usage: tuple[int, int] | None = None, model: str = "scripted") -> dict[str, Any]:
        wired = [(c[0], wire_text(c[1]), *c[2:]) for c in calls]
        return bodies.chat_calls(wired, n=n, content=text, usage=usage, model=model, style=bodies.SCRIPTED)

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        return openai_error(status, message)
