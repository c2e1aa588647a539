"""OpenAI Responses: flat function tools, `function_call` and `function_call_output` items."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Final

from ..core.arguments import MISSING
from ._openai_chat import check_openai_tools
from ._openai_strict import strict_schema
from ._shared import (
    check_history,
    compact_json,
    decoded_call,
    invalid_call,
    invalid_response,
    refusal,
    replay_object,
    resolve_choice,
    result_text,
    truncated,
)
from .types import DecodedCall, Problem, ProtocolName, RenderableTool, Round

PROTOCOL: Final[ProtocolName] = "openai-responses"


def render_tool(tool: RenderableTool, strict: bool) -> dict[str, Any]:
    # `strict` is always sent: the Responses API defaults it to true when it is absent.
    schema = tool.descriptor.input_schema
    out: dict[str, Any] = {"type": "function", "name": tool.call_name}
    if tool.descriptor.description:
        out["description"] = tool.descriptor.description
    out["parameters"] = strict_schema(schema) if strict else schema
    out["strict"] = strict
    return out


def check_tools(tools: Sequence[RenderableTool], strict: bool) -> list[Problem]:
    return check_openai_tools(PROTOCOL, tools, strict, max_tools_fatal=False)


def decode(response: Any, id_seed: str | None = None) -> list[DecodedCall]:
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
    seen: set[str] = set()
    for i, item in enumerate(output):
        if not isinstance(item, dict):
            raise invalid_call(f"output item {i} is not an object")
        kind = item.get("type")
        if kind == "message":
            for part in item.get("content") or []:
                if isinstance(part, dict) and part.get("type") == "refusal":
                    raise refusal(f"the model refused: {part.get('refusal') or ''}".rstrip(": "))
            continue
        if kind != "function_call":
            continue  # reasoning, text and built-in tool items carry no call of ours
        calls.append(decoded_call(f"function_call item {i}", item.get("name"), item.get("call_id"), "call_id",
                                  item.get("arguments", MISSING), seen))
    return calls


def encode_history(rounds: Sequence[Round]) -> list[dict[str, Any]]:
    check_history(rounds)
    items: list[dict[str, Any]] = []
    for exchanges in rounds:
        for ex in exchanges:
            items.append(
                {
                    "type": "function_call",
                    "call_id": ex.call_id,
                    "name": ex.call_name,
                    "arguments": compact_json(replay_object(ex.arguments)),
                }
            )
        for ex in exchanges:
            text, _ = result_text(ex)
            items.append({"type": "function_call_output", "call_id": ex.call_id, "output": text})
    return items


def encode_tool_choice(choice: Any, call_names: Iterable[str]) -> dict[str, Any] | str | None:
    resolved = resolve_choice(choice, call_names)
    if resolved is None:
        return None
    kind, name = resolved
    if kind == "specific":
        return {"type": "function", "name": name}
    return kind
