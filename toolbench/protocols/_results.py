"""A tool result as each provider's API takes it: the text, and the attachments it can read.

What a tool result can carry besides text, per API (read from the SDK request types:
anthropic `ToolResultBlockParam`, openai `FunctionCallOutput` and `ChatCompletionToolMessageParam`,
google-genai `FunctionResponse.parts`):

- openai (Chat Completions): text only; every attachment is listed as left out.
- openai-responses: an `output` list of `input_text`, `input_image` (a data URL) and
  `input_file` (a data URL) items: JPEG, PNG, GIF and WebP images, PDFs.
- anthropic: `content` blocks `text`, `image` (base64) and `document` (base64 PDF, or plain
  text): JPEG, PNG, GIF and WebP images, PDFs, UTF-8 text/plain.
- gemini: `functionResponse.parts` of `inlineData` (read by Gemini 3 models): PNG, JPEG and
  WebP images, PDFs, text/plain.

An image an API takes is still checked against that API's documented limits (`_media`: its
declared pixel size and bytes, read from its header), and left out for that API alone when it
is past them.

No API takes audio in a tool result. A result with attachments gets an `## Attachments` section at
the end of its text, one line per attachment (its number, kind, MIME type, size and workspace path)
saying whether it is attached or left out and why: the model knows every file exists, and where,
whatever its provider shows it. The choice is made by MIME type, whatever the kind.
"""

from __future__ import annotations

import base64
import re
from typing import Any, Final

from ._media import ImageLimits, base_type, refusal
from ._shared import result_text
from .types import AttachmentView, Exchange

IMAGES: Final = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
PDF: Final = "application/pdf"
TEXT: Final = "text/plain"
# The MIME types each API reads in a tool result; Chat Completions reads none (text only).
RESPONSES_TAKES: Final = IMAGES | {PDF}
ANTHROPIC_TAKES: Final = IMAGES | {PDF, TEXT}
GEMINI_TAKES: Final = frozenset({"image/png", "image/jpeg", "image/webp", PDF, TEXT})
HEADING: Final = "## Attachments"


def result_parts(
    exchange: Exchange, takes: frozenset[str] = frozenset(), *, text_as_utf8: bool = False,
    limits: ImageLimits | None = None, api: str = "this API",
) -> tuple[str, bool, tuple[AttachmentView, ...]]:
    """The text to send (with the `## Attachments` list when there are any), whether it is an
    error, and the attachments the API takes, in order: those whose MIME type is in `takes`
    (and, with `text_as_utf8`, text/plain only when it decodes as UTF-8: the API reads it as text;
    with `limits`, an image only when `_media.refusal` finds nothing `api` would refuse)."""
    text, is_error = result_text(exchange)
    result = exchange.result
    if result is None or not result.attachments:
        return text, is_error, ()
    sent: list[AttachmentView] = []
    lines = []
    for number, item in enumerate(result.attachments, 1):
        why = _left_out(item, takes, text_as_utf8) or (refusal(item, limits, api) if limits is not None else None)
        if why is None:
            sent.append(item)
        status = "attached" if why is None else f"left out: {why}"
        lines.append(f"- attachment {number} ({item.kind}, {item.mime_type}, {item.size:,} bytes) "
                     f"at `{item.path}`: {status}")
    section = HEADING + "\n\n" + "\n".join(lines)
    return (f"{text.rstrip()}\n\n{section}" if text.strip() else section), is_error, tuple(sent)


def _left_out(item: AttachmentView, takes: frozenset[str], text_as_utf8: bool) -> str | None:
    if item.data is None:
        return "its file cannot be read"
    if item.left_out is not None:
        return item.left_out
    mime = base_type(item.mime_type)
    if not takes:
        return "this API takes only text in a tool result"
    if mime not in takes:
        return f"this API takes no {mime} in a tool result"
    if mime == TEXT and text_as_utf8 and _utf8(item.data) is None:
        return "it is not UTF-8 text"
    return None


def _utf8(data: bytes) -> str | None:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _b64(item: AttachmentView) -> str:
    assert item.data is not None  # result_parts sends only attachments with data
    return base64.b64encode(item.data).decode("ascii")


def _name(item: AttachmentView) -> str:
    return item.path.rsplit("/", 1)[-1]


def anthropic_block(item: AttachmentView) -> dict[str, Any]:
    """An `image` or `document` block of a `tool_result`'s content."""
    mime = base_type(item.mime_type)
    if mime in IMAGES:
        return {"type": "image", "source": {"type": "base64", "media_type": mime, "data": _b64(item)}}
    if mime == PDF:
        return {"type": "document", "source": {"type": "base64", "media_type": PDF, "data": _b64(item)}}
    assert item.data is not None
    return {"type": "document", "source": {"type": "text", "media_type": TEXT, "data": item.data.decode("utf-8")}}


def responses_item(item: AttachmentView) -> dict[str, Any]:
    """An `input_image` or `input_file` item of a `function_call_output`'s output list."""
    mime = base_type(item.mime_type)
    url = f"data:{mime};base64,{_b64(item)}"
    if mime in IMAGES:
        return {"type": "input_image", "image_url": url}
    return {"type": "input_file", "filename": _name(item), "file_data": url}


def gemini_part(item: AttachmentView) -> dict[str, Any]:
    """A `FunctionResponsePart` of a `functionResponse`'s parts (REST JSON: bytes as base64)."""
    return {"inlineData": {"mimeType": base_type(item.mime_type), "data": _b64(item), "displayName": _name(item)}}


_OPAQUE: Final = re.compile(r"\S+")


def abridge(value: Any, keep: int = 24) -> Any:
    """A copy of JSON for display: each long string without whitespace (base64 data, data URLs)
    is cut to its first `keep` characters and its length, e.g. `iVBORw0KGgo…<5380 chars>` (a
    data URL keeps its `data:<type>;base64,` head as well)."""
    if isinstance(value, dict):
        return {k: abridge(v, keep) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [abridge(v, keep) for v in value]
    if isinstance(value, str) and len(value) > 2 * keep and _OPAQUE.fullmatch(value):
        head = value.index(",") + 1 if value.startswith("data:") and "," in value else 0
        return f"{value[:head + keep]}…<{len(value)} chars>"
    return value
