"""OpenAI Chat Completions: `tools`, `choices[0].message.tool_calls`, assistant and `tool` messages.

`ChatCompletionsProvider` is the shape; `OPENAI` is OpenAI's own API (`"openai"`). Another
API of this shape (Mistral, a local server) is `ChatCompletionsProvider("<name>", ...)` with its
own name rules (`OpenAIRules`).

A call that comes without an id (`"id": ""`, as Gemini's OpenAI-compatible endpoint sends them)
gets `tb-openai-<12 hex>-<n>`: `n` is its place among the response's calls, and the hex names
the response (`id_seed`, which the runtime makes unique per round, else the response's `id`,
else its tool calls). The assistant turn keeps the message's own fields (DeepSeek's
`reasoning_content` beside the calls, which its API requires back) and each call's (such as that
endpoint's `extra_content`), to send back as they came, in their order (`_message_item`); a
call's arguments go back as the text the provider sent (`Exchange.arguments_text`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Final

from ..core.arguments import MISSING
from ._base import TurnPart
from ._openai_chat_model import ChatModelSide
from ._openai_rules import OpenAIRules
from ._openai_strict import strict_schema
from ._recorded import history, runs, split_error, text_of
from ._results import result_parts
from ._shared import (
    arguments_text,
    decoded_call,
    get_dict,
    invalid_call,
    invalid_response,
    refusal,
    seed_digest,
    truncated,
)
from ._stream_openai import ChatStream
from ._turns import assistant_turn, call_slot, without_none
from .types import DecodedCall, DecodedResponse, Exchange, RecordedResult, RenderableTool, RenderOptions, StreamAssembly

SYNTHETIC_ID_PREFIX: Final = "tb-openai-"
REBUILT: Final = ("id", "type", "function")  # what encode_call makes from the record, in its order
CALL_FIELDS: Final = frozenset({*REBUILT, "index"})  # rebuilt, or only for streaming
# What the message the API sent (the SDK's ChatCompletionMessage) has and the assistant message
# it takes back (ChatCompletionAssistantMessageParam) lacks: `annotations` (url citations) is
# output-only. `audio` is taken back as its `id` only (the param's `Audio`). Null fields are left
# out: the param takes them as absent, and they hold no state; `content` stays, null or not, as
# compatible servers expect it on every message.
OUTPUT_ONLY: Final = frozenset({"annotations"})


def _message_item(message: dict[str, Any]) -> list[dict[str, Any]]:
    """The turn's items for the message besides its calls. Every field goes back as it came
    (DeepSeek's `reasoning_content`, OpenRouter's `reasoning_details`, a list of content
    parts), in its order, less what `OUTPUT_ONLY` says: kept as one item, the message itself
    with `tool_calls` empty for the calls' slots to fill. A message that is only role, text and
    calls keeps its text alone (no turn at all when it has none), as before."""
    kept: dict[str, Any] = {}
    for key, value in message.items():
        if key == "tool_calls":
            kept[key] = []
        elif key == "content":
            kept[key] = value if isinstance(value, str | list) else None
        elif key == "audio" and isinstance(value, dict) and isinstance(value.get("id"), str):
            kept[key] = {"id": value["id"]}
        elif value is not None and key not in OUTPUT_ONLY and key != "audio":
            kept[key] = value
    if "role" not in kept:
        kept = {"role": "assistant", **kept}
    kept.setdefault("content", None)
    kept.setdefault("tool_calls", [])
    text = kept["content"]
    if list(kept.items()) == [("role", "assistant"), ("content", text), ("tool_calls", [])] \
            and (text is None or (isinstance(text, str) and text != "")):
        return [{"item": {"type": "text", "text": text}}] if text else []
    return [{"item": kept}]


def _filters(choice: dict[str, Any]) -> str:
    """`, filtered: <categories>` for an Azure choice's `content_filter_results` that filtered."""
    results = choice.get("content_filter_results")
    names = [k for k, v in results.items() if isinstance(v, dict) and v.get("filtered") is True] \
        if isinstance(results, dict) else []
    return f", filtered: {', '.join(names)}" if names else ""


def render_tool(tool: RenderableTool, strict: bool) -> dict[str, Any]:
    schema = tool.descriptor.input_schema
    function: dict[str, Any] = {"name": tool.call_name}
    if tool.descriptor.description:
        function["description"] = tool.descriptor.description
    function["parameters"] = strict_schema(schema) if strict else schema
    if strict:
        function["strict"] = True
    return {"type": "function", "function": function}


