"""Anthropic Messages: `tools` with `input_schema`, `tool_use` and `tool_result` blocks.

The assistant turn of a tool-use round is kept whole (thinking, redacted_thinking, text and
server-tool blocks, in order, around the tool_use blocks): with extended thinking, the API
refuses a follow-up whose assistant turn lacks its thinking blocks, unchanged and in order.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Final

from ..core.arguments import MISSING
from ..core.errors import ToolbenchError
from ._anthropic_model import AnthropicModelSide
from ._anthropic_strict import check_strict, strict_schema
from ._base import BaseProvider, TurnPart
from ._media import ANTHROPIC_IMAGES
from ._recorded import history, split_error, text_of
from ._results import ANTHROPIC_TAKES, anthropic_block, result_parts
from ._shared import (
    check_common,
    check_name,
    check_root,
    decoded_call,
    invalid_call,
    invalid_response,
    pointer,
    rebuild,
    refusal,
    replay_object,
    truncated,
)
from ._stream_messages import AnthropicStream
from ._turns import assistant_turn, call_slot, kept_item, without_none
from .types import DecodedCall, DecodedResponse, Exchange, Problem, RecordedResult, RenderableTool, RenderOptions

PROTOCOL: Final = "anthropic"
NAME_PATTERN: Final = re.compile(r"[A-Za-z0-9_-]+")
NAME_CHARSET: Final = "A-Z a-z 0-9 _ -"
MAX_NAME_BYTES: Final = 128  # what the API enforces
DOCUMENTED_NAME_BYTES: Final = 64  # what the documentation promises
PROPERTY_KEY: Final = re.compile(r"[A-Za-z0-9_.-]{1,64}")
REMOVED: Final = frozenset({"$schema", "$id"})
TRUNCATED: Final = frozenset({"max_tokens", "model_context_window_exceeded"})
CALL_FIELDS: Final = ("type", "id", "name", "input")  # what encode rebuilds from the record, in its order


def sanitise(schema: Any) -> Any:
    """The upstream rule for Claude: only `$schema` and `$id` are removed, at every level."""
    return rebuild(schema, REMOVED)


def render_tool(tool: RenderableTool, options: RenderOptions) -> dict[str, Any]:
    out: dict[str, Any] = {"name": tool.call_name}
    if tool.descriptor.description:
        out["description"] = tool.descriptor.description
    schema = sanitise(tool.descriptor.input_schema)
    out["input_schema"] = strict_schema(schema) if options.strict else schema
    if options.strict:
        out["strict"] = True
    if tool.call_name in options.defer_loading:
        out["defer_loading"] = True  # loaded only when a tool search returns it
    return out


def _tool_problems(name: str, schema: Any, strict: bool) -> list[Problem]:
    problems = check_name(PROTOCOL, name, NAME_PATTERN, MAX_NAME_BYTES, NAME_CHARSET)
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
        return problems
    if strict:
        problems += check_strict(name, sanitise(schema))
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


def _refused(response: dict[str, Any]) -> ToolbenchError:
    """stop_reason refusal: the category and explanation of `stop_details`; without an
    explanation, the text the model wrote before it stopped is the explanation."""
    details = response.get("stop_details")
    details = details if isinstance(details, dict) else {}
    what = "the model refused (stop_reason 'refusal')"
    if isinstance(details.get("category"), str):
        what += f", category {details['category']}"
    why = details.get("explanation")
    if not (isinstance(why, str) and why.strip()):
        content = response.get("content")
        why = "\n".join(b["text"] for b in content if isinstance(b, dict) and b.get("type") == "text"
                        and isinstance(b.get("text"), str)) if isinstance(content, list) else None
    return refusal(what, why)


class AnthropicProvider(AnthropicModelSide, BaseProvider):
    """The Anthropic Messages API (`"anthropic"`)."""

    name = PROTOCOL
    image_limits = ANTHROPIC_IMAGES
    stream_assembly = AnthropicStream

    def render_list(self, tools: Sequence[RenderableTool], options: RenderOptions) -> list[dict[str, Any]]:
        return [render_tool(tool, options) for tool in tools]

    def check_tools(self, tools: Sequence[RenderableTool], options: RenderOptions) -> list[Problem]:
        problems = check_common(PROTOCOL, (t.call_name for t in tools))
        for tool in tools:
            problems += _tool_problems(tool.call_name, tool.descriptor.input_schema, options.strict)
        return problems

    def decode(self, response: Any, id_seed: str | None = None) -> DecodedResponse:
        if not isinstance(response, dict):
            raise invalid_response("a Messages response is a JSON object")
        stop = response.get("stop_reason")
        if stop == "refusal":
            raise _refused(response)
        if stop in TRUNCATED:
            content = response.get("content")
            has_calls = isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "tool_use"
                                                      for b in content)
            raise truncated(f"the output was cut (stop_reason {stop!r}); tool calls may be incomplete", calls=has_calls)
        content = response.get("content")
        if not isinstance(content, list):
            raise invalid_response("a Messages response needs a `content` list")
        calls: list[DecodedCall] = []
        items: list[dict[str, Any]] = []
        seen: set[str] = set()
        for i, block in enumerate(content):
            if not isinstance(block, dict):
                raise invalid_call(f"content block {i} is not an object")
            if block.get("type") != "tool_use":
                if not (block.get("type") == "text" and not block.get("text")):  # an empty text block is refused
                    items.append(kept_item(block))  # thinking, text and server-tool blocks: replayed as sent
                continue
            call = decoded_call(f"tool_use block {i}", block.get("name"), block.get("id"), "tool_use id",
                                block.get("input", MISSING), seen)
            calls.append(call)
            extra = {k: v for k, v in without_none(block).items() if k not in CALL_FIELDS}
            items.append(call_slot(call.call_id, extra, list(block), CALL_FIELDS))
        return DecodedResponse(tuple(calls), assistant_turn(self.name, items))

    def encode_call(self, exchange: Exchange, extra: dict[str, Any]) -> dict[str, Any]:
        return {"type": "tool_use", "id": exchange.call_id, "name": exchange.call_name,
                "input": replay_object(exchange.arguments), **extra}

    def round_messages(self, turn: Sequence[TurnPart], results: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{"role": "assistant", "content": [p.element for p in turn]}, {"role": "user", "content": results}]

    def encode_result(self, ex: Exchange) -> dict[str, Any]:
        """The `tool_result` block of one call: its text, then the image and document blocks of the
        attachments the API takes (`_results`)."""
        text, is_error, attached = result_parts(ex, ANTHROPIC_TAKES, text_as_utf8=True, limits=self.image_limits,
                                                api=self.name)
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": ex.call_id}
        if attached:
            block["content"] = [{"type": "text", "text": text}, *(anthropic_block(a) for a in attached)]
        elif text:  # an empty text block is refused; an absent content is an empty result
            block["content"] = text
        block["is_error"] = is_error
        return block

    def read_result(self, element: Any) -> RecordedResult:
        """A `tool_result` block read back (`decode_results`): its content a string or blocks
        (the text blocks' texts joined by newlines), `is_error` its flag or the error heading."""
        if not isinstance(element, dict) or element.get("type") != "tool_result":
            raise invalid_response("an Anthropic result is a `tool_result` block")
        content, is_error = split_error(text_of(element.get("content")), element.get("is_error") is True)
        call_id = element.get("tool_use_id")
        return RecordedResult(call_id if isinstance(call_id, str) and call_id else None, content, is_error)

    def read_results(self, request: Any) -> list[list[RecordedResult]]:
        """The `tool_result` blocks of a request's `messages`, one group per user message."""
        groups = []
        for message in history(request, "messages", "Messages"):
            blocks = message.get("content") if isinstance(message, dict) else None
            if isinstance(blocks, list):
                found = [self.read_result(b) for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
                if found:
                    groups.append(found)
        return groups

    def tool_choice(self, kind: str, name: str | None) -> dict[str, Any] | str:
        if kind == "specific":
            return {"type": "tool", "name": name}
        return {"type": "any" if kind == "required" else kind}


ANTHROPIC: Final = AnthropicProvider()
