"""The caller's run policy on delegate and handoff (upstream delegate_tool.rs / handoff_tool.rs):
a flag off or an agent not allowed is refused with upstream's code, and nothing starts."""

from __future__ import annotations

import pytest
from agents_support import delegate, parent_profile, returning


@pytest.fixture
def bench(make_bench):
    bench = make_bench(profile=parent_profile(), seed=1)
    bench.agents.model = returning()
    bench.agents.define("reviewer", description="Reviews.")
    return bench


def handoff(inv, agent_id="general"):
    return inv.call("agent_handoff", {"agentId": agent_id, "handoff": {"objective": "Take over"}})


def test_can_delegate_off_refuses_and_starts_nothing(bench):
    bench.profile = bench.profile.edit(can_delegate=False)
    result = delegate(bench.invocation())
    assert result.error_code == "agent.delegation_policy_denied"
    assert result.structured["rule"] == "can_delegate"
    assert bench.agents.tasks() == []


def test_can_handoff_off_refuses_and_hands_nothing_off(bench):
    bench.profile = bench.profile.edit(can_handoff=False)
    assert handoff(bench.invocation()).error_code == "agent.handoff_policy_denied"
    assert bench.agents.handoffs() == []


def test_allowed_agents_limit_whom_one_may_call(bench):
    bench.profile = bench.profile.edit(allowed_agents=["reviewer"])
    inv = bench.invocation()
    assert delegate(inv, "general").error_code == "agent.delegation_policy_denied"
    batch = inv.call("agent_delegate", {"tasks": [{"agentId": "reviewer", "task": {"objective": "a"}},
                                                  {"agentId": "general", "task": {"objective": "b"}}]})
    assert batch.error_code == "agent.delegation_policy_denied" and batch.structured["refused"] == ["general"]
    assert bench.agents.tasks() == []
    assert not delegate(inv, "reviewer").is_error
    assert handoff(inv, "general").error_code == "agent.handoff_policy_denied"
    assert not handoff(inv, "reviewer").is_error


def test_the_default_policy_lets_the_allow_list_decide(bench):
    inv = bench.invocation()
    assert not delegate(inv).is_error
    assert not handoff(inv).is_error
