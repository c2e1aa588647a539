"""The request gate: total and per-tool budgets, charged before anything else (reference §4,
table 9.5).

Table 9.5's turn rows (TurnSnapshotMismatch, ToolChoiceNone, ToolChoiceSpecific) have no
counterpart: toolbench has no turn contract, every call is checked against the snapshot
itself. An unknown name follows the later upstream version (Darkatse 2aeb32cc): it is charged."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolbench import ToolError, ToolId
from toolbench.core.gate import GateState, charge

FIRST = ToolId.parse("builtin:first")
BUILTIN_SEARCH = ToolId.parse("builtin:search")
MCP_SEARCH = ToolId.parse("mcp/server:search")


def refused(state: GateState, max_total: int, tool_id: ToolId | None, max_calls: int | None) -> ToolError:
    before = (state.total_calls, dict(state.calls_per_tool))
    with pytest.raises(ToolError) as info:
        charge(state, max_total, tool_id, max_calls)
    assert info.value.code == "agent.tool_budget_exhausted"
    assert (state.total_calls, state.calls_per_tool) == before  # a refusal charges nothing
    return info.value


def test_second_call_over_a_total_of_one_is_refused():
    state = GateState()
    charge(state, 1, FIRST, None)
    error = refused(state, 1, FIRST, None)
    assert error.structured == {"max": 1, "scope": "invocation"}
    assert "(1 calls)" in error.message


def test_per_tool_budgets_count_canonical_ids_separately():
    state = GateState()
    charge(state, 3, BUILTIN_SEARCH, 1)
    error = refused(state, 3, BUILTIN_SEARCH, 1)
    charge(state, 3, MCP_SEARCH, 1)
    assert error.structured == {"max": 1, "scope": "tool"}
    assert "`search`" in error.message and "(1 calls)" in error.message  # the native name, in backticks
    assert state.total_calls == 2
    assert state.calls_per_tool == {"builtin:search": 1, "mcp/server:search": 1}


def test_an_unknown_call_is_charged_to_the_total():
    state = GateState()
    charge(state, 1, None, None)  # the unknown name: ToolNotInSnapshot, but charged
    assert state.total_calls == 1 and state.calls_per_tool == {}
    refused(state, 1, FIRST, None)  # the known tool now finds the budget spent


def test_an_unknown_call_over_budget_is_a_budget_refusal():
    state = GateState(total_calls=2)
    assert refused(state, 2, None, None).structured["scope"] == "invocation"


def test_total_budget_is_checked_before_the_tool_budget():
    state = GateState(total_calls=1, calls_per_tool={"builtin:first": 1})
    assert refused(state, 1, FIRST, 1).structured["scope"] == "invocation"


def test_gate_state_round_trips_through_json():
    state = GateState()
    charge(state, 5, FIRST, 2)
    charge(state, 5, None, None)
    data = state.to_json()
    assert data == {"totalCalls": 2, "callsPerTool": {"builtin:first": 1}}
    assert GateState.from_json(data) == state
    assert GateState.from_json({}) == GateState()


calls = st.lists(st.sampled_from([FIRST, BUILTIN_SEARCH, MCP_SEARCH, None]), max_size=40)


@given(sequence=calls, max_total=st.integers(1, 30), per_tool=st.integers(1, 5))
def test_budgets_are_never_exceeded_and_every_granted_call_is_counted(sequence, max_total, per_tool):
    state = GateState()
    granted: list[ToolId | None] = []
    for tool_id in sequence:
        try:
            charge(state, max_total, tool_id, per_tool)
        except ToolError:
            assert state.total_calls == max_total or state.calls_per_tool.get(str(tool_id)) == per_tool
            continue
        granted.append(tool_id)
    assert state.total_calls == len(granted) <= max_total
    for tool_id in {t for t in granted if t is not None}:
        assert state.calls_per_tool[str(tool_id)] == granted.count(tool_id) <= per_tool
