"""A server's `sampling/createMessage` answered by a `toolbench.models` Model (an SDK adapter or
a ScriptedModel): one request in the model's own protocol, without tools, and its reply as the
`CreateMessageResult` (MCP spec, client/sampling).

The request's messages (`user`/`assistant`, each with a text, image or audio block, or a list
of them) become that provider's messages, `systemPrompt` its system prompt, and `maxTokens`,
`temperature` and `stopSequences` the provider's own fields (the server's values win over the
adapter's options for this one request; the Responses API has no stop sequences, so they are
left out there). Tool use and tool result blocks are not offered (no tools go out) and become
a short note. The mapping is the provider's (`sampling_message`, `sampling_limits`), so a
registered provider of a built-in shape maps as that shape does; a provider of a new shape
gets the texts as its user messages, and no limits.

`mcp` sits beside `models` in the layers, so a model is recognised by its shape (`is_model`),
not by importing the protocol class (`speaks_protocol`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, TypeGuard, runtime_checkable

from ..protocols import full_provider
from ._requests import ReplyInvalid, SamplingRequest


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
    provider = full_provider(model.protocol)
    messages = [provider.sampling_message("assistant" if m.get("role") == "assistant" else "user", _blocks(m))
                for m in request.params.get("messages") or [] if isinstance(m, Mapping)]
    body = model.request(system=request.system_prompt, messages=messages, tools=[], tool_choice=None)
    stops = request.params.get("stopSequences")
    body = provider.sampling_limits(body, max_tokens=request.max_tokens, temperature=request.temperature,
                                    stop=[str(s) for s in stops] if isinstance(stops, list) and stops else None)
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


def _blocks(message: Mapping[str, Any]) -> list[Any]:
    """A sampling message's content as a list of blocks (one block, or a list of them)."""
    content = message.get("content")
    return list(content) if isinstance(content, list) else [content]
