"""The public functions: one dispatch over the four provider modules."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from types import ModuleType
from typing import Any

from ..core.errors import ToolbenchError
from . import _anthropic, _gemini, _openai_chat, _openai_responses
from .types import PROTOCOLS, DecodedCall, Problem, RenderableTool, Round

_MODULES: dict[str, ModuleType] = {
    "openai": _openai_chat,
    "openai-responses": _openai_responses,
    "anthropic": _anthropic,
    "gemini": _gemini,
}


def _module(protocol: str) -> ModuleType:
    try:
        return _MODULES[protocol]
    except (KeyError, TypeError):
        raise ToolbenchError(
            "protocol.unknown", f"unknown protocol {protocol!r}; use one of {', '.join(PROTOCOLS)}"
        ) from None


def render(protocol: str, tools: Sequence[RenderableTool], *, strict: bool = False) -> list[dict[str, Any]]:
    """The `tools` list exactly as the provider's API takes it.

    OpenAI protocols pass the schema through (strict mode rewrites it when `strict=True`);
    Anthropic drops `$schema`/`$id`; Gemini returns `[{"functionDeclarations": [...]}]` with
    sanitised `parameters`, or `[]` when there are no tools. `strict` only affects the OpenAI
    protocols. Rendering never changes the tools; to keep it fast, the result shares the parts
    of each schema it leaves unchanged with the tool's own schema, so treat it as read-only (copy
    it before editing it)."""
    module = _module(protocol)
    if module is _gemini:
        return _gemini.render_list(tools, strict)
    render_tool = module.render_tool
    return [render_tool(tool, strict) for tool in tools]


def check(
    tools: Sequence[RenderableTool], *, strict: bool = False, protocols: Iterable[str] = PROTOCOLS
) -> list[Problem]:
    """Every name and schema problem of `tools`, per protocol, with the rule it breaks.

    Problems are found in the tools as given (what a provider would get if the schema were sent
    as is); `Problem.repaired` says whether `render()` fixes it. `strict=True` adds the OpenAI
    strict-mode rules."""
    problems: list[Problem] = []
    for protocol in protocols:
        problems += _module(protocol).check_tools(tools, strict)
    return problems


def decode_calls(protocol: str, response: Any, *, id_seed: str | None = None) -> list[DecodedCall]:
    """The tool calls of a provider's full response body, in order, with their raw arguments.

    Raises `ToolbenchError` with `model.invalid_tool_call` (a call without name or id, or not an
    object), `model.provider_refusal`, `model.output_truncated` or `model.invalid_response` (the
    body is not that provider's shape). Call names are not checked against the advertised
    tools: the runtime answers an unknown name with a recoverable result. `id_seed` only matters
    for Gemini responses without call ids (see `toolbench.protocols._gemini`)."""
    return _module(protocol).decode(response, id_seed)


def encode_history(protocol: str, rounds: Sequence[Round]) -> list[dict[str, Any]]:
    """The provider's messages for past rounds: each round's calls, then one result per call.

    Arguments are replayed as the object given (invalid ones should be passed as `{}`); errors
    read `## Tool error`, a blank line, then the text; a call whose result is `None` gets an
    error result saying the outcome is unknown and to check the state before repeating it."""
    return _module(protocol).encode_history(rounds)


def encode_tool_choice(protocol: str, choice: Any, call_names: Iterable[str]) -> dict[str, Any] | str | None:
    """The provider's tool choice for `"none"`, `"auto"`, `"required"` or `{"name": call_name}`.

    `None` means "send neither tools nor a tool choice" (none or auto with no tools). Gemini's
    value is the request's `toolConfig` object."""
    return _module(protocol).encode_tool_choice(choice, call_names)


__all__ = ["check", "decode_calls", "encode_history", "encode_tool_choice", "render"]
