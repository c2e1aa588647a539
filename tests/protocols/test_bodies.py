"""Every answer body the one builder makes is the provider's own shape: the SDK's types parse it,
keep every field it has as a declared field (no extras, nothing renamed), and give it back as sent."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable
from typing import Any

import pytest
from anthropic.types import Message
from google.genai.types import GenerateContentResponse
from openai.types.chat import ChatCompletion
from openai.types.responses import Response
from pydantic import BaseModel

from toolbench.protocols import _bodies as bodies
from toolbench.testing import ScriptedModel

SDK_TYPES: dict[str, type[BaseModel]] = {"openai": ChatCompletion, "openai-responses": Response,
                                         "anthropic": Message, "gemini": GenerateContentResponse}
CALLS = [("dice_roll", {"formula": "2d6"}), ("workspace_read_file", {"path": "notes.md"}, "call_given")]
# Fields the API sends that the SDK's type does not declare: the recordings hold Responses' `store`
# (tests/fixtures/protocols/openai_responses_response.json), openai's Response type has no field for it.
WIRE_ONLY: dict[str, set[str]] = {"openai-responses": {"$.store"}}
STYLES = {"provider": bodies.PROVIDER, "scripted": bodies.SCRIPTED}

# protocol -> (calls builder, text builder, the keyword that turns its thinking state off)
BUILDERS: dict[str, tuple[Callable[..., dict[str, Any]], Callable[..., dict[str, Any]], dict[str, Any]]] = {
    "openai": (bodies.chat_calls, bodies.chat_text, {}),
    "openai-responses": (bodies.responses_calls, bodies.responses_text, {"reasoning": None}),
    "anthropic": (bodies.anthropic_calls, bodies.anthropic_text, {"thinking": None}),
    "gemini": (bodies.gemini_calls, bodies.gemini_text, {"thought": None, "signature": None})}


def parse(protocol: str, body: dict[str, Any]) -> BaseModel:
    """The body as the SDK's type, failing on any field the type does not declare."""
    parsed = SDK_TYPES[protocol].model_validate(body)  # google.genai's types forbid extras themselves
    assert set(extras(parsed)) <= WIRE_ONLY.get(protocol, set())
    assert parsed.model_dump(mode="json", by_alias=True, exclude_unset=True) == body
    return parsed


def extras(value: Any, path: str = "$") -> list[str]:
    """The undeclared fields anywhere in a parsed value (openai's and anthropic's types allow them)."""
    if isinstance(value, BaseModel):
        found = [f"{path}.{key}" for key in value.model_extra or {}]
        for name in type(value).model_fields:
            found += extras(getattr(value, name), f"{path}.{name}")
        return found
    if isinstance(value, list):
        return [e for i, item in enumerate(value) for e in extras(item, f"{path}[{i}]")]
    return []


OPTIONS = list(itertools.product(SDK_TYPES, STYLES, ("usage", "no usage"),
                                 ("thinking", "no thinking")))


@pytest.mark.parametrize(("protocol", "style", "usage", "thinking"), OPTIONS)
def test_calls_bodies_parse_as_the_sdk_types(protocol: str, style: str, usage: str, thinking: str) -> None:
    calls, _, off = BUILDERS[protocol]
    options: dict[str, Any] = {"style": STYLES[style], **({} if thinking == "thinking" else off),
                               **({} if usage == "usage" else {"usage": None})}
    parse(protocol, calls(CALLS, n=3, **options))


@pytest.mark.parametrize(("protocol", "style", "usage"),
                         list(itertools.product(SDK_TYPES, STYLES, ("usage", "no usage"))))
def test_text_bodies_parse_as_the_sdk_types(protocol: str, style: str, usage: str) -> None:
    _, text, _ = BUILDERS[protocol]
    parse(protocol, text("A 7.", n=4, style=STYLES[style], **({} if usage == "usage" else {"usage": None})))


