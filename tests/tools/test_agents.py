"""The sub-agent tools as a model calls them: agent.delegate, agent.await, agent.handoff,
agent.send_message and task.return (tauritavern reference §3.1 step 6, §4.4, §8, 9.7;
LiveAgent §8)."""

from __future__ import annotations

import pytest
from agents_support import PARENT_ONLY, WAIT, GatedModel, delegate, parent_profile, returning

from toolbench import Profile, ToolbenchError
from toolbench.testing import ScriptedModel
from toolbench.tools.registry import BUILTINS

AGENT_CALL_NAMES = {"agent_delegate", "agent_await", "agent_handoff", "agent_send_message"}


@pytest.fixture
def bench(make_bench):
    return make_bench(profile=parent_profile(), seed=1)


@pytest.fixture
def parent(bench):
    return bench.invocation(id="inv_root")


# --- snapshots: table 9.7 and the scene rules --------------------------------------------
def test_return_mode_child_gets_read_file_and_task_return_and_the_profile_is_unchanged(make_bench):
    """Table 9.7: allow [read_file, search_files, finish, delegate], deny [search_files],
    read_file max 2; the child (TaskReturnRequired) binds [read_file, task.return]."""
    allow = ["builtin:workspace.read_file", "builtin:workspace.search_files", "builtin:workspace.finish",
             "builtin:agent.delegate"]
    profile = Profile.default().edit(allow=allow, deny=["builtin:workspace.search_files"],
                                     max_calls_per_tool={"builtin:workspace.read_file": 2})
    bench = make_bench(profile=profile)
    bench.agents.model = returning()
    parent = bench.invocation(id="inv_root")
    finish = ["workspace.finish"] if "builtin:workspace.finish" in {str(t) for t in BUILTINS} else []
    assert [b.tool_id.name for b in parent.snapshot.bindings] == ["workspace.read_file", *finish, "agent.delegate"]
    assert parent.snapshot.bindings[0].max_calls == 2

    assert not delegate(parent).is_error
    child = bench.agents.invocation("task_001").snapshot
    assert [(str(b.tool_id), b.call_name, b.max_calls) for b in child.bindings] == [
        ("builtin:workspace.read_file", "workspace_read_file", 2), ("builtin:task.return", "task_return", None)]
    assert bench.profile.tools.allow == tuple(allow)


def test_agent_tools_are_chat_only(bench):
    session = bench.invocation("session").snapshot
    assert not AGENT_CALL_NAMES & set(session.call_names)
    assert {d.code for d in session.diagnostics if d.tool_id.startswith("builtin:agent.")} == {"tool.scene_excluded"}
    assert set(bench.invocation("chat").snapshot.call_names) >= AGENT_CALL_NAMES


@pytest.mark.parametrize("key", ["allow", "deny"])
def test_task_return_cannot_be_selected_in_a_profile(make_bench, key):
    profile = Profile.default().edit(**{key: ["builtin:task.return"]})
    with pytest.raises(ToolbenchError) as err:
        make_bench(profile=profile)
    assert err.value.code == "agent.profile_unknown_tool"


def test_enabling_task_return_is_refused(bench):
    with pytest.raises(ToolbenchError) as err:
        bench.enable("builtin:task.return")
    assert err.value.code == "agent.profile_unknown_tool"
    assert "builtin:task.return" not in {str(d.id) for d in bench.catalog()}


@pytest.mark.parametrize("tool", ["agent.delegate", "agent.await", "agent.handoff", "agent.send_message"])
def test_agent_tool_schemas_are_closed(tool):
    schema = BUILTINS[next(t for t in BUILTINS if t.name == tool)].descriptor.input_schema
    assert schema["additionalProperties"] is False


def test_handoff_and_task_return_are_completion_tools(bench):
    from toolbench.tools.agents import HANDOFF, TASK_RETURN

    assert HANDOFF.completes_round and TASK_RETURN.completes_round


