"""Tool results, their attachments, and the one projection of long results into a notice plus a file.

Every tool source (builtin, extension, MCP) goes through `project`, so a long result looks
the same to the model whatever produced it. `project` is pure: it says what to write where,
and the runtime writes it.

Binary content (images, audio, other blobs) is never text: a tool hands it over as
`Attachment`s, the runtime writes each once next to the call's records
(`attachment_path`) and the result lists them as `AttachmentRef`s. Whether a model sees one
depends on its provider (`toolbench.protocols` renders it or says it was left out).
"""

from __future__ import annotations

import hashlib
import json
import mimetypes
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, TypeAlias

from pydantic import Field

from .descriptors import Frozen
from .errors import ToolbenchError

RESULT_CONTENT_CHUNK_CHARS: Final = 3000
RESULTS_ROOT: Final = "tool-results"
ARGS_ROOT: Final = "tool-args"


AttachmentKind: TypeAlias = Literal["image", "audio", "blob"]
ATTACHMENT_KINDS: Final[tuple[AttachmentKind, ...]] = ("image", "audio", "blob")


@dataclass(frozen=True, slots=True, repr=False)
class Attachment:
    """Binary content a tool returns beside its text: `Attachment("image", "image/png", data)`.

    `kind` is `"image"`, `"audio"` or `"blob"` (anything else, such as a PDF or an MCP blob
    resource); `mime_type` says what the bytes are; `uri` names where they came from, when
    known (an MCP resource). Raises `ToolbenchError` (`bench.misuse`) for another kind, an
    empty MIME type or data that is not bytes."""

    kind: AttachmentKind
    mime_type: str
    data: bytes
    uri: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in ATTACHMENT_KINDS:
            raise ToolbenchError("bench.misuse", f"an attachment's kind is one of {', '.join(ATTACHMENT_KINDS)}, "
                                 f"not {self.kind!r}")
        if not isinstance(self.mime_type, str) or "/" not in self.mime_type:
            raise ToolbenchError("bench.misuse", f"an attachment's mime_type is a MIME type such as image/png, "
                                 f"not {self.mime_type!r}")
        if isinstance(self.data, bytearray | memoryview):
            object.__setattr__(self, "data", bytes(self.data))
        elif not isinstance(self.data, bytes):
            raise ToolbenchError("bench.misuse", f"an attachment's data is bytes, not {type(self.data).__name__}")

    def __repr__(self) -> str:  # the size, not the bytes: an image would fill a notebook
        uri = f", uri={self.uri!r}" if self.uri is not None else ""
        return f"Attachment({self.kind!r}, {self.mime_type!r}, <{len(self.data)} bytes>{uri})"


class AttachmentRef(Frozen):
    """An attachment as kept: its file (relative to the workspace root), size and digest."""

    kind: AttachmentKind
    mime_type: str
    path: str
    size: int
    sha256: str
    uri: str | None = None


def _empty(value: tuple[Any, ...]) -> bool:
    return not value


class ToolResult(Frozen):
    """What one call gave back. The model reads `content` (and, where its provider takes them,
    the `attachments`); `structured` stays in the records."""

    call_id: str
    tool_id: str | None = None  # None when the call named no tool of the snapshot
    content: str
    structured: Any = None
    is_error: bool = False
    error_code: str | None = None
    resource_refs: tuple[str, ...] = Field(default=())
    # Left out of the JSON when empty: a result without attachments is stored (and costs) as before.
    attachments: tuple[AttachmentRef, ...] = Field(default=(), exclude_if=_empty)

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)


_RESULT_FIELDS = frozenset(ToolResult.model_fields)


def trusted_result(call_id: str, tool_id: str | None, content: str, structured: Any,
                   resource_refs: tuple[str, ...], attachments: tuple[AttachmentRef, ...] = ()) -> ToolResult:
    """A successful ToolResult from typed runtime values, built without validation.

    The per-call path: pydantic's `model_construct` costs ~20 µs here, a third of the
    runtime's whole budget; this sets the same four slots `model_construct` sets."""
    result = ToolResult.__new__(ToolResult)
    object.__setattr__(result, "__dict__", {
        "call_id": call_id, "tool_id": tool_id, "content": content, "structured": structured,
        "is_error": False, "error_code": None, "resource_refs": resource_refs, "attachments": attachments})
    object.__setattr__(result, "__pydantic_fields_set__", set(_RESULT_FIELDS))
    object.__setattr__(result, "__pydantic_extra__", None)
    object.__setattr__(result, "__pydantic_private__", None)
    return result


def error_result(call_id: str, tool_id: str | None, code: str, message: str, extra: Any = None) -> ToolResult:
    structured: dict[str, Any] = {"error": {"code": code, "message": message}}
    if isinstance(extra, dict):
        structured.update(extra)
    elif extra is not None:
        structured["details"] = extra
    return ToolResult(call_id=call_id, tool_id=tool_id, content=message, structured=structured,
                      is_error=True, error_code=code)


