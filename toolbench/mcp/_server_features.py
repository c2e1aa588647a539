"""The rest of a server besides its tools, as toolbench values: resources, resource templates,
prompts, completions, log messages and resource updates; and the normalisers of what a caller
gives (`completion_ref`, `completion_argument`, `prompt_arguments`, `log_level`).

Pure functions over wire JSON (camelCase, as the server sent it), like `_mapping`: no SDK type
reaches a caller. Content follows the tool-result rules (`_mapping.map_tool_result`), so a blob
resource or an image in a prompt message becomes an `Attachment` exactly as in a tool result,
and an embedded resource or a resource link reads as it does there. Listed items are checked
for what the SDK lets through but a client cannot use well (`problem_code`, `problem`): a blank
name, a name or URI listed twice, a prompt argument without a name or named twice, a URI
template whose braces do not pair; they are listed all the same.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

from ..core.errors import ToolbenchError
from ..core.results import Attachment
from ._mapping import CONTENT_UNSUPPORTED, map_tool_result

LogLevel = Literal["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
LOG_LEVELS: tuple[LogLevel, ...] = get_args(LogLevel)  # the spec's (syslog's) order, least severe first
ITEM_INVALID = "mcp.listed_item_invalid"


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _dict(value: Any) -> dict[str, Any] | None:
    return dict(value) if isinstance(value, Mapping) else None


# -- listings -------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class McpResource:
    """One resource a server lists (`resources/list`). `problem_code`/`problem`: see the module doc."""

    server: str
    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None
    annotations: dict[str, Any] | None = None
    meta: dict[str, Any] | None = None
    problem_code: str | None = None
    problem: str | None = None

    def to_json(self) -> dict[str, Any]:
        return _drop_none({"server": self.server, "uri": self.uri, "name": self.name, "title": self.title,
                           "description": self.description, "mimeType": self.mime_type, "size": self.size,
                           "annotations": self.annotations, "_meta": self.meta, "problemCode": self.problem_code,
                           "problem": self.problem})


@dataclass(frozen=True, slots=True)
class McpResourceTemplate:
    """One resource template (`resources/templates/list`): `uri_template` is RFC 6570's form."""

    server: str
    uri_template: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    annotations: dict[str, Any] | None = None
    meta: dict[str, Any] | None = None
    problem_code: str | None = None
    problem: str | None = None

    def to_json(self) -> dict[str, Any]:
        return _drop_none({"server": self.server, "uriTemplate": self.uri_template, "name": self.name,
                           "title": self.title, "description": self.description, "mimeType": self.mime_type,
                           "annotations": self.annotations, "_meta": self.meta, "problemCode": self.problem_code,
                           "problem": self.problem})


@dataclass(frozen=True, slots=True)
class McpPromptArgument:
    """One argument a prompt takes (its value is text)."""

    name: str
    title: str | None = None
    description: str | None = None
    required: bool = False

    def to_json(self) -> dict[str, Any]:
        return _drop_none({"name": self.name, "title": self.title, "description": self.description,
                           "required": self.required})


@dataclass(frozen=True, slots=True)
class McpPrompt:
    """One prompt a server lists (`prompts/list`)."""

    server: str
    name: str
    title: str | None = None
    description: str | None = None
    arguments: tuple[McpPromptArgument, ...] = ()
    meta: dict[str, Any] | None = None
    problem_code: str | None = None
    problem: str | None = None

    def to_json(self) -> dict[str, Any]:
        return _drop_none({"server": self.server, "name": self.name, "title": self.title,
                           "description": self.description, "arguments": [a.to_json() for a in self.arguments],
                           "_meta": self.meta, "problemCode": self.problem_code, "problem": self.problem})


def _drop_none(value: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in value.items() if v is not None}


def resources_of(server: str, wire: Sequence[Mapping[str, Any]]) -> list[McpResource]:
    seen: set[str] = set()
    out = []
    for item in wire:
        uri, name = str(item.get("uri", "")), str(item.get("name", ""))
        problem = _blank("resource", "name", name) or _blank("resource", "uri", uri) or _twice("URI", uri, seen)
        out.append(McpResource(server, uri, name, _str(item.get("title")), _str(item.get("description")),
                               _str(item.get("mimeType")), item.get("size") if isinstance(item.get("size"), int)
                               else None, _dict(item.get("annotations")), _dict(item.get("_meta")),
                               *_coded(problem)))
    return out


def templates_of(server: str, wire: Sequence[Mapping[str, Any]]) -> list[McpResourceTemplate]:
    seen: set[str] = set()
    out = []
    for item in wire:
        template, name = str(item.get("uriTemplate", "")), str(item.get("name", ""))
        problem = (_blank("resource template", "name", name) or _blank("resource template", "uriTemplate", template)
                   or _braces(template) or _twice("URI template", template, seen))
        out.append(McpResourceTemplate(server, template, name, _str(item.get("title")), _str(item.get("description")),
                                       _str(item.get("mimeType")), _dict(item.get("annotations")),
                                       _dict(item.get("_meta")), *_coded(problem)))
    return out


