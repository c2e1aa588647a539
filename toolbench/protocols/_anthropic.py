"""Anthropic Messages: `tools` with `input_schema`, `tool_use` and `tool_result` blocks."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any, Final

from ..core.arguments import MISSING
from ._shared import (
    check_common,
    check_history,
    check_name,
    check_root,
    decoded_call,
    invalid_call,
    invalid_response,
    pointer,
    rebuild,
    refusal,
    replay_object,
    resolve_choice,
    result_text,
    truncated,
)
from .types import DecodedCall, Problem, ProtocolName, RenderableTool, Round

PROTOCOL: Final[ProtocolName] = "anthropic"
NAME_PATTERN: Final = re.compile(r"[A-Za-z0-9_-]+")
NAME_CHARSET: Final = "A-Z a-z 0-9 _ -"
MAX_NAME_BYTES: Final = 128  # what the API enforces
DOCUMENTED_NAME_BYTES: Final = 64  # what the documentation promises
PROPERTY_KEY: Final = re.compile(r"[A-Za-z0-9_.-]{1,64}")
REMOVED: Final = frozenset({"$schema", "$id"})
TRUNCATED: Final = frozenset({"max_tokens", "model_context_window_exceeded"})


def sanitise(schema: Any) -> Any:
    """The upstream rule for Claude: only `$schema` and `$id` are removed, at every level."""
    return rebuild(schema, REMOVED)


def render_tool(tool: RenderableTool, strict: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"name": tool.call_name}
    if tool.descriptor.description:
        out["description"] = tool.descriptor.description
    out["input_schema"] = sanitise(tool.descriptor.input_schema)
    return out


def check_tools(tools: Sequence[RenderableTool], strict: bool) -> list[Problem]:
    problems = check_common(PROTOCOL, (t.call_name for t in tools))
    for tool in tools:
        name, schema = tool.call_name, tool.descriptor.input_schema
        problems += check_name(PROTOCOL, name, NAME_PATTERN, MAX_NAME_BYTES, NAME_CHARSET)
        size = len(name.encode("utf-8"))
        if DOCUMENTED_NAME_BYTES < size <= MAX_NAME_BYTES:
            problems.append(
                Problem(
                    PROTOCOL,
                    name,
                    "name.length",
                    f"call name is {size} bytes; the API takes up to {MAX_NAME_BYTES} "
                    f"but the documentation promises only {DOCUMENTED_NAME_BYTES}",
                    False,
                )
            )
        problems += check_root(PROTOCOL, name, schema)
        if not isinstance(schema, dict):
            continue
        for key in ("oneOf", "allOf", "anyOf"):
            if key in schema:
                problems.append(
                    Problem(
                        PROTOCOL,
                        name,
                        "schema.root_combinator",
                        f"input_schema does not support `{key}` at the top level",
                        True,
                        pointer("", key),
                    )
                )
        props = schema.get("properties")
        if isinstance(props, dict):
            for key in props:
                if not PROPERTY_KEY.fullmatch(key):
                    problems.append(
                        Problem(
                            PROTOCOL,
                            name,
                            "schema.property_name",
                            f"property key `{key}` must match ^[a-zA-Z0-9_.-]{{1,64}}$",
                            True,
                            pointer("", "properties", key),
                        )
                    )
    return problems


def decode(response: Any, id_seed: str | None = None) -> list[DecodedCall]:
    if not isinstance(response, dict):
        raise invalid_response("a Messages response is a JSON object")
    stop = response.get("stop_reason")
    if stop == "refusal":
        raise refusal("the model refused (stop_reason 'refusal')")
    if stop in TRUNCATED:
        raise truncated(f"the output was cut (stop_reason {stop!r}); tool calls may be incomplete")
    content = response.get("content")
    if not isinstance(content, list):
        raise invalid_response("a Messages response needs a `content` list")
    calls: list[DecodedCall] = []
    seen: set[str] = set()
    for i, block in enumerate(content):
        if not isinstance(block, dict):
            raise invalid_call(f"content block {i} is not an object")
        if block.get("type") != "tool_use":
            continue  # text, thinking and server tool blocks carry no call of ours
        calls.append(decoded_call(f"tool_use block {i}", block.get("name"), block.get("id"), "tool_use id",
                                  block.get("input", MISSING), seen))
    return calls


def encode_history(rounds: Sequence[Round]) -> list[dict[str, Any]]:
    check_history(rounds)
    messages: list[dict[str, Any]] = []
    for exchanges in rounds:
        if not exchanges:
            continue
        messages.append(
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": ex.call_id, "name": ex.call_name, "input": replay_object(ex.arguments)}
                    for ex in exchanges
                ],
            }
        )
        results = []
        for ex in exchanges:
            text, is_error = result_text(ex)
            block: dict[str, Any] = {"type": "tool_result", "tool_use_id": ex.call_id}
            if text:  # an empty text block is refused; an absent content is an empty result
                block["content"] = text
            block["is_error"] = is_error
            results.append(block)
        messages.append({"role": "user", "content": results})
    return messages


def encode_tool_choice(choice: Any, call_names: Iterable[str]) -> dict[str, Any] | str | None:
    resolved = resolve_choice(choice, call_names)
    if resolved is None:
        return None
    kind, name = resolved
    if kind == "specific":
        return {"type": "tool", "name": name}
    return {"type": "any" if kind == "required" else kind}
