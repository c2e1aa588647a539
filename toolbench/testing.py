"""Test seams that ship with toolbench: a scripted model for sub-agents, and small helpers.

    from toolbench.testing import ScriptedModel

    bench.agents.model = ScriptedModel([
        [("workspace_read_file", {"path": "work/notes.md"})],       # turn 1: one call
        [("task_return", {"summary": "The notes mention a dragon."})],  # turn 2
    ])

A turn is a list of `(call_name, arguments)` pairs (a third item sets the call id), or a str
(a text answer). The model records what it was given (`model.requests`); asking it for a turn
past the end of its plan raises `ToolbenchError("testing.script_exhausted")`, which fails the
task it drives with that message.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .core.arguments import MISSING
from .core.errors import ToolbenchError

Turn = str | list[tuple[Any, ...]]


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """What a model was given for one turn: the messages and the tool list."""

    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]

    @property
    def tool_names(self) -> list[str]:
        """The call names offered (OpenAI Chat Completions tool list)."""
        return [t["function"]["name"] for t in self.tools]


class ScriptedModel:
    """Plays a planned list of turns, in order, one per request, whoever asks."""

    def __init__(self, turns: Sequence[Turn]) -> None:
        self._turns: list[Turn] = [_check_turn(n, t) for n, t in enumerate(turns, 1)]
        self.requests: list[ModelRequest] = []
        self._lock = threading.Lock()  # sync models run in worker threads

    def __call__(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Turn:
        with self._lock:
            n = len(self.requests)
            if n >= len(self._turns):
                raise ToolbenchError("testing.script_exhausted",
                                     f"the script has {len(self._turns)} turns and turn {n + 1} was asked for")
            self.requests.append(ModelRequest(list(messages), list(tools)))
            turn = self._turns[n]
        return turn if isinstance(turn, str) else list(turn)

    @property
    def remaining(self) -> int:
        return len(self._turns) - len(self.requests)

    def __repr__(self) -> str:
        return f"ScriptedModel({len(self._turns)} turns, {self.remaining} left)"


def _check_turn(n: int, turn: Any) -> Turn:
    if isinstance(turn, str):
        return turn
    if isinstance(turn, (list, tuple)):
        calls = []
        for call in turn:
            if not isinstance(call, (list, tuple)) or not 2 <= len(call) <= 3 or not isinstance(call[0], str):
                raise ToolbenchError("bench.misuse", f"turn {n}: a call is (call_name, arguments[, call_id]), "
                                     f"not {call!r}")
            calls.append(tuple(call))
        return calls
    raise ToolbenchError("bench.misuse", f"turn {n} is a list of calls or a str, not {type(turn).__name__}")


def call(bench: Any, call_name: str, arguments: Any = MISSING, *, scene: str = "chat") -> Any:
    """Run one call in a fresh invocation of `bench` and return its `ToolResult`."""
    return bench.invocation(scene).call(call_name, arguments)


__all__ = ["ModelRequest", "ScriptedModel", "call"]
