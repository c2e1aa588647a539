"""The limits of the `workspace.shell` engine, as a profile sets them (`profile.shell`).

Text limits count characters (Unicode code points), like every text limit in toolbench. The
defaults are TauriTavern's: 30 s, and 128 KiB (131,072 characters) for the command, for
stdout and for stderr. `max_commands` and `max_loop_iterations` are bashkit's per-call fuel:
a call that runs more simple commands, or more iterations of one loop, stops as failed.
"""

from __future__ import annotations

from typing import Final

from pydantic import Field

from .section import Section

DEFAULT_TEXT_LIMIT: Final = 128 * 1024


class ShellSettings(Section):
    """Per-call limits of the shell; frozen, every value positive."""

    timeout_seconds: float = Field(default=30.0, gt=0, allow_inf_nan=False, strict=True)
    """Wall-clock limit of one call; embedded Python and jq share the same deadline."""
    max_command_chars: int = Field(default=DEFAULT_TEXT_LIMIT, gt=0, strict=True)
    """A longer command fails without running."""
    max_stdout_chars: int = Field(default=DEFAULT_TEXT_LIMIT, gt=0, strict=True)
    """stdout kept for the result; the rest is cut and the result says `Output truncated.`"""
    max_stderr_chars: int = Field(default=DEFAULT_TEXT_LIMIT, gt=0, strict=True)
    """stderr kept for the result; the rest is cut likewise."""
    max_commands: int = Field(default=10_000, gt=0, strict=True)
    """Simple commands one call may run (bashkit's command fuel, counted afresh per call)."""
    max_loop_iterations: int = Field(default=10_000, gt=0, strict=True)
    """Iterations of any single loop in one call."""