# --- delegate and await ------------------------------------------------------------------
def test_delegated_child_runs_its_plan_and_await_returns_its_task_return(bench, parent):
    model = ScriptedModel([
        [("dice_roll", {"formula": "2d6"})],
        [("task_return", {"summary": "Rolled.", "confidence": "high", "warnings": ["dice are random"]})],
    ])
    bench.agents.model = model
    started = delegate(parent, objective="Roll 2d6 and report.", title="Roll")
    assert not started.is_error
    assert started.structured["tasks"][0]["taskId"] == "task_001"
    assert "task_001" in started.content

    result = parent.call("agent_await", {"timeoutMs": 10_000})
    assert not result.is_error
    (done,) = result.structured["completed"]
    assert done["status"] == "completed" and done["summary"] == "Rolled."
    assert done["return"] == {"summary": "Rolled.", "confidence": "high", "warnings": ["dice are random"]}
    assert done["invocationId"] == "inv_root.task_001"
    child = bench.agents.invocation("task_001")
    assert [r.call_name for r in child.records] == ["dice_roll", "task_return"]
    assert model.remaining == 0


def test_batch_form_starts_every_task(bench, parent):
    bench.agents.define("a", description="A", model=returning("from a"))
    bench.agents.define("b", description="B", model=returning("from b"))
    result = parent.call("agent_delegate", {"tasks": [
        {"agentId": "a", "task": {"objective": "one"}}, {"agentId": "b", "task": {"objective": "two"}}]})
    assert [t["taskId"] for t in result.structured["tasks"]] == ["task_001", "task_002"]
    answer = parent.call("agent_await", {"mode": "allCompleted", "timeoutMs": 10_000}).structured
    assert sorted(t["summary"] for t in answer["completed"]) == ["from a", "from b"]


def test_one_bad_entry_refuses_the_whole_batch(bench, parent):
    bench.agents.model = returning()
    result = parent.call("agent_delegate", {"tasks": [
        {"agentId": "general", "task": {"objective": "fine"}},
        {"agentId": "nobody", "task": {"objective": "who?"}},
        {"agentId": "general", "task": {"objective": "   "}}]})
    assert result.is_error and result.error_code == "agent.unknown_agent"
    issues = result.structured["issues"]
    assert [(i["code"], i["entry"]) for i in issues] == [("agent.unknown_agent", 2), ("tool.invalid_arguments", 3)]
    assert result.structured["status"] == "rejected"
    assert bench.agents.tasks() == []
    assert not (bench.workspace / ".toolbench" / "invocations" / "inv_root.task_001").exists()


@pytest.mark.parametrize(("arguments", "code"), [
    ({}, "tool.invalid_arguments"),
    ({"agentId": "general"}, "tool.invalid_arguments"),
    ({"agentId": "general", "task": {"objective": "x"}, "tasks": [{"agentId": "general", "task": {"objective": "y"}}]},
     "tool.invalid_arguments"),
    ({"agentId": "general", "task": {"objective": "x", "colour": "red"}}, "tool.invalid_arguments"),
    ({"agentId": "general", "task": {}}, "tool.invalid_arguments"),
    ({"tasks": []}, "tool.invalid_arguments"),
    ({"tasks": [{"agentId": "general", "task": {"objective": "x"}}] * 9}, "tool.invalid_arguments"),
    ({"agentId": "ghost", "task": {"objective": "x"}}, "agent.unknown_agent"),
    ({"agentId": "general", "task": {"objective": "a" * 8_001}}, "tool.invalid_arguments"),
    ({"agentId": "general", "task": {"objective": "x", "title": "t" * 8_001}}, "tool.invalid_arguments"),
])
def test_delegate_refuses_bad_arguments_and_starts_nothing(bench, parent, arguments, code):
    bench.agents.model = returning()
    result = parent.call("agent_delegate", arguments)
    assert result.is_error and result.error_code == code
    assert bench.agents.tasks() == []


