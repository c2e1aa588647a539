"""The model side of the Responses shape (`ModelSide`): `output` message items read back, the
system prompt as `instructions`, MCP sampling as `input_text` / `output_text` items, a text
answer kept as its message and reasoning items, and the answer bodies of `ScriptedModel` and
`LocalProvider`. `ResponsesProvider` inherits it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from . import _bodies as bodies
from ._model_side import ModelSide, block_text, mappings, wire_text, with_tools
from ._openai_chat_model import openai_error
from ._reading import name_or_none, texts, usage_of
from .types import ModelReply


def _data_url(block: Mapping[str, Any]) -> str:
    return f"data:{block.get('mimeType', 'image/png')};base64,{block.get('data', '')}"


class ResponsesModelSide(ModelSide):
    """The Responses API: the model-facing methods (see `ModelSide`)."""

    def read_reply(self, body: Mapping[str, Any]) -> ModelReply:
        output = body.get("output")
        text = "".join(texts(item.get("content"), "type", "output_text") for item in output
                       if isinstance(item, dict) and item.get("type") == "message") if isinstance(output, list) else ""
        return ModelReply(dict(body), text, usage_of(body.get("usage")), name_or_none(body.get("status")))

    def request_body(self, model: str, *, system: str | None, messages: Sequence[Mapping[str, Any]],
                     tools: Sequence[Mapping[str, Any]], tool_choice: Any) -> dict[str, Any]:
        body: dict[str, Any] = {"model": model, "input": list(messages)}
        if system:
            body["instructions"] = system
        return with_tools(body, tools, tool_choice)

    def sampling_message(self, role: str, blocks: Sequence[Any]) -> dict[str, Any]:
        kind = "output_text" if role == "assistant" else "input_text"
        parts = [{"type": "input_image", "image_url": _data_url(b)} if b.get("type") == "image" and role == "user"
                 else {"type": kind, "text": block_text(b)} for b in mappings(blocks)]
        return {"role": role, "content": parts}

    def sampling_limits(self, body: dict[str, Any], *, max_tokens: int | None, temperature: float | None,
                        stop: Sequence[str] | None) -> dict[str, Any]:
        out = dict(body)  # the API has no stop sequences: they are left out
        if max_tokens is not None:
            out["max_output_tokens"] = max_tokens
        if temperature is not None:
            out["temperature"] = temperature
        return out

    def answer_messages(self, body: Mapping[str, Any], text: str) -> list[dict[str, Any]]:
        output = body.get("output")
        items = [dict(i) for i in output if isinstance(i, Mapping) and i.get("type") in ("message", "reasoning")] \
            if isinstance(output, list) else []
        return items or [{"role": "assistant", "content": text}]

    def looks_like(self, pair: Mapping[str, Any]) -> bool:
        response, request = pair.get("response"), pair.get("request") or {}
        if isinstance(response, Mapping):
            return isinstance(response.get("output"), list)
        return isinstance(request, Mapping) and "input" in request

    def text_body(self, text: str, *, n: int = 1, usage: tuple[int, int] | None = None,
                  model: str = "scripted") -> dict[str, Any]:
        return bodies.responses_text(text, n=n, usage=_usage(usage), model=model, style=bodies.SCRIPTED)

    def calls_body(self, calls: Sequence[Sequence[Any]], *, n: int = 1, text: str | None = None,
                   usage: tuple[int, int] | None = None, model: str = "scripted") -> dict[str, Any]:
        wired = [(c[0], wire_text(c[1]), *c[2:]) for c in calls]
        return bodies.responses_calls(wired, n=n, reasoning=None, text=text, usage=_usage(usage), model=model,
                                      style=bodies.SCRIPTED)

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        return openai_error(status, message)


def _usage(usage: tuple[int, int] | None) -> tuple[int, int, int] | None:
    return None if usage is None else (usage[0], usage[1], 0)
