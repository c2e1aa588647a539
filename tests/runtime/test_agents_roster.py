"""`bench.agents`' roster (the LiveAgent form of agent.delegate, reference liveagent-tools §8):
a reused id resumes the child's private context, `resume: false` starts afresh under the same
identity, and a readonly child gets only read-only tools and memory in read-only mode."""

from __future__ import annotations

import pytest
from agents_support import WAIT, delegate, parent_profile

from toolbench.testing import ScriptedModel

RETURN = [("task_return", {"summary": "ok"})]


@pytest.fixture
def bench(make_bench):
    return make_bench(profile=parent_profile("builtin:workspace.write_file", "builtin:memory.query"), seed=1)


@pytest.fixture
def parent(bench):
    return bench.invocation(id="inv_root")


def spawn(bench, inv, **entry):
    result = inv.call("agent_delegate", {"agents": [{"prompt": "Look.", **entry}]})
    assert not result.is_error, result.content
    bench.agents.wait(timeout=WAIT)
    return result.structured["tasks"][0]


def test_a_readonly_child_gets_read_only_tools_messaging_and_task_return(bench, parent):
    model = ScriptedModel([RETURN])
    bench.agents.model = model
    task = spawn(bench, parent, id="scout")
    names = set(model.requests[0].tool_names)
    assert {"workspace_read_file", "dice_roll", "agent_send_message", "task_return"} <= names
    assert "workspace_write_file" not in names and "agent_delegate" not in names
    assert bench.agents.invocation(task["taskId"]).state.memory_read_only is True


def test_the_old_form_keeps_the_callers_tools(bench, parent):
    model = ScriptedModel([RETURN])
    bench.agents.model = model
    delegate(parent)
    bench.agents.wait(timeout=WAIT)
    assert "workspace_write_file" in model.requests[0].tool_names
    assert bench.agents.invocation("task_001").state.memory_read_only is False


def test_the_identity_is_in_the_childs_system_message(bench, parent):
    model = ScriptedModel([RETURN])
    bench.agents.model = model
    spawn(bench, parent, id="scout", name="Scout", role="reviewer", identity="A careful reader.")
    system = model.requests[0].messages[0]["content"]
    assert "`scout`" in system and "Your name: Scout" in system and "Your role: reviewer" in system
    assert "Your identity: A careful reader." in system


def test_reusing_an_id_resumes_its_private_context(bench, parent):
    model = ScriptedModel([RETURN, RETURN])
    bench.agents.model = model
    first = spawn(bench, parent, id="scout", prompt="First job.")
    second = spawn(bench, parent, id="SCOUT", prompt="Second job.")  # ids match case-insensitively
    assert first["taskId"] != second["taskId"] and second["childId"] == "scout"
    seen = [m["content"] for m in model.requests[1].messages if m["role"] == "user"]
    assert seen[0].endswith("First job.") and seen[-1].endswith("Second job.")
    assert any(m["role"] == "tool" for m in model.requests[1].messages)  # the first task's round too
    (child,) = bench.agents.roster()
    assert child["tasks"] == [first["taskId"], second["taskId"]]


def test_resume_false_starts_afresh_under_the_same_identity(bench, parent):
    model = ScriptedModel([RETURN, RETURN])
    bench.agents.model = model
    spawn(bench, parent, id="scout", name="Scout", prompt="First job.")
    spawn(bench, parent, id="scout", prompt="Second job.", resume=False)
    messages = model.requests[1].messages
    assert [m["role"] for m in messages] == ["system", "user"]
    assert "First job." not in messages[1]["content"] and "Your name: Scout" in messages[0]["content"]


def test_a_template_with_its_own_profile_is_narrowed_to_read_only_tools(bench, parent):
    model = ScriptedModel([RETURN])
    bench.agents.model = model
    bench.agents.define("writer", description="Writes.", profile=parent_profile("builtin:workspace.write_file"))
    spawn(bench, parent, id="w1", template="Writer")
    assert "workspace_write_file" not in model.requests[0].tool_names
    assert bench.agents.roster()[0]["template"] == "writer"
