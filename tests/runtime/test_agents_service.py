"""`bench.agents`: the agent directory, the child loop and its model contract, budgets,
round limits, failures, and closing a bench with children running."""

from __future__ import annotations

import pytest
from agents_support import WAIT, GatedModel, delegate, parent_profile, returning

from toolbench import Profile, ToolbenchError
from toolbench.core.errors import CODES
from toolbench.testing import ScriptedModel


@pytest.fixture
def bench(make_bench):
    return make_bench(profile=parent_profile(), seed=1)


@pytest.fixture
def parent(bench):
    return bench.invocation(id="inv_root")


def test_every_agent_code_is_listed():
    for code in ("agent.unknown_agent", "agent.model_missing", "agent.child_limit_reached",
                 "agent.child_finish_denied", "agent.child_round_limit", "agent.child_model_failed",
                 "agent.task_cancelled", "agent.task_unknown", "agent.await_timeout",
                 "agent.handoff_pending_tasks", "agent.unknown_recipient", "testing.script_exhausted"):
        assert code in CODES


# --- the directory ------------------------------------------------------------------------
def test_the_directory_starts_with_the_general_agent(bench):
    assert [a.id for a in bench.agents.directory()] == ["general"]


@pytest.mark.parametrize("agent_id", ["", "-x", "a b", "x" * 65])
def test_define_refuses_bad_agent_ids(bench, agent_id):
    with pytest.raises(ToolbenchError) as err:
        bench.agents.define(agent_id, description="?")
    assert err.value.code == "bench.misuse"


def test_define_checks_the_agent_profile_like_the_bench(bench):
    with pytest.raises(ToolbenchError) as err:
        bench.agents.define("x", description="?", profile=Profile.default().edit(allow=["builtin:nope"]))
    assert err.value.code == "agent.profile_unknown_tool"


# --- the child loop -----------------------------------------------------------------------
def test_the_model_gets_openai_messages_and_the_child_tool_list(bench, parent):
    model = ScriptedModel([[("dice_roll", {"formula": "d6"}, "c1")], [("task_return", {"summary": "ok"})]])
    bench.agents.model = model
    delegate(parent, objective="Roll a die.", title="Roll", context={"why": "test"})
    bench.agents.wait(timeout=WAIT)
    first, second = model.requests
    assert [m["role"] for m in first.messages] == ["system", "user"]
    assert first.messages[1]["content"].startswith("# Roll\n\nRoll a die.\n\n## Context")
    assert "task_return" in first.tool_names and "agent_delegate" not in first.tool_names
    assert "agent_send_message" in first.tool_names  # messaging stays in return mode
    assert second.messages[2] == {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "dice_roll", "arguments": '{"formula": "d6"}'}}]}
    assert second.messages[3]["role"] == "tool" and second.messages[3]["tool_call_id"] == "c1"


def test_a_text_answer_is_denied_and_the_child_is_asked_again(bench, parent):
    model = ScriptedModel(["I think I'm done.", [("task_return", {"summary": "returned"})]])
    bench.agents.model = model
    delegate(parent)
    (task,) = bench.agents.wait(timeout=WAIT)
    assert task["status"] == "completed" and task["rounds"] == 2
    note = model.requests[1].messages[-1]
    assert note["role"] == "user" and note["content"].startswith("agent.child_finish_denied:")
    assert model.requests[1].messages[-2] == {"role": "assistant", "content": "I think I'm done."}


def test_delegation_and_finishing_tools_are_not_in_the_child(bench, parent):
    bench.agents.model = ScriptedModel([[("agent_delegate", {"agentId": "general", "task": {"objective": "x"}})],
                                        [("task_return", {"summary": "ok"})]])
    delegate(parent)
    bench.agents.wait(timeout=WAIT)
    (record, _) = bench.agents.invocation("task_001").records
    assert record.result.error_code == "model.unknown_tool_call"
    diagnostics = {d.tool_id: d.code for d in bench.agents.invocation("task_001").snapshot.diagnostics}
    assert diagnostics["builtin:agent.delegate"] == "agent.return_mode_excluded"
    assert diagnostics["builtin:agent.handoff"] == "agent.return_mode_excluded"


def test_a_child_that_never_returns_fails_at_the_round_limit(bench, parent):
    bench.agents.define("chatty", description="talks", model=ScriptedModel(["hmm", "well", "so"]), max_rounds=3)
    delegate(parent, "chatty")
    (task,) = bench.agents.wait(timeout=WAIT)
    assert task["status"] == "failed" and task["rounds"] == 3
    assert task["error"]["code"] == "agent.child_round_limit"