def test_delegate_without_a_model_starts_nothing(bench, parent):
    result = delegate(parent)
    assert result.error_code == "agent.model_missing" and bench.agents.tasks() == []


def test_ninth_child_is_refused_while_eight_run(bench, parent):
    models = [GatedModel([[("task_return", {"summary": f"#{n}"})]]) for n in range(8)]
    for n, model in enumerate(models):
        bench.agents.define(f"w{n}", description="worker", model=model)
    batch = [{"agentId": f"w{n}", "task": {"objective": "wait"}} for n in range(7)]
    assert not parent.call("agent_delegate", {"tasks": batch}).is_error
    over = parent.call("agent_delegate", {"tasks": [{"agentId": "w7", "task": {"objective": "x"}}] * 2})
    assert over.error_code == "agent.child_limit_reached" and len(bench.agents.tasks()) == 7
    assert not delegate(parent, "w7").is_error
    ninth = delegate(parent, "w7")
    assert ninth.error_code == "agent.child_limit_reached"
    assert len(bench.agents.tasks()) == 8

    for model in models:
        model.release()
    assert {t["status"] for t in bench.agents.wait(timeout=WAIT)} == {"completed"}
    assert not delegate(parent, "w0").is_error  # room again (w0's script is used up: it fails, but it starts)


def test_await_status_only_answers_at_once(bench, parent):
    model = GatedModel([[("task_return", {"summary": "late"})]])
    bench.agents.model = model
    delegate(parent)
    model.wait_asked()
    answer = parent.call("agent_await", {"mode": "statusOnly"})
    assert not answer.is_error and answer.structured["completed"] == []
    assert answer.structured["statuses"] == [{"taskId": "task_001", "agentId": "general", "status": "running"}]
    model.release()
    bench.agents.wait(timeout=WAIT)


def test_await_times_out_with_a_recoverable_error(bench, parent):
    model = GatedModel([[("task_return", {"summary": "late"})]])
    bench.agents.model = model
    delegate(parent)
    for mode in ("nextCompleted", "allCompleted"):
        result = parent.call("agent_await", {"mode": mode, "timeoutMs": 0})
        assert result.is_error and result.error_code == "agent.await_timeout"
        assert result.structured["statuses"][0]["status"] in ("pending", "running")
    model.release()
    done = parent.call("agent_await", {"timeoutMs": 10_000})
    assert done.structured["completed"][0]["summary"] == "late"


def test_await_next_completed_reports_each_task_once_in_completion_order(bench, parent):
    first, second = GatedModel([[("task_return", {"summary": "A"})]]), GatedModel([[("task_return", {"summary": "B"})]])
    bench.agents.define("a", description="A", model=first)
    bench.agents.define("b", description="B", model=second)
    delegate(parent, "a")
    delegate(parent, "b")
    second.release()
    assert parent.call("agent_await", {"timeoutMs": 10_000}).structured["completed"][0]["summary"] == "B"
    first.release()
    assert parent.call("agent_await", {"timeoutMs": 10_000}).structured["completed"][0]["summary"] == "A"
    nothing = parent.call("agent_await", {"timeoutMs": 0})
    assert not nothing.is_error and nothing.structured["completed"] == [] and nothing.structured["statuses"] == []
    again = parent.call("agent_await", {"taskIds": ["TASK_001"]})  # asked by id: reported again, any case
    assert again.structured["completed"][0]["summary"] == "A"


def test_await_refuses_tasks_that_are_not_the_callers(bench, parent):
    bench.agents.model = returning()
    delegate(parent)
    other = bench.invocation(id="inv_other")
    result = other.call("agent_await", {"taskIds": ["task_001"]})
    assert result.error_code == "agent.task_unknown"
    assert parent.call("agent_await", {"taskIds": ["task_404"]}).error_code == "agent.task_unknown"
    bench.agents.wait(timeout=WAIT)


