"""`worldinfo.read_activated`: the world-info entries the recent chat activates.

Without arguments it lists the active entries (the index: ref, title, why active, size);
with `entries` it reads them by ref (`<book>:<uid>`), optionally a line range (1-based).
The books and the chat are those the bench had loaded when the invocation was created;
activation rules are in `worldinfo_book` and the profile's `worldinfo` settings.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Final

from ..core.descriptors import ToolDescriptor
from ..core.errors import ToolError
from ..core.ids import ToolId
from ..core.results import ToolOutput
from .base import BuiltinTool, ToolContext
from .chat_history import ChatHistory
from .text_pages import LINE_RANGE_SCHEMA, Request, check_start, line_range, page_json, read_many
from .worldinfo_book import Activation, WorldInfoBook, activate

MAX_ENTRIES_PER_READ: Final = 20
REFS_IN_ERRORS: Final = 20

DESCRIPTOR = ToolDescriptor(
    id=ToolId.builtin("worldinfo.read_activated"),
    description=(
        "Read the world info (lorebook entries) active for the recent chat: entries whose keywords appear in the "
        "newest messages, and constant entries. Without arguments: the index of active entries (ref, title, why "
        "active, size). With `entries`: read those entries by `ref`, optionally a line range (1-based)."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "entries": {
                "type": "array", "minItems": 1, "maxItems": MAX_ENTRIES_PER_READ,
                "description": f"Active entries to read (at most {MAX_ENTRIES_PER_READ}); omit for the index.",
                "items": {
                    "type": "object",
                    "properties": {
                        "ref": {"type": "string", "minLength": 1,
                                "description": "An entry's ref from the index, e.g. `lore:3`."},
                        **LINE_RANGE_SCHEMA,
                    },
                    "required": ["ref"],
                    "additionalProperties": False,
                },
            },
        },
        "additionalProperties": False,
    },
    scenes=frozenset({"chat"}),
    read_only=True,
)


def read_activated(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    books: Sequence[WorldInfoBook] = ctx.state.worldinfo
    if not books:
        raise ToolError("worldinfo.not_loaded", "No world info is loaded for this chat; there are no entries to "
                        "read. Continue without them.")
    chat: ChatHistory | None = ctx.state.chat
    messages = chat.messages if chat is not None else ()
    active = activate(books, messages, ctx.profile.worldinfo)
    if "entries" not in args:
        return _index(ctx, books, active, len(messages))
    return _read(ctx, active, args["entries"])


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _call(ctx: ToolContext) -> str:
    return ctx.call_name_of("builtin:worldinfo.read_activated") or "worldinfo_read_activated"


def _title(entry_comment: str, activation: Activation) -> str:
    return json.dumps(entry_comment or (activation.entry.keys[0] if activation.entry.keys else ""),
                      ensure_ascii=False)


def _index(ctx: ToolContext, books: Sequence[WorldInfoBook], active: list[Activation],
           message_count: int) -> ToolOutput:
    settings = ctx.profile.worldinfo
    depth = min(settings.scan_depth, message_count)
    scanned = f"messages #{message_count - depth}-#{message_count - 1}" if depth else "no messages"
    total = sum(len(b.entries) for b in books)
    header = (f"Active world info: {len(active)} of {total} entries (books: {', '.join(b.name for b in books)}; "
              f"scan depth {settings.scan_depth}: {scanned}).")
    budget = settings.max_chars_per_call
    lines: list[str] = []
    listed: list[dict[str, Any]] = []
    used = 0
    for activation in active:
        entry = activation.entry
        line = (f"- {activation.ref} {_title(entry.comment, activation)}: {activation.reason}; "
                f"{_count(len(entry.lines), 'line')}, {_count(len(entry.content), 'char')}")
        if lines and used + len(line) > budget:
            break
        used += len(line) + 1
        lines.append(line)
        listed.append({"ref": activation.ref, "comment": entry.comment, "reason": activation.reason,
                       "key": activation.key, "messageIndex": activation.message_index,
                       "lines": len(entry.lines), "chars": len(entry.content)})
    capped = len(listed) < len(active)
    if capped:
        lines.append(f"[per-call cap of {budget} characters reached: {len(active) - len(listed)} more active "
                     "entries are not listed.]")
    if active:
        lines.append(f"Read entries with `{_call(ctx)}` {{\"entries\": [{{\"ref\": \"{active[0].ref}\"}}]}}.")
    structured = {"active": listed, "activeCount": len(active), "entryCount": total,
                  "scanDepth": settings.scan_depth, "capped": capped, "charLimit": budget}
    return ToolOutput(content="\n".join([header, *lines]), structured=structured)


def _resolve(active: list[Activation], ref: str, position: int) -> Activation:
    text = ref.strip()
    by_ref = {a.ref: a for a in active}
    found = by_ref.get(text)
    if found is None and ":" not in text:
        # A bare uid is accepted while it names one active entry only.
        same = [a for a in active if str(a.entry.uid) == text]
        found = same[0] if len(same) == 1 else None
    if found is None:
        shown = ", ".join(a.ref for a in active[:REFS_IN_ERRORS]) or "none"
        more = f" (and {len(active) - REFS_IN_ERRORS} more)" if len(active) > REFS_IN_ERRORS else ""
        raise ToolError("worldinfo.ref_unknown",
                        f"`entries[{position}].ref` {ref!r} is not an active entry. Active refs: {shown}{more}.",
                        structured={"ref": ref, "activeRefs": [a.ref for a in active]})
    return found


def _read(ctx: ToolContext, active: list[Activation], items: list[dict[str, Any]]) -> ToolOutput:
    requests = []
    for position, item in enumerate(items):
        activation = _resolve(active, item["ref"], position)
        start, count = line_range(item, f"`entries[{position}]`")
        check_start(activation.entry.lines, start, code="worldinfo.line_out_of_range",
                    what=f"Entry {activation.ref}")
        requests.append((activation, start, count))

    budget = ctx.profile.worldinfo.max_chars_per_call
    content, pages, capped = read_many(
        [Request(label=f"[{a.ref}] {_title(a.entry.comment, a)}", name=a.ref, resume=f'"ref": "{a.ref}"',
                 lines=a.entry.lines, start=start, count=count) for a, start, count in requests],
        budget, _call(ctx))
    read = [{"ref": a.ref, "comment": a.entry.comment, **page_json(p)}
            for (a, _, _), p in zip(requests, pages, strict=False)]
    structured = {"entries": read, "capped": capped, "charLimit": budget}
    return ToolOutput(content=content, structured=structured)


TOOLS = (BuiltinTool(DESCRIPTOR, read_activated),)