def prompts_of(server: str, wire: Sequence[Mapping[str, Any]]) -> list[McpPrompt]:
    seen: set[str] = set()
    out = []
    for item in wire:
        name = str(item.get("name", ""))
        arguments = tuple(
            McpPromptArgument(str(a.get("name", "")), _str(a.get("title")), _str(a.get("description")),
                              a.get("required") is True)
            for a in item.get("arguments") or () if isinstance(a, Mapping))
        problem = _blank("prompt", "name", name) or _twice("name", name, seen) or _argument_problem(arguments)
        out.append(McpPrompt(server, name, _str(item.get("title")), _str(item.get("description")), arguments,
                             _dict(item.get("_meta")), *_coded(problem)))
    return out


def _coded(problem: str | None) -> tuple[str | None, str | None]:
    return (None, None) if problem is None else (ITEM_INVALID, problem)


def _blank(what: str, field: str, value: str) -> str | None:
    return f"the {what}'s `{field}` is empty" if not value.strip() else None


def _twice(what: str, value: str, seen: set[str]) -> str | None:
    if value in seen:
        return f"the {what} {value!r} is listed twice (a client reaches only one of them)"
    seen.add(value)
    return None


def _braces(template: str) -> str | None:
    depth = 0
    for char in template:
        depth += 1 if char == "{" else -1 if char == "}" else 0
        if depth not in (0, 1):
            break
    return None if depth == 0 else f"the URI template {template!r} has unpaired braces (RFC 6570)"


def _argument_problem(arguments: Sequence[McpPromptArgument]) -> str | None:
    names = [a.name for a in arguments]
    if any(not n.strip() for n in names):
        return "an argument has an empty name"
    twice = sorted({n for n in names if names.count(n) > 1})
    return f"the argument(s) {', '.join(repr(n) for n in twice)} are listed twice" if twice else None


# -- reads, prompts, completions ------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class ResourceContent:
    """One item of a `resources/read` answer: a text resource's `text` verbatim, or a blob's bytes
    as an `attachment` (the tool-result rules: kind `blob`, the item's MIME type and URI).
    `problem` says why an item is unusable (a blob that is not base64, neither text nor blob)."""

    uri: str
    mime_type: str | None
    text: str | None = None
    attachment: Attachment | None = None
    problem: str | None = None
    meta: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class ResourceRead:
    """What `read_resource` gives: the contents the server answered for `uri`, in order."""

    server: str
    uri: str
    contents: tuple[ResourceContent, ...]

    @property
    def text(self) -> str:
        """The text items, joined by blank lines ('' when there are none)."""
        return "\n\n".join(c.text for c in self.contents if c.text is not None)

    @property
    def attachments(self) -> tuple[Attachment, ...]:
        return tuple(c.attachment for c in self.contents if c.attachment is not None)


def resource_read_of(server: str, uri: str, wire: Mapping[str, Any]) -> ResourceRead:
    items = []
    for item in wire.get("contents") or ():
        if not isinstance(item, Mapping):
            continue
        mapped = map_tool_result({"content": [{"type": "resource", "resource": item}]}, empty="")
        notes = [d["message"] for d in mapped.structured["diagnostics"] if d["code"] == CONTENT_UNSUPPORTED]
        items.append(ResourceContent(str(item.get("uri", uri)), _str(item.get("mimeType")), _str(item.get("text")),
                                     mapped.attachments[0] if mapped.attachments else None,
                                     notes[0] if notes else None, _dict(item.get("_meta"))))
    return ResourceRead(server, uri, tuple(items))


@dataclass(frozen=True, slots=True)
class PromptMessage:
    """One message of a prompt: `role` (`user` / `assistant`), the content block's `kind` (text,
    image, audio, resource, resource_link) and what it says as `text` and `attachments`, mapped as
    a tool result's content is (an embedded text resource reads `Resource `<uri>` ...`)."""

    role: str
    kind: str
    text: str
    attachments: tuple[Attachment, ...] = ()


@dataclass(frozen=True, slots=True)
class PromptResult:
    """What `get_prompt` gives: the prompt's description (if the server sent one) and its messages."""

    server: str
    name: str
    description: str | None
    messages: tuple[PromptMessage, ...]

    @property
    def attachments(self) -> tuple[Attachment, ...]:
        return tuple(a for m in self.messages for a in m.attachments)


def prompt_result_of(server: str, name: str, wire: Mapping[str, Any]) -> PromptResult:
    messages = []
    for message in wire.get("messages") or ():
        if not isinstance(message, Mapping):
            continue
        block = message.get("content")
        mapped = map_tool_result({"content": [block]}, empty="")
        kind = block.get("type") if isinstance(block, Mapping) else None
        messages.append(PromptMessage(str(message.get("role", "")), str(kind), mapped.content, mapped.attachments))
    return PromptResult(server, name, _str(wire.get("description")), tuple(messages))


