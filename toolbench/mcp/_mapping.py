"""From an MCP `tools/call` answer to the text a model reads and the attachments kept beside it
(reference §5.4 step 1, §5.5, table 9.11; issue 13 where they differ).

Pure functions over the wire JSON (camelCase keys, as a server sends it), so they are tested with
tables and never see SDK types. The content is made of sections joined by a blank line:

1. the content blocks the model can read, in order: each text block trimmed (a block that is a
   binary payload, or JSON holding some, shows attachment references instead); an embedded text
   resource as `Resource `<uri>` (<mime>):` and its text; a resource link as one line with its
   URI, name, MIME type and description;
2. `## Details` and a markdown rendering of what `structuredContent` adds to them (`_details`):
   the parts the text already says (the same string, the same JSON, copies of content blocks)
   are left out, and binary payloads become references to attachments; no section when nothing
   is left. Text always wins: a text block that is the JSON of `structuredContent` stays, and
   the details go (the reference drops the text instead; the model then read our rendering,
   not what the server wrote);
3. `## Notes` and one `- <message>` line per block that cannot be used (an unknown type, data
   that is not base64, the attachments of an error result, which are not kept); result
   metadata is recorded but never noted;
4. for a protocol error, `## Error details` and a rendering of the error's `data`.

Binary content (image and audio blocks, blob resources, binary payloads in `structuredContent`)
is never text: each distinct payload becomes one `Attachment` (kind `image`, `audio` or `blob`)
in `MappedResult.attachments`, numbered from 1 as found; the runtime writes them to files and
each provider's renderer sends them as that API takes them. With no section, the content is
`EMPTY_RESULT`, unless there are attachments (then it is empty: the attachments are the result).
`structured` (kept for records, never sent to the model) is `{structuredContent, diagnostics:
[{code, message, contentIndex}]}` with binary payloads replaced by their references, or
`{serverError: {code, message, data}}` for a protocol error.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..core.results import Attachment
from ._details import GONE, NOT_JSON, Binaries, clean, scrub_text

EMPTY_RESULT = "The tool completed without content."
CONTENT_UNSUPPORTED = "mcp.call_content_unsupported"
METADATA_UNSUPPORTED = "mcp.call_metadata_unsupported"
_RESERVED_META_PREFIX = "io.modelcontextprotocol/"  # the SDK's own stamps (serverInfo, ...)
_MAX_DEPTH = 12
_JSON_START = frozenset("{[\"-0123456789tfn")


@dataclass(frozen=True, slots=True)
class MappedResult:
    """The model-facing text, the record-only JSON, whether the server flagged an error, and the
    binary content to keep as files (none for an error result)."""

    content: str
    structured: dict[str, Any]
    is_error: bool
    attachments: tuple[Attachment, ...] = ()


def map_tool_result(result: Mapping[str, Any], *, empty: str = EMPTY_RESULT) -> MappedResult:
    """Map a `CallToolResult` (wire JSON) to content, structured data and attachments.

    `empty` is the content when nothing is left (a prompt message or a resource says nothing
    about a tool, so `_server_features` passes "")."""
    blocks = result.get("content")
    blocks = blocks if isinstance(blocks, list) else []
    is_error = result.get("isError") is True
    binaries = Binaries(keep=not is_error)
    texts: list[str] = []
    said: set[str] = set()
    said_json: list[Any] = []
    diagnostics: list[dict[str, Any]] = []
    for index, block in enumerate(blocks):
        problem = _read_block(block, texts, said, said_json, binaries)
        if problem is not None:
            diagnostics.append({"code": CONTENT_UNSUPPORTED, "message": problem, "contentIndex": index})
    if len(texts) > 1:
        said.add("\n\n".join(texts))
    meta = result.get("_meta")
    if isinstance(meta, Mapping) and any(not str(k).startswith(_RESERVED_META_PREFIX) for k in meta):
        diagnostics.append(
            {"code": METADATA_UNSUPPORTED, "message": "Result metadata is not supported", "contentIndex": None}
        )

    structured_content = result.get("structuredContent")
    recorded, shown = None, GONE
    if structured_content is not None:
        recorded, shown = clean(structured_content, said=said, said_json=said_json, blocks=blocks,
                                binaries=binaries)
    if is_error:
        for item in binaries.items:
            diagnostics.append({"code": CONTENT_UNSUPPORTED, "contentIndex": None, "message":
                                f"{item.kind.capitalize()} content ({item.mime_type}, {len(item.data):,} bytes) "
                                "of an error result is not kept; it was left out"})

    sections: list[str] = []
    if texts:
        sections.append("\n\n".join(texts))
    if shown is not GONE:
        sections.append("## Details\n\n" + render_markdown(shown))
    notes = [d["message"] for d in diagnostics if d["code"] != METADATA_UNSUPPORTED]
    if notes:
        sections.append("## Notes\n\n" + "\n".join(f"- {m}" for m in notes))
    kept = () if is_error else tuple(binaries.items)
    return MappedResult(
        content="\n\n".join(sections) or ("" if kept else empty),
        structured={"structuredContent": recorded, "diagnostics": diagnostics},
        is_error=is_error,
        attachments=kept,
    )


def _read_block(block: Any, texts: list[str], said: set[str], said_json: list[Any], binaries: Binaries) -> str | None:
    """Take one content block into the text or the attachments; the note when it cannot be used."""
    if not isinstance(block, Mapping):
        return "A content block that is not an object was left out"
    kind = block.get("type")
    if kind == "text" and isinstance(block.get("text"), str):
        text = block["text"].strip()
        if text:
            parsed: Any = NOT_JSON
            if text[0] in _JSON_START:
                with contextlib.suppress(ValueError):  # text that only looks like JSON
                    parsed = json.loads(text)
            if parsed is not NOT_JSON:
                said_json.append(parsed)
            said.add(text)
            texts.append(scrub_text(text, parsed, binaries))
        return None
    if kind in ("image", "audio") and isinstance(block.get("data"), str):
        if binaries.add(kind, block.get("mimeType"), block["data"]) is None:
            return f"{kind.capitalize()} content{_mime(block)} is not valid base64; it was left out"
        return None
    resource = block.get("resource")
    if kind == "resource" and isinstance(resource, Mapping):
        uri = resource.get("uri", "?")
        if isinstance(resource.get("text"), str):
            text = resource["text"].strip()
            said.add(text)
            texts.append(f"Resource `{uri}`{_mime(resource)}:\n\n{text}" if text else f"Resource `{uri}` is empty.")
            return None
        if isinstance(resource.get("blob"), str):
            if binaries.add("blob", resource.get("mimeType"), resource["blob"], uri) is None:
                return f"Resource `{uri}`{_mime(resource)} is not valid base64; it was left out"
            return None
        return f"Resource `{uri}` has neither text nor a blob; it was left out"
    if kind == "resource_link" and isinstance(block.get("uri"), str):
        texts.append(_link(block))
        return None
    return f"Content of type `{kind}` is not supported; it was left out"


def _mime(item: Mapping[str, Any]) -> str:
    mime = item.get("mimeType")
    return f" ({mime})" if isinstance(mime, str) and mime else ""


def _link(block: Mapping[str, Any]) -> str:
    name = block.get("title") or block.get("name")
    facts = ", ".join(str(x) for x in (name, block.get("mimeType")) if isinstance(x, str) and x)
    line = f"Resource link `{block['uri']}`" + (f" ({facts})" if facts else "")
    description = block.get("description")
    return line + (f": {description.strip()}" if isinstance(description, str) and description.strip() else "")


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
