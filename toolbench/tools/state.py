"""What an invocation keeps between its calls, one typed field per use.

The runtime makes one `InvocationState` per invocation and hands it to every call as
`ctx.state`. Each field has one owner that writes it: a tool (its comment says which), or
the runtime (`chat` and `worldinfo` when it makes the invocation, `rng` on first use, `output`
on a reopen from the run log). A tool source other than the builtins should leave it alone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import random
    from datetime import datetime
    from pathlib import Path

    from ..core.memory_settings import MemorySettings
    from .chat_history import ChatHistory
    from .memory.store import MemoryStore
    from .workspace.files import ReadState
    from .workspace.shell_engine import Mount
    from .worldinfo_book import WorldInfoBook


@dataclass(slots=True, eq=False)
class InvocationState:
    """Per-invocation tool state; lives as long as the invocation (not persisted, except
    `output`, which the run log keeps)."""

    # The run's inputs, frozen when the invocation is made (a later load changes the next one).
    chat: ChatHistory | None = None
    worldinfo: tuple[WorldInfoBook, ...] = ()
    # The invocation's random source (dice), made on first use from the bench's seed.
    rng: random.Random | None = None
    # workspace.read_file's read states (path -> what was returned of which version).
    reads: dict[str, ReadState] = field(default_factory=dict)
    # workspace.shell's mounts: they depend on the frozen profile only, so they are built once.
    shell_mounts: list[Mount] | None = None
    # todo.write's list.
    todos: list[dict[str, str]] = field(default_factory=list)
    # The published output (workspace.commit, or the chat scene's auto-publish at round end),
    # as `PublishedOutput` JSON; and the shell's candidate for the auto-publish of this round.
    output: dict[str, Any] | None = None
    publish_candidate: dict[str, Any] | None = None
    finished: bool = False
    # memory.*: the store opened on first use (keyed by workspace and settings), the clock the
    # store stamps entries with (tests set a fixed one), and whether writes are refused.
    memory_store: tuple[tuple[str, MemorySettings], MemoryStore] | None = None
    memory_clock: Callable[[], datetime] | None = None
    memory_read_only: bool = False
    # The folder the tools see as the workspace when it is not the bench's (a worktree child's);
    # the records stay in the bench's store either way.
    root: Path | None = None
