"""Anthropic's Messages API through the official `anthropic` client (sync or async)."""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from ._base import (
    ChatShapedAdapter,
    ModelError,
    assemble,
    sdk_stream,
    send_raw,
    stream_assembly,
    to_dict,
    with_options,
)


class Anthropic(ChatShapedAdapter):
    """`Anthropic(anthropic.Anthropic(), "claude-sonnet-4-5", max_tokens=1024)`; other options
    (`thinking={"type": "enabled", "budget_tokens": 2048}`, `temperature`, ...) go into every
    request body. Thinking blocks come back in the transcript as they were sent, signature and
    all, so a follow-up request with thinking on is accepted."""

    protocol = "anthropic"

    def __init__(self, client: Any, model: str, *, max_tokens: int, protocol: str | None = None,
                 **options: Any) -> None:
        super().__init__(client, model, protocol=protocol, **options)
        self.max_tokens = max_tokens

    def request(self, *, system: str | None, messages: Sequence[Mapping[str, Any]],
                tools: Sequence[Mapping[str, Any]], tool_choice: Any) -> dict[str, Any]:
        body = self.bare(system, messages, tools, tool_choice)
        body["max_tokens"] = self.max_tokens
        return with_options(body, self.options)

    async def send(self, body: dict[str, Any]) -> dict[str, Any]:
        try:
            return await send_raw(self.client.messages.with_raw_response.create, **body)
        except ModelError as exc:
            # The SDK refuses, before sending, an unstreamed request that may take over 10
            # minutes (a large max_tokens); the same answer streamed is accepted.
            if not (isinstance(exc.__cause__, ValueError) and "Streaming is required" in str(exc.__cause__)):
                raise
        assembly = stream_assembly(self.protocol)
        if assembly is None:
            raise ModelError("model.provider_error", f"the SDK refuses this request unstreamed, and {self.protocol} "
                             "has no stream_assembly to stream it")
        return await assemble(self.stream(body), assembly)

    def stream(self, body: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
        return sdk_stream(functools.partial(self.client.messages.create, **body, stream=True), to_dict)
