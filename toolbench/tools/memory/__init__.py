"""Long-term memory: Markdown files with front matter (the truth) and a SQLite FTS5 index (a cache).

`memory.manage` offers every action; `memory.query` only list, read and search (sub-agents).
"""

from __future__ import annotations

from .store import MemoryStore
from .tool import MANAGE, QUERY, TOOLS

__all__ = ["MANAGE", "QUERY", "TOOLS", "MemoryStore"]