def call_file_stem(invocation_id: str, round_no: int, call_id: str) -> str:
    """`<invocation>/round-NNN-call_<16 hex of sha256(call id)>` (reference §5.3)."""
    # surrogatepass: a provider's id can hold a lone surrogate (local model servers send them)
    digest = hashlib.sha256(call_id.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{invocation_id}/round-{round_no:03d}-call_{digest}"


# File name endings by MIME type; Python's own table (not the system's, which differs between
# machines) for the rest, and `.bin` when neither knows it: the names stay the same everywhere.
_SUFFIXES: Final = {
    "image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp",
    "image/svg+xml": ".svg", "image/bmp": ".bmp", "image/tiff": ".tiff", "image/avif": ".avif",
    "audio/wav": ".wav", "audio/x-wav": ".wav", "audio/wave": ".wav", "audio/mpeg": ".mp3", "audio/mp3": ".mp3",
    "audio/ogg": ".ogg", "audio/flac": ".flac", "audio/webm": ".weba", "audio/mp4": ".m4a", "audio/aac": ".aac",
    "application/pdf": ".pdf", "application/gzip": ".gz", "application/zip": ".zip", "application/json": ".json",
    "text/plain": ".txt", "text/markdown": ".md", "text/html": ".html", "text/csv": ".csv",
}
_PYTHON_TYPES: Final = mimetypes.MimeTypes(filenames=())
_SAFE_SUFFIX: Final = re.compile(r"\.[a-z0-9]{1,8}")


def attachment_suffix(mime_type: str) -> str:
    """The file name ending for a MIME type (parameters such as `; charset=` ignored)."""
    base = mime_type.split(";", 1)[0].strip().lower()
    suffix = _SUFFIXES.get(base) or _PYTHON_TYPES.guess_extension(base) or ".bin"
    return suffix if _SAFE_SUFFIX.fullmatch(suffix) else ".bin"


def attachment_path(stem: str, index: int, mime_type: str, results_root: str = RESULTS_ROOT) -> str:
    """`tool-results/<call file stem>-<index><suffix>`: attachment `index` (from 1) of a call."""
    return f"{results_root}/{stem}-{index}{attachment_suffix(mime_type)}"


def wrap_long_lines(text: str, width: int = RESULT_CONTENT_CHUNK_CHARS) -> str:
    """Insert a newline every `width` characters of a line, so every line is addressable."""
    if len(text) <= width or not _has_line_longer_than(text, width):
        return text  # the common case costs no copy
    out = []
    for line in text.split("\n"):
        if len(line) <= width:
            out.append(line)
        else:
            out.append("\n".join(line[i : i + width] for i in range(0, len(line), width)))
    return "\n".join(out)


def _has_line_longer_than(text: str, width: int) -> bool:
    # Every line that starts and ends within width + 1 characters from `start` is short enough,
    # so each step jumps to the last newline there: about len(text) / width steps, not one a line.
    start, end = 0, len(text)
    while start < end:
        newline = text.rfind("\n", start, start + width + 1)
        if newline == -1:
            return end - start > width
        start = newline + 1
    return False


@dataclass(frozen=True, slots=True)
class Externalized:
    """The projection of a long result: the notice the model gets and the two files to write
    (the readable text, and the raw result as audit JSON)."""

    result: ToolResult
    readable_path: str
    readable_text: str
    audit_path: str
    raw: ToolResult

    @property
    def audit_text(self) -> str:
        return audit_json(self.raw)


def project(
    result: ToolResult,
    *,
    limit: int,
    invocation_id: str,
    round_no: int,
    read_call_name: str | None,
    search_call_name: str | None,
    results_root: str = RESULTS_ROOT,
) -> Externalized | None:
    """None when `result.content` fits in `limit` characters; else the externalised form.

    Only the text counts and moves to the file: the result's attachments are files already,
    and the projected result keeps them."""
    count = len(result.content)
    if count <= limit:
        return None
    stem = f"{results_root}/{call_file_stem(invocation_id, round_no, result.call_id)}"
    readable, audit = f"{stem}.txt", f"{stem}.json"
    lines = [
        f"This result is too large to include in full ({count} characters). "
        f"The full result is saved at `{readable}`."
    ]
    if read_call_name:
        lines.append(
            f"Use `{read_call_name}` with path `{readable}` to read the full result; if it returns another "
            "preview, continue from the next line it indicates."
        )
    if search_call_name:
        lines.append(f"Use `{search_call_name}` on the same path to find specific text.")
    notice = "\n".join(lines)
    preview = result.content[:RESULT_CONTENT_CHUNK_CHARS]
    if preview:
        notice += (
            "\n\n## Prefix preview\n\n"
            f"What follows is at most {RESULT_CONTENT_CHUNK_CHARS} Unicode characters from the start of the "
            "result; it is not the complete result.\n\n" + preview
        )
    refs = list(result.resource_refs)
    for ref in (readable, audit):
        if ref not in refs:
            refs.append(ref)
    projected = result.model_copy(
        update={
            "content": notice,
            "structured": {"externalized": True, "path": readable, "auditPath": audit,
                           "charCount": count, "charLimit": limit},
            "resource_refs": tuple(refs),
        }
    )
    return Externalized(
        result=projected,
        readable_path=readable,
        readable_text=wrap_long_lines(result.content),
        audit_path=audit,
        raw=result,
    )


def audit_json(result: ToolResult) -> str:
    return json.dumps(result.to_json(), indent=2, ensure_ascii=False) + "\n"


@dataclass(frozen=True, slots=True)
class ToolOutput:
    """A tool's successful answer: the text the model reads, the JSON kept for records, and
    binary content as `attachments` (`ToolOutput(text, attachments=[Attachment(kind,
    mime_type, data)])`), which the runtime writes next to the call's records before the call
    returns; never put binary data in the text."""

    content: str
    structured: Any = None
    resource_refs: tuple[str, ...] = ()
    attachments: Sequence[Attachment] = ()
