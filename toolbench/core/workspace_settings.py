"""Which workspace roots the tools see and may write, and the read limits (`profile.workspace`).

A root is one top-level folder name of the workspace. `tool-results/` and `skills/` are
read-only whatever the profile says: the runtime writes the first (write-once), the second
mirrors the profile's skills directory. The runtime folders (`tool-args/`, `.toolbench/`) are
never visible to tools.
"""

from __future__ import annotations

import re
from typing import Final

from pydantic import Field, field_validator, model_validator

from .section import Section

RUNTIME_DIRS: Final = frozenset({"tool-args", ".toolbench"})
READ_ONLY_ROOTS: Final = frozenset({"tool-results", "skills"})
DEFAULT_VISIBLE: Final = ("work", "tmp", "output", "tool-results", "skills")
DEFAULT_WRITABLE: Final = ("work", "tmp", "output")
_ROOT_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$")


class WorkspaceSettings(Section):
    """Visible and writable roots, the skills directory and the read limits; frozen."""

    visible_roots: tuple[str, ...] = DEFAULT_VISIBLE
    writable_roots: tuple[str, ...] = DEFAULT_WRITABLE
    skills_dir: str | None = None
    """Folder whose `<name>/SKILL.md` folders appear at `skills/<name>/`: relative to the
    workspace, or absolute. None: the workspace's own `skills/` folder."""
    max_read_chars: int = Field(default=100_000, ge=1_000)
    """Characters of file text one `read_file` call returns before it stops with a preview."""
    max_read_lines: int = Field(default=2_000, ge=1)
    """Lines one `read_file` call returns when `line_count` is not given."""
    max_file_bytes: int = Field(default=20 * 1024 * 1024, ge=1024)
    """Larger files are refused by read/write/apply_patch and skipped by search."""

    @field_validator("visible_roots", "writable_roots")
    @classmethod
    def _roots(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for name in value:
            if name in RUNTIME_DIRS:
                raise ValueError(f"`{name}` is a runtime folder and can never be visible to tools")
            if not _ROOT_NAME.match(name) or name in (".", ".."):
                raise ValueError(f"`{name}` is not a top-level folder name (letters, digits, `_`, `-`, `.`)")
        if len(set(value)) != len(value):
            raise ValueError("a root is listed twice")
        return value

    @model_validator(mode="after")
    def _writable_within_visible(self) -> WorkspaceSettings:
        for name in self.writable_roots:
            if name not in self.visible_roots:
                raise ValueError(f"writable root `{name}` is not among the visible roots")
            if name in READ_ONLY_ROOTS:
                raise ValueError(f"`{name}` is read-only to tools and cannot be a writable root")
        return self