@dataclass(frozen=True)
class ChatCompletionsProvider(ChatModelSide, OpenAIRules):
    """An OpenAI Chat Completions API: `ChatCompletionsProvider("mistral", max_tools=None)`.

    Tool results are text only (the API's `tool` message takes no images); each result's text
    lists its attachments as left out."""

    # Each `tool` message answers the assistant message before it, and compatible servers
    # (some local ones number the calls of every answer from call_0) repeat ids across rounds.
    call_ids_unique = False
    stream_assembly: ClassVar[Callable[[], StreamAssembly]] = ChatStream

    def render_list(self, tools: Sequence[RenderableTool], options: RenderOptions) -> list[dict[str, Any]]:
        return [render_tool(tool, options.strict) for tool in tools]

    def decode(self, response: Any, id_seed: str | None = None) -> DecodedResponse:
        if not isinstance(response, dict):
            raise invalid_response("a Chat Completions response is a JSON object")
        choices = response.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise invalid_response("a Chat Completions response needs a non-empty `choices` list")
        choice = choices[0]
        finish = choice.get("finish_reason")
        said = choice["message"].get("refusal") if isinstance(choice.get("message"), dict) else None
        if said or finish == "content_filter":  # Azure's filter sends no message at all
            raise refusal(f"the model refused (finish_reason {finish!r}{_filters(choice)})", said)
        message = get_dict(choice, "message", "choices[0]")
        if finish == "length":
            raise truncated("the output hit the token limit (finish_reason 'length'); tool calls may be cut",
                            calls=bool(message.get("tool_calls")))
        tool_calls = message.get("tool_calls") or []
        if not isinstance(tool_calls, list):
            raise invalid_call("`tool_calls` is not a list")
        calls: list[DecodedCall] = []
        items: list[dict[str, Any]] = [*_message_item(message)]
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
            extra = {k: v for k, v in without_none(item).items() if k not in CALL_FIELDS}
            items.append(call_slot(call.call_id, extra, list(item), REBUILT))
        return DecodedResponse(tuple(calls), assistant_turn(self.name, items))

    def encode_call(self, exchange: Exchange, extra: dict[str, Any]) -> dict[str, Any]:
        return {"id": exchange.call_id, "type": "function",
                "function": {"name": exchange.call_name, "arguments": arguments_text(exchange)}, **extra}

    def round_messages(self, turn: Sequence[TurnPart], results: list[dict[str, Any]]) -> list[dict[str, Any]]:
        # The message kept whole (`_message_item`), its calls put back in its `tool_calls`; else
        # (a plain message, or a turn logged before messages were kept) its text and the calls.
        kept = [p.element for p in turn if p.call is None]
        calls = [p.element for p in turn if p.call is not None]
        message = next((item for item in kept if item.get("role") == "assistant"), None)
        if message is not None:
            return [{**message, "tool_calls": calls}, *results]
        text = "".join(str(item.get("text", "")) for item in kept if item.get("type") == "text")
        return [{"role": "assistant", "content": text or None, "tool_calls": calls}, *results]

    def encode_result(self, exchange: Exchange) -> dict[str, Any]:
        """The `tool` message of one call: text only (attachments are listed as left out)."""
        text, _, _ = result_parts(exchange)
        return {"role": "tool", "tool_call_id": exchange.call_id, "content": text}

    def read_result(self, element: Any) -> RecordedResult:
        """A `tool` message read back (`decode_results`): content a string or text parts."""
        if not isinstance(element, dict) or element.get("role") != "tool":
            raise invalid_response("a Chat Completions result is a `tool` message")
        content, is_error = split_error(text_of(element.get("content")))
        call_id = element.get("tool_call_id")
        return RecordedResult(call_id if isinstance(call_id, str) and call_id else None, content, is_error)

    def read_results(self, request: Any) -> list[list[RecordedResult]]:
        """The `tool` messages of a request's `messages`, one group per run of them."""
        messages = history(request, "messages", "Chat Completions")
        tool = runs(messages, lambda m: isinstance(m, dict) and m.get("role") == "tool")
        return [[self.read_result(m) for m in group] for group in tool]

    def tool_choice(self, kind: str, name: str | None) -> dict[str, Any] | str:
        if kind == "specific":
            return {"type": "function", "function": {"name": name}}
        return kind


OPENAI: Final = ChatCompletionsProvider("openai")
