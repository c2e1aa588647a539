"""OpenAI's two APIs through the official `openai` client (sync or async, any `base_url`:
Ollama, vLLM, llama.cpp and other OpenAI-compatible servers serve the Chat Completions one)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ._base import ModelReply, first, send_raw, texts, usage_of, with_options


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


class OpenAIChat:
    """Chat Completions: `OpenAIChat(openai.OpenAI(), "gpt-4.1", temperature=0)`; options go
    into every request body as given."""

    protocol = "openai"

    def __init__(self, client: Any, model: str, **options: Any) -> None:
        self.client, self.model, self.options = client, model, options

    def user_message(self, text: str) -> dict[str, Any]:
        return {"role": "user", "content": text}

    def request(self, *, system: str | None, messages: Sequence[Mapping[str, Any]],
                tools: Sequence[Mapping[str, Any]], tool_choice: Any) -> dict[str, Any]:
        head = [{"role": "system", "content": system}] if system else []
        body: dict[str, Any] = {"model": self.model, "messages": [*head, *messages]}
        if tools:
            body["tools"] = list(tools)
        if tool_choice is not None:
            body["tool_choice"] = tool_choice
        return with_options(body, self.options)

    async def send(self, body: dict[str, Any]) -> dict[str, Any]:
        return await send_raw(self.client.chat.completions.with_raw_response.create, **body)

    read = staticmethod(read_chat)

    def __repr__(self) -> str:
        return f"OpenAIChat({self.model!r})"


class OpenAIResponses:
    """The Responses API: `OpenAIResponses(openai.OpenAI(), "gpt-5", reasoning={"effort": "low"})`.
    To replay reasoning items without server state, pass `store=False,
    include=["reasoning.encrypted_content"]`."""

    protocol = "openai-responses"

    def __init__(self, client: Any, model: str, **options: Any) -> None:
        self.client, self.model, self.options = client, model, options

    def user_message(self, text: str) -> dict[str, Any]:
        return {"role": "user", "content": text}

    def request(self, *, system: str | None, messages: Sequence[Mapping[str, Any]],
                tools: Sequence[Mapping[str, Any]], tool_choice: Any) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "input": list(messages)}
        if system:
            body["instructions"] = system
        if tools:
            body["tools"] = list(tools)
        if tool_choice is not None:
            body["tool_choice"] = tool_choice
        return with_options(body, self.options)

    async def send(self, body: dict[str, Any]) -> dict[str, Any]:
        return await send_raw(self.client.responses.with_raw_response.create, **body)

    read = staticmethod(read_responses)

    def __repr__(self) -> str:
        return f"OpenAIResponses({self.model!r})"
