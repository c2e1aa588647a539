"""Streamed Chat Completions and Responses answers, put back into the body the API would have
sent unstreamed.

Chat Completions follows the openai SDK's own accumulator (`openai.lib.streaming.chat`,
`accumulate_delta`): a choice's deltas merge into its message (strings joined, lists of
indexed entries merged by `index`, `index` and `type` replaced), so a vendor field such as
DeepSeek's `reasoning_content` is assembled like `content`, with no list of names; `obfuscation`
is dropped and chunks of another `object` (Azure's asynchronous filter events) are skipped, as
the SDK does. The stream is complete at a choice's `finish_reason` (or the `[DONE]` sentinel,
which a recorded stream holds and an SDK consumes); the usage chunk that may follow is kept.
Tool calls lose the `index` only streaming needs, so the body is the unstreamed one.
Responses needs no assembly: `response.completed` (or `.incomplete`, `.failed`) carries the
whole response; before it the body is the output items seen so far.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..core.errors import ToolbenchError
from .types import StreamDelta


def malformed(what: str) -> ToolbenchError:
    return ToolbenchError("model.stream_malformed", f"a stream event is not the provider's shape: {what}")


def event_object(event: Any) -> dict[str, Any]:
    if not isinstance(event, Mapping):
        raise malformed(f"an event is {type(event).__name__}, not a JSON object")
    return dict(event)


def accumulate(acc: dict[str, Any], delta: Mapping[str, Any]) -> dict[str, Any]:
    """`delta` merged into `acc` as openai's `accumulate_delta` merges them."""
    for key, value in delta.items():
        if acc.get(key) is None:
            if _indexed(value):
                acc[key] = []
            else:
                acc[key] = _copy(value)
                continue
        before = acc[key]
        if key in ("index", "type"):
            acc[key] = value
        elif _joins(before, value):  # text joined, numbers added (as the SDK does)
            acc[key] = before + value
        elif isinstance(before, dict) and isinstance(value, Mapping):
            accumulate(before, value)
        elif isinstance(before, list) and isinstance(value, list):
            if all(isinstance(x, (str, int, float)) for x in before) and (before or not _indexed(value)):
                before.extend(value)
                continue
            for entry in value:
                if not isinstance(entry, Mapping) or not isinstance(entry.get("index"), int):
                    raise malformed(f"an entry of `{key}` has no integer `index`")
                at = entry["index"]
                if at < len(before):
                    if not isinstance(before[at], dict):
                        raise malformed(f"`{key}[{at}]` is not an object")
                    accumulate(before[at], entry)
                else:
                    before.insert(at, _copy(entry))
        # else: a value of another type (DeepSeek's `reasoning_content: null` once the content
        # starts) leaves what came before, as the SDK leaves it
    return acc


def _joins(before: Any, value: Any) -> bool:
    if isinstance(before, str):
        return isinstance(value, str)
    number = (int, float)
    return isinstance(before, number) and isinstance(value, number) and not isinstance(value, bool)


def _indexed(value: Any) -> bool:
    return isinstance(value, list) and any(isinstance(x, Mapping) and "index" in x for x in value)


