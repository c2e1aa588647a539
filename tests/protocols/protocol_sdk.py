"""Validators built from the providers' official SDK types, strict enough to fail.

pydantic validates the SDKs' TypedDicts but allows extra keys and validates `Iterable[...]`
fields lazily (only when iterated). `strict_validator` rewrites the core schema so that every
TypedDict forbids extra keys and every iterable is checked as a list, up front."""

from __future__ import annotations

import warnings
from typing import Any

import anthropic.types as anthropic_types
import openai.types.chat as chat_types
import openai.types.responses as responses_types
from google.genai import types as genai_types
from pydantic import TypeAdapter
from pydantic_core import SchemaValidator


def _tighten(node: Any) -> Any:
    if isinstance(node, dict):
        out = {k: _tighten(v) for k, v in node.items()}
        if out.get("type") == "typed-dict":
            out["extra_behavior"] = "forbid"
        if out.get("type") == "generator":
            out = {
                "type": "list",
                **{
                    k: v for k, v in out.items() if k in ("items_schema", "min_length", "max_length", "ref", "metadata")
                },
            }
        return out
    if isinstance(node, list):
        return [_tighten(v) for v in node]
    return node


def strict_validator(tp: Any) -> SchemaValidator:
    return SchemaValidator(_tighten(TypeAdapter(tp).core_schema))


OPENAI_TOOL = strict_validator(chat_types.ChatCompletionToolParam)
OPENAI_MESSAGE = strict_validator(chat_types.ChatCompletionMessageParam)
OPENAI_TOOL_CHOICE = strict_validator(chat_types.ChatCompletionToolChoiceOptionParam)
RESPONSES_TOOL = strict_validator(responses_types.FunctionToolParam)
RESPONSES_ITEM = strict_validator(responses_types.ResponseInputItemParam)
RESPONSES_TOOL_CHOICE = strict_validator(
    responses_types.tool_choice_options.ToolChoiceOptions | responses_types.ToolChoiceFunctionParam
)
ANTHROPIC_TOOL = strict_validator(anthropic_types.ToolParam)
ANTHROPIC_MESSAGE = strict_validator(anthropic_types.MessageParam)
ANTHROPIC_TOOL_CHOICE = strict_validator(anthropic_types.ToolChoiceParam)


def check_gemini(model: type[genai_types._common.BaseModel], value: dict[str, Any]) -> None:
    """Validate the camelCase REST form: the model forbids extra keys, and dumping it by alias
    must give back the input, so snake_case keys (which the SDK also accepts) are caught. The
    SDK only warns about an unknown enum value (a schema type, a mode): the warning is an error."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        parsed = model.model_validate(value)
    dumped = parsed.model_dump(by_alias=True, exclude_none=True, mode="json")
    assert _normalise(dumped) == _normalise(value), (dumped, value)


def _normalise(value: Any) -> Any:
    # The SDK turns lowercase schema types into its enum; compare types case-insensitively.
    if isinstance(value, dict):
        return {k: (v.upper() if k == "type" and isinstance(v, str) else _normalise(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [_normalise(v) for v in value]
    return value


def validate_tools(protocol: str, tools: list[dict[str, Any]]) -> None:
    """Every rendered tool list validates against the provider SDK's request types."""
    if protocol == "openai":
        for tool in tools:
            OPENAI_TOOL.validate_python(tool)
    elif protocol == "openai-responses":
        for tool in tools:
            RESPONSES_TOOL.validate_python(tool)
    elif protocol == "anthropic":
        for tool in tools:
            ANTHROPIC_TOOL.validate_python(tool)
    elif protocol == "gemini":
        for tool in tools:
            check_gemini(genai_types.Tool, tool)
    else:
        raise AssertionError(protocol)


def validate_history(protocol: str, messages: list[dict[str, Any]]) -> None:
    """Every encoded history validates against the provider SDK's message types."""
    if protocol == "openai":
        for message in messages:
            OPENAI_MESSAGE.validate_python(message)
    elif protocol == "openai-responses":
        for item in messages:
            RESPONSES_ITEM.validate_python(item)
    elif protocol == "anthropic":
        for message in messages:
            ANTHROPIC_MESSAGE.validate_python(message)
    elif protocol == "gemini":
        for content in messages:
            check_gemini(genai_types.Content, content)
    else:
        raise AssertionError(protocol)


def validate_tool_choice(protocol: str, choice: Any) -> None:
    if protocol == "openai":
        OPENAI_TOOL_CHOICE.validate_python(choice)
    elif protocol == "openai-responses":
        RESPONSES_TOOL_CHOICE.validate_python(choice)
    elif protocol == "anthropic":
        ANTHROPIC_TOOL_CHOICE.validate_python(choice)
    elif protocol == "gemini":
        check_gemini(genai_types.ToolConfig, choice)
    else:
        raise AssertionError(protocol)


RESPONSE_MODELS: dict[str, Any] = {
    "openai": __import__("openai").types.chat.ChatCompletion,
    "openai-responses": __import__("openai").types.responses.Response,
    "anthropic": anthropic_types.Message,
    "gemini": genai_types.GenerateContentResponse,
}
