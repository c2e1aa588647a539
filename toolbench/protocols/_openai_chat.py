"""OpenAI Chat Completions: `tools`, `choices[0].message.tool_calls`, assistant and `tool` messages.

A call that comes without an id (`"id": ""`, as Gemini's OpenAI-compatible endpoint sends them)
gets `tb-openai-<12 hex>-<n>`: `n` is its place among the response's calls, and the hex names
the response (`id_seed`, which the runtime makes unique per round, else the response's `id`,
else its tool calls). The assistant turn keeps the message's text and each call's own extra
fields (such as that endpoint's `extra_content`), to send back as they came.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any, Final

from ..core.arguments import MISSING
from ._openai_strict import check_strict, strict_schema
from ._results import result_parts
from ._shared import (
    check_common,
    check_history,
    check_name,
    check_root,
    compact_json,
    decoded_call,
    get_dict,
    invalid_call,
    invalid_response,
    refusal,
    replay_object,
    resolve_choice,
    seed_digest,
    truncated,
)
from ._turns import assistant_turn, call_slot, check_turns, replay_order, without_none
from .types import (
    AssistantTurn,
    DecodedCall,
    DecodedResponse,
    Exchange,
    Problem,
    ProtocolName,
    RenderableTool,
    RenderOptions,
    Round,
)

PROTOCOL: Final[ProtocolName] = "openai"
NAME_PATTERN: Final = re.compile(r"[A-Za-z0-9_-]+")
NAME_CHARSET: Final = "A-Z a-z 0-9 _ -"
MAX_NAME_BYTES: Final = 64
MAX_TOOLS: Final = 128
DESCRIPTION_SOFT_LIMIT: Final = 1024
SYNTHETIC_ID_PREFIX: Final = "tb-openai-"
CALL_FIELDS: Final = frozenset({"id", "type", "function", "index"})  # rebuilt, or only for streaming


def render_list(tools: Sequence[RenderableTool], options: RenderOptions) -> list[dict[str, Any]]:
    return [render_tool(tool, options.strict) for tool in tools]


def render_tool(tool: RenderableTool, strict: bool) -> dict[str, Any]:
    schema = tool.descriptor.input_schema
    function: dict[str, Any] = {"name": tool.call_name}
    if tool.descriptor.description:
        function["description"] = tool.descriptor.description
    function["parameters"] = strict_schema(schema) if strict else schema
    if strict:
        function["strict"] = True
    return {"type": "function", "function": function}


def check_openai_tools(
    protocol: ProtocolName, tools: Sequence[RenderableTool], strict: bool, max_tools_fatal: bool
) -> list[Problem]:
    """Problems shared by both OpenAI protocols (same names, same schema rules)."""
    problems = check_common(protocol, (t.call_name for t in tools))
    if len(tools) > MAX_TOOLS:
        problems.append(
            Problem(
                protocol,
                "",
                "list.too_many_tools",
                f"{len(tools)} tools; OpenAI takes at most {MAX_TOOLS} per request",
                max_tools_fatal,
            )
        )
    for tool in tools:
        name, schema = tool.call_name, tool.descriptor.input_schema
        problems += check_name(protocol, name, NAME_PATTERN, MAX_NAME_BYTES, NAME_CHARSET)
        problems += check_root(protocol, name, schema)
        if len(tool.descriptor.description) > DESCRIPTION_SOFT_LIMIT:
            problems.append(
                Problem(
                    protocol,
                    name,
                    "description.length",
                    f"description has {len(tool.descriptor.description)} characters; some "
                    f"OpenAI endpoints and gateways cut or refuse past {DESCRIPTION_SOFT_LIMIT}",
                    False,
                )
            )
        if strict:
            problems += check_strict(protocol, name, schema)
    return problems


def check_tools(tools: Sequence[RenderableTool], options: RenderOptions) -> list[Problem]:
    return check_openai_tools(PROTOCOL, tools, options.strict, max_tools_fatal=True)


def decode(response: Any, id_seed: str | None = None) -> DecodedResponse:
    if not isinstance(response, dict):
        raise invalid_response("a Chat Completions response is a JSON object")
    choices = response.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise invalid_response("a Chat Completions response needs a non-empty `choices` list")
    choice = choices[0]
    message = get_dict(choice, "message", "choices[0]")
    finish = choice.get("finish_reason")
    if message.get("refusal") or finish == "content_filter":
        raise refusal(f"the model refused (finish_reason {finish!r}): {message.get('refusal') or ''}".rstrip(": "))
    if finish == "length":
        raise truncated("the output hit the token limit (finish_reason 'length'); tool calls may be cut")
    tool_calls = message.get("tool_calls") or []
    if not isinstance(tool_calls, list):
        raise invalid_call("`tool_calls` is not a list")
    calls: list[DecodedCall] = []
    items: list[dict[str, Any]] = []
    text = message.get("content")
    if isinstance(text, str) and text:
        items.append({"item": {"type": "text", "text": text}})
    seen: set[str] = set()
    digest: str | None = None
    for i, item in enumerate(tool_calls):
        if not isinstance(item, dict):
            raise invalid_call(f"tool call {i} is not an object")
        if item.get("type", "function") != "function":
            raise invalid_call(f"tool call {i} has type {item.get('type')!r}; only function tools are offered")
        function = item.get("function")
        if not isinstance(function, dict):
            raise invalid_call(f"tool call {i} has no `function` object")
        fallback = None
        if item.get("id") in (None, ""):  # absent, null or "": ours to name
            digest = digest or seed_digest(id_seed, response.get("id"), tool_calls)
            fallback = f"{SYNTHETIC_ID_PREFIX}{digest}-{i}"
        call = decoded_call(f"tool call {i}", function.get("name"), item.get("id"), "tool_call_id",
                            function.get("arguments", MISSING), seen, fallback_id=fallback)
        calls.append(call)
        items.append(call_slot(call.call_id, {k: v for k, v in without_none(item).items() if k not in CALL_FIELDS}))
    return DecodedResponse(tuple(calls), assistant_turn(PROTOCOL, items))


def encode_history(
    rounds: Sequence[Round], turns: Sequence[AssistantTurn | None] | None = None
) -> list[dict[str, Any]]:
    check_history(rounds)
    check_turns(rounds, turns)
    messages: list[dict[str, Any]] = []
    for at, exchanges in enumerate(rounds):
        if not exchanges:
            continue
        order = replay_order(PROTOCOL, exchanges, turns[at] if turns else None)
        text = "".join(str(part.get("text", "")) for ex, part in order if ex is None and part.get("type") == "text")
        messages.append(
            {
                "role": "assistant",
                "content": text or None,
                "tool_calls": [
                    {
                        "id": ex.call_id,
                        "type": "function",
                        "function": {"name": ex.call_name, "arguments": compact_json(replay_object(ex.arguments))},
                        **part,
                    }
                    for ex, part in order
                    if ex is not None
                ],
            }
        )
        messages += [encode_result(e) for e, _ in order if e is not None]
    return messages


def encode_result(ex: Exchange) -> dict[str, Any]:
    """The `tool` message of one call: text only (attachments are listed as left out)."""
    text, _, _ = result_parts(PROTOCOL, ex)
    return {"role": "tool", "tool_call_id": ex.call_id, "content": text}


def encode_tool_choice(choice: Any, call_names: Iterable[str]) -> dict[str, Any] | str | None:
    resolved = resolve_choice(choice, call_names)
    if resolved is None:
        return None
    kind, name = resolved
    if kind == "specific":
        return {"type": "function", "function": {"name": name}}
    return kind
