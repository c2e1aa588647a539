"""The model side of the Messages shape (`ModelSide`): text blocks read back, the system prompt
as `system`, `max_tokens` (which the API requires) in a bare request, MCP sampling as text and
image blocks, a text answer kept with its blocks (thinking and all), and the answer bodies of
`ScriptedModel` and `LocalProvider`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from . import _bodies as bodies
from ._model_side import ModelSide, block_text, mappings, wire_object, with_tools
from ._reading import name_or_none, texts, usage_of
from .types import ModelReply

MAX_TOKENS: Final = 1024  # a bare request's; the SDK adapter sends the one it was given


class AnthropicModelSide(ModelSide):
    """The Messages API: the model-facing methods (see `ModelSide`)."""

    def read_reply(self, body: Mapping[str, Any]) -> ModelReply:
        return ModelReply(dict(body), texts(body.get("content"), "type", "text"), usage_of(body.get("usage")),
                          name_or_none(body.get("stop_reason")))

    def request_body(self, model: str, *, system: str | None, messages: Sequence[Mapping[str, Any]],
                     tools: Sequence[Mapping[str, Any]], tool_choice: Any) -> dict[str, Any]:
        body: dict[str, Any] = {"model": model, "max_tokens": MAX_TOKENS, "messages": list(messages)}
        if system:
            body["system"] = system
        return with_tools(body, tools, tool_choice)

    def sampling_message(self, role: str, blocks: Sequence[Any]) -> dict[str, Any]:
        return {"role": role, "content": [
            {"type": "image", "source": {"type": "base64", "media_type": b.get("mimeType", "image/png"),
                                         "data": b.get("data", "")}} if b.get("type") == "image" and role == "user"
            else {"type": "text", "text": block_text(b)}
            for b in mappings(blocks)]}

    def sampling_limits(self, body: dict[str, Any], *, max_tokens: int | None, temperature: float | None,
                        stop: Sequence[str] | None) -> dict[str, Any]:
        out = dict(body)
        if max_tokens is not None:
            out["max_tokens"] = max_tokens
        if temperature is not None:
            out["temperature"] = temperature
        if stop is not None:
            out["stop_sequences"] = list(stop)
        return out

    def answer_messages(self, body: Mapping[str, Any], text: str) -> list[dict[str, Any]]:
        content = body.get("content")
        if isinstance(content, list) and content:
            return [{"role": "assistant", "content": content}]
        return super().answer_messages(body, text)  # empty content is refused: nothing when no text

    def looks_like(self, pair: Mapping[str, Any]) -> bool:
        response, request = pair.get("response"), pair.get("request") or {}
        if isinstance(response, Mapping):
            return isinstance(response.get("content"), list) or response.get("type") == "message"
        messages = request.get("messages") if isinstance(request, Mapping) else None
        return isinstance(messages, list) and any(
            isinstance(m, Mapping) and isinstance(m.get("content"), list)
            and any(isinstance(b, Mapping) and b.get("type") == "tool_result" for b in m["content"])
            for m in messages)

    def text_body(self, text: str, *, n: int = 1, usage: tuple[int, int] | None = None,
                  model: str = "scripted") -> dict[str, Any]:
        return bodies.anthropic_text(text, n=n, usage=usage, model=model, style=bodies.SCRIPTED)

    def calls_body(self, calls: Sequence[Sequence[Any]], *, n: int = 1, text: str | None = None,
                   usage: tuple[int, int] | None = None, model: str = "scripted") -> dict[str, Any]:
        wired = [(c[0], wire_object(c[1]), *c[2:]) for c in calls]
        return bodies.anthropic_calls(wired, n=n, thinking=None, text=text, usage=usage, model=model,
                                      style=bodies.SCRIPTED)

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        return bodies.anthropic_error(status, message)
