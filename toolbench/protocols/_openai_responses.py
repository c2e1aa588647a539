"""OpenAI Responses: flat function tools, `function_call` and `function_call_output` items.

`ResponsesProvider` is the shape, with the name rules of `OpenAIRules`; `OPENAI_RESPONSES` is
OpenAI's own API (`"openai-responses"`, where too many tools is only a warning).

The output items of a round that are not calls (reasoning, with its `encrypted_content` when
the request had `store: false`; messages; built-in tool items) are kept and replayed before
that round's function_call items, in their order: reasoning models need their reasoning items
back with the calls that followed them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Final

from ..core.arguments import MISSING
from ._base import TurnPart
from ._media import RESPONSES_IMAGES, ImageLimits
from ._openai_responses_model import ResponsesModelSide
from ._openai_rules import OpenAIRules
from ._openai_strict import strict_schema
from ._recorded import history, runs, split_error, text_of
from ._results import RESPONSES_TAKES, responses_item, result_parts
from ._shared import (
    arguments_text,
    decoded_call,
    invalid_call,
    invalid_response,
    refusal,
    truncated,
)
from ._stream_openai import ResponsesStream
from ._turns import assistant_turn, call_slot, kept_item, without_none
from .types import DecodedCall, DecodedResponse, Exchange, RecordedResult, RenderableTool, RenderOptions, StreamAssembly

CALL_FIELDS: Final = ("type", "call_id", "name", "arguments")  # what encode rebuilds from the record, in its order


def render_tool(tool: RenderableTool, strict: bool) -> dict[str, Any]:
    # `strict` is always sent: the Responses API defaults it to true when it is absent.
    schema = tool.descriptor.input_schema
    out: dict[str, Any] = {"type": "function", "name": tool.call_name}
    if tool.descriptor.description:
        out["description"] = tool.descriptor.description
    out["parameters"] = strict_schema(schema) if strict else schema
    out["strict"] = strict
    return out


def _refused(items: Any) -> str | None:
    """The text of the first `refusal` content part among these output items; None if none refused."""
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict) and item.get("type") == "message":
            for part in item.get("content") or []:
                if isinstance(part, dict) and part.get("type") == "refusal":
                    return str(part.get("refusal") or "")
    return None


@dataclass(frozen=True)
class ResponsesProvider(ResponsesModelSide, OpenAIRules):
    """An OpenAI Responses API: `ResponsesProvider("local-responses", max_tools=None)`.

    Tool results take images and PDFs as `input_image` / `input_file` items; `image_limits` are
    OpenAI's unless given (`ImageLimits()`: none)."""

    image_limits: ImageLimits | None = RESPONSES_IMAGES
    stream_assembly: ClassVar[Callable[[], StreamAssembly]] = ResponsesStream

    def render_list(self, tools: Sequence[RenderableTool], options: RenderOptions) -> list[dict[str, Any]]:
        return [render_tool(tool, options.strict) for tool in tools]

    def decode(self, response: Any, id_seed: str | None = None) -> DecodedResponse:
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
                raise refusal("the response was stopped by the content filter", _refused(response.get("output")))
            output = response.get("output")
            has_calls = isinstance(output, list) and any(isinstance(i, dict) and i.get("type") == "function_call"
                                                     for i in output)
            raise truncated(f"the response is incomplete ({reason or 'no reason given'}); tool calls may be cut",
                            calls=has_calls)
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
            if kind == "message" and (why := _refused([item])) is not None:
                raise refusal("the model refused", why)
            if kind != "function_call":
                kept.append(kept_item(item))  # reasoning, messages, built-in tool items: replayed as sent
                continue
            call = decoded_call(f"function_call item {i}", item.get("name"), item.get("call_id"), "call_id",
                                item.get("arguments", MISSING), seen)
            calls.append(call)
            extra = {k: v for k, v in without_none(item).items() if k not in CALL_FIELDS}
            kept.append(call_slot(call.call_id, extra, list(item), CALL_FIELDS))
        return DecodedResponse(tuple(calls), assistant_turn(self.name, kept))

    def encode_call(self, exchange: Exchange, extra: dict[str, Any]) -> dict[str, Any]:
        return {"type": "function_call", "call_id": exchange.call_id, "name": exchange.call_name,
                "arguments": arguments_text(exchange), **extra}

    def round_messages(self, turn: Sequence[TurnPart], results: list[dict[str, Any]]) -> list[dict[str, Any]]:
        # Flat items: the turn's (kept items and calls, in order), then the outputs.
        return [*(p.element for p in turn), *results]

    def encode_result(self, exchange: Exchange) -> dict[str, Any]:
        """The `function_call_output` item of one call: its text, or, with attachments the API
        takes, a list of `input_text` then `input_image` / `input_file` items (`_results`)."""
        text, _, attached = result_parts(exchange, RESPONSES_TAKES, limits=self.image_limits, api=self.name)
        output: str | list[dict[str, Any]] = text
        if attached:
            output = [{"type": "input_text", "text": text}, *(responses_item(a) for a in attached)]
        return {"type": "function_call_output", "call_id": exchange.call_id, "output": output}

    def read_result(self, element: Any) -> RecordedResult:
        """A `function_call_output` item read back (`decode_results`): its output string, or
        the texts of its `input_text` items."""
        if not isinstance(element, dict) or element.get("type") != "function_call_output":
            raise invalid_response("a Responses result is a `function_call_output` item")
        content, is_error = split_error(text_of(element.get("output")))
        call_id = element.get("call_id")
        return RecordedResult(call_id if isinstance(call_id, str) and call_id else None, content, is_error)

    def read_results(self, request: Any) -> list[list[RecordedResult]]:
        """The `function_call_output` items of a request's `input`, one group per run of them."""
        items = history(request, "input", "Responses")
        outputs = runs(items, lambda i: isinstance(i, dict) and i.get("type") == "function_call_output")
        return [[self.read_result(i) for i in group] for group in outputs]

    def tool_choice(self, kind: str, name: str | None) -> dict[str, Any] | str:
        if kind == "specific":
            return {"type": "function", "name": name}
        return kind


OPENAI_RESPONSES: Final = ResponsesProvider("openai-responses", max_tools_fatal=False)