def test_the_bench_round_limit_applies_to_agents_without_their_own(bench, parent):
    bench.agents.max_rounds = 2
    bench.agents.model = ScriptedModel([[("dice_roll", {"formula": "d6"})]] * 2)
    delegate(parent)
    assert bench.agents.wait(timeout=WAIT)[0]["error"]["code"] == "agent.child_round_limit"


def test_a_model_that_raises_fails_the_task_with_its_message(bench, parent):
    def broken(messages, tools):
        raise RuntimeError("provider is down")

    bench.agents.model = broken
    delegate(parent)
    (task,) = bench.agents.wait(timeout=WAIT)
    assert task["status"] == "failed"
    assert task["error"] == {"code": "agent.child_model_failed", "message": "RuntimeError: provider is down"}


def test_running_past_the_script_fails_the_task_clearly(bench, parent):
    bench.agents.model = ScriptedModel([[("dice_roll", {"formula": "d6"})]])
    delegate(parent)
    (task,) = bench.agents.wait(timeout=WAIT)
    assert task["error"]["code"] == "agent.child_model_failed"
    assert "testing.script_exhausted" in task["error"]["message"]


@pytest.mark.parametrize("reply", [42, [("dice_roll",)], [(1, {})], None])
def test_a_reply_that_is_neither_calls_nor_text_fails_the_task(bench, parent, reply):
    bench.agents.model = lambda messages, tools: reply
    delegate(parent)
    assert bench.agents.wait(timeout=WAIT)[0]["error"]["code"] == "agent.child_model_failed"


def test_async_models_are_awaited(bench, parent):
    async def model(messages, tools):
        return [("task_return", {"summary": f"{len(tools)} tools"})]

    bench.agents.model = model
    delegate(parent)
    assert bench.agents.wait(timeout=WAIT)[0]["summary"].endswith("tools")


def test_an_openai_response_body_is_decoded(bench, parent):
    bodies = iter([
        {"choices": [{"finish_reason": "tool_calls", "message": {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_x", "type": "function",
             "function": {"name": "task_return", "arguments": '{"summary": "from a body"}'}}]}}]},
    ])
    bench.agents.model = lambda messages, tools: next(bodies)
    delegate(parent)
    (task,) = bench.agents.wait(timeout=WAIT)
    assert task["summary"] == "from a body"
    assert bench.agents.invocation("task_001").records[0].call_id == "call_x"


def test_a_child_has_its_own_budget(bench, parent):
    small = parent_profile(max_calls_per_run=5, max_calls_per_tool={"builtin:dice.roll": 2})
    calls = [("dice_roll", {"formula": "d6"})] * 3
    bench.agents.define("frugal", description="two rolls", profile=small,
                        model=ScriptedModel([calls, [("task_return", {"summary": "out of rolls"})]]))
    delegate(parent, "frugal")
    (task,) = bench.agents.wait(timeout=WAIT)
    child = bench.agents.invocation("task_001")
    assert [r.result.error_code for r in child.records] == [None, None, "agent.tool_budget_exhausted", None]
    assert task["status"] == "completed"
    assert child.budget() == {"total": 2, "per_tool": {"dice_roll": 0}}  # a refusal is not charged
    assert parent.budget()["total"] == bench.profile.tools.max_calls_per_run - 1  # only the delegate call
    assert parent.call("dice_roll", {"formula": "d6"}).error_code is None


def test_children_get_their_own_invocation_ids_and_records(bench, parent):
    bench.agents.model = returning()
    delegate(parent)
    bench.agents.wait(timeout=WAIT)
    assert [r.call_name for r in parent.records] == ["agent_delegate"]
    assert bench.agents.invocation("task_001").id == "inv_root.task_001"
    bench.flush()
    assert (bench.workspace / ".toolbench" / "invocations" / "inv_root.task_001").is_dir()


def test_closing_the_bench_cancels_running_children(make_bench):
    bench = make_bench(profile=parent_profile())
    model = GatedModel([[("task_return", {"summary": "never"})]])
    bench.agents.model = model
    delegate(bench.invocation(id="inv_root"))
    model.wait_asked()
    agents = bench.agents
    bench.close()
    model.release()
    task = agents.tasks()[0]
    assert task["status"] == "cancelled" and task["error"]["code"] == "agent.task_cancelled"


def test_wait_and_reading_helpers_refuse_unknown_tasks(bench):
    with pytest.raises(ToolbenchError) as err:
        bench.agents.task("task_404")
    assert err.value.code == "bench.misuse"
