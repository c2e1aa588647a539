"""The pure sub-agent rules: batch checks, message routing (LiveAgent §8), await picks."""

from __future__ import annotations

import pytest

from toolbench import ToolError
from toolbench.core.agents import (
    HANDOFF_TEXT,
    MAX_CHILDREN,
    TASK_TEXT,
    batch_issues,
    check_agent_id,
    clamp_timeout_ms,
    delegate_entries,
    packet_problem,
    pick_next,
    route_message,
)
from toolbench.testing import ScriptedModel


def entry(agent_id="general", objective="x"):
    return {"agentId": agent_id, "task": {"objective": objective}}


def issues(entries, active=0, models=True):
    return [(i.code, i.entry) for i in batch_issues(entries, agents={"general", "other"}, active=active,
                                                    has_model=lambda a: models)]


def test_a_good_batch_has_no_issues():
    assert issues([entry(), entry("other")]) == []


def test_every_issue_of_a_batch_is_collected():
    assert issues([entry("ghost"), entry(objective=" "), entry()], active=6) == [
        ("agent.unknown_agent", 1), ("tool.invalid_arguments", 2), ("agent.child_limit_reached", 3)]


# TauriTavern delegate_tool.rs / handoff_tool.rs tests: 8,000 accepted, 8,001 refused, title optional.
@pytest.mark.parametrize(("packet", "name", "fields", "problem"), [
    ({"objective": "Find one concrete improvement.", "context": {"draft": "A quiet scene."}}, "task", TASK_TEXT, None),
    ({"title": "Critique"}, "task", TASK_TEXT, "task.objective must be a non-empty string"),
    ({"title": "Critique", "objective": "a" * 8_000}, "task", TASK_TEXT, None),
    ({"title": "Critique", "objective": "a" * 8_001}, "task", TASK_TEXT, "task.objective must be <= 8000 chars"),
    ({"objective": "x", "title": "t" * 8_001}, "task", TASK_TEXT, "task.title must be <= 8000 chars"),
    ({"objective": "x", "context": {"big": "c" * 9_000}}, "task", TASK_TEXT, None),  # only text fields count
    ({"objective": f"  {'a' * 8_000}\n"}, "task", TASK_TEXT, None),  # measured trimmed
    ({"objective": "é" * 4_001}, "task", TASK_TEXT, "task.objective must be <= 8000 chars"),  # UTF-8 bytes
    ({"title": "Revision pass", "objective": "a" * 8_000, "contextSummary": "Ready for the next stage."},
     "handoff", HANDOFF_TEXT, None),
    ({"title": "Revision pass", "objective": "a" * 8_001}, "handoff", HANDOFF_TEXT,
     "handoff.objective must be <= 8000 chars"),
    ({"objective": "x", "reason": "r" * 8_001}, "handoff", HANDOFF_TEXT, "handoff.reason must be <= 8000 chars"),
    ({"objective": "x", "contextSummary": "s" * 8_001}, "handoff", HANDOFF_TEXT,
     "handoff.contextSummary must be <= 8000 chars"),
    ({"objective": " \n"}, "handoff", HANDOFF_TEXT, "handoff.objective must be a non-empty string"),
])
def test_packet_fields(packet, name, fields, problem):
    assert packet_problem(packet, name, fields) == problem


def test_an_overlong_objective_is_a_batch_issue():
    assert issues([entry(), entry(objective="a" * 8_001)]) == [("tool.invalid_arguments", 2)]


def test_the_limit_counts_running_children():
    assert issues([entry()], active=MAX_CHILDREN - 1) == []
    assert issues([entry()], active=MAX_CHILDREN) == [("agent.child_limit_reached", 1)]


def test_a_batch_without_a_model_is_refused():
    assert issues([entry()], models=False) == [("agent.model_missing", 1)]


def test_delegate_entries_accepts_both_forms_but_not_together():
    assert delegate_entries(entry()) == [entry()]
    assert delegate_entries({"tasks": [entry(), entry("other")]}) == [entry(), entry("other")]
    for bad in ({}, {"agentId": "general"}, {**entry(), "tasks": [entry()]}):
        with pytest.raises(ToolError) as err:
            delegate_entries(bad)
        assert err.value.code == "tool.invalid_arguments"


@pytest.mark.parametrize(("to", "channel", "has_parent", "recipients", "kept"), [
    ("parent", None, True, ("parent",), "direct"),
    ("PARENT", "shared", True, ("parent",), "direct"),
    ("Task_002", "question", True, ("task_002",), "question"),
    ("*", None, True, ("parent", "task_002", "task_003"), "shared"),
    ("*", "direct", True, ("parent", "task_002", "task_003"), "shared"),
    ("*", "decision", False, ("task_002", "task_003"), "decision"),
    (None, "shared", True, ("parent", "task_002", "task_003"), "shared"),
])
def test_routes(to, channel, has_parent, recipients, kept):
    route = route_message(to, channel, has_parent=has_parent, roster=["task_002", "task_003"])
    assert route.recipients == recipients and route.channel == kept


@pytest.mark.parametrize(("to", "channel", "has_parent", "roster", "code"), [
    ("parent", None, False, ["task_002"], "agent.unknown_recipient"),
    ("task_009", None, True, ["task_002"], "agent.unknown_recipient"),
    ("*", None, False, [], "agent.unknown_recipient"),
    (None, None, True, [], "tool.invalid_arguments"),
    (None, "direct", True, [], "tool.invalid_arguments"),
])
def test_refused_routes(to, channel, has_parent, roster, code):
    with pytest.raises(ToolError) as err:
        route_message(to, channel, has_parent=has_parent, roster=roster)
    assert err.value.code == code


def test_pick_next_takes_the_earliest_unreported():
    assert pick_next(["b", "a", "c"], {"b"}) == "a"
    assert pick_next(["b"], {"b"}) is None


def test_timeouts_default_and_clamp():
    assert clamp_timeout_ms(None) == 120_000
    assert clamp_timeout_ms(10**9) == 300_000
    assert clamp_timeout_ms(-5) == 0


@pytest.mark.parametrize("good", ["a", "A1", "w0.x_y-z", "x" * 64])
def test_agent_ids(good):
    assert check_agent_id(good) == good


def test_scripted_model_plays_records_and_stops():
    from toolbench import ToolbenchError

    model = ScriptedModel([[("dice_roll", {"formula": "d6"})], "done"])
    assert model([{"role": "user", "content": "go"}], []) == [("dice_roll", {"formula": "d6"})]
    assert model([], []) == "done"
    assert model.remaining == 0 and model.requests[0].messages == [{"role": "user", "content": "go"}]
    with pytest.raises(ToolbenchError) as err:
        model([], [])
    assert err.value.code == "testing.script_exhausted"


@pytest.mark.parametrize("turns", [[42], [[("x",)]], [[{"name": "x"}]]])
def test_scripted_model_refuses_a_bad_plan(turns):
    from toolbench import ToolbenchError

    with pytest.raises(ToolbenchError) as err:
        ScriptedModel(turns)
    assert err.value.code == "bench.misuse"
