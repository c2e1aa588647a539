"""A server's `sampling/createMessage` answered by a `toolbench.models` Model (an SDK adapter or
a ScriptedModel): one request in the model's own protocol, without tools, and its reply as the
`CreateMessageResult` (MCP spec, client/sampling).

The request's messages (`user`/`assistant`, each with a text, image or audio block, or a list
of them) become that provider's messages, `systemPrompt` its system prompt, and `maxTokens`,
`temperature` and `stopSequences` the provider's own fields (the server's values win over the
adapter's options for this one request; the Responses API has no stop sequences, so they are
left out there). Tool use and tool result blocks are not offered (no tools go out) and become
a short note. A provider of the user's own gets the texts as its user messages.

`mcp` sits beside `models` in the layers, so a model is recognised by its shape (`is_model`),
not by importing the protocol class (`speaks_protocol`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, TypeGuard, runtime_checkable

from ._requests import ReplyInvalid, SamplingRequest, _openai_content


@runtime_checkable
class SamplingModel(Protocol):
    """The part of `toolbench.models.Model` sampling uses."""

    @property
    def protocol(self) -> str: ...

    @property
    def model(self) -> str: ...

    def user_message(self, text: str) -> dict[str, Any]: ...

    def request(self, *, system: str | None, messages: Sequence[Mapping[str, Any]],
                tools: Sequence[Mapping[str, Any]], tool_choice: Any) -> dict[str, Any]: ...

    async def send(self, body: dict[str, Any]) -> dict[str, Any]: ...

    def read(self, body: Mapping[str, Any]) -> Any: ...


def speaks_protocol(value: Any) -> TypeGuard[SamplingModel]:
    """True for a toolbench Model (a protocol name, and request/send/read)."""
    return isinstance(value, SamplingModel) and isinstance(getattr(value, "protocol", None), str)


# The providers' finish reasons as MCP stop reasons; any other is passed on as is (the spec allows a string).
_STOP = {"stop": "endTurn", "length": "maxTokens", "completed": "endTurn", "incomplete": "maxTokens",
         "end_turn": "endTurn", "max_tokens": "maxTokens", "stop_sequence": "stopSequence",
         "STOP": "endTurn", "MAX_TOKENS": "maxTokens", "tool_calls": "toolUse", "tool_use": "toolUse"}


async def sample(model: SamplingModel, request: SamplingRequest) -> dict[str, Any]:
    """The `CreateMessageResult` (wire JSON) of one model request for `request`; the SDK's
    errors (`ModelError`) go out as they are, and a reply without text is `ReplyInvalid`."""
    messages = [_message(model, m) for m in request.params.get("messages") or [] if isinstance(m, Mapping)]
    body = model.request(system=request.system_prompt, messages=messages, tools=[], tool_choice=None)
    _limits(model.protocol, body, request)
    response = await model.send(body)
    reply = model.read(response)
    text = getattr(reply, "text", "")
    if not isinstance(text, str) or not text:
        raise ReplyInvalid("the model's answer has no text (toolbench does not offer sampling with tools)")
    finish = getattr(reply, "finish", None)
    name = response.get("model") or response.get("modelVersion")
    return {"role": "assistant", "content": {"type": "text", "text": text},
            "model": name if isinstance(name, str) and name else model.model,
            "stopReason": _STOP.get(finish, finish) if isinstance(finish, str) else "endTurn"}


def _blocks(content: Any) -> list[Mapping[str, Any]]:
    blocks = content if isinstance(content, list) else [content]
    return [b for b in blocks if isinstance(b, Mapping)]


def _text(block: Mapping[str, Any]) -> str:
    """A text block's text, or a note that a block of another kind was left out."""
    if block.get("type") == "text":
        return str(block.get("text", ""))
    return f"[{block.get('type') or 'unknown'} content left out]"


def _message(model: SamplingModel, message: Mapping[str, Any]) -> dict[str, Any]:
    """One MCP sampling message in the model's protocol."""
    role = "assistant" if message.get("role") == "assistant" else "user"
    blocks, protocol = _blocks(message.get("content")), model.protocol
    if protocol == "openai":
        return {"role": role, "content": _openai_content(message.get("content"))}
    if protocol == "openai-responses":
        kind = "output_text" if role == "assistant" else "input_text"
        parts: list[dict[str, Any]] = []
        for b in blocks:
            if b.get("type") == "image" and role == "user":
                parts.append({"type": "input_image", "image_url": _data_url(b)})
            else:
                parts.append({"type": kind, "text": _text(b)})
        return {"role": role, "content": parts}
    if protocol == "anthropic":
        return {"role": role, "content": [
            {"type": "image", "source": {"type": "base64", "media_type": b.get("mimeType", "image/png"),
                                         "data": b.get("data", "")}} if b.get("type") == "image" and role == "user"
            else {"type": "text", "text": _text(b)}
            for b in blocks]}
    if protocol == "gemini":
        return {"role": "model" if role == "assistant" else "user", "parts": [
            {"inlineData": {"mimeType": b.get("mimeType", ""), "data": b.get("data", "")}}
            if b.get("type") in ("image", "audio")
            else {"text": _text(b)} for b in blocks]}
    text = "\n\n".join(_text(b) for b in blocks)
    return model.user_message(f"(assistant) {text}" if role == "assistant" else text)


def _data_url(block: Mapping[str, Any]) -> str:
    return f"data:{block.get('mimeType', 'image/png')};base64,{block.get('data', '')}"


def _limits(protocol: str, body: dict[str, Any], request: SamplingRequest) -> None:
    """The request's maxTokens, temperature and stopSequences under the provider's names."""
    stops = request.params.get("stopSequences")
    stops = [str(s) for s in stops] if isinstance(stops, list) and stops else None
    names = {"openai": ("max_completion_tokens" if "max_completion_tokens" in body else "max_tokens", "stop"),
             "openai-responses": ("max_output_tokens", None), "anthropic": ("max_tokens", "stop_sequences"),
             "gemini": ("maxOutputTokens", "stopSequences")}.get(protocol)
    if names is None:
        return
    target = body.setdefault("generationConfig", {}) if protocol == "gemini" else body
    tokens, stop = names
    if request.max_tokens is not None:
        target[tokens] = request.max_tokens
    if request.temperature is not None:
        target["temperature"] = request.temperature
    if stops is not None and stop is not None:
        target[stop] = stops
    if protocol == "gemini" and not target:
        body.pop("generationConfig")