@dataclass(frozen=True, slots=True)
class Completion:
    """A `completion/complete` answer: the suggested `values` (at most 100, the spec says),
    `total` when the server knows how many there are, and whether there are more."""

    values: tuple[str, ...]
    total: int | None = None
    has_more: bool = False

    def to_json(self) -> dict[str, Any]:
        return _drop_none({"values": list(self.values), "total": self.total, "hasMore": self.has_more})


def completion_of(wire: Mapping[str, Any]) -> Completion:
    body = wire.get("completion")
    body = body if isinstance(body, Mapping) else {}
    values = tuple(str(v) for v in body.get("values") or ())
    total = body.get("total")
    return Completion(values, total if isinstance(total, int) else None, body.get("hasMore") is True)


# -- notifications --------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class LogMessage:
    """One `notifications/message` a server sent: its level, logger (None if unnamed), data
    (any JSON value) and when it arrived (`time.time()`)."""

    server: str
    level: str
    logger: str | None
    data: Any
    time: float

    def to_json(self) -> dict[str, Any]:
        return _drop_none({"server": self.server, "level": self.level, "logger": self.logger, "data": self.data,
                           "time": self.time})


@dataclass(frozen=True, slots=True)
class ResourceUpdate:
    """A `notifications/resources/updated` for a subscribed resource: read it again to see what changed."""

    server: str
    uri: str

    def to_json(self) -> dict[str, Any]:
        return {"server": self.server, "uri": self.uri}


# -- what a caller gives ----------------------------------------------------------------------

_REF_HELP = ("a prompt (its name, or a value prompts() returns), a resource template (its URI template, "
             "or a value resource_templates() returns), or the spec's {'type': 'ref/prompt', 'name': ...} "
             "or {'type': 'ref/resource', 'uri': ...}")


def completion_ref(ref: Any) -> dict[str, str]:
    """The spec's `ref/prompt` or `ref/resource` for `ref`; idempotent. A string is a prompt's name
    unless it holds a `{` (a template without a variable has nothing to complete)."""
    if isinstance(ref, McpPrompt):
        return {"type": "ref/prompt", "name": ref.name}
    if isinstance(ref, McpResourceTemplate):
        return {"type": "ref/resource", "uri": ref.uri_template}
    if isinstance(ref, McpResource):
        return {"type": "ref/resource", "uri": ref.uri}
    if isinstance(ref, str) and ref:
        return {"type": "ref/resource", "uri": ref} if "{" in ref else {"type": "ref/prompt", "name": ref}
    if isinstance(ref, Mapping):
        kind = ref.get("type")
        key = "name" if kind == "ref/prompt" else "uri" if kind == "ref/resource" else None
        if key is not None and isinstance(ref.get(key), str) and ref[key]:
            return {"type": str(kind), key: ref[key]}
    raise ToolbenchError("bench.misuse", f"complete(ref=...) takes {_REF_HELP}; not {_show(ref)}")


def completion_argument(argument: Any) -> dict[str, str]:
    """`{"name", "value"}` for `(name, value)` or a mapping with both; idempotent."""
    if isinstance(argument, Mapping) and set(argument) >= {"name", "value"}:
        name, value = argument["name"], argument["value"]
    elif isinstance(argument, tuple | list) and len(argument) == 2:
        name, value = argument
    else:
        name = value = None
    if isinstance(name, str) and name and isinstance(value, str):
        return {"name": name, "value": value}
    raise ToolbenchError("bench.misuse", "complete(argument=...) takes (name, value) or {'name': ..., 'value': ...}, "
                         f"both text (the value typed so far, '' for none); not {_show(argument)}")


def prompt_arguments(what: str, arguments: Any) -> dict[str, str] | None:
    """A prompt's (or a completion context's) arguments: None, or a mapping of names to text."""
    if arguments is None:
        return None
    if isinstance(arguments, Mapping) and all(isinstance(k, str) and isinstance(v, str) for k, v in arguments.items()):
        return dict(arguments)
    raise ToolbenchError("bench.misuse", f"{what} takes a mapping of argument names to text, e.g. "
                         f"{{'city': 'Oslo', 'days': '3'}} (MCP prompt arguments are strings); not {_show(arguments)}")


def log_level(level: Any) -> LogLevel:
    """One of `LOG_LEVELS`, in any letter case; idempotent."""
    text = level.lower() if isinstance(level, str) else None
    for known in LOG_LEVELS:
        if text == known:
            return known
    raise ToolbenchError("bench.misuse", f"set_log_level takes one of {', '.join(LOG_LEVELS)}; not {_show(level)}")


def _show(value: Any) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, default=repr)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 80 else text[:79] + "…"
