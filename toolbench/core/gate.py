"""The request gate: per-invocation and per-tool call budgets.

Limits live in the snapshot (immutable); usage lives here (mutable, persisted with the
run log). Every call is charged before its arguments are checked, unknown names included,
so malformed calls are not free.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .errors import ToolError
from .ids import ToolId


@dataclass(slots=True)
class GateState:
    total_calls: int = 0
    calls_per_tool: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, object]:
        return {"totalCalls": self.total_calls, "callsPerTool": dict(self.calls_per_tool)}

    @classmethod
    def from_json(cls, data: dict[str, object]) -> GateState:
        per_tool = data.get("callsPerTool") or {}
        assert isinstance(per_tool, dict)
        return cls(int(data.get("totalCalls", 0)), {str(k): int(v) for k, v in per_tool.items()})  # type: ignore[call-overload]


def charge(state: GateState, max_total: int, tool_id: ToolId | None, max_calls: int | None) -> None:
    """Charge one call, or raise `ToolError(agent.tool_budget_exhausted)` without charging.

    `tool_id=None` is a call to a name the snapshot does not offer: it uses up one unit of
    the total budget like any other call."""
    if state.total_calls >= max_total:
        raise ToolError(
            "agent.tool_budget_exhausted",
            f"This task's tool-call limit is reached ({max_total} calls). Finish with what you have.",
            structured={"max": max_total, "scope": "invocation"},
        )
    if tool_id is not None and max_calls is not None:
        key = str(tool_id)
        if state.calls_per_tool.get(key, 0) >= max_calls:
            raise ToolError(
                "agent.tool_budget_exhausted",
                f"The tool `{tool_id.name}` has reached its call limit ({max_calls} calls). "
                "Use other tools or finish.",
                structured={"max": max_calls, "scope": "tool"},
            )
    state.total_calls += 1
    if tool_id is not None:
        key = str(tool_id)
        state.calls_per_tool[key] = state.calls_per_tool.get(key, 0) + 1
