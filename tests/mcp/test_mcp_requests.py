"""The values a handler gets for a server's request, and what its answers become (pure functions)."""

from __future__ import annotations

from typing import Any

import pytest

from toolbench.core.errors import ToolbenchError
from toolbench.mcp._client_side import Handlers
from toolbench.mcp._requests import (
    ReplyInvalid,
    elicitation_request,
    elicitation_result,
    sampling_request,
    sampling_result,
)
from toolbench.testing import ScriptedModel


def test_sampling_messages_take_the_openai_chat_form() -> None:
    request = sampling_request("srv", "tool", "call_1", {
        "systemPrompt": "Be brief.", "maxTokens": 50, "temperature": 0.5,
        "messages": [
            {"role": "user", "content": {"type": "text", "text": "Describe:"}},
            {"role": "user", "content": [{"type": "text", "text": "this"},
                                         {"type": "image", "data": "AAAA", "mimeType": "image/jpeg"}]},
            {"role": "assistant", "content": {"type": "audio", "data": "BBBB", "mimeType": "audio/mpeg"}},
        ],
    })
    assert request.messages == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Describe:"},
        {"role": "user", "content": [{"type": "text", "text": "this"},
                                     {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,AAAA"}}]},
        {"role": "assistant", "content": [{"type": "input_audio", "input_audio": {"data": "BBBB", "format": "mpeg"}}]},
    ]
    assert (request.max_tokens, request.temperature, request.system_prompt) == (50, 0.5, "Be brief.")
    assert (request.server, request.tool, request.call_id) == ("srv", "tool", "call_1")


@pytest.mark.parametrize(("reply", "text", "stop", "model"), [
    ("plain", "plain", "endTurn", "fallback"),
    ({"model": "gpt-x", "choices": [{"message": {"role": "assistant", "content": "cut"}, "finish_reason": "length"}]},
     "cut", "maxTokens", "gpt-x"),
])
def test_a_sampling_answer_becomes_a_create_message_result(reply: Any, text: str, stop: str, model: str) -> None:
    assert sampling_result(reply, "fallback") == {"role": "assistant", "content": {"type": "text", "text": text},
                                                  "model": model, "stopReason": stop}


def test_a_sampling_answer_can_be_the_result_itself_or_a_refusal() -> None:
    built = {"role": "assistant", "content": {"type": "text", "text": "x"}, "model": "mine"}
    assert sampling_result(built, "fallback") == built
    assert sampling_result(None, "fallback") is None  # declined


@pytest.mark.parametrize("reply", [
    [("some_tool", {})],
    {"choices": [{"message": {"role": "assistant", "content": None, "tool_calls": [{"id": "1"}]}}]},
    42,
])
def test_an_unusable_sampling_answer_is_refused(reply: Any) -> None:
    with pytest.raises(ReplyInvalid):
        sampling_result(reply, "fallback")


@pytest.mark.parametrize(("reply", "result"), [
    ({"name": "Ada"}, {"action": "accept", "content": {"name": "Ada"}}),
    ("accept", {"action": "accept"}),
    ("decline", {"action": "decline"}),
    ("cancel", {"action": "cancel"}),
    (None, {"action": "cancel"}),
])
def test_an_elicitation_answer_becomes_an_elicit_result(reply: Any, result: dict[str, Any]) -> None:
    assert elicitation_result(reply) == result


def test_an_unusable_elicitation_answer_is_refused() -> None:
    with pytest.raises(ReplyInvalid):
        elicitation_result(["not", "an", "answer"])


def test_elicitation_requests_say_form_or_url() -> None:
    form = elicitation_request("s", None, None, {"message": "name?", "requestedSchema": {"type": "object"}})
    assert (form.mode, form.requested_schema, form.url) == ("form", {"type": "object"}, None)
    url = elicitation_request("s", "t", "c", {"mode": "url", "message": "go", "url": "https://x", "elicitationId": "e"})
    assert (url.mode, url.url, url.elicitation_id, url.requested_schema) == ("url", "https://x", "e", None)


def test_a_sampling_handler_is_a_model_or_a_request_handler() -> None:
    handlers = Handlers()
    handlers.set_sampling(ScriptedModel(["x"]))
    assert handlers.sampling is not None and handlers.sampling[1] and handlers.wanted() == {"sampling"}
    handlers.set_sampling(lambda request: "x")
    assert handlers.sampling is not None and not handlers.sampling[1]
    for bad in (lambda a, b, c: "x", "not callable"):
        with pytest.raises(ToolbenchError) as caught:
            handlers.set_sampling(bad)
        assert caught.value.code == "bench.misuse"
    handlers.set_sampling(None)
    assert handlers.wanted() == frozenset()
