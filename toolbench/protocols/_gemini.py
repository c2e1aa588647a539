"""Gemini generateContent: `functionDeclarations`, `functionCall` and `functionResponse` parts.

Call ids: Gemini may send `functionCall.id`; when it does, that id is used and replayed in the
matching `functionCall` and `functionResponse`. When it does not, decode synthesises
`tb-gemini-<12 hex>-<n>`: `n` counts the calls of the response, and the hex is the start of the
SHA-256 of a seed: `id_seed` if given (the runtime passes one unique per round), else the
response's `responseId`, else the candidate's parts as canonical JSON. A synthesised id is never
sent back to Gemini, which pairs calls and responses by order and name.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any, Final

from ..core.arguments import MISSING
from ._gemini_schema import check_schema, sanitise
from ._shared import (
    check_common,
    check_history,
    check_name,
    check_root,
    invalid_call,
    invalid_response,
    non_empty_str,
    refusal,
    replay_object,
    resolve_choice,
    result_text,
    truncated,
)
from .types import DecodedCall, Problem, ProtocolName, RenderableTool, Round

PROTOCOL: Final[ProtocolName] = "gemini"
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


def render_tool(tool: RenderableTool, strict: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"name": tool.call_name}
    if tool.descriptor.description:
        out["description"] = tool.descriptor.description
    parameters = sanitise(tool.descriptor.input_schema)
    if parameters is not None:
        out["parameters"] = parameters
    return out


def render_list(tools: Sequence[RenderableTool], strict: bool) -> list[dict[str, Any]]:
    if not tools:
        return []
    return [{"functionDeclarations": [render_tool(t, strict) for t in tools]}]


def check_tools(tools: Sequence[RenderableTool], strict: bool) -> list[Problem]:
    problems = check_common(PROTOCOL, (t.call_name for t in tools))
    for tool in tools:
        name, schema = tool.call_name, tool.descriptor.input_schema
        problems += check_name(PROTOCOL, name, NAME_PATTERN, MAX_NAME_BYTES, NAME_CHARSET)
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
            inferred = isinstance(schema, dict) and "type" not in schema and "properties" in schema
            problems.append(replace(problem, repaired=True) if inferred else problem)
        if isinstance(schema, dict):
            problems += check_schema(name, schema)
    return problems


def is_synthetic_id(call_id: str) -> bool:
    return call_id.startswith(SYNTHETIC_ID_PREFIX)


def decode(response: Any, id_seed: str | None = None) -> list[DecodedCall]:
    if not isinstance(response, dict):
        raise invalid_response("a generateContent response is a JSON object")
    candidates = response.get("candidates")
    if not isinstance(candidates, list) or not candidates:
        feedback = response.get("promptFeedback")
        block = feedback.get("blockReason") if isinstance(feedback, dict) else None
        if block:
            raise refusal(f"the prompt was blocked ({block})")
        raise invalid_response("a generateContent response needs a non-empty `candidates` list")
    candidate = candidates[0]
    if not isinstance(candidate, dict):
        raise invalid_response("candidates[0] is not an object")
    finish = candidate.get("finishReason")
    detail = candidate.get("finishMessage") or ""
    if finish in REFUSED:
        raise refusal(f"the response was blocked (finishReason {finish}) {detail}".rstrip())
    if finish == "MAX_TOKENS":
        raise truncated("the output hit the token limit (finishReason MAX_TOKENS); tool calls may be cut")
    if finish in BAD_CALL:
        raise invalid_call(f"Gemini could not produce a valid call (finishReason {finish}) {detail}".rstrip())
    content = candidate.get("content") or {}
    parts = content.get("parts") if isinstance(content, dict) else None
    if parts is None:
        return []
    if not isinstance(parts, list):
        raise invalid_response("candidates[0].content.parts is not a list")
    calls: list[DecodedCall] = []
    seen: set[str] = set()
    digest: str | None = None
    for i, part in enumerate(parts):
        if not isinstance(part, dict):
            raise invalid_call(f"part {i} is not an object")
        if "functionCall" not in part:
            continue
        function_call = part["functionCall"]
        if not isinstance(function_call, dict):
            raise invalid_call(f"part {i}: functionCall is not an object")
        name = non_empty_str(function_call.get("name"))
        if name is None:
            raise invalid_call(f"part {i}: functionCall has an empty name")
        call_id = non_empty_str(function_call.get("id"))
        if call_id is None:
            if digest is None:
                digest = _digest(id_seed, response, parts)
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
    return calls


def _digest(id_seed: str | None, response: dict[str, Any], parts: list[Any]) -> str:
    seed = id_seed or non_empty_str(response.get("responseId"))
    if seed is None:
        seed = json.dumps(parts, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(seed.encode("utf-8")).hexdigest()[:12]


def encode_history(rounds: Sequence[Round]) -> list[dict[str, Any]]:
    check_history(rounds, ids_required=False)
    contents: list[dict[str, Any]] = []
    for exchanges in rounds:
        if not exchanges:
            continue
        calls, responses = [], []
        for ex in exchanges:
            replay_id = ex.call_id and not is_synthetic_id(ex.call_id)
            function_call: dict[str, Any] = {"name": ex.call_name, "args": replay_object(ex.arguments)}
            text, is_error = result_text(ex)
            function_response: dict[str, Any] = {
                "name": ex.call_name,
                "response": {"error" if is_error else "output": text},
            }
            if replay_id:
                function_call["id"] = ex.call_id
                function_response["id"] = ex.call_id
            part: dict[str, Any] = {"functionCall": function_call}
            if ex.signature:
                part["thoughtSignature"] = ex.signature
            calls.append(part)
            responses.append({"functionResponse": function_response})
        contents.append({"role": "model", "parts": calls})
        contents.append({"role": "user", "parts": responses})
    return contents


def encode_tool_choice(choice: Any, call_names: Iterable[str]) -> dict[str, Any] | str | None:
    """The `toolConfig` object of a generateContent request."""
    resolved = resolve_choice(choice, call_names)
    if resolved is None:
        return None
    kind, name = resolved
    mode = {"none": "NONE", "auto": "AUTO", "required": "ANY", "specific": "ANY"}[kind]
    config: dict[str, Any] = {"mode": mode}
    if name is not None:
        config["allowedFunctionNames"] = [name]
    return {"functionCallingConfig": config}
