"""From an MCP `tools/call` answer to the text a model reads (reference §5.4 step 1, §5.5, table 9.11).

Pure functions over the wire JSON (camelCase keys, as a server sends it), so they are tested with
tables and never see SDK types. Sections are joined by a blank line:

1. the trimmed text blocks, each left out when it is only the JSON of `structuredContent`;
2. `## Details` and a markdown rendering of `structuredContent`, when present and not null;
   except for the SDK's `{"result": X}` wrapper of a non-object return value: when a text block
   already is X, the text stays and the details are left out (they would repeat it);
3. `## Notes` and one `- <message>` line per block the model cannot read (images, audio,
   resources, unknown types); result metadata is recorded but never noted;
4. for a protocol error, `## Error details` and a rendering of the error's `data`.

With no section, the content is `EMPTY_RESULT`. `structured` (kept for records, never sent to the
model) is `{structuredContent, diagnostics: [{code, message, contentIndex}]}`, or
`{serverError: {code, message, data}}` for a protocol error.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

EMPTY_RESULT = "The tool completed without content."
CONTENT_UNSUPPORTED = "mcp.call_content_unsupported"
METADATA_UNSUPPORTED = "mcp.call_metadata_unsupported"
_RESERVED_META_PREFIX = "io.modelcontextprotocol/"  # the SDK's own stamps (serverInfo, ...)
_MAX_DEPTH = 12


@dataclass(frozen=True, slots=True)
class MappedResult:
    """The model-facing text, the record-only JSON, and whether the server flagged an error."""

    content: str
    structured: dict[str, Any]
    is_error: bool


def map_tool_result(result: Mapping[str, Any]) -> MappedResult:
    """Map a `CallToolResult` (wire JSON) to content and structured data."""
    blocks = result.get("content") or []
    structured_content = result.get("structuredContent")
    has_structured = structured_content is not None
    wrapped = _wrapped_value(structured_content)
    texts: list[str] = []
    wrapper_echoed = False
    diagnostics: list[dict[str, Any]] = []
    for index, block in enumerate(blocks if isinstance(blocks, list) else []):
        kind = block.get("type") if isinstance(block, Mapping) else None
        if kind == "text" and isinstance(block.get("text"), str):
            text = block["text"].strip()
            if wrapped is not _NOTHING and _same_as(text, wrapped):
                wrapper_echoed = True
                texts.append(text)
            elif text and not (has_structured and _same_as(text, structured_content)):
                texts.append(text)
            continue
        diagnostics.append({"code": CONTENT_UNSUPPORTED, "message": _unreadable(block), "contentIndex": index})
    meta = result.get("_meta")
    if isinstance(meta, Mapping) and any(not str(k).startswith(_RESERVED_META_PREFIX) for k in meta):
        diagnostics.append(
            {"code": METADATA_UNSUPPORTED, "message": "Result metadata is not supported", "contentIndex": None}
        )

    sections: list[str] = []
    if texts:
        sections.append("\n\n".join(texts))
    if has_structured and not wrapper_echoed:
        sections.append("## Details\n\n" + render_markdown(structured_content))
    notes = [d["message"] for d in diagnostics if d["code"] != METADATA_UNSUPPORTED]
    if notes:
        sections.append("## Notes\n\n" + "\n".join(f"- {m}" for m in notes))
    return MappedResult(
        content="\n\n".join(sections) or EMPTY_RESULT,
        structured={"structuredContent": structured_content, "diagnostics": diagnostics},
        is_error=result.get("isError") is True,
    )


def map_server_error(code: int, message: str, data: Any = None) -> MappedResult:
    """Map a JSON-RPC error answer: its message, then `## Error details` when it has data."""
    text = message.strip() or f"The MCP server answered with error {code}."
    if data is not None:
        text += "\n\n## Error details\n\n" + render_markdown(data)
    return MappedResult(
        content=text, structured={"serverError": {"code": code, "message": message, "data": data}}, is_error=True
    )


def response_chars(result: Mapping[str, Any]) -> int:
    """How many characters a `CallToolResult` carries: text, binary data (base64), resources, JSON."""
    total = 0
    for block in result.get("content") or []:
        if not isinstance(block, Mapping):
            continue
        for key in ("text", "data"):
            if isinstance(block.get(key), str):
                total += len(block[key])
        resource = block.get("resource")
        if isinstance(resource, Mapping):
            for key in ("text", "blob"):
                if isinstance(resource.get(key), str):
                    total += len(resource[key])
    if result.get("structuredContent") is not None:
        total += len(json.dumps(result["structuredContent"], ensure_ascii=False, default=str))
    return total


def render_markdown(value: Any) -> str:
    """A bullet-list rendering of JSON: `- key: value`, nested lists indented by two spaces."""
    return "\n".join(_render(value, 0))


def _render(value: Any, depth: int) -> list[str]:
    if depth >= _MAX_DEPTH and isinstance(value, Mapping | list):
        return [json.dumps(value, ensure_ascii=False, default=str)]
    if isinstance(value, Mapping) and value:
        lines: list[str] = []
        for key, item in value.items():
            if _is_leaf(item):
                lines.extend(_bullet(f"{key}: ", _scalar(item)))
            else:
                lines.append(f"- {key}:")
                lines.extend("  " + line for line in _render(item, depth + 1))
        return lines
    if isinstance(value, list) and value:
        lines = []
        for index, item in enumerate(value):
            if _is_leaf(item):
                lines.extend(_bullet("", _scalar(item)))
            else:
                lines.append(f"- [{index}]")
                lines.extend("  " + line for line in _render(item, depth + 1))
        return lines
    return _scalar(value).splitlines() or [""]


def _bullet(prefix: str, text: str) -> list[str]:
    first, *rest = text.splitlines() or [""]
    return [f"- {prefix}{first}", *("  " + line for line in rest)]


def _is_leaf(value: Any) -> bool:
    return not (isinstance(value, Mapping | list) and value)


def _scalar(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping | list):
        return "{}" if isinstance(value, Mapping) else "[]"
    return json.dumps(value, ensure_ascii=False, default=str)


_NOTHING = object()


def _wrapped_value(structured: Any) -> Any:
    """X when `structured` is the SDK's `{"result": X}` wrapper of a non-object return value."""
    if isinstance(structured, Mapping) and list(structured) == ["result"]:
        return structured["result"]
    return _NOTHING


def _same_as(text: str, value: Any) -> bool:
    """Whether `text` is `value` itself (a string) or only its JSON serialisation."""
    if isinstance(value, str) and text == value.strip():
        return True
    if not text or text[0] not in "{[\"-0123456789tfn":
        return False
    try:
        return json.loads(text) == value
    except ValueError:
        return False


def _unreadable(block: Any) -> str:
    if not isinstance(block, Mapping):
        return "A content block that is not an object was left out"
    kind = block.get("type")
    mime = block.get("mimeType")
    detail = f" ({mime})" if isinstance(mime, str) and mime else ""
    if kind == "image":
        return f"Image content is not supported{detail}; it was left out"
    if kind == "audio":
        return f"Audio content is not supported{detail}; it was left out"
    if kind == "resource_link":
        return f"Resource content is not supported (link `{block.get('uri', '?')}`); it was left out"
    if kind == "resource":
        resource = block.get("resource")
        uri = resource.get("uri", "?") if isinstance(resource, Mapping) else "?"
        return f"Resource content is not supported (embedded `{uri}`); it was left out"
    return f"Content of type `{kind}` is not supported; it was left out"
