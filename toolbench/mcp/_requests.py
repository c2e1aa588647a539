"""What a server sends the client during a call (progress, sampling and elicitation requests) as
toolbench values, and the handlers' answers back as wire results.

Pure functions over wire JSON (camelCase, as the server sent it): no SDK types reach a handler.

- `ProgressEvent`: one `notifications/progress` for a call.
- `SamplingRequest`: a `sampling/createMessage`, its messages also in the OpenAI Chat
  Completions form the agents' model contract takes (`model(messages, tools)`), so the same
  model object (a `toolbench.testing.ScriptedModel`, say) can answer it.
- `ElicitationRequest`: an `elicitation/create`, a form (`requested_schema`) or a URL.

Answers: `sampling_result(reply)` reads a text, an OpenAI Chat Completions response body or a
`CreateMessageResult` object; `None` declines. `elicitation_result(reply)` reads an object (the
form's content: accept), `"accept"`, `"decline"`, `"cancel"`, or `None` (cancel). Anything else
raises `ReplyInvalid`, which the server receives as a JSON-RPC error.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ..protocols._openai_chat_model import chat_content

DECLINED = -1  # the MCP spec's example code for "the user rejected the sampling request"


class ReplyInvalid(Exception):
    """A handler answered something that is not a valid answer to the request."""


@dataclass(frozen=True, slots=True)
class ProgressEvent:
    """One progress notification of a call. `tool` and `call_id` are None when unknown."""

    server: str
    tool: str | None
    call_id: str | None
    progress: float
    total: float | None
    message: str | None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"progress": self.progress}
        if self.total is not None:
            out["total"] = self.total
        if self.message is not None:
            out["message"] = self.message
        return out


@dataclass(frozen=True, slots=True)
class SamplingRequest:
    """A server's request for a model answer, made while `tool` ran (None: outside a call).

    `messages` are OpenAI Chat Completions messages, the system prompt first; `params` is the
    request as the server sent it (`maxTokens`, `modelPreferences`, `includeContext`, ...)."""

    server: str
    tool: str | None
    call_id: str | None
    messages: list[dict[str, Any]]
    system_prompt: str | None
    max_tokens: int | None
    temperature: float | None
    params: dict[str, Any] = field(repr=False)


@dataclass(frozen=True, slots=True)
class ElicitationRequest:
    """A server's request for input from the user: a form (`requested_schema`) or a URL to open."""

    server: str
    tool: str | None
    call_id: str | None
    mode: Literal["form", "url"]
    message: str
    requested_schema: dict[str, Any] | None
    url: str | None
    elicitation_id: str | None
    params: dict[str, Any] = field(repr=False)


def sampling_request(server: str, tool: str | None, call_id: str | None, params: dict[str, Any]) -> SamplingRequest:
    """The request's values, with its messages in the OpenAI Chat Completions form."""
    system = params.get("systemPrompt")
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}] if isinstance(system, str) else []
    for message in params.get("messages") or []:
        role = message.get("role") if isinstance(message, Mapping) else None
        content = message.get("content") if isinstance(message, Mapping) else None
        role = role if role in ("user", "assistant") else "user"
        messages.append({"role": role, "content": _openai_content(content)})
    max_tokens, temperature = params.get("maxTokens"), params.get("temperature")
    return SamplingRequest(
        server=server, tool=tool, call_id=call_id, messages=messages,
        system_prompt=system if isinstance(system, str) else None,
        max_tokens=max_tokens if isinstance(max_tokens, int) else None,
        temperature=float(temperature) if isinstance(temperature, int | float) else None,
        params=params,
    )


def _openai_content(content: Any) -> str | list[dict[str, Any]]:
    """A text, or content parts when a block is not text (images, audio): Chat Completions'."""
    return chat_content(content if isinstance(content, list) else [content])


def elicitation_request(
    server: str, tool: str | None, call_id: str | None, params: dict[str, Any]
) -> ElicitationRequest:
    mode: Literal["form", "url"] = "url" if params.get("mode") == "url" else "form"
    schema = params.get("requestedSchema")
    return ElicitationRequest(
        server=server, tool=tool, call_id=call_id, mode=mode, message=str(params.get("message", "")),
        requested_schema=schema if isinstance(schema, dict) else None,
        url=params.get("url") if isinstance(params.get("url"), str) else None,
        elicitation_id=params.get("elicitationId") if isinstance(params.get("elicitationId"), str) else None,
        params=params,
    )


_FINISH = {"stop": "endTurn", "length": "maxTokens", "content_filter": "endTurn"}


def sampling_result(reply: Any, model: str) -> dict[str, Any] | None:
    """A `CreateMessageResult` (wire JSON) for a handler's reply, or None when it declined.

    `model` names the model when the reply does not."""
    if reply is None:
        return None
    if isinstance(reply, str):
        return _text_result(reply, model, "endTurn")
    if isinstance(reply, Mapping) and isinstance(reply.get("choices"), list):  # a Chat Completions body
        choice = reply["choices"][0] if reply["choices"] else {}
        message = choice.get("message") if isinstance(choice, Mapping) else None
        if not isinstance(message, Mapping):
            raise ReplyInvalid("the Chat Completions answer has no message")
        if message.get("tool_calls"):
            raise ReplyInvalid("the model answered tool calls; toolbench does not offer sampling with tools")
        text = message.get("content")
        if not isinstance(text, str):
            raise ReplyInvalid("the Chat Completions answer has no text")
        name = reply.get("model")
        finish = choice.get("finish_reason") if isinstance(choice, Mapping) else None
        return _text_result(text, name if isinstance(name, str) else model, _FINISH.get(str(finish), "endTurn"))
    if isinstance(reply, Mapping) and "content" in reply and "role" in reply:
        return {"model": model, **dict(reply)}  # a CreateMessageResult as the handler built it
    if isinstance(reply, list | tuple):
        raise ReplyInvalid("the model answered tool calls; toolbench does not offer sampling with tools")
    raise ReplyInvalid(f"a sampling answer is a text or a CreateMessageResult object, not {type(reply).__name__}")


def _text_result(text: str, model: str, stop: str) -> dict[str, Any]:
    return {"role": "assistant", "content": {"type": "text", "text": text}, "model": model, "stopReason": stop}


def elicitation_result(reply: Any) -> dict[str, Any]:
    """An `ElicitResult` (wire JSON) for a handler's reply."""
    if reply is None:
        return {"action": "cancel"}
    if reply in ("accept", "decline", "cancel"):
        return {"action": reply}
    if isinstance(reply, Mapping):
        return {"action": "accept", "content": dict(reply)}
    raise ReplyInvalid(
        f"an elicitation answer is the form's content (an object), 'accept', 'decline', 'cancel' or None, "
        f"not {type(reply).__name__}"
    )
