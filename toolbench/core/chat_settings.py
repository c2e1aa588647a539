"""How the chat and world-info tools read the run's history (`profile.chat`, `profile.worldinfo`).

The defaults follow SillyTavern's world-info defaults (scan depth 2, case-insensitive,
substrings rather than whole words, speaker names scanned) and the caps of the upstream
chat tools (20,000 characters of text per call).
"""

from __future__ import annotations

from pydantic import Field

from .section import Section


class ChatSettings(Section):
    """Limits of `chat.search` and `chat.read_messages`; frozen."""

    max_chars_per_call: int = Field(default=20_000, ge=500)
    """Characters of message text one call returns; past it the result stops with a note
    that says where to continue."""


class WorldInfoSettings(Section):
    """How `worldinfo.read_activated` activates entries; frozen. Entries may override the
    scan depth, case sensitivity and whole-word matching with their own fields."""

    scan_depth: int = Field(default=2, ge=0, le=1000)
    """How many of the newest chat messages are scanned for keywords (0: constant entries only)."""
    case_sensitive: bool = False
    match_whole_words: bool = False
    include_names: bool = True
    """Scan `name: text` (SillyTavern's default), not the text alone."""
    max_chars_per_call: int = Field(default=20_000, ge=500)
    """Characters of entry text one call returns; past it the result stops with a note."""
