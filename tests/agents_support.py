"""Helpers shared by the sub-agent tests: profiles, a parent invocation, gated models."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from toolbench import Profile
from toolbench.testing import ScriptedModel

AGENT_TOOLS = ("builtin:agent.delegate", "builtin:agent.await", "builtin:agent.handoff", "builtin:agent.send_message")
WAIT = 10.0  # seconds: the bound on every wait (nothing sleeps)
# What a delegated child does not get besides the completion tools (descriptors' `parent_only`).
PARENT_ONLY = frozenset({"workspace.commit", "agent.delegate", "agent.await", "agent.handoff", "todo.write"})


def parent_profile(*extra: str, **tools: Any) -> Profile:
    """The agent tools, dice and read_file (plus `extra`)."""
    allow = [*AGENT_TOOLS, "builtin:workspace.read_file", "builtin:dice.roll", *extra]
    return Profile.default().edit(allow=allow, **tools)


def returning(summary: str = "done", **fields: Any) -> ScriptedModel:
    """A model whose only turn returns `summary`."""
    return ScriptedModel([[("task_return", {"summary": summary, **fields})]])


class GatedModel:
    """A ScriptedModel whose turns wait for `release(n)` first (turns listed in `gated`).

    The test decides when each gated turn may answer, so what runs meanwhile is fixed."""

    def __init__(self, turns: Sequence[Any], gated: Sequence[int] = (1,)) -> None:
        self.script = ScriptedModel(turns)
        self._gates = {n: threading.Event() for n in gated}
        self.asked = {n: threading.Event() for n in gated}

    def __call__(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
        n = len(self.script.requests) + 1
        if n in self._gates:
            self.asked[n].set()
            if not self._gates[n].wait(WAIT):
                raise TimeoutError(f"turn {n} was never released")
        return self.script(messages, tools)

    def wait_asked(self, n: int = 1) -> None:
        assert self.asked[n].wait(WAIT), f"turn {n} was never asked for"

    def release(self, n: int = 1) -> None:
        self._gates[n].set()


def delegate(inv: Any, agent_id: str = "general", objective: str = "Do it", **task: Any) -> Any:
    return inv.call("agent_delegate", {"agentId": agent_id, "task": {"objective": objective, **task}})