@pytest.mark.parametrize("arguments", [{"mode": "sometime"}, {"timeoutMs": 300_001}, {"timeoutMs": -1},
                                       {"taskIds": "task_001"}, {"extra": 1}])
def test_await_refuses_bad_arguments(parent, arguments):
    assert parent.call("agent_await", arguments).error_code == "tool.invalid_arguments"


# --- task.return --------------------------------------------------------------------------
def test_task_return_with_status_failed_fails_the_task(bench, parent):
    bench.agents.model = returning("could not", status="failed", questionsForCaller=["which file?"])
    delegate(parent)
    (task,) = bench.agents.wait(timeout=WAIT)
    assert task["status"] == "failed" and task["return"]["questionsForCaller"] == ["which file?"]
    assert "error" not in task


def test_task_return_refuses_bad_arguments_and_the_child_goes_on(bench, parent):
    bench.agents.model = ScriptedModel([
        [("task_return", {"summary": "x", "status": "maybe"})],
        [("task_return", {"summary": "x", "artifacts": [{"path": "output/a.md"}]})],
        [("task_return", {"summary": "ok"})],
    ])
    delegate(parent)
    (task,) = bench.agents.wait(timeout=WAIT)
    codes = [r.result.error_code for r in bench.agents.invocation("task_001").records]
    assert codes == ["tool.invalid_arguments", "tool.invalid_arguments", None]
    assert task["status"] == "completed" and task["rounds"] == 3


def test_task_return_must_be_the_last_call_of_its_round(bench, parent):
    bench.agents.model = ScriptedModel([
        [("task_return", {"summary": "too soon"}), ("dice_roll", {"formula": "d6"})],
        [("task_return", {"summary": "now"})],
    ])
    delegate(parent)
    (task,) = bench.agents.wait(timeout=WAIT)
    first = bench.agents.invocation("task_001").records[0]
    assert first.result.error_code == "agent.tool_after_finish"
    assert task["summary"] == "now"


def test_task_return_outside_a_delegated_child_is_refused(bench):
    bench.agents.model = returning()
    parent = bench.invocation(id="inv_root")
    delegate(parent)
    bench.agents.wait(timeout=WAIT)
    child = bench.agents.invocation("task_001")
    assert child.call("task_return", {"summary": "twice"}).error_code == "agent.tool_after_finish"
    assert parent.call("task_return", {"summary": "x"}).error_code == "model.unknown_tool_call"


# --- handoff ------------------------------------------------------------------------------
def test_handoff_creates_the_successor_invocation(bench, parent):
    bench.agents.define("editor", description="Polishes drafts.")
    brief = {"objective": "Polish output/main.md", "reason": "style pass", "mustPreserve": ["names"]}
    result = parent.call("agent_handoff", {"agentId": "editor", "handoff": brief})
    assert not result.is_error
    record = result.structured
    assert record["invocationId"] == "inv_root.handoff_001" and record["agentId"] == "editor"
    assert record["handoff"] == brief and "- names" in record["brief"]
    assert bench.agents.handoffs() == [record]
    successor = bench.open_invocation("inv_root.handoff_001")
    assert "agent_handoff" in successor.snapshot.call_names  # not a return-mode child


def test_handoff_must_be_the_last_call_of_its_round(bench, parent):
    results = parent.turn([("agent_handoff", {"agentId": "general", "handoff": {"objective": "go"}}),
                           ("dice_roll", {"formula": "d6"})])
    assert results[0].error_code == "agent.tool_after_finish" and not results[1].is_error
    assert bench.agents.handoffs() == []


def test_handoff_refuses_an_unknown_agent(parent):
    result = parent.call("agent_handoff", {"agentId": "ghost", "handoff": {"objective": "go"}})
    assert result.error_code == "agent.unknown_agent"


