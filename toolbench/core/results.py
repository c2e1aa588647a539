"""Tool results and the one projection of long results into a notice plus a file.

Every tool source (builtin, extension, MCP) goes through `project`, so a long result looks
the same to the model whatever produced it. `project` is pure: it says what to write where,
and the runtime writes it.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any, Final

from pydantic import Field

from .descriptors import Frozen

RESULT_CONTENT_CHUNK_CHARS: Final = 3000
RESULTS_ROOT: Final = "tool-results"
ARGS_ROOT: Final = "tool-args"


class ToolResult(Frozen):
    """What one call gave back. The model reads `content`; `structured` stays in the records."""

    call_id: str
    tool_id: str | None = None  # None when the call named no tool of the snapshot
    content: str
    structured: Any = None
    is_error: bool = False
    error_code: str | None = None
    resource_refs: tuple[str, ...] = Field(default=())

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)


_RESULT_FIELDS = frozenset(ToolResult.model_fields)


def trusted_result(call_id: str, tool_id: str | None, content: str, structured: Any,
                   resource_refs: tuple[str, ...]) -> ToolResult:
    """A successful ToolResult from typed runtime values, built without validation.

    The per-call path: pydantic's `model_construct` costs ~20 µs here, a third of the
    runtime's whole budget; this sets the same four slots `model_construct` sets."""
    result = ToolResult.__new__(ToolResult)
    object.__setattr__(result, "__dict__", {
        "call_id": call_id, "tool_id": tool_id, "content": content, "structured": structured,
        "is_error": False, "error_code": None, "resource_refs": resource_refs})
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
    """None when `result.content` fits in `limit` characters; else the externalised form."""
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
