"""`bench.mcp.on_sampling(model)` with a `toolbench.models` Model: the server's
`sampling/createMessage` becomes one request in the model's protocol (no tools; messages with
text and images, the system prompt, maxTokens, temperature, stopSequences under the provider's
names), and the reply text the `CreateMessageResult` (model name, stopReason mapped)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from drive_support import chat_body, local_provider
from mcp_support import fault_server

from toolbench.core.ids import ToolId
from toolbench.mcp import McpManager
from toolbench.mcp._requests import sampling_request
from toolbench.mcp._sampling import sample
from toolbench.models import ModelError, OpenAIChat
from toolbench.testing import ScriptedModel

PIXEL = "iVBORw0KGgo="
PARAMS: dict[str, Any] = {
    "systemPrompt": "You describe pictures.",
    "messages": [
        {"role": "user", "content": [{"type": "text", "text": "What is this?"},
                                     {"type": "image", "data": PIXEL, "mimeType": "image/png"}]},
        {"role": "assistant", "content": {"type": "text", "text": "A pixel."}},
        {"role": "user", "content": {"type": "text", "text": "Say more."}},
    ],
    "maxTokens": 64, "temperature": 0.5, "stopSequences": ["END"],
}
EXPECTED = {
    "openai": [
        {"role": "system", "content": "You describe pictures."},
        {"role": "user", "content": [{"type": "text", "text": "What is this?"},
                                     {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PIXEL}"}}]},
        {"role": "assistant", "content": "A pixel."}, {"role": "user", "content": "Say more."}],
    "openai-responses": [
        {"role": "user", "content": [{"type": "input_text", "text": "What is this?"},
                                     {"type": "input_image", "image_url": f"data:image/png;base64,{PIXEL}"}]},
        {"role": "assistant", "content": [{"type": "output_text", "text": "A pixel."}]},
        {"role": "user", "content": [{"type": "input_text", "text": "Say more."}]}],
    "anthropic": [
        {"role": "user", "content": [{"type": "text", "text": "What is this?"}, {"type": "image", "source": {
            "type": "base64", "media_type": "image/png", "data": PIXEL}}]},
        {"role": "assistant", "content": [{"type": "text", "text": "A pixel."}]},
        {"role": "user", "content": [{"type": "text", "text": "Say more."}]}],
    "gemini": [
        {"role": "user", "parts": [{"text": "What is this?"},
                                   {"inlineData": {"mimeType": "image/png", "data": PIXEL}}]},
        {"role": "model", "parts": [{"text": "A pixel."}]},
        {"role": "user", "parts": [{"text": "Say more."}]}],
}
pytestmark = pytest.mark.user_provider
EXPECTED["mistral"] = EXPECTED["openai"]  # installed from tests/fixtures/user_provider: the Chat Completions shape
KEY = {"openai": "messages", "openai-responses": "input", "anthropic": "messages", "gemini": "contents",
       "mistral": "messages"}


def _sample(model: Any, params: dict[str, Any] = PARAMS) -> dict[str, Any]:
    return asyncio.run(sample(model, sampling_request("srv", "tool", "call_1", params)))


@pytest.mark.parametrize("protocol", list(EXPECTED))
def test_a_sampling_request_is_one_request_in_the_model_protocol(protocol: str) -> None:
    model = ScriptedModel(["A red pixel."], protocol=protocol)
    result = _sample(model)
    assert result == {"role": "assistant", "content": {"type": "text", "text": "A red pixel."}, "model": "scripted",
                      "stopReason": "endTurn"}
    [body] = model.bodies
    assert body[KEY[protocol]] == EXPECTED[protocol]
    assert "tools" not in body
    limits = {"openai": {"max_tokens": 64, "temperature": 0.5, "stop": ["END"]},
              "mistral": {"max_tokens": 64, "temperature": 0.5, "stop": ["END"]},
              "openai-responses": {"max_output_tokens": 64, "temperature": 0.5,
                                   "instructions": "You describe pictures."},
              "anthropic": {"max_tokens": 64, "temperature": 0.5, "stop_sequences": ["END"],
                            "system": "You describe pictures."},
              "gemini": {"generationConfig": {"maxOutputTokens": 64, "temperature": 0.5, "stopSequences": ["END"]},
                         "systemInstruction": {"parts": [{"text": "You describe pictures."}]}}}[protocol]
    assert {k: body[k] for k in limits} == limits


@pytest.mark.parametrize(("protocol", "finish", "stop"), [
    ("openai", "length", "maxTokens"), ("anthropic", "stop_sequence", "stopSequence"),
    ("anthropic", "max_tokens", "maxTokens"), ("gemini", "MAX_TOKENS", "maxTokens"),
    ("openai-responses", "incomplete", "maxTokens"), ("anthropic", "refusal", "refusal"),
    ("openai", "tool_calls", "toolUse")])
def test_the_finish_reason_becomes_the_stop_reason(protocol: str, finish: str, stop: str) -> None:
    class Finishing(ScriptedModel):
        def read(self, body: Any) -> Any:
            reply = super().read(body)
            return type(reply)(reply.body, reply.text, reply.usage, finish)

    assert _sample(Finishing(["cut"], protocol=protocol))["stopReason"] == stop


def test_a_reply_without_text_is_refused() -> None:
    from toolbench.mcp._requests import ReplyInvalid

    with pytest.raises(ReplyInvalid):
        _sample(ScriptedModel([[("dice_roll", {"formula": "d6"})]], protocol="anthropic"))


def _ask(loop: Any, manager: McpManager, params: dict[str, Any] = PARAMS) -> tuple[dict[str, Any], Any]:
    manager.add("asks", command=fault_server("samples_with"))
    out = loop.run(manager.call(ToolId.parse("mcp/asks:sample"), {"params": params}))
    return json.loads(out.content), out


def test_a_server_request_is_answered_by_a_model_in_its_protocol(loop: Any, manager: McpManager) -> None:
    model = ScriptedModel(["Two pixels."], protocol="gemini")
    manager.on_sampling(model)
    answer, out = _ask(loop, manager)
    assert answer["result"] == {"role": "assistant", "content": {"type": "text", "text": "Two pixels."},
                                "model": "scripted", "stopReason": "endTurn"}
    assert model.bodies[0]["contents"] == EXPECTED["gemini"]
    assert out.structured["serverRequests"] == [{"method": "sampling/createMessage", "outcome": "answered"}]


def test_a_provider_error_reaches_the_server_with_its_code(loop: Any, manager: McpManager) -> None:
    class Down(ScriptedModel):
        async def send(self, body: dict[str, Any]) -> dict[str, Any]:
            raise ModelError("model.provider_auth", "the provider refused the credentials (401): bad key", status=401)

    manager.on_sampling(Down([], protocol="anthropic"))
    answer, out = _ask(loop, manager)
    assert "model.provider_auth" in answer["error"]["message"]
    assert out.structured["serverRequests"][0]["outcome"] == "failed"


def test_an_sdk_adapter_answers_through_its_client(loop: Any, manager: McpManager) -> None:
    openai = pytest.importorskip("openai")
    cut = chat_body("A long story")
    cut["choices"][0]["finish_reason"] = "length"
    with local_provider([(200, cut)]) as server:
        client = openai.AsyncOpenAI(base_url=server.url + "/v1", api_key="test", max_retries=0, timeout=5)
        manager.on_sampling(OpenAIChat(client, "local-model"))
        answer, _ = _ask(loop, manager)
    assert answer["result"] == {"role": "assistant", "content": {"type": "text", "text": "A long story"},
                                "model": "local-model", "stopReason": "maxTokens"}
    [sent] = server.requests
    assert (sent["model"], sent["max_tokens"], sent["stop"], sent["messages"]) == \
        ("local-model", 64, ["END"], EXPECTED["openai"])
    assert "tools" not in sent
