"""The chat history a run reads: messages loaded from a JSONL file, as frozen values.

Two file forms are read, one JSON object per line (blank lines are skipped):

* SillyTavern's chat JSONL (what TauriTavern stores): an optional metadata header line
  (`user_name`, `character_name`, `chat_metadata`, ... and no `mes`), then one message per
  line with `name`, `is_user`, `mes` (and optionally `is_system`). The role is `user` when
  `is_user`, `system` when `is_system` (SillyTavern's hidden and narrator messages), else
  `assistant`. Swipes other than the chosen `mes` are not read.
* Plain JSONL of `{role, name?, content}`: `role` is one of user, assistant, system, tool;
  `content` is a string, null, or a list of `{type: "text", text}` parts (joined by newlines).

Message indexes are 0-based and do not count the header. A message's lines are its text split
at `\\n` (after `\\r\\n` and `\\r` become `\\n`); line numbers are 1-based.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

from ..core.errors import ToolbenchError

ROLES: Final = ("user", "assistant", "system", "tool")
_HEADER_KEYS: Final = frozenset({"user_name", "character_name", "create_date", "chat_metadata"})

Role = Literal["user", "assistant", "system", "tool"]
ChatFormat = Literal["sillytavern", "plain"]


@dataclass(frozen=True, slots=True)
class ChatMessage:
    """One message: its 0-based `index`, `role`, speaker `name` (may be empty) and `text`."""

    index: int
    role: Role
    name: str
    text: str

    @property
    def lines(self) -> list[str]:
        """The text's lines (line 1 is `lines[0]`); an empty text has none."""
        return self.text.split("\n") if self.text else []


@dataclass(frozen=True, slots=True)
class ChatHistory:
    """A loaded chat: its messages in order, the file form and, for SillyTavern, the names."""

    messages: tuple[ChatMessage, ...]
    format: ChatFormat
    source: str | None = None
    user_name: str | None = None
    character_name: str | None = None

    def __len__(self) -> int:
        return len(self.messages)

    @property
    def last_index(self) -> int:
        """The last valid message index (-1 when the chat is empty)."""
        return len(self.messages) - 1


def load_chat(path: str | Path) -> ChatHistory:
    """Read a chat JSONL file; `ToolbenchError` `chat.file_unreadable` or `chat.file_invalid`."""
    path = Path(path).expanduser()
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except OSError as exc:
        raise ToolbenchError("chat.file_unreadable",
                             f"cannot read chat file {path}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise ToolbenchError("chat.file_unreadable", f"chat file {path} is not UTF-8 text") from exc
    return parse_chat(text, source=str(path))


def parse_chat(text: str, *, source: str | None = None) -> ChatHistory:
    """Parse chat JSONL text (either form); `ToolbenchError` `chat.file_invalid` names the line."""
    where = source or "chat"
    rows: list[tuple[int, dict[str, Any]]] = []
    # Split at \n only: JSON strings may hold U+2028 and friends raw, which splitlines() would cut.
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            raise _invalid(where, number, f"is not JSON ({exc.msg})") from exc
        if not isinstance(value, dict):
            raise _invalid(where, number, f"is a JSON {type(value).__name__}, not an object")
        rows.append((number, value))
    header: Mapping[str, Any] = {}
    if rows and "mes" not in rows[0][1] and _HEADER_KEYS & rows[0][1].keys():
        header = rows.pop(0)[1]
    form: ChatFormat = "sillytavern" if header or (rows and "mes" in rows[0][1]) else "plain"
    messages = tuple(
        (_sillytavern if form == "sillytavern" else _plain)(where, number, index, row)
        for index, (number, row) in enumerate(rows)
    )
    return ChatHistory(messages=messages, format=form, source=source,
                       user_name=_opt_str(header.get("user_name")),
                       character_name=_opt_str(header.get("character_name")))


def _sillytavern(where: str, number: int, index: int, row: dict[str, Any]) -> ChatMessage:
    if "mes" not in row:
        raise _invalid(where, number, "has no `mes`: a SillyTavern chat line needs `name`, `is_user` and `mes`")
    mes = row["mes"]
    if not isinstance(mes, str):
        raise _invalid(where, number, f"`mes` is a {type(mes).__name__}, not a string")
    name = row.get("name", "")
    if not isinstance(name, str):
        raise _invalid(where, number, "`name` is not a string")
    role: Role = "user" if row.get("is_user") is True else "system" if row.get("is_system") is True else "assistant"
    return ChatMessage(index=index, role=role, name=name, text=_normalise(mes))


def _plain(where: str, number: int, index: int, row: dict[str, Any]) -> ChatMessage:
    role = row.get("role")
    if role not in ROLES:
        raise _invalid(where, number, f"`role` is {role!r}; use one of {', '.join(ROLES)} "
                       "(or write SillyTavern lines with `mes`)")
    name = row.get("name") or ""
    if not isinstance(name, str):
        raise _invalid(where, number, "`name` is not a string")
    if "content" not in row:
        raise _invalid(where, number, "has no `content`")
    return ChatMessage(index=index, role=role, name=name, text=_normalise(_content(where, number, row["content"])))


def _content(where: str, number: int, content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
            elif not (isinstance(part, dict) and part.get("type") not in (None, "text")):
                raise _invalid(where, number, "a `content` part is neither a string nor {type: text, text}")
            # other part types (images, audio, ...) have no text to read: left out
        return "\n".join(parts)
    raise _invalid(where, number, f"`content` is a {type(content).__name__}; use a string or a list of text parts")


def _normalise(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _opt_str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _invalid(where: str, number: int, problem: str) -> ToolbenchError:
    return ToolbenchError("chat.file_invalid", f"{where}: line {number} {problem}")
