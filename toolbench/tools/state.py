"""What an invocation keeps between its calls.

The runtime makes one `InvocationState` per invocation and hands it to every call as
`ctx.state`. Its fields are the runtime's and the ones several parts share (`chat` and
`worldinfo` set when the invocation is made, `rng` on first use, `output` on a reopen from the
run log, the publish fields the round's end reads). A tool's own state is a typed key declared
in the tool's module, so a stateful builtin touches only its own file:

    TODOS: StateKey[list[dict[str, str]]] = StateKey("todo.items", list)
    ctx.state.get(TODOS)           # the invocation's value (made by the default on first use)
    ctx.state.set(TODOS, todos)

A tool source other than the builtins should leave the runtime's fields alone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

if TYPE_CHECKING:
    import random
    from datetime import datetime
    from pathlib import Path

    from .chat_history import ChatHistory
    from .worldinfo_book import WorldInfoBook

T = TypeVar("T")


class StateKey(Generic[T]):
    """One tool's slot in the invocation's state: its name (for a reader of `repr`) and the
    default a first `get` makes. Keys compare by identity: two tools never share one by name."""

    __slots__ = ("default", "name")

    def __init__(self, name: str, default: Callable[[], T]) -> None:
        self.name, self.default = name, default

    def __repr__(self) -> str:
        return f"StateKey({self.name!r})"


@dataclass(slots=True, eq=False)
class InvocationState:
    """Per-invocation tool state; lives as long as the invocation (not persisted, except
    `output`, which the run log keeps)."""

    # The run's inputs, frozen when the invocation is made (a later load changes the next one).
    chat: ChatHistory | None = None
    worldinfo: tuple[WorldInfoBook, ...] = ()
    # The invocation's random source (dice), made on first use from the bench's seed.
    rng: random.Random | None = None
    # The published output (workspace.commit, or the chat scene's auto-publish at round end),
    # as `PublishedOutput` JSON; and the shell's candidate for the auto-publish of this round.
    output: dict[str, Any] | None = None
    publish_candidate: dict[str, Any] | None = None
    finished: bool = False
    # The folder the tools see as the workspace when it is not the bench's (a worktree child's);
    # the records stay in the bench's store either way.
    root: Path | None = None
    # Set from outside memory.*, so fields of their own: the clock the memory store stamps
    # entries with (tests and notebooks set a fixed one), and whether memory writes are refused
    # (the roster sets it for a read-only sub-agent).
    memory_clock: Callable[[], datetime] | None = None
    memory_read_only: bool = False
    _own: dict[StateKey[Any], Any] = field(default_factory=dict)  # the tools' keys (StateKey)

    def get(self, key: StateKey[T]) -> T:
        if key not in self._own:
            self._own[key] = key.default()
        return cast(T, self._own[key])

    def set(self, key: StateKey[T], value: T) -> None:
        self._own[key] = value
