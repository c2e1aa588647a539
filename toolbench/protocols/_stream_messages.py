"""Streamed Anthropic Messages and Gemini answers, put back into the unstreamed body.

Anthropic follows its SDK's `accumulate_event` (`anthropic.lib.streaming`): `message_start`
opens the message, each block starts whole and grows by its deltas (text, thinking, signature,
citations, and tool input as JSON text parsed when the block stops), `message_delta` sets the
stop fields and the usage totals (a count the delta leaves out keeps its `message_start`
value), `message_stop` completes it. Gemini's SDK has no accumulator: its chunks are merged as
its documentation describes them, text appended to the part before it while the part is plain
text of the same kind (thought or not; a part that carried a `thoughtSignature` closes), every
other part (a `functionCall` comes whole) appended; a candidate's other fields and the
response's `usageMetadata` are the last chunk's. The stream is complete at a `finishReason`
(or a prompt blocked by `promptFeedback.blockReason`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..core.errors import ToolbenchError
from ._stream_openai import _copy, event_object, malformed
from .types import StreamDelta

_TOOL_BLOCKS = frozenset({"tool_use", "server_tool_use", "mcp_tool_use"})
_USAGE_KEPT = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "server_tool_use",
               "output_tokens_details")


class AnthropicStream:
    """One streamed Messages answer (`StreamAssembly`)."""

    def __init__(self) -> None:
        self._message: dict[str, Any] | None = None
        self._json: dict[int, str] = {}
        self.complete = False

    def feed(self, event: Any) -> list[StreamDelta]:
        event = event_object(event)
        kind = event.get("type")
        if kind == "ping":
            return []
        if kind == "error":
            raise ToolbenchError("model.provider_error", f"the stream reported an error: {json.dumps(event)[:300]}")
        if kind == "message_start":
            message = event.get("message")
            if not isinstance(message, Mapping):
                raise malformed("`message_start` has no `message`")
            self._message = _copy(message)
            self._message.setdefault("content", [])
            return []
        if self._message is None:
            raise malformed(f"`{kind}` came before `message_start`")
        content: list[Any] = self._message["content"]
        if kind == "content_block_start":
            block = event.get("content_block")
            if not isinstance(block, Mapping):
                raise malformed("`content_block_start` has no `content_block`")
            content.append(_copy(block))
            if block.get("type") in _TOOL_BLOCKS:
                return [StreamDelta("arguments", "", len(content) - 1, block.get("name"), block.get("id"))]
            return []
        if kind in ("content_block_delta", "content_block_stop"):
            at = event.get("index")
            if not isinstance(at, int) or not 0 <= at < len(content) or not isinstance(content[at], dict):
                raise malformed(f"`{kind}` names block {at!r}, which did not start")
            return self._delta(at, content[at], event.get("delta")) if kind == "content_block_delta" \
                else self._stop(at, content[at])
        if kind == "message_delta":
            delta, usage = event.get("delta"), event.get("usage")
            for key, value in (delta.items() if isinstance(delta, Mapping) else ()):
                if key != "container" or value is not None:
                    self._message[key] = _copy(value)
            if isinstance(usage, Mapping):
                totals = self._message.setdefault("usage", {})
                if "output_tokens" in usage:
                    totals["output_tokens"] = usage["output_tokens"]
                totals.update({k: _copy(usage[k]) for k in _USAGE_KEPT if usage.get(k) is not None})
            return []
        if kind == "message_stop":
            self.complete = True
        return []

    def _delta(self, at: int, block: dict[str, Any], delta: Any) -> list[StreamDelta]:
        if not isinstance(delta, Mapping):
            raise malformed("`content_block_delta` has no `delta`")
        kind = delta.get("type")
        if kind == "text_delta" and block.get("type") == "text":
            block["text"] = str(block.get("text") or "") + str(delta.get("text") or "")
            return [StreamDelta("text", str(delta.get("text") or ""))]
        if kind == "input_json_delta" and block.get("type") in _TOOL_BLOCKS:
            fragment = str(delta.get("partial_json") or "")
            self._json[at] = self._json.get(at, "") + fragment
            return [StreamDelta("arguments", fragment, at, call_id=block.get("id"))]
        if kind == "citations_delta" and block.get("type") == "text":
            block.setdefault("citations", None)
            block["citations"] = [*(block["citations"] or []), _copy(delta.get("citation"))]
        elif kind == "thinking_delta" and block.get("type") == "thinking":
            block["thinking"] = str(block.get("thinking") or "") + str(delta.get("thinking") or "")
            return [StreamDelta("thinking", str(delta.get("thinking") or ""))]
        elif kind == "signature_delta" and block.get("type") == "thinking":
            block["signature"] = delta.get("signature")
        return []

    def _stop(self, at: int, block: dict[str, Any]) -> list[StreamDelta]:
        text = self._json.pop(at, None)
        if text:
            try:
                block["input"] = json.loads(text)
            except ValueError:
                block["input"] = text  # decode reports it as the call's invalid arguments, text kept
        return []

    def body(self) -> dict[str, Any]:
        message: dict[str, Any] = dict(_copy(self._message or {"type": "message", "content": []}))
        for at, text in self._json.items():  # a cut stream: the tool input as far as it came
            if at < len(message["content"]):
                message["content"][at]["input"] = text
        return message


class GeminiStream:
    """One streamed generateContent answer (`StreamAssembly`)."""

    def __init__(self) -> None:
        self._body: dict[str, Any] | None = None
        self._calls = 0
        self.complete = False

    def feed(self, event: Any) -> list[StreamDelta]:
        chunk = event_object(event)
        if "error" in chunk:
            raise ToolbenchError("model.provider_error", f"the stream reported an error: {json.dumps(chunk)[:300]}")
        if self._body is None:
            self._body = {}
        deltas: list[StreamDelta] = []
        for key, value in chunk.items():
            if key != "candidates":
                self._body[key] = _copy(value)
                continue
            if not isinstance(value, list):
                raise malformed("`candidates` is not a list")
            kept = self._body.setdefault("candidates", [])
            for n, candidate in enumerate(value):
                candidate = event_object(candidate)
                while len(kept) <= n:
                    kept.append({})
                deltas += self._candidate(kept[n], candidate, first=n == 0)
        feedback = chunk.get("promptFeedback")
        if isinstance(feedback, Mapping) and feedback.get("blockReason"):
            self.complete = True  # a blocked prompt gets no candidates
        return deltas

    def _candidate(self, kept: dict[str, Any], candidate: dict[str, Any], *, first: bool) -> list[StreamDelta]:
        deltas: list[StreamDelta] = []
        for key, value in candidate.items():
            if key != "content" or not isinstance(value, Mapping):
                kept[key] = _copy(value)
                continue
            content = kept.setdefault("content", {})
            for k, v in value.items():
                if k != "parts":
                    content[k] = _copy(v)
            parts = content.setdefault("parts", [])
            for part in value.get("parts") or ():
                part = event_object(part)
                self._merge(parts, part)
                deltas += self._delta(part) if first else []
        if candidate.get("finishReason") is not None and first:
            self.complete = True
        return deltas

    def _delta(self, part: dict[str, Any]) -> list[StreamDelta]:
        if isinstance(part.get("text"), str) and part["text"]:
            return [StreamDelta("thinking" if part.get("thought") else "text", part["text"])]
        call = part.get("functionCall")
        if isinstance(call, Mapping):
            self._calls += 1
            return [StreamDelta("arguments", json.dumps(call.get("args", {}), ensure_ascii=False), self._calls - 1,
                                call.get("name"), call.get("id"))]
        return []

    @staticmethod
    def _merge(parts: list[Any], part: dict[str, Any]) -> None:
        last = parts[-1] if parts else None
        if (isinstance(last, dict) and _plain_text(last) and _plain_text(part) and "thoughtSignature" not in last
                and bool(last.get("thought")) == bool(part.get("thought"))):
            last["text"] = str(last.get("text") or "") + str(part.get("text") or "")
            if "thoughtSignature" in part:
                last["thoughtSignature"] = part["thoughtSignature"]
        else:
            parts.append(_copy(part))

    def body(self) -> dict[str, Any]:
        return dict(_copy(self._body or {}))


def _plain_text(part: Mapping[str, Any]) -> bool:
    return "text" in part and set(part) <= {"text", "thought", "thoughtSignature"}
