"""`chat.search` and `chat.read_messages`: the run's chat history, read by the model.

The history is the one the bench had loaded (`bench.load_chat`) when the invocation was
created; it reaches the handlers through `ctx.state` (`ctx.state.chat`).
Message indexes are 0-based; lines inside a message are 1-based. Each call returns at most
`profile.chat.max_chars_per_call` characters of message text and says where to continue.
"""

from __future__ import annotations

import json
from typing import Any, Final

from ..core.descriptors import Scene, ToolDescriptor
from ..core.errors import ToolError
from ..core.ids import ToolId
from ..core.results import ToolOutput
from .base import BuiltinTool, ToolContext
from .chat_history import ROLES, ChatHistory, ChatMessage
from .text_pages import LINE_RANGE_SCHEMA, Request, check_start, line_range, page_json, read_many

SEARCH_DEFAULT_LIMIT: Final = 20
SEARCH_MAX_LIMIT: Final = 50
MAX_MESSAGES_PER_READ: Final = 20
LINES_SHOWN_PER_HIT: Final = 3
SNIPPET_CHARS: Final = 200
CHAT_ONLY: Final[frozenset[Scene]] = frozenset({"chat"})

SEARCH = ToolDescriptor(
    id=ToolId.builtin("chat.search"),
    description=(
        "Search the chat history of this run for plain text (case-insensitive, within a line). Matches come "
        "newest first, each with its message index (0-based) and the matching line numbers (1-based), to read "
        "with chat_read_messages. Narrow with `role` and a message range (`start_message`..`end_message`, "
        "inclusive)."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "query": {"type": "string", "minLength": 1, "description": "Text to look for (plain text)."},
            "limit": {"type": "integer", "minimum": 1, "maximum": SEARCH_MAX_LIMIT,
                      "description": f"Most matching messages to return (default {SEARCH_DEFAULT_LIMIT})."},
            "role": {"type": "string", "enum": list(ROLES), "description": "Only messages of this role."},
            "start_message": {"type": "integer", "minimum": 0,
                              "description": "First message index to search (0-based, inclusive; default 0)."},
            "end_message": {"type": "integer", "minimum": 0,
                            "description": "Last message index to search (0-based, inclusive; default: the last)."},
            "scan_limit": {"type": "integer", "minimum": 1,
                           "description": "Examine at most this many messages, newest first (default: all)."},
        },
        "required": ["query"],
        "additionalProperties": False,
    },
    scenes=CHAT_ONLY,
    read_only=True,
)

READ = ToolDescriptor(
    id=ToolId.builtin("chat.read_messages"),
    description=(
        "Read messages of this run's chat history by index (0-based), as numbered lines (1-based). Give "
        "`start_line` (and optionally `line_count`) to read part of a long message. A result that reaches the "
        "per-call character cap says where to continue."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "messages": {
                "type": "array", "minItems": 1, "maxItems": MAX_MESSAGES_PER_READ,
                "description": f"Messages to read, in order (at most {MAX_MESSAGES_PER_READ}).",
                "items": {
                    "type": "object",
                    "properties": {
                        "index": {"type": "integer", "minimum": 0, "description": "Message index (0-based)."},
                        **LINE_RANGE_SCHEMA,
                    },
                    "required": ["index"],
                    "additionalProperties": False,
                },
            },
        },
        "required": ["messages"],
        "additionalProperties": False,
    },
    scenes=CHAT_ONLY,
    read_only=True,
)


def history(ctx: ToolContext) -> ChatHistory:
    """The invocation's chat, or `chat.not_loaded`."""
    chat = ctx.state.chat
    if chat is None:
        raise ToolError("chat.not_loaded", "No chat history is available to this run; the chat tools cannot "
                        "read anything. Continue without them.")
    return chat


def _call(ctx: ToolContext, native: str) -> str:
    return ctx.call_name_of(f"builtin:{native}") or native.replace(".", "_")


def _label(message: ChatMessage) -> str:
    return f"#{message.index} {message.role}" + (f" ({message.name})" if message.name else "")


def _out_of_range(chat: ChatHistory, field: str, value: int) -> ToolError:
    valid = f"0 to {chat.last_index}" if len(chat) else "none: the chat has no messages"
    return ToolError("chat.message_out_of_range",
                     f"`{field}` {value} is not a message: the chat has {len(chat)} messages (valid indexes: {valid}).",
                     structured={"field": field, "value": value, "messageCount": len(chat)})


# --- chat.search --------------------------------------------------------------------------