def test_the_optional_parts_parse_too() -> None:
    parse("openai", bodies.chat_calls(CALLS, content="Rolling first."))
    parse("anthropic", bodies.anthropic_calls(CALLS, text="Rolling first."))
    parse("anthropic", bodies.anthropic_calls(CALLS, text="Rolling first.", style=bodies.SCRIPTED))
    parse("gemini", bodies.gemini_calls(CALLS, thought=None))  # signed with no summary, as Gemini 2.5 sends


@pytest.mark.parametrize(("protocol", "body"), [
    ("openai", bodies.chat_refusal()), ("openai-responses", bodies.responses_refusal()),
    ("anthropic", bodies.anthropic_refusal()), ("gemini", bodies.gemini_safety())])
def test_refusal_bodies_parse_as_the_sdk_types(protocol: str, body: dict[str, Any]) -> None:
    parse(protocol, body)


def test_the_thinking_state_is_what_the_sdk_reads() -> None:
    message = parse("anthropic", bodies.anthropic_calls(CALLS))
    assert [(b.type, getattr(b, "signature", None)) for b in message.content] == [  # type: ignore[attr-defined]
        ("thinking", bodies.SIGNATURE), ("tool_use", None), ("tool_use", None)]
    response = parse("openai-responses", bodies.responses_calls(CALLS))
    assert response.output[0].encrypted_content == bodies.ENCRYPTED  # type: ignore[attr-defined]
    gemini = parse("gemini", bodies.gemini_calls(CALLS, n=2))
    parts = gemini.candidates[0].content.parts  # type: ignore[attr-defined]
    assert [p.thought for p in parts] == [True, None, None]
    assert [p.thought_signature is not None for p in parts] == [False, True, False]
    assert gemini.response_id == "Hq3vaL2xNtvUz7IP1pO0002"  # type: ignore[attr-defined]


def test_no_usage_leaves_the_block_out_but_anthropic_requires_one() -> None:
    assert "usage" not in bodies.chat_text("hi", usage=None)
    assert "usage" not in bodies.responses_text("hi", usage=None)
    assert "usageMetadata" not in bodies.gemini_text("hi", usage=None)
    assert bodies.anthropic_text("hi", usage=None, style=bodies.SCRIPTED)["usage"] == {"input_tokens": 0,
                                                                                        "output_tokens": 0}


def test_the_styles_differ_in_ids_clock_and_envelope_only() -> None:
    provider, scripted = (bodies.chat_calls(CALLS, n=5, style=s) for s in (bodies.PROVIDER, bodies.SCRIPTED))
    assert (provider["id"], provider["created"]) == ("chatcmpl-BmX9rT2vW4nQ0005", 1760779958)
    assert (scripted["id"], scripted["created"]) == ("chatcmpl-scripted-5", 0)
    ids = [[c["id"] for c in b["choices"][0]["message"]["tool_calls"]] for b in (provider, scripted)]
    assert ids == [["call_51Xq7vR2sT9w", "call_given"], ["call_5_1", "call_given"]]
    assert set(provider) - set(scripted) == {"service_tier", "system_fingerprint"}


ANSWERS = [[("dice_roll", {"formula": "2d6"}), ("workspace_read_file", '{"path": "notes.md"}', "call_given")],
           "A 7."]


@pytest.mark.parametrize("protocol", list(SDK_TYPES))
def test_a_scripted_models_answers_parse_as_the_sdk_types(protocol: str) -> None:
    model = ScriptedModel(ANSWERS, protocol=protocol)
    for _ in ANSWERS:
        parse(protocol, asyncio.run(model.send({"messages": []})))


@pytest.mark.parametrize(("protocol", "body"), [
    ("anthropic", {**bodies.anthropic_text("hi"), "stop_reasons": "end_turn"}),
    ("openai", bodies.chat_text("hi") | {"choices": [{"index": 0, "message": {"role": "assistant", "txt": "hi"},
                                                      "finish_reason": "stop"}]}),
    ("gemini", {**bodies.gemini_text("hi"), "modelversion": "x"})])
def test_a_field_the_sdk_does_not_declare_fails_the_check(protocol: str, body: dict[str, Any]) -> None:
    with pytest.raises((AssertionError, ValueError)):
        parse(protocol, body)
