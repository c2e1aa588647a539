"""OpenAI Responses: flat function tools, `function_call` and `function_call_output` items.

The output items of a round that are not calls (reasoning, with its `encrypted_content` when
the request had `store: false`; messages; built-in tool items) are kept and replayed before
that round's function_call items, in their order: reasoning models need their reasoning items
back with the calls that followed them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Final

from ..core.arguments import MISSING
from ._openai_chat import check_openai_tools
from ._openai_strict import strict_schema
from ._results import responses_item, result_parts
from ._shared import (
    check_history,
    compact_json,
    decoded_call,
    invalid_call,
    invalid_response,
    refusal,
    replay_object,
    resolve_choice,
    truncated,
)
from ._turns import assistant_turn, call_slot, check_turns, kept_item, replay_order, without_none
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

PROTOCOL: Final[ProtocolName] = "openai-responses"
CALL_FIELDS: Final = frozenset({"type", "call_id", "name", "arguments"})  # what encode rebuilds from the record


def render_list(tools: Sequence[RenderableTool], options: RenderOptions) -> list[dict[str, Any]]:
    return [render_tool(tool, options.strict) for tool in tools]


def render_tool(tool: RenderableTool, strict: bool) -> dict[str, Any]:
    # `strict` is always sent: the Responses API defaults it to true when it is absent.
    schema = tool.descriptor.input_schema
    out: dict[str, Any] = {"type": "function", "name": tool.call_name}
    if tool.descriptor.description:
        out["description"] = tool.descriptor.description
    out["parameters"] = strict_schema(schema) if strict else schema
    out["strict"] = strict
    return out


def check_tools(tools: Sequence[RenderableTool], options: RenderOptions) -> list[Problem]:
    return check_openai_tools(PROTOCOL, tools, options.strict, max_tools_fatal=False)


def decode(response: Any, id_seed: str | None = None) -> DecodedResponse:
    if not isinstance(response, dict):
        raise invalid_response("a Responses response is a JSON object")
    status = response.get("status")
    if status == "failed":
        error = response.get("error") or {}
        message = error.get("message") if isinstance(error, dict) else None
        raise invalid_response(f"the response failed: {message or 'no error message'}")
    if status == "incomplete":
        details = response.get("incomplete_details") or {}
        reason = details.get("reason") if isinstance(details, dict) else None
        if reason == "content_filter":
            raise refusal("the response was stopped by the content filter")
        raise truncated(f"the response is incomplete ({reason or 'no reason given'}); tool calls may be cut")
    output = response.get("output")
    if not isinstance(output, list):
        raise invalid_response("a Responses response needs an `output` list")
    calls: list[DecodedCall] = []
    kept: list[dict[str, Any]] = []
    seen: set[str] = set()
    for i, item in enumerate(output):
        if not isinstance(item, dict):
            raise invalid_call(f"output item {i} is not an object")
        kind = item.get("type")
        if kind == "message":
            for part in item.get("content") or []:
                if isinstance(part, dict) and part.get("type") == "refusal":
                    raise refusal(f"the model refused: {part.get('refusal') or ''}".rstrip(": "))
        if kind != "function_call":
            kept.append(kept_item(item))  # reasoning, messages, built-in tool items: replayed as sent
            continue
        call = decoded_call(f"function_call item {i}", item.get("name"), item.get("call_id"), "call_id",
                            item.get("arguments", MISSING), seen)
        calls.append(call)
        kept.append(call_slot(call.call_id, {k: v for k, v in without_none(item).items() if k not in CALL_FIELDS}))
    return DecodedResponse(tuple(calls), assistant_turn(PROTOCOL, kept))


def encode_history(
    rounds: Sequence[Round], turns: Sequence[AssistantTurn | None] | None = None
) -> list[dict[str, Any]]:
    check_history(rounds)
    check_turns(rounds, turns)
    items: list[dict[str, Any]] = []
    for at, exchanges in enumerate(rounds):
        if not exchanges:
            continue
        order = replay_order(PROTOCOL, exchanges, turns[at] if turns else None)
        for ex, part in order:
            if ex is None:
                items.append(part)
                continue
            items.append(
                {
                    "type": "function_call",
                    "call_id": ex.call_id,
                    "name": ex.call_name,
                    "arguments": compact_json(replay_object(ex.arguments)),
                    **part,
                }
            )
        items += [encode_result(e) for e, _ in order if e is not None]
    return items


def encode_result(ex: Exchange) -> dict[str, Any]:
    """The `function_call_output` item of one call: its text, or, with attachments the API
    takes, a list of `input_text` then `input_image` / `input_file` items (`_results`)."""
    text, _, attached = result_parts(PROTOCOL, ex)
    output: str | list[dict[str, Any]] = text
    if attached:
        output = [{"type": "input_text", "text": text}, *(responses_item(a) for a in attached)]
    return {"type": "function_call_output", "call_id": ex.call_id, "output": output}


def encode_tool_choice(choice: Any, call_names: Iterable[str]) -> dict[str, Any] | str | None:
    resolved = resolve_choice(choice, call_names)
    if resolved is None:
        return None
    kind, name = resolved
    if kind == "specific":
        return {"type": "function", "name": name}
    return kind