def search(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    chat = history(ctx)
    query = args["query"]
    if not len(chat):
        return ToolOutput(content="The chat has no messages.",
                          structured={"query": query, "matches": [], "scanned": 0, "messageCount": 0})
    if not query.strip():
        raise ToolError("tool.invalid_arguments", "`query` is blank; give the text to look for.")
    role = args.get("role")
    limit = args.get("limit", SEARCH_DEFAULT_LIMIT)
    start = args.get("start_message", 0)
    if start > chat.last_index:
        raise _out_of_range(chat, "start_message", start)
    end = min(args.get("end_message", chat.last_index), chat.last_index)
    if start > end:
        raise ToolError("tool.invalid_arguments",
                        f"`start_message` {start} is after `end_message` {end}; the range is inclusive, low to high.")
    scan_limit = args.get("scan_limit")
    budget = ctx.profile.chat.max_chars_per_call
    needle = query.casefold()

    hits: list[dict[str, Any]] = []
    blocks: list[str] = []
    used = scanned = 0
    next_end: int | None = None
    stop = ""
    for index in range(end, start - 1, -1):
        if scan_limit is not None and scanned >= scan_limit:
            next_end, stop = index, "scan_limit"
            break
        if len(hits) >= limit:
            next_end, stop = index, "limit"
            break
        message = chat.messages[index]
        scanned += 1
        if role is not None and message.role != role:
            continue
        found = [(n, line) for n, line in enumerate(message.lines, start=1) if needle in line.casefold()]
        if not found:
            continue
        shown = [{"line": n, "text": _snippet(line, needle)} for n, line in found[:LINES_SHOWN_PER_HIT]]
        block = "\n".join([_label(message) + f": {len(found)} matching line" + ("s" if len(found) > 1 else ""),
                           *(f"  L{s['line']}: {s['text']}" for s in shown)])
        if hits and used + len(block) > budget:
            next_end, stop = index, "cap"
            break
        used += len(block) + 1
        blocks.append(block)
        hits.append({"index": index, "role": message.role, "name": message.name,
                     "matchingLines": len(found), "lines": shown})

    scope = f"messages {start}-{end}" + (f", role {role}" if role else "")
    if hits:
        header = (f"chat.search {json.dumps(query, ensure_ascii=False)}: {len(hits)} matching message"
                  f"{'s' if len(hits) != 1 else ''} in {scope} (newest first; {scanned} scanned)")
    else:
        header = f"No message in {scope} contains {json.dumps(query, ensure_ascii=False)} ({scanned} scanned)."
    body = [header, *blocks]
    if hits:
        body.append(f"Read a message with `{_call(ctx, 'chat.read_messages')}` "
                    f"{{\"messages\": [{{\"index\": {hits[0]['index']}}}]}}.")
    if stop and next_end is not None:
        why = {"limit": f"the limit of {limit} matching messages was reached",
               "scan_limit": f"the scan_limit of {scan_limit} messages was reached",
               "cap": f"the per-call cap of {budget} characters was reached"}[stop]
        body.append(f"[partial: {why}; older messages {start}-{next_end} were not searched. "
                    f"Continue with end_message={next_end}.]")
    structured = {"query": query, "role": role, "startMessage": start, "endMessage": end, "scanned": scanned,
                  "matches": hits, "nextEndMessage": next_end, "stoppedBy": stop or None,
                  "capped": stop == "cap", "charLimit": budget}
    return ToolOutput(content="\n".join(body), structured=structured)


def _snippet(line: str, needle: str) -> str:
    if len(line) <= SNIPPET_CHARS:
        return line
    at = line.casefold().find(needle)
    begin = max(0, min(at - SNIPPET_CHARS // 3, len(line) - SNIPPET_CHARS))
    text = line[begin:begin + SNIPPET_CHARS]
    return ("…" if begin else "") + text + ("…" if begin + SNIPPET_CHARS < len(line) else "")


# --- chat.read_messages -------------------------------------------------------------------

def read_messages(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    chat = history(ctx)
    requests = []
    for position, item in enumerate(args["messages"]):
        index = item["index"]
        if index > chat.last_index:
            raise _out_of_range(chat, f"messages[{position}].index", index)
        start, count = line_range(item, f"`messages[{position}]`")
        message = chat.messages[index]
        check_start(message.lines, start, code="chat.line_out_of_range", what=f"Message #{index}")
        requests.append((message, start, count))

    budget = ctx.profile.chat.max_chars_per_call
    content, pages, capped = read_many(
        [Request(label=_label(m), name=f"message #{m.index}", resume=f'"index": {m.index}', lines=m.lines,
                 start=start, count=count) for m, start, count in requests],
        budget, _call(ctx, "chat.read_messages"))
    read = [{"index": m.index, "role": m.role, "name": m.name, **page_json(p)}
            for (m, _, _), p in zip(requests, pages, strict=False)]
    structured = {"messages": read, "messageCount": len(chat), "capped": capped, "charLimit": budget}
    return ToolOutput(content=content, structured=structured)


TOOLS = (BuiltinTool(SEARCH, search), BuiltinTool(READ, read_messages))