def test_handoff_deny_if_pending_refuses_and_the_default_cancels(bench, parent):
    model = GatedModel([[("task_return", {"summary": "never"})]])
    bench.agents.model = model
    delegate(parent)
    model.wait_asked()
    args = {"agentId": "general", "handoff": {"objective": "take over"}}
    denied = parent.call("agent_handoff", {**args, "pendingTaskPolicy": "denyIfPending"})
    assert denied.error_code == "agent.handoff_pending_tasks"
    done = parent.call("agent_handoff", args)
    assert done.structured["cancelledTasks"] == ["task_001"]
    task = bench.agents.task("task_001")
    assert task["status"] == "cancelled" and task["error"]["code"] == "agent.task_cancelled"
    model.release()


@pytest.mark.parametrize("arguments", [
    {"agentId": "general"}, {"agentId": "general", "handoff": {}},
    {"agentId": "general", "handoff": {"objective": "x"}, "pendingTaskPolicy": "cancel"},
    {"agentId": "general", "handoff": {"objective": "x", "notes": "y"}},
    {"agentId": "general", "handoff": {"objective": "  "}},
    {"agentId": "general", "handoff": {"objective": "a" * 8_001}},
    {"agentId": "general", "handoff": {"objective": "x", "contextSummary": "s" * 8_001}},
    {"agentId": "ghost", "handoff": {"objective": "a" * 8_001}},  # the packet is checked before the agent
])
def test_handoff_refuses_bad_arguments(bench, parent, arguments):
    result = parent.call("agent_handoff", arguments)
    assert result.error_code == "tool.invalid_arguments" and bench.agents.handoffs() == []


def test_handoff_takes_8000_char_fields(bench, parent):
    brief = {"title": "Revision pass", "objective": "a" * 8_000, "contextSummary": "Ready for the next stage."}
    assert not parent.call("agent_handoff", {"agentId": "general", "handoff": brief}).is_error


# --- send_message -------------------------------------------------------------------------
def test_child_message_to_parent_is_delivered_by_await(bench, parent):
    bench.agents.model = ScriptedModel([
        [("agent_send_message", {"to": "PARENT", "message": "Halfway there.", "channel": "shared"})],
        [("task_return", {"summary": "done"})],
    ])
    delegate(parent)
    answer = parent.call("agent_await", {"timeoutMs": 10_000}).structured
    (message,) = answer["messages"]
    assert message["from"] == "task_001" and message["to"] == ["parent"] and message["channel"] == "direct"
    assert message["message"] == "Halfway there."
    assert parent.call("agent_await", {"mode": "statusOnly"}).structured["messages"] == []  # delivered once
    assert bench.agents.inbox("inv_root") == [message]


def test_a_message_sent_during_a_turn_waits_for_the_next_turn_boundary(bench, parent):
    model = GatedModel([[("dice_roll", {"formula": "d4"})], [("task_return", {"summary": "ok"})]], gated=(2,))
    bench.agents.model = model
    delegate(parent)
    model.wait_asked(2)  # turn 2's messages are built: the model is answering
    sent = parent.call("agent_send_message", {"to": "Task_001", "message": "Use d8 next time.", "channel": "decision"})
    assert not sent.is_error and sent.structured["to"] == ["task_001"] and sent.structured["channel"] == "decision"
    model.release(2)
    bench.agents.wait(timeout=WAIT)
    # Delivered at the turn boundary: turn 2 was asked before the message, so the child never read it.
    assert all("Use d8" not in str(m.get("content")) for m in model.script.requests[1].messages)


def test_parent_message_sent_before_a_turn_is_in_that_turn(bench, parent):
    model = GatedModel([[("dice_roll", {"formula": "d4"})], [("task_return", {"summary": "ok"})]], gated=(1,))
    bench.agents.model = model
    delegate(parent)
    model.wait_asked(1)
    parent.call("agent_send_message", {"to": "task_001", "message": "Use d8 next time."})
    model.release(1)
    bench.agents.wait(timeout=WAIT)
    turn_two = model.script.requests[1].messages
    assert {"role": "user", "content": "Message from `parent` (direct):\n\nUse d8 next time."} in turn_two


