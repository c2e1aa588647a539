"""The model side of the generateContent shape (`ModelSide`): the candidate's text parts read
back (thought parts left out), `parts` messages and the `model` role, the system prompt as
`systemInstruction`, sampling limits in `generationConfig`, and the answer bodies of
`ScriptedModel` and `LocalProvider`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from . import _bodies as bodies
from ._model_side import ModelSide, block_text, mappings, wire_object, with_tools
from ._reading import first, name_or_none, usage_of
from .types import ModelReply


class GeminiModelSide(ModelSide):
    """generateContent: the model-facing methods (see `ModelSide`)."""

    def read_reply(self, body: Mapping[str, Any]) -> ModelReply:
        parts = first(dict(body), "candidates", 0, "content", "parts")
        text = "".join(str(p.get("text") or "") for p in parts
                       if isinstance(p, dict) and not p.get("thought")) if isinstance(parts, list) else ""
        return ModelReply(dict(body), text, usage_of(body.get("usageMetadata")),
                          name_or_none(first(dict(body), "candidates", 0, "finishReason")))

    def user_message(self, text: str) -> dict[str, Any]:
        return {"role": "user", "parts": [{"text": text}]}

    def request_body(self, model: str, *, system: str | None, messages: Sequence[Mapping[str, Any]],
                     tools: Sequence[Mapping[str, Any]], tool_choice: Any) -> dict[str, Any]:
        """The REST body (the model goes in the URL, not the body); `generationConfig` is always
        there, empty or not, as the SDK sends it."""
        body: dict[str, Any] = {"contents": list(messages)}
        if system:
            body["systemInstruction"] = {"parts": [{"text": system}]}
        with_tools(body, tools, tool_choice, choice_key="toolConfig")
        body["generationConfig"] = {}
        return body

    def sampling_message(self, role: str, blocks: Sequence[Any]) -> dict[str, Any]:
        return {"role": "model" if role == "assistant" else "user", "parts": [
            {"inlineData": {"mimeType": b.get("mimeType", ""), "data": b.get("data", "")}}
            if b.get("type") in ("image", "audio") else {"text": block_text(b)} for b in mappings(blocks)]}

    def sampling_limits(self, body: dict[str, Any], *, max_tokens: int | None, temperature: float | None,
                        stop: Sequence[str] | None) -> dict[str, Any]:
        config = dict(body.get("generationConfig") or {})
        if max_tokens is not None:
            config["maxOutputTokens"] = max_tokens
        if temperature is not None:
            config["temperature"] = temperature
        if stop is not None:
            config["stopSequences"] = list(stop)
        out = dict(body)
        if config:
            out["generationConfig"] = config
        else:
            out.pop("generationConfig", None)
        return out

    def answer_messages(self, body: Mapping[str, Any], text: str) -> list[dict[str, Any]]:
        candidates = body.get("candidates")
        top = candidates[0] if isinstance(candidates, list) and candidates else None
        if isinstance(top, Mapping) and isinstance(content := top.get("content"), Mapping) and content.get("parts"):
            return [{"role": "model", **dict(content)}]
        return [{"role": "model", "parts": [{"text": text}]}] if text else []

    def looks_like(self, pair: Mapping[str, Any]) -> bool:
        response, request = pair.get("response"), pair.get("request") or {}
        if isinstance(response, Mapping):
            return "candidates" in response
        return isinstance(request, Mapping) and "contents" in request

    def text_body(self, text: str, *, n: int = 1, usage: tuple[int, int] | None = None,
                  model: str = "scripted") -> dict[str, Any]:
        return bodies.gemini_text(text, n=n, usage=_usage(usage), model=model, style=bodies.SCRIPTED)

    def calls_body(self, calls: Sequence[Sequence[Any]], *, n: int = 1, text: str | None = None,
                   usage: tuple[int, int] | None = None, model: str = "scripted") -> dict[str, Any]:
        wired = [(c[0], wire_object(c[1]), *c[2:]) for c in calls]
        return bodies.gemini_calls(wired, n=n, thought=None, signature=None, text=text, usage=_usage(usage),
                                   model=model, style=bodies.SCRIPTED)

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        return bodies.gemini_error(status, message)


def _usage(usage: tuple[int, int] | None) -> tuple[int, int, int] | None:
    return None if usage is None else (usage[0], usage[1], 0)
