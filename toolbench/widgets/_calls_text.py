"""The texts the history copies and exports: a call as a Python line or a JSON object, a
record's cells, and an exported file as a `data:` link. Pure functions, no widgets."""

from __future__ import annotations

import base64
import html
import json

from .. import CallRecord

MAX_CELL = 80  # characters of a shortened cell; the tooltip holds the rest
MAX_LINK_BYTES = 5 * 1024 * 1024  # above this an export is offered as its file only


def arguments_text(record: CallRecord) -> str:
    """The arguments as sent: the JSON text of a valid object, else the raw invalid text."""
    arguments = record.arguments
    if arguments.is_valid:
        return json.dumps(arguments.value, ensure_ascii=False)
    return arguments.raw


def _name_literal(name: str) -> str:
    """`repr(name)`, in double quotes when that needs no escape (as a user would type it)."""
    literal = repr(name)
    # Without a `"` in the name, repr's body escapes no double quote, so the quotes can swap.
    if literal.startswith("'") and '"' not in name:
        literal = '"' + literal[1:-1] + '"'
    return literal


def python_call(record: CallRecord) -> str:
    """`inv.call("name", '<arguments>')`: the call again, the arguments a Python string literal."""
    return f"inv.call({_name_literal(record.call_name)}, {arguments_text(record)!r})"


def json_call(record: CallRecord) -> str:
    """The call as a JSON object: its name, its arguments (the object, or the raw invalid text), its id."""
    return json.dumps({"call_name": record.call_name, "arguments": record.arguments.to_json(),
                       "call_id": record.call_id}, indent=2, ensure_ascii=False)


def status(record: CallRecord) -> str:
    result = record.result
    if not result.is_error:
        return "ok"
    return result.error_code or "error"


def shorten(text: str, limit: int = MAX_CELL) -> str:
    """One line of at most `limit` characters, ending in `…` when cut."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[:limit - 1] + "…"


def cells(record: CallRecord) -> dict[str, str]:
    """The row of a record by column: the full text of each cell (shortening is the view's)."""
    return {
        "round": str(record.round),
        "call id": record.call_id,
        "call name": record.call_name,
        "ToolId": record.tool_id or "",
        "arguments": arguments_text(record),
        "status": status(record),
        "ms": f"{record.elapsed_ms:.1f}",
        "chars": str(len(record.result.content)),
        "ext": "yes" if record.externalized else "",
    }


COLUMNS = ("round", "call id", "call name", "ToolId", "arguments", "status", "ms", "chars", "ext")
TITLES = {"ext": "externalized: the full result is in a tool-results/ file", "ms": "elapsed ms",
          "chars": "characters of content the model reads"}


def download_link(data: bytes, filename: str, mime_type: str, label: str) -> str:
    """An `<a download>` of `data` as a base64 `data:` URL; empty when `data` is over the cap."""
    if len(data) > MAX_LINK_BYTES:
        return ""
    encoded = base64.b64encode(data).decode("ascii")
    return (f'<a download="{html.escape(filename, quote=True)}" href="data:{mime_type};base64,{encoded}" '
            f'target="_blank">{html.escape(label)}</a>')

