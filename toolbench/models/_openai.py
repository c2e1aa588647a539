"""OpenAI's two APIs through the official `openai` client (sync or async, any `base_url`:
Ollama, vLLM, llama.cpp and other OpenAI-compatible servers serve the Chat Completions one)."""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from ._base import ChatShapedAdapter, sdk_stream, send_raw, to_dict, with_options


class OpenAIChat(ChatShapedAdapter):
    """Chat Completions: `OpenAIChat(openai.OpenAI(), "gpt-4.1", temperature=0)`; options go
    into every request body as given. Another API of this shape registered as a provider is
    `OpenAIChat(OpenAI(base_url=...), "mistral-large-latest", protocol="mistral")`."""

    protocol = "openai"

    def request(self, *, system: str | None, messages: Sequence[Mapping[str, Any]],
                tools: Sequence[Mapping[str, Any]], tool_choice: Any) -> dict[str, Any]:
        return with_options(self.bare(system, messages, tools, tool_choice), self.options)

    async def send(self, body: dict[str, Any]) -> dict[str, Any]:
        return await send_raw(self.client.chat.completions.with_raw_response.create, **body)

    def stream(self, body: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
        """The chunks of a streamed answer; the last one carries the usage (`include_usage`, as
        the unstreamed answer does), unless the options set `stream_options` themselves."""
        wire = {"stream_options": {"include_usage": True}, **body, "stream": True}
        return sdk_stream(functools.partial(self.client.chat.completions.create, **wire), to_dict)


class OpenAIResponses(ChatShapedAdapter):
    """The Responses API: `OpenAIResponses(openai.OpenAI(), "gpt-5", reasoning={"effort": "low"})`.
    To replay reasoning items without server state, pass `store=False,
    include=["reasoning.encrypted_content"]`."""

    protocol = "openai-responses"

    def request(self, *, system: str | None, messages: Sequence[Mapping[str, Any]],
                tools: Sequence[Mapping[str, Any]], tool_choice: Any) -> dict[str, Any]:
        return with_options(self.bare(system, messages, tools, tool_choice), self.options)

    async def send(self, body: dict[str, Any]) -> dict[str, Any]:
        return await send_raw(self.client.responses.with_raw_response.create, **body)

    def stream(self, body: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
        return sdk_stream(functools.partial(self.client.responses.create, **body, stream=True), to_dict)
