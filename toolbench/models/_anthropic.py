"""Anthropic's Messages API through the official `anthropic` client (sync or async)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ._base import ChatShapedAdapter, ModelReply, send_raw, texts, usage_of


def read_messages(body: Mapping[str, Any]) -> ModelReply:
    stop = body.get("stop_reason")
    return ModelReply(dict(body), texts(body.get("content"), "type", "text"), usage_of(body.get("usage")),
                      stop if isinstance(stop, str) else None)


class Anthropic(ChatShapedAdapter):
    """`Anthropic(anthropic.Anthropic(), "claude-sonnet-4-5", max_tokens=1024)`; other options
    (`thinking={"type": "enabled", "budget_tokens": 2048}`, `temperature`, ...) go into every
    request body. Thinking blocks come back in the transcript as they were sent, signature and
    all, so a follow-up request with thinking on is accepted."""

    protocol = "anthropic"

    def __init__(self, client: Any, model: str, *, max_tokens: int, **options: Any) -> None:
        super().__init__(client, model, **options)
        self.max_tokens = max_tokens

    def request(self, *, system: str | None, messages: Sequence[Mapping[str, Any]],
                tools: Sequence[Mapping[str, Any]], tool_choice: Any) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "max_tokens": self.max_tokens, "messages": list(messages)}
        if system:
            body["system"] = system
        return self.finish(body, tools, tool_choice)

    async def send(self, body: dict[str, Any]) -> dict[str, Any]:
        return await send_raw(self.client.messages.with_raw_response.create, **body)

    read = staticmethod(read_messages)
