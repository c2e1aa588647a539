"""Where the memory tools keep their Markdown files, and their limits (`profile.memory`).

Text limits count characters (Unicode code points), like every text limit in toolbench; the
defaults are LiveAgent's (reference §5.2): 8 KB bodies, 32 KB daily journals (a warning from
28 KB), descriptions cut to 120, a quota of 500 entries per scope, days rolling over at 04:00.
"""

from __future__ import annotations

from pathlib import PurePosixPath, PureWindowsPath
from typing import Final

from pydantic import Field, field_validator

from .section import Section

DEFAULT_GLOBAL_DIR: Final = ".toolbench/memory/global"


class MemorySettings(Section):
    """The memory store's folders and limits; frozen."""

    global_dir: str = DEFAULT_GLOBAL_DIR
    """The global scope's folder: absolute, or relative to the workspace (then under `.toolbench/`,
    a runtime folder the file tools never see). Several workspaces may share one absolute folder."""
    quota_per_scope: int = Field(default=500, ge=1)
    """Non-daily entries one scope may hold (checked when an entry is created)."""
    max_body_chars: int = Field(default=8 * 1024, ge=1)
    max_daily_body_chars: int = Field(default=32 * 1024, ge=1)
    daily_warn_chars: int = Field(default=28 * 1024, ge=1)
    max_description_chars: int = Field(default=120, ge=1)
    day_rollover_hour: int = Field(default=4, ge=0, le=23)
    """The local hour at which a new daily journal starts."""
    daily_retention_days: int = Field(default=90, ge=1)
    """Dailies older than this are moved to `daily/.archive/<YYYY>/` when the store opens (read-only)."""

    @field_validator("global_dir")
    @classmethod
    def _runtime_folder(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("`global_dir` is empty")
        if PurePosixPath(value).is_absolute() or PureWindowsPath(value).is_absolute():
            return value
        parts = PurePosixPath(value.replace("\\", "/")).parts
        if not parts or parts[0] != ".toolbench" or ".." in parts:
            raise ValueError("a relative `global_dir` must lie under `.toolbench/` (tools must not see it)")
        return value
