"""Gemini generateContent: `functionDeclarations`, `functionCall` and `functionResponse` parts.

Schemas go in `parametersJsonSchema` (JSON Schema, `_gemini_json`) unless `schema="openapi"`
asks for the OpenAPI subset in `parameters` (`_gemini_schema`), for models without the former.

Call ids: Gemini may send `functionCall.id`; when it does, that id is used and replayed in the
matching `functionCall` and `functionResponse`. When it does not, decode synthesises
`tb-gemini-<12 hex>-<n>`: `n` counts the calls of the response, and the hex is the start of the
SHA-256 of a seed: `id_seed` if given (the runtime passes one unique per round), else the
response's `responseId`, else the candidate's parts as canonical JSON. A synthesised id is never
sent back to Gemini, which pairs calls and responses by order and name.

The model turn is kept part by part (thought and text parts, each `thoughtSignature` where it
came), and replayed as it came: Gemini checks the signatures of the turn it is sent back.
`finishReason` and `blockReason` are read as names (the Gemini API) or numbers (Vertex AI's
enum numbers, as some clients and recordings keep them).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, Final

from ..core.arguments import MISSING
from ._base import BaseProvider, TurnPart
from ._gemini_json import check_json_schema, prepare
from ._gemini_model import GeminiModelSide
from ._gemini_schema import check_schema, sanitise
from ._media import GEMINI_IMAGES
from ._recorded import history, split_error, text_of
from ._results import GEMINI_TAKES, gemini_part, result_parts
from ._shared import (
    check_common,
    check_name,
    check_root,
    invalid_call,
    invalid_response,
    non_empty_str,
    refusal,
    replay_object,
    seed_digest,
    truncated,
)
from ._stream_messages import GeminiStream
from ._turns import assistant_turn, call_slot, kept_item
from .types import DecodedCall, DecodedResponse, Exchange, Problem, RecordedResult, RenderableTool, RenderOptions

PROTOCOL: Final = "gemini"
NAME_PATTERN: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_.:-]*")
NAME_PATTERN_V1: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")
NAME_CHARSET: Final = "a letter or _ first, then A-Z a-z 0-9 _ . - (and : on v1beta)"
MAX_NAME_BYTES: Final = 64
SYNTHETIC_ID_PREFIX: Final = "tb-gemini-"
REFUSED: Final = frozenset(
    {
        "SAFETY",
        "RECITATION",
        "LANGUAGE",
        "BLOCKLIST",
        "PROHIBITED_CONTENT",
        "SPII",
        "IMAGE_SAFETY",
        "IMAGE_PROHIBITED_CONTENT",
        "MODEL_ARMOR",
    }
)
BAD_CALL: Final = frozenset({"MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL", "TOO_MANY_TOOL_CALLS"})
# Vertex AI's numbers (google.cloud.aiplatform.v1 Candidate.FinishReason), by position. The
# Gemini API's proto numbers agree up to OTHER = 5 only (it has LANGUAGE = 6, ...), but its REST
# answers carry names; google-genai's FinishReason enum holds names, no numbers.
FINISH_REASONS: Final = (
    "FINISH_REASON_UNSPECIFIED", "STOP", "MAX_TOKENS", "SAFETY", "RECITATION", "OTHER", "BLOCKLIST",
    "PROHIBITED_CONTENT", "SPII", "MALFORMED_FUNCTION_CALL", "MODEL_ARMOR", "IMAGE_SAFETY",
    "IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION", "IMAGE_OTHER", "UNEXPECTED_TOOL_CALL", "NO_IMAGE",
)
BLOCK_REASONS: Final = ("BLOCKED_REASON_UNSPECIFIED", "SAFETY", "OTHER", "BLOCKLIST", "PROHIBITED_CONTENT")


def _enum_name(value: Any, names: tuple[str, ...]) -> Any:
    """An enum value by name; a number (Vertex's encoding) becomes its name when known."""
    if type(value) is int:
        return names[value] if 0 <= value < len(names) else f"#{value}"
    return value


def render_tool(tool: RenderableTool, options: RenderOptions) -> dict[str, Any]:
    out: dict[str, Any] = {"name": tool.call_name}
    if tool.descriptor.description:
        out["description"] = tool.descriptor.description
    if options.schema == "openapi":
        parameters = sanitise(tool.descriptor.input_schema)
        if parameters is not None:
            out["parameters"] = parameters
    else:
        schema = prepare(tool.descriptor.input_schema)
        if schema is not None:
            out["parametersJsonSchema"] = schema
    return out


def is_synthetic_id(call_id: str) -> bool:
    return call_id.startswith(SYNTHETIC_ID_PREFIX)


def _tool_problems(name: str, schema: Any, openapi: bool) -> list[Problem]:
    problems = check_name(PROTOCOL, name, NAME_PATTERN, MAX_NAME_BYTES, NAME_CHARSET)
    if NAME_PATTERN.fullmatch(name) and not NAME_PATTERN_V1.fullmatch(name):
        problems.append(
            Problem(
                PROTOCOL,
                name,
                "name.pattern",
                f"call name `{name}` has `:`, which only the v1beta API accepts",
                False,
            )
        )
    for problem in check_root(PROTOCOL, name, schema):
        # An untyped root with properties is an object to the sanitiser, which says so.
        inferred = openapi and isinstance(schema, dict) and "type" not in schema and "properties" in schema
        problems.append(replace(problem, repaired=True) if inferred else problem)
    if isinstance(schema, dict):
        problems += check_schema(name, schema) if openapi else check_json_schema(name, schema)
    return problems


class GeminiProvider(GeminiModelSide, BaseProvider):
    """The Gemini generateContent API (`"gemini"`): calls and results pair by order and name."""

    name = PROTOCOL
    call_ids_required = False
    image_limits = GEMINI_IMAGES
    stream_assembly = GeminiStream

    def render_list(self, tools: Sequence[RenderableTool], options: RenderOptions) -> list[dict[str, Any]]:
        if not tools:
            return []
        return [{"functionDeclarations": [render_tool(t, options) for t in tools]}]

    def check_tools(self, tools: Sequence[RenderableTool], options: RenderOptions) -> list[Problem]:
        problems = check_common(PROTOCOL, (t.call_name for t in tools))
        for tool in tools:
            problems += _tool_problems(tool.call_name, tool.descriptor.input_schema, options.schema == "openapi")
        return problems

    def decode(self, response: Any, id_seed: str | None = None) -> DecodedResponse:
        if not isinstance(response, dict):
            raise invalid_response("a generateContent response is a JSON object")
        candidates = response.get("candidates")
        if not isinstance(candidates, list) or not candidates:
            feedback = response.get("promptFeedback")
            feedback = feedback if isinstance(feedback, dict) else {}
            block = _enum_name(feedback.get("blockReason"), BLOCK_REASONS)
            if block and block != "BLOCKED_REASON_UNSPECIFIED":
                raise refusal(f"the prompt was blocked ({block})", feedback.get("blockReasonMessage"))
            raise invalid_response("a generateContent response needs a non-empty `candidates` list")
        candidate = candidates[0]
        if not isinstance(candidate, dict):
            raise invalid_response("candidates[0] is not an object")
        finish = _enum_name(candidate.get("finishReason"), FINISH_REASONS)
        detail = candidate.get("finishMessage") or ""
        if finish in REFUSED:
            raise refusal(f"the response was blocked (finishReason {finish})", detail)
        if finish == "MAX_TOKENS":
            held = candidate.get("content")
            parts = held.get("parts") if isinstance(held, dict) else None
            has_calls = isinstance(parts, list) and any(isinstance(p, dict) and "functionCall" in p for p in parts)
            raise truncated("the output hit the token limit (finishReason MAX_TOKENS); tool calls may be cut",
                            calls=has_calls)
        if finish in BAD_CALL:
            raise invalid_call(f"Gemini could not produce a valid call (finishReason {finish}) {detail}".rstrip())
        content = candidate.get("content") or {}
        parts = content.get("parts") if isinstance(content, dict) else None
        if parts is None:
            return DecodedResponse(())
        if not isinstance(parts, list):
            raise invalid_response("candidates[0].content.parts is not a list")
        calls: list[DecodedCall] = []
        items: list[dict[str, Any]] = []
        seen: set[str] = set()
        digest: str | None = None
        for i, part in enumerate(parts):
            if not isinstance(part, dict):
                raise invalid_call(f"part {i} is not an object")
            if "functionCall" not in part:
                items.append(kept_item(part))  # thought and text parts, with their signatures
                continue
            function_call = part["functionCall"]
            if not isinstance(function_call, dict):
                raise invalid_call(f"part {i}: functionCall is not an object")
            name = non_empty_str(function_call.get("name"))
            if name is None:
                raise invalid_call(f"part {i}: functionCall has an empty name")
            call_id = non_empty_str(function_call.get("id"))
            if call_id is None:
                digest = digest or seed_digest(id_seed, response.get("responseId"), parts)
                call_id = f"{SYNTHETIC_ID_PREFIX}{digest}-{len(calls)}"
            if call_id in seen:
                raise invalid_call(f"functionCall id `{call_id}` appears twice in one response")
            seen.add(call_id)
            signature = part.get("thoughtSignature")
            calls.append(
                DecodedCall(
                    call_id, name, function_call.get("args", MISSING), signature if isinstance(signature, str) else None
                )
            )
            extra = {k: v for k, v in part.items() if k != "functionCall" and v is not None}
            items.append(call_slot(call_id, extra, list(part), ("functionCall",)))
        return DecodedResponse(tuple(calls), assistant_turn(self.name, items))

    def encode_call(self, exchange: Exchange, extra: dict[str, Any]) -> dict[str, Any]:
        function_call: dict[str, Any] = {"name": exchange.call_name, "args": replay_object(exchange.arguments)}
        if exchange.call_id and not is_synthetic_id(exchange.call_id):
            function_call["id"] = exchange.call_id
        part: dict[str, Any] = {"functionCall": function_call, **extra}
        if exchange.signature and "thoughtSignature" not in part:  # logs from before turns were kept
            part["thoughtSignature"] = exchange.signature
        return part

    def round_messages(self, turn: Sequence[TurnPart], results: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{"role": "model", "parts": [p.element for p in turn]}, {"role": "user", "parts": results}]

    def encode_result(self, ex: Exchange) -> dict[str, Any]:
        """The `functionResponse` part of one call: `{"output": text}` (`"error"` for an error), and
        the attachments Gemini takes as `parts` (inline data; Gemini 3 models read them, `_results`).
        The id is replayed unless it is one decode synthesised."""
        text, is_error, attached = result_parts(ex, GEMINI_TAKES, limits=self.image_limits, api=self.name)
        response = {"error" if is_error else "output": text}
        function_response: dict[str, Any] = {"name": ex.call_name, "response": response}
        if attached:
            function_response["parts"] = [gemini_part(a) for a in attached]
        if ex.call_id and not is_synthetic_id(ex.call_id):
            function_response["id"] = ex.call_id
        return {"functionResponse": function_response}

    def read_result(self, element: Any) -> RecordedResult:
        """A `functionResponse` part read back (`decode_results`; `function_response`, the SDK's
        spelling, too): `response.output` or `response.error` (an error), else the whole
        response as JSON; the id when it has one (a synthesised one is never sent), and the name."""
        if not isinstance(element, dict):
            raise invalid_response("a Gemini result is a part with a `functionResponse`")
        function_response = element.get("functionResponse", element.get("function_response"))
        if not isinstance(function_response, dict):
            raise invalid_response("a Gemini result is a part with a `functionResponse`")
        response = function_response.get("response")
        flagged = isinstance(response, dict) and "error" in response and "output" not in response
        if isinstance(response, dict) and ("output" in response or flagged):
            response = response["error" if flagged else "output"]
        content, is_error = split_error(text_of(response), flagged)
        call_id, name = function_response.get("id"), function_response.get("name")
        return RecordedResult(call_id if isinstance(call_id, str) and call_id else None, content, is_error,
                              name if isinstance(name, str) else None)

    def read_results(self, request: Any) -> list[list[RecordedResult]]:
        """The `functionResponse` parts of a request's `contents`, one group per content."""
        groups = []
        for content in history(request, "contents", "generateContent"):
            parts = content.get("parts") if isinstance(content, dict) else None
            if isinstance(parts, list):
                found = [self.read_result(p) for p in parts
                         if isinstance(p, dict) and ("functionResponse" in p or "function_response" in p)]
                if found:
                    groups.append(found)
        return groups

    def tool_choice(self, kind: str, name: str | None) -> dict[str, Any] | str:
        """The `toolConfig` object of a generateContent request."""
        mode = {"none": "NONE", "auto": "AUTO", "required": "ANY", "specific": "ANY"}[kind]
        config: dict[str, Any] = {"mode": mode}
        if name is not None:
            config["allowedFunctionNames"] = [name]
        return {"functionCallingConfig": config}


GEMINI: Final = GeminiProvider()
