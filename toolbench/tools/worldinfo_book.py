"""World info (lorebooks) as frozen values, and which entries the recent chat activates.

Read from SillyTavern's world-info JSON: `{"entries": {"<uid>": {uid, key, keysecondary,
comment, content, constant, disable, selective, selectiveLogic, order, scanDepth,
caseSensitive, matchWholeWords, ...}}}`. Other fields are ignored.

Activation follows SillyTavern for this subset:

* `disable` entries never activate; `constant` entries always do.
* An entry activates when one of its primary keys (`key`) appears in the scanned messages:
  the newest `scan_depth` messages (the entry's `scanDepth`, else the profile's), each as
  `name: text` when names are included. Blank keys are ignored; an entry without keys only
  activates when constant.
* Matching is a substring match, case-insensitive unless `caseSensitive` (entry, else profile);
  with `matchWholeWords` a one-word key must stand between non-word characters (ASCII `\\W`, as
  JavaScript's) while a key of several words stays a substring match. A key written
  `/pattern/flags` is a regular expression (Python `re`; flags i, s, m; g, u, y ignored); a
  pattern that does not compile is matched as plain text.
* With `selective` (default true) and non-empty `keysecondary`, `selectiveLogic` decides:
  0 AND_ANY (a secondary key matches too), 1 NOT_ALL (not all secondary keys match),
  2 NOT_ANY (no secondary key matches), 3 AND_ALL (all secondary keys match).

Not supported (these entries behave as plain keyword entries): recursion, probability,
groups and group scoring, sticky/cooldown/delay, min activations, character filters,
vector matching, token budgets, decorators. Entries are ordered by `order`, then uid.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.chat_settings import WorldInfoSettings
from ..core.errors import ToolbenchError
from .chat_history import ChatMessage

AND_ANY, NOT_ALL, NOT_ANY, AND_ALL = 0, 1, 2, 3
_REGEX_KEY = re.compile(r"^/([\w\W]+?)/([gimsuy]*)$")
_FLAGS = {"i": re.IGNORECASE, "s": re.DOTALL, "m": re.MULTILINE}


@dataclass(frozen=True, slots=True)
class WorldInfoEntry:
    uid: int
    keys: tuple[str, ...]
    secondary_keys: tuple[str, ...] = ()
    comment: str = ""
    content: str = ""
    constant: bool = False
    disabled: bool = False
    selective: bool = True
    selective_logic: int = AND_ANY
    order: int = 100
    scan_depth: int | None = None
    case_sensitive: bool | None = None
    match_whole_words: bool | None = None

    @property
    def lines(self) -> list[str]:
        return self.content.split("\n") if self.content else []


@dataclass(frozen=True, slots=True)
class WorldInfoBook:
    """One lorebook: a `name` (refs are `<name>:<uid>`) and its entries in file order."""

    name: str
    entries: tuple[WorldInfoEntry, ...]
    source: str | None = None


@dataclass(frozen=True, slots=True)
class Activation:
    """An active entry: its ref, why it is active (`constant`, or the key and the message)."""

    ref: str
    book: str
    entry: WorldInfoEntry
    reason: str
    key: str | None = None
    message_index: int | None = None


def load_worldinfo(path: str | Path, *, name: str | None = None) -> WorldInfoBook:
    """Read a world-info JSON file; `ToolbenchError` `worldinfo.file_unreadable` or `worldinfo.file_invalid`."""
    path = Path(path).expanduser()
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except OSError as exc:
        raise ToolbenchError("worldinfo.file_unreadable",
                             f"cannot read world-info file {path}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise ToolbenchError("worldinfo.file_unreadable", f"world-info file {path} is not UTF-8 text") from exc
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ToolbenchError("worldinfo.file_invalid", f"{path} is not JSON: {exc}") from exc
    return parse_worldinfo(data, name=name or path.stem, source=str(path))


def parse_worldinfo(data: Any, *, name: str, source: str | None = None) -> WorldInfoBook:
    """Validate SillyTavern world-info JSON; `worldinfo.file_invalid` names the entry and field."""
    where = source or name
    if not name or ":" in name:
        raise ToolbenchError("worldinfo.file_invalid", f"book name {name!r} must be non-empty without `:`")
    entries = data.get("entries") if isinstance(data, dict) else None
    if not isinstance(entries, dict):
        raise ToolbenchError("worldinfo.file_invalid",
                             f"{where}: expected SillyTavern world info, an object with an `entries` object")
    parsed = [_entry(where, key, value) for key, value in entries.items()]
    seen: set[int] = set()
    for entry in parsed:
        if entry.uid in seen:
            raise ToolbenchError("worldinfo.file_invalid", f"{where}: two entries have uid {entry.uid}")
        seen.add(entry.uid)
    return WorldInfoBook(name=name, entries=tuple(parsed), source=source)


def _entry(where: str, key: str, raw: Any) -> WorldInfoEntry:
    def bad(problem: str) -> ToolbenchError:
        return ToolbenchError("worldinfo.file_invalid", f"{where}: entry {key!r} {problem}")

    if not isinstance(raw, dict):
        raise bad("is not an object")
    uid = raw.get("uid", key)
    if isinstance(uid, str) and uid.strip().isdigit():
        uid = int(uid)
    if not isinstance(uid, int) or isinstance(uid, bool) or uid < 0:
        raise bad("has no integer `uid`")

    def strings(field: str) -> tuple[str, ...]:
        value = raw.get(field) or []
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise bad(f"`{field}` is not a list of strings")
        return tuple(v for v in value if v.strip())

    def text(field: str) -> str:
        value = raw.get(field)
        if value is None:
            return ""
        if not isinstance(value, str):
            raise bad(f"`{field}` is not a string")
        return value.replace("\r\n", "\n").replace("\r", "\n")

    def flag(field: str, default: bool | None) -> bool | None:
        value = raw.get(field)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise bad(f"`{field}` is not true or false")
        return value

    def integer(field: str, default: int | None) -> int | None:
        value = raw.get(field)
        if value is None:
            return default
        if not isinstance(value, int) or isinstance(value, bool):
            raise bad(f"`{field}` is not an integer")
        return value

    logic = integer("selectiveLogic", AND_ANY)
    if logic not in (AND_ANY, NOT_ALL, NOT_ANY, AND_ALL):
        raise bad(f"`selectiveLogic` is {logic}; use 0 AND_ANY, 1 NOT_ALL, 2 NOT_ANY or 3 AND_ALL")
    depth = integer("scanDepth", None)
    if depth is not None and depth < 0:
        raise bad("`scanDepth` is negative")
    return WorldInfoEntry(
        uid=uid, keys=strings("key"), secondary_keys=strings("keysecondary"), comment=text("comment"),
        content=text("content"), constant=bool(flag("constant", False)), disabled=bool(flag("disable", False)),
        selective=bool(flag("selective", True)), selective_logic=logic or AND_ANY,
        order=integer("order", 100) or 0, scan_depth=depth,
        case_sensitive=flag("caseSensitive", None), match_whole_words=flag("matchWholeWords", None),
    )


# --- activation ---------------------------------------------------------------------------

def activate(books: Sequence[WorldInfoBook], messages: Sequence[ChatMessage],
             settings: WorldInfoSettings) -> list[Activation]:
    """The active entries of `books` for a chat whose newest messages end `messages`, sorted."""
    out: list[tuple[int, int, int, Activation]] = []
    for book_no, book in enumerate(books):
        for entry in book.entries:
            found = _activation(book.name, entry, messages, settings)
            if found is not None:
                out.append((entry.order, book_no, entry.uid, found))
    return [a for *_, a in sorted(out, key=lambda t: t[:3])]


def _activation(book: str, entry: WorldInfoEntry, messages: Sequence[ChatMessage],
                settings: WorldInfoSettings) -> Activation | None:
    ref = f"{book}:{entry.uid}"
    if entry.disabled:
        return None
    if entry.constant:
        return Activation(ref, book, entry, "constant")
    depth = settings.scan_depth if entry.scan_depth is None else entry.scan_depth
    window = list(messages[-depth:]) if depth > 0 else []
    window.reverse()  # newest first: the reason names the newest message that matched
    texts = [(m.index, f"{m.name}: {m.text}" if settings.include_names and m.name else m.text) for m in window]
    case = settings.case_sensitive if entry.case_sensitive is None else entry.case_sensitive
    whole = settings.match_whole_words if entry.match_whole_words is None else entry.match_whole_words

    def where(key: str) -> int | None:
        return next((index for index, text in texts if matches(text, key, case_sensitive=case,
                                                                  whole_words=whole)), None)

    hit = next(((k, i) for k in entry.keys if (i := where(k)) is not None), None)
    if hit is None:
        return None
    if entry.selective and entry.secondary_keys:
        found = sum(where(k) is not None for k in entry.secondary_keys)
        total = len(entry.secondary_keys)
        ok = {AND_ANY: found > 0, NOT_ALL: found < total, NOT_ANY: found == 0, AND_ALL: found == total}
        if not ok[entry.selective_logic]:
            return None
    key, index = hit
    return Activation(ref, book, entry, f"key `{key}` in message #{index}", key=key, message_index=index)


def matches(text: str, key: str, *, case_sensitive: bool = False, whole_words: bool = False) -> bool:
    """Whether `key` occurs in `text` under SillyTavern's rules (see the module docstring)."""
    pattern = regex_key(key)
    if pattern is not None:
        return pattern.search(text) is not None
    if not case_sensitive:
        text, key = text.lower(), key.lower()
    if whole_words and len(key.split()) <= 1:
        return re.search(rf"(?:^|\W)({re.escape(key)})(?:$|\W)", text, re.ASCII) is not None
    return key in text


def regex_key(key: str) -> re.Pattern[str] | None:
    """The regular expression of a `/pattern/flags` key, or None for a plain key."""
    found = _REGEX_KEY.match(key)
    if not found:
        return None
    flags = 0
    for letter in found.group(2):
        flags |= _FLAGS.get(letter, 0)
    try:
        return re.compile(found.group(1), flags)
    except re.error:
        return None
