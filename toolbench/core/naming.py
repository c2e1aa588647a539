"""Call names: what a model sees in place of a ToolId.

A builtin's name is fixed (native name with `.` -> `_`). External tools get a seed (the
extension's registered name, or an MCP name in one of two upstream styles) which one
allocator makes valid and unique: `[A-Za-z0-9_-]`, at most 64 bytes, `__2`, `__3` on
collision. Beyond upstream, a name never starts with a digit or `-`, so it is valid for
OpenAI, Anthropic and Gemini alike.
"""

from __future__ import annotations

import re
from collections.abc import Set
from typing import Final, Literal

MAX_CALL_NAME_BYTES: Final = 64
NamingStyle = Literal["tauritavern", "liveagent"]
Renaming = Literal["sanitised", "truncated", "de-duplicated"]

_NOT_NAME_CHAR = re.compile(r"[^A-Za-z0-9_-]")
_NOT_ALNUM_DASH = re.compile(r"[^A-Za-z0-9-]")
_UNDERSCORES = re.compile(r"_+")
_LIVEAGENT_RUN = re.compile(r"[^A-Za-z0-9_-]+")
CALL_NAME_PATTERN: Final = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$")


def builtin_call_name(native_name: str) -> str:
    return native_name.replace(".", "_")


def mcp_seed(style: NamingStyle, server: str, tool: str) -> str:
    return tauritavern_mcp_name(server, tool) if style == "tauritavern" else liveagent_mcp_name(server, tool)


def tauritavern_mcp_name(server: str, tool: str) -> str:
    """`mcp__<server>__<tool>`, both segments squeezed into 57 bytes (reference §2.3)."""
    s = _tt_segment(server, "server")
    t = _tt_segment(tool, "tool")
    budget = MAX_CALL_NAME_BYTES - len("mcp__") - len("__")
    if len(s) + len(t) > budget:
        s_len = min(len(s), 20)
        t_len = min(len(t), budget - s_len)
        s_len = min(len(s), budget - t_len)
        s, t = s[:s_len], t[:t_len]
    return f"mcp__{s}__{t}"


def _tt_segment(text: str, fallback: str) -> str:
    segment = _UNDERSCORES.sub("_", _NOT_ALNUM_DASH.sub("_", text)).strip("_")
    return segment or fallback


def liveagent_mcp_name(server: str, tool: str) -> str:
    """`mcp_<server>_<tool>`, or a shortened form with an FNV-1a hash (liveagent §3.1)."""
    s = _la_segment(server, "server")
    t = _la_segment(tool, "tool")
    base = f"mcp_{s}_{t}"
    if len(base) <= MAX_CALL_NAME_BYTES:
        return base
    return f"mcp_{s[:16]}_{t[:24]}_{fnv1a_hex(f'{server}::{tool}')}"[:MAX_CALL_NAME_BYTES]


def _la_segment(text: str, fallback: str) -> str:
    return _la_clean(text, fallback)[:48]


def _la_clean(text: str, fallback: str) -> str:
    return _LIVEAGENT_RUN.sub("_", text.strip()).strip("_") or fallback


def fnv1a_hex(text: str) -> str:
    """FNV-1a 32-bit over UTF-16 code units, as 8 lower-case hex digits."""
    h = 0x811C9DC5
    data = text.encode("utf-16-le")
    for i in range(0, len(data), 2):
        h ^= data[i] | (data[i + 1] << 8)
        h = (h * 0x01000193) & 0xFFFFFFFF
    return f"{h:08x}"


def allocate(seed: str, used: Set[str]) -> str:
    """A valid call name for `seed` that is not in `used` (the caller adds it)."""
    name = _valid_chars(seed)
    ordinal = 1
    while True:
        suffix = "" if ordinal == 1 else f"__{ordinal}"
        candidate = name[: MAX_CALL_NAME_BYTES - len(suffix)] + suffix
        if candidate not in used:
            return candidate
        ordinal += 1


def _valid_chars(seed: str) -> str:
    name = _NOT_NAME_CHAR.sub("_", seed)
    if not name or not (name[0].isascii() and (name[0].isalpha() or name[0] == "_")):
        name = "_" + name  # a leading digit or `-` is refused by Gemini
    return name


def plain_mcp_name(style: NamingStyle, server: str, tool: str) -> str:
    """The call name an MCP tool would have if nothing were changed: its server prefix and its own name."""
    return f"mcp__{server}__{tool}" if style == "tauritavern" else f"mcp_{server}_{tool}"


def mcp_name_changes(style: NamingStyle, server: str, tool: str, call_name: str) -> tuple[Renaming, ...]:
    """How `call_name` (an MCP tool's call name in a snapshot) differs from its plain name, the
    server prefix and the tool's own name as they are (`mcp__<server>__<tool>`, LiveAgent's
    `mcp_<server>_<tool>`): `sanitised` (characters replaced or squeezed), `truncated` (cut or
    hashed to 64 bytes), `de-duplicated` (a `__N` suffix: another tool took the name first, so
    which tool gets it depends on the listing order). Empty when the model sees the plain name."""
    tauritavern = style == "tauritavern"
    plain = plain_mcp_name(style, server, tool)
    if call_name == plain:
        return ()
    uncut = (f"mcp__{_tt_segment(server, 'server')}__{_tt_segment(tool, 'tool')}" if tauritavern
             else f"mcp_{_la_clean(server, 'server')}_{_la_clean(tool, 'tool')}")
    whole, single = _valid_chars(uncut), allocate(mcp_seed(style, server, tool), frozenset())
    changes: list[Renaming] = []
    if whole != plain:
        changes.append("sanitised")
    if single != whole:
        changes.append("truncated")
    if call_name != single:
        changes.append("de-duplicated")
    return tuple(changes)
