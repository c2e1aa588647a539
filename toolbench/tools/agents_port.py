"""What the sub-agent tools (`tools/agents.py`) need from the runtime: `ctx.agents`, which the
runtime's `AgentsService` (`toolbench.runtime.agents`) implements. Ids are invocation ids;
every method answers JSON-ready dicts, and raises `ToolError` for what the model should read."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol


class AgentsPort(Protocol):
    """What these tools need from the runtime (`toolbench.runtime.agents.AgentsService`)."""

    async def delegate(self, parent_id: str, entries: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]: ...
    async def delegate_agents(self, parent_id: str, entries: Sequence[Mapping[str, Any]],
                              concurrency: float | None = None) -> list[dict[str, Any]]: ...
    async def await_tasks(self, parent_id: str, task_ids: Sequence[str] | None, mode: str,
                          timeout_ms: int) -> dict[str, Any]: ...
    async def handoff(self, parent_id: str, agent_id: str, brief: Mapping[str, Any],
                      policy: str | None) -> dict[str, Any]: ...
    async def task_returned(self, child_id: str, payload: Mapping[str, Any]) -> dict[str, Any]: ...
    async def send(self, sender_id: str, to: str | None, message: str, channel: str | None) -> dict[str, Any]: ...
