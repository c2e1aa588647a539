"""`ModelSide`: what a run, MCP sampling, sub-agents and the test seams ask of a provider, with
the defaults a provider of a new shape starts from.

`Provider`'s six methods render tools and decode and encode calls; these are the rest of a
provider's knowledge: reading a reply's text, usage and finish (`read_reply`), the user and
system messages of a conversation, a bare request body, a sampling request's messages and
limits, a text answer kept in a sub-agent's conversation, whether a recorded pair has this
API's shape (`looks_like`), and the answer bodies `ScriptedModel` and `LocalProvider` serve.
The built-in shapes override them all (`_openai_chat_model`, `_openai_responses_model`,
`_anthropic_model`, `_gemini_model`); `BaseProvider` inherits these defaults, and
`full_provider` lends them to a provider that has only the six methods (what such a provider
got before: an empty reading, its texts as plain user messages, no scripted bodies).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

from ..core.arguments import MISSING
from ..core.errors import ToolbenchError
from .types import ModelReply

# The methods `full_provider` fills in from these defaults when a provider lacks them.
MODEL_SIDE: Final = ("read_reply", "user_message", "system_messages", "request_body", "sampling_message",
                     "sampling_limits", "answer_messages", "looks_like", "text_body", "calls_body", "error_body")


def block_text(block: Any) -> str:
    """An MCP text block's text, or a note that a block of another kind was left out."""
    if isinstance(block, Mapping) and block.get("type") == "text":
        return str(block.get("text", ""))
    kind = block.get("type") if isinstance(block, Mapping) else None
    return f"[{kind or 'unknown'} content left out]"


def wire_text(arguments: Any) -> str:
    """A scripted call's arguments as the OpenAI APIs carry them: JSON text (raw text as given)."""
    return arguments if isinstance(arguments, str) else json.dumps({} if arguments is MISSING else arguments)


def wire_object(arguments: Any) -> Any:
    """A scripted call's arguments as Anthropic and Gemini carry them: an object (raw text that
    is one is parsed; other text is sent as is, a malformed body the runtime answers)."""
    if isinstance(arguments, str):
        try:
            return json.loads(arguments)
        except ValueError:
            return arguments
    return {} if arguments is MISSING else arguments


def mappings(blocks: Sequence[Any]) -> list[Mapping[str, Any]]:
    return [b for b in blocks if isinstance(b, Mapping)]


def with_tools(body: dict[str, Any], tools: Sequence[Mapping[str, Any]], tool_choice: Any,
               tools_key: str = "tools", choice_key: str = "tool_choice") -> dict[str, Any]:
    """`body` with the tools (none sent when there are none) and the choice (None: not sent)."""
    if tools:
        body[tools_key] = list(tools)
    if tool_choice is not None:
        body[choice_key] = tool_choice
    return body


class ModelSide:
    """The model-facing defaults (see the module docstring); every method is pure."""

    name: str

    def read_reply(self, body: Mapping[str, Any]) -> ModelReply:
        """A reply body's text, usage and finish reason; the default reads none of them."""
        return ModelReply(dict(body))

    def user_message(self, text: str) -> dict[str, Any]:
        """The user message (input item, content) holding `text`."""
        return {"role": "user", "content": text}

    def system_messages(self, system: str | None) -> list[dict[str, Any]]:
        """The messages that carry a system prompt in the conversation itself (Chat
        Completions' `system` message); `[]` where the request has a field for it."""
        return []

    def request_body(self, model: str, *, system: str | None, messages: Sequence[Mapping[str, Any]],
                     tools: Sequence[Mapping[str, Any]], tool_choice: Any) -> dict[str, Any]:
        """A bare request body (no options): the SDK adapters add theirs; `ScriptedModel`
        records it as it is."""
        body: dict[str, Any] = {"model": model, "messages": [*self.system_messages(system), *messages]}
        return with_tools(body, tools, tool_choice)

    def sampling_message(self, role: str, blocks: Sequence[Any]) -> dict[str, Any]:
        """One MCP sampling message (`role` "user" or "assistant", its content blocks) in this
        API's shape; the default is a user message of the texts."""
        text = "\n\n".join(block_text(b) for b in mappings(blocks))
        return self.user_message(f"(assistant) {text}" if role == "assistant" else text)

    def sampling_limits(self, body: dict[str, Any], *, max_tokens: int | None, temperature: float | None,
                        stop: Sequence[str] | None) -> dict[str, Any]:
        """`body` with a sampling request's limits under this API's names (the server's values
        win); the default leaves the body as it is."""
        return body

    def answer_messages(self, body: Mapping[str, Any], text: str) -> list[dict[str, Any]]:
        """A text answer (no calls) as the message(s) that keep it in the conversation."""
        return [{"role": "assistant", "content": text}] if text else []

    def looks_like(self, pair: Mapping[str, Any]) -> bool:
        """Whether a recorded `{"request": ..., "response": ...}` pair has this API's shape
        (`bench.replay` asks every provider, the built-in ones first)."""
        return False

    def text_body(self, text: str, *, n: int = 1, usage: tuple[int, int] | None = None,
                  model: str = "scripted") -> dict[str, Any]:
        """A bare answer body of `text` (number `n`; `usage` as input and output tokens)."""
        raise _no_bodies(self.name)

    def calls_body(self, calls: Sequence[Sequence[Any]], *, n: int = 1, text: str | None = None,
                   usage: tuple[int, int] | None = None, model: str = "scripted") -> dict[str, Any]:
        """A bare answer body making `calls`, each `(call_name, arguments[, call_id])`; arguments
        are a value (sent as this API carries them) or raw text, `MISSING` for `{}`."""
        raise _no_bodies(self.name)

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        """The error body this API answers with `status`."""
        return {"error": {"code": status, "message": message}}


def has_bodies(provider: Any) -> bool:
    """Whether `provider` makes its own answer bodies (not the default that refuses)."""
    method = getattr(provider, "text_body", None)
    return callable(method) and getattr(method, "__func__", None) is not ModelSide.text_body


def _no_bodies(name: str) -> ToolbenchError:
    return ToolbenchError("protocol.unsupported", f"provider {name!r} makes no answer bodies: give it text_body and "
                          "calls_body (the built-in shapes, and their subclasses, have them)")


class WithDefaults(ModelSide):
    """A provider with only `Provider`'s six methods, with the `ModelSide` defaults for the
    rest: the methods it has are its own (an instance attribute wins over the class's)."""

    def __init__(self, provider: Any) -> None:
        self.provider = provider
        self.name = provider.name
        for attr in MODEL_SIDE:
            method = getattr(provider, attr, None)
            if callable(method):
                setattr(self, attr, method)

    def __getattr__(self, attr: str) -> Any:  # the six, and anything else the provider has
        if attr == "provider":
            raise AttributeError(attr)
        return getattr(self.provider, attr)

    def __repr__(self) -> str:
        return f"WithDefaults({self.provider!r})"