def _copy(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


class ChatStream:
    """One streamed Chat Completions answer (`StreamAssembly`)."""

    def __init__(self) -> None:
        self._body: dict[str, Any] | None = None
        self._choices: dict[int, dict[str, Any]] = {}
        self._calls: dict[Any, Any] = {}  # a call's index: its id (later deltas carry only the index)
        self.complete = False

    def feed(self, event: Any) -> list[StreamDelta]:
        if event == "[DONE]":  # the sentinel a recorded stream ends with (an SDK consumes it)
            self.complete = True
            return []
        chunk = event_object(event)
        if chunk.get("error") is not None:  # an error event (Groq's), as the SDK raises it
            raise ToolbenchError("model.provider_error", f"the stream reported an error: {json.dumps(chunk)[:300]}")
        if chunk.get("object", "chat.completion.chunk") != "chat.completion.chunk":
            return []  # Azure's asynchronous content-filter events, skipped as the SDK skips them
        choices = chunk.get("choices")
        if not isinstance(choices, list):
            raise malformed("a chunk has no `choices` list")
        if self._body is None:
            self._body = {k: _copy(v) for k, v in chunk.items() if k not in ("obfuscation", "usage")}
            self._body["object"] = "chat.completion"
            self._body["choices"] = []
        else:
            for key, value in chunk.items():
                if key not in ("choices", "object", "obfuscation", "usage") and value is not None:
                    self._body[key] = _copy(value)
        if chunk.get("usage") is not None:
            self._body["usage"] = _copy(chunk["usage"])
        deltas: list[StreamDelta] = []
        for choice in choices:
            deltas += self._choice(event_object(choice))
        return deltas

    def _choice(self, choice: dict[str, Any]) -> list[StreamDelta]:
        at = choice.get("index", 0)
        delta = choice.get("delta") or {}
        if not isinstance(at, int) or not isinstance(delta, Mapping):
            raise malformed("a choice has no integer `index` or its `delta` is not an object")
        snapshot = self._choices.get(at)
        if snapshot is None:
            snapshot = self._choices[at] = {}
            for key, value in choice.items():
                snapshot["message" if key == "delta" else key] = {} if key == "delta" else _copy(value)
            snapshot.setdefault("message", {})
            assert self._body is not None
            self._body["choices"].append(snapshot)
        else:
            for key, value in choice.items():
                if key == "logprobs" and isinstance(value, Mapping) and isinstance(snapshot.get(key), dict):
                    accumulate(snapshot[key], value)
                elif key not in ("delta", "index") and value is not None:
                    snapshot[key] = _copy(value)
        accumulate(snapshot["message"], delta)
        if choice.get("finish_reason") is not None and at == 0:
            self.complete = True
        return self._deltas(at, delta) if at == 0 else []

    def _deltas(self, at: int, delta: Mapping[str, Any]) -> list[StreamDelta]:
        out: list[StreamDelta] = []
        for key in ("reasoning_content", "reasoning"):
            if isinstance(delta.get(key), str) and delta[key]:
                out.append(StreamDelta("thinking", delta[key]))
        if isinstance(delta.get("content"), str) and delta["content"]:
            out.append(StreamDelta("text", delta["content"]))
        for call in delta.get("tool_calls") or ():
            if not isinstance(call, Mapping):
                continue
            held = call.get("function")
            function: Mapping[str, Any] = held if isinstance(held, Mapping) else {}
            index = call.get("index")
            first = index not in self._calls
            if first or call.get("id"):
                self._calls[index] = call.get("id")
            fragment = function.get("arguments")
            out.append(StreamDelta("arguments", fragment if isinstance(fragment, str) else "", index,
                                   function.get("name") if first else None, self._calls[index]))
        return out

    def body(self) -> dict[str, Any]:
        body: dict[str, Any] = dict(_copy(self._body or {"object": "chat.completion", "choices": []}))
        for choice in body["choices"]:
            for call in choice.get("message", {}).get("tool_calls") or ():
                if isinstance(call, dict):
                    call.pop("index", None)
        return body


_FINAL = ("response.completed", "response.incomplete", "response.failed")


class ResponsesStream:
    """One streamed Responses answer (`StreamAssembly`)."""

    def __init__(self) -> None:
        self._response: dict[str, Any] = {}
        self._items: dict[int, dict[str, Any]] = {}
        self.complete = False

    def feed(self, event: Any) -> list[StreamDelta]:
        if event == "[DONE]":  # OpenRouter ends its Responses streams with it too
            return []
        event = event_object(event)
        kind = event.get("type")
        if not isinstance(kind, str):
            raise malformed("a Responses event has no `type`")
        if kind == "error":
            raise ToolbenchError("model.provider_error", f"the stream reported an error: {json.dumps(event)[:300]}")
        if kind in _FINAL or kind in ("response.created", "response.in_progress"):
            response = event.get("response")
            if not isinstance(response, Mapping):
                raise malformed(f"`{kind}` has no `response` object")
            self._response = _copy(response)
            self.complete = kind in _FINAL
            return []
        at = event.get("output_index")
        if kind in ("response.output_item.added", "response.output_item.done"):
            item = event.get("item")
            if not isinstance(item, Mapping) or not isinstance(at, int):
                raise malformed(f"`{kind}` has no `item` or `output_index`")
            first = at not in self._items
            self._items[at] = _copy(item)
            if first and item.get("type") == "function_call":
                return [StreamDelta("arguments", "", at, item.get("name"), item.get("call_id"))]
            return []
        delta = event.get("delta")
        if not isinstance(delta, str):
            return []
        if kind == "response.output_text.delta":
            return [StreamDelta("text", delta)]
        if kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            return [StreamDelta("thinking", delta)]
        if kind == "response.function_call_arguments.delta":
            item = self._items.get(at) if isinstance(at, int) else None
            if item is not None:
                item["arguments"] = str(item.get("arguments") or "") + delta
            return [StreamDelta("arguments", delta, at, call_id=item.get("call_id") if item else None)]
        return []

    def body(self) -> dict[str, Any]:
        if self.complete:
            return dict(_copy(self._response))
        return {**_copy(self._response), "output": [_copy(self._items[k]) for k in sorted(self._items)]}
