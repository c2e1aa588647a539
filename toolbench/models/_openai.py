"""OpenAI's two APIs through the official `openai` client (sync or async, any `base_url`:
Ollama, vLLM, llama.cpp and other OpenAI-compatible servers serve the Chat Completions one)."""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from ._base import ChatShapedAdapter, ModelReply, first, sdk_stream, send_raw, texts, to_dict, usage_of


def read_chat(body: Mapping[str, Any]) -> ModelReply:
    message = first(dict(body), "choices", 0, "message")
    content = first(message, "content")
    finish = first(dict(body), "choices", 0, "finish_reason")
    return ModelReply(dict(body), content if isinstance(content, str) else texts(content, "type", "text"),
                      usage_of(body.get("usage")), finish if isinstance(finish, str) else None)


def read_responses(body: Mapping[str, Any]) -> ModelReply:
    output = body.get("output")
    text = "".join(texts(item.get("content"), "type", "output_text") for item in output
                   if isinstance(item, dict) and item.get("type") == "message") if isinstance(output, list) else ""
    status = body.get("status")
    return ModelReply(dict(body), text, usage_of(body.get("usage")), status if isinstance(status, str) else None)


class OpenAIChat(ChatShapedAdapter):
    """Chat Completions: `OpenAIChat(openai.OpenAI(), "gpt-4.1", temperature=0)`; options go
    into every request body as given."""

    protocol = "openai"

    def request(self, *, system: str | None, messages: Sequence[Mapping[str, Any]],
                tools: Sequence[Mapping[str, Any]], tool_choice: Any) -> dict[str, Any]:
        head = [{"role": "system", "content": system}] if system else []
        return self.finish({"model": self.model, "messages": [*head, *messages]}, tools, tool_choice)

    async def send(self, body: dict[str, Any]) -> dict[str, Any]:
        return await send_raw(self.client.chat.completions.with_raw_response.create, **body)

    def stream(self, body: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
        """The chunks of a streamed answer; the last one carries the usage (`include_usage`, as
        the unstreamed answer does), unless the options set `stream_options` themselves."""
        wire = {"stream_options": {"include_usage": True}, **body, "stream": True}
        return sdk_stream(functools.partial(self.client.chat.completions.create, **wire), to_dict)

    read = staticmethod(read_chat)


class OpenAIResponses(ChatShapedAdapter):
    """The Responses API: `OpenAIResponses(openai.OpenAI(), "gpt-5", reasoning={"effort": "low"})`.
    To replay reasoning items without server state, pass `store=False,
    include=["reasoning.encrypted_content"]`."""

    protocol = "openai-responses"

    def request(self, *, system: str | None, messages: Sequence[Mapping[str, Any]],
                tools: Sequence[Mapping[str, Any]], tool_choice: Any) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "input": list(messages)}
        if system:
            body["instructions"] = system
        return self.finish(body, tools, tool_choice)

    async def send(self, body: dict[str, Any]) -> dict[str, Any]:
        return await send_raw(self.client.responses.with_raw_response.create, **body)

    def stream(self, body: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
        return sdk_stream(functools.partial(self.client.responses.create, **body, stream=True), to_dict)

    read = staticmethod(read_responses)
