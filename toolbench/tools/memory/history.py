"""`include_history`: the memory search also looks through the invocation's loaded chat.

Upstream attaches chat-history matches to a memory search when `include_history` is true
(default 6 matches, at most 12), and the tool labels them as untrusted past records. Here the
chat history is the one `bench.load_chat` gave the invocation (`ctx.state.chat`); its messages
carry no timestamps, so upstream's time filters (`history_since`, `history_until`,
`history_date_local`, `history_time_mode`) have nothing to act on and are not offered.

Scoring is plain and bounded (no user regex): the query's words are matched as lowercase
substrings; a message scores the share of words it holds, plus one when it holds the whole
query; ties go to the later message, as upstream prefers the most recently updated.
"""

from __future__ import annotations

from typing import Any, Final

from ..chat_history import ChatHistory, ChatMessage

DEFAULT_LIMIT: Final = 6
MAX_LIMIT: Final = 12
_BEFORE: Final = 80  # the snippet window of the memory search's fallback (reference §5.5)
_AFTER: Final = 160
_HEAD: Final = 240


def search_chat(chat: ChatHistory, query: str, limit: int = DEFAULT_LIMIT) -> list[dict[str, Any]]:
    """Chat messages matching `query`, best first: `source`, `messageIndex`, `role`, `name`,
    `score` and a `snippet` around the first hit."""
    phrase = " ".join(query.lower().split())
    words = sorted(set(phrase.split()))
    if not words:
        return []
    scored: list[tuple[float, ChatMessage, int]] = []
    for message in chat.messages:
        text = message.text.lower()
        found = [w for w in words if w in text]
        if not found:
            continue
        score = len(found) / len(words) + (1.0 if phrase in " ".join(text.split()) else 0.0)
        scored.append((score, message, min(text.find(w) for w in found)))
    scored.sort(key=lambda item: (-item[0], -item[1].index))
    return [{"source": "chat", "conversationId": chat.source, "messageIndex": m.index, "role": m.role,
             "name": m.name, "score": round(score, 3), "snippet": _snippet(m.text, at)}
            for score, m, at in scored[: max(1, min(limit, MAX_LIMIT))]]


def _snippet(text: str, at: int) -> str:
    # `at` indexes the lowercased text; str.lower keeps most lengths, and a shift only moves the window.
    if at < 0:
        return text[:_HEAD]
    start = max(0, at - _BEFORE)
    return ("..." if start else "") + text[start: at + _AFTER] + ("..." if at + _AFTER < len(text) else "")
