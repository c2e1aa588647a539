"""Reading recorded tool results back: what a request body told the model each call returned.

A request carries the results of the rounds before it in its history (Chat Completions `tool`
messages, Responses `function_call_output` items, Anthropic `tool_result` blocks, Gemini
`functionResponse` parts). Each provider reads its own elements (`read_result`, next to its
`encode_result`) and groups them as they stand in the history (`read_results`: one group per
message or run of items that carries results); `pair` gives each result its call id.

`is_error` is the API's own flag where it has one (Anthropic's `is_error`, a Gemini response's
`error` key), else the `## Tool error` heading toolbench puts first in an error's text
(`encode_history`); the heading and the blank line after it are not part of `content`, so a
recorded error reads as the tool's message, as toolbench's own records hold it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from ._shared import ERROR_HEADING, invalid_response
from .types import DecodedCall, RecordedResult


class ResultReader(Protocol):
    """A provider that reads its results back (the built-in ones do; a user's may not)."""

    def read_results(self, request: Any) -> list[list[RecordedResult]]: ...

    def read_result(self, element: Any) -> RecordedResult: ...


def split_error(text: str, flagged: bool = False) -> tuple[str, bool]:
    """The content without toolbench's error heading, and whether it is an error (`flagged`,
    the API's own flag, or the heading)."""
    head = ERROR_HEADING + "\n\n"
    if text.startswith(head):
        return text[len(head):], True
    if text == ERROR_HEADING:
        return "", True
    return text, flagged


def text_of(value: Any) -> str:
    """A result's text: a string as is; a list of parts (text, input_text): their texts joined
    by newlines, other parts (images, files) left out; anything else as compact JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        texts = [str(p.get("text", "")) for p in value
                 if isinstance(p, Mapping) and p.get("type") in ("text", "input_text", "output_text")]
        return "\n".join(texts)
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def history(request: Any, key: str, what: str) -> list[Any]:
    """The request's history list under `key` (`messages`, `input`, `contents`)."""
    if not isinstance(request, Mapping):
        raise invalid_response(f"a {what} request body is a JSON object")
    items = request.get(key, [])
    if isinstance(items, str) and key == "input":  # Responses: a bare input string holds no results
        return []
    if not isinstance(items, list):
        raise invalid_response(f"a {what} request's `{key}` is a list")
    return items


def runs(items: Sequence[Any], keep: Callable[[Any], bool]) -> list[list[Any]]:
    """The runs of consecutive items that `keep` accepts (Chat's `tool` messages and Responses'
    `function_call_output` items answer one round as such a run)."""
    groups: list[list[Any]] = []
    inside = False
    for item in items:
        if keep(item):
            if not inside:
                groups.append([])
            groups[-1].append(item)
            inside = True
        else:
            inside = False
    return groups


def pair(groups: Sequence[Sequence[RecordedResult]], calls: Sequence[DecodedCall] = (), *,
         by_order: bool = False) -> dict[str, RecordedResult]:
    """Each recorded result by call id. A result without an id is given the id of the first call
    of `calls` (the response it answers) with its name that has no result yet; only the newest
    group is read for those: it answers the last response. With `by_order` (an API that pairs
    by order and name, Gemini), so is a result whose id names none of `calls`: a client that
    put its own ids on calls that came without one (decode named them) answers with those."""
    by_id = {r.call_id: r for group in groups for r in group if r.call_id}
    if groups:
        known = {c.call_id for c in calls}
        free = [c for c in calls if c.call_id not in by_id]
        for result in groups[-1]:
            if result.call_id and (not by_order or result.call_id in known):
                continue
            match = next((c for c in free if c.call_name == result.call_name), None)
            if match is not None:
                free.remove(match)
                by_id[match.call_id] = RecordedResult(match.call_id, result.content, result.is_error,
                                                      result.call_name)
    return by_id


__all__ = ["ResultReader", "history", "pair", "runs", "split_error", "text_of"]