def test_broadcast_reaches_parent_and_siblings(bench, parent):
    gate = GatedModel([[("dice_roll", {"formula": "d6"})], [("task_return", {"summary": "listener"})]])
    bench.agents.define("listener", description="L", model=gate)
    bench.agents.define("speaker", description="S", model=ScriptedModel([
        [("agent_send_message", {"message": "All: the key is under the mat.", "channel": "shared"})],
        [("task_return", {"summary": "spoke"})]]))
    delegate(parent, "listener")
    gate.wait_asked()
    delegate(parent, "speaker")
    bench.agents.wait(["task_002"], timeout=WAIT)
    gate.release()
    bench.agents.wait(timeout=WAIT)
    (sent,) = bench.agents.inbox("inv_root")
    assert sent["to"] == ["parent", "task_001"] and sent["channel"] == "shared"
    heard = "Message from `task_002` (shared):\n\nAll: the key is under the mat."
    assert {"role": "user", "content": heard} in gate.script.requests[1].messages


@pytest.mark.parametrize(("arguments", "code"), [
    ({"to": "parent", "message": "hi"}, "agent.unknown_recipient"),  # a root has no parent
    ({"to": "task_404", "message": "hi"}, "agent.unknown_recipient"),
    ({"to": "*", "message": "hi"}, "agent.unknown_recipient"),  # no children yet
    ({"message": "hi"}, "tool.invalid_arguments"),  # `to` omitted needs channel shared
    ({"to": "parent", "message": ""}, "tool.invalid_arguments"),
    ({"to": "parent", "message": "   "}, "tool.invalid_arguments"),  # LiveAgent: checked before the recipient
    ({"to": "*", "message": "\n\t"}, "tool.invalid_arguments"),
    ({"to": "parent", "message": "hi", "channel": "telepathy"}, "tool.invalid_arguments"),
])
def test_send_message_checks_the_roster(parent, arguments, code):
    result = parent.call("agent_send_message", arguments)
    assert result.is_error and result.error_code == code


def test_unknown_recipient_lists_the_valid_targets(bench, parent):
    bench.agents.model = returning()
    delegate(parent)
    bench.agents.wait(timeout=WAIT)
    result = parent.call("agent_send_message", {"to": "task_9", "message": "hi"})
    assert result.structured["valid"] == ["task_001", "*"]
    ok = parent.call("agent_send_message", {"message": "hi all", "channel": "shared"})
    assert ok.structured["to"] == ["task_001"]


def test_a_message_is_sent_trimmed(bench, parent):
    bench.agents.model = GatedModel([[("task_return", {"summary": "ok"})]])
    delegate(parent)
    sent = parent.call("agent_send_message", {"to": "task_001", "message": "  hi\n"})
    assert sent.structured["message"] == "hi"
    bench.agents.model.release()


def test_a_delegated_child_never_gets_todo_write(make_bench):
    """LiveAgent §6: TodoWrite is never offered to a sub-agent child, even when the profile allows it."""
    bench = make_bench(profile=parent_profile("builtin:todo.write"))
    bench.agents.model = returning()
    parent = bench.invocation(id="inv_root")
    assert "todo_write" in parent.snapshot.call_names
    delegate(parent)
    child = bench.agents.invocation("task_001").snapshot
    assert "todo_write" not in child.call_names
    assert {d.tool_id: d.code for d in child.diagnostics}["builtin:todo.write"] == "agent.return_mode_excluded"


def test_the_builtins_a_child_loses_say_so_on_their_descriptors():
    """core/snapshot.py knows no tool names: a descriptor's `parent_only` is what a child loses
    (besides completion tools); the test catalog's fakes mirror these."""
    assert {d.id.name for d in (t.descriptor for t in BUILTINS.values()) if d.parent_only} == PARENT_ONLY
