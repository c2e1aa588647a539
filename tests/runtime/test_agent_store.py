"""The durable roster of bench.agents (runtime/agents/roster_store.py): a torn, corrupt or other-version
file is a coded notice and a fresh roster, never a crash; the next child's run replaces it."""

from __future__ import annotations

import json

import pytest
from agents_support import WAIT, parent_profile
from upstream_support import RETURN, PerChild, always_return

from toolbench.runtime.agents import roster_store as agent_store
from toolbench.testing import ScriptedModel

ROSTER = ".toolbench/agents/roster.json"


def delegate(bench, child: str = "scout", parent: str = "inv_root") -> None:
    result = bench.invocation(id=parent).call("agent_delegate", {"agents": [{"id": child, "prompt": "look"}]})
    assert not result.is_error, result.content
    bench.agents.wait(timeout=WAIT)


@pytest.mark.parametrize("text", ['{"schemaVersion": 1, "children": [{"id": "sc', "not json", "[]",
                                  '{"schemaVersion": 2, "children": []}',
                                  '{"schemaVersion": 1, "children": [{"id": "-bad"}]}'])
def test_an_unreadable_roster_is_a_notice_and_a_fresh_roster(make_bench, tmp_path, text):
    path = tmp_path / "ws" / ROSTER
    path.parent.mkdir(parents=True)
    path.write_text(text)
    bench = make_bench("ws", profile=parent_profile(), seed=1)
    bench.agents.model = always_return()
    assert bench.agents.roster() == []
    assert [n.code for n in bench.agents.notices] == ["agent.roster_unreadable"]
    delegate(bench)  # the bench goes on, and the file is whole again
    assert [c["id"] for c in json.loads(path.read_text())["children"]] == ["scout"]


def test_the_file_holds_identity_mode_status_and_a_versioned_context(make_bench, tmp_path):
    bench = make_bench("ws", profile=parent_profile(), seed=1)
    bench.agents.model = always_return()
    delegate(bench)
    data = json.loads((tmp_path / "ws" / ROSTER).read_text())
    (child,) = data["children"]
    assert data["schemaVersion"] == agent_store.ROSTER_VERSION
    assert {k: child[k] for k in ("id", "name", "template", "mode", "status")} == {
        "id": "scout", "name": None, "template": "general", "mode": "readonly", "status": "completed"}
    context = child["context"]
    assert (context["schemaVersion"], context["protocol"]) == (agent_store.CONTEXT_VERSION, "openai")
    assert context["messages"][0]["role"] == "user" and "You are" in context["system"]
    assert sorted(p.name for p in (tmp_path / "ws" / ".toolbench" / "agents").iterdir()) == ["roster.json"]


def test_a_context_of_another_protocol_is_not_resumed(make_bench, tmp_path):
    bench = make_bench("ws", profile=parent_profile(), seed=1)
    bench.agents.model = always_return()
    delegate(bench)
    model = ScriptedModel([[("task_return", {"summary": "r"})]], protocol="anthropic")
    bench.agents.model = model
    delegate(bench, parent="inv_two")
    assert [m["role"] for m in model.requests[0].messages] == ["user"]  # a fresh context: the brief alone


def stored(tmp_path) -> dict[str, tuple[str, bool]]:
    """The file's children: id -> (status, has a context)."""
    children = json.loads((tmp_path / "ws" / ROSTER).read_text())["children"]
    return {c["id"]: (c["status"], c["context"] is not None) for c in children}


def test_a_child_mid_run_is_stored_as_its_last_settled_state_and_reads_back_interrupted(make_bench, tmp_path):
    bench = make_bench("ws", profile=parent_profile(), seed=1)
    model = PerChild({"sage": [RETURN, RETURN], "scout": [RETURN]}, gated=["sage"])
    bench.agents.model = model
    inv = bench.invocation(id="inv_root")
    assert not inv.call("agent_delegate", {"agents": [{"id": "sage", "prompt": "think"}]}).is_error
    model.wait_asked(1)  # sage is in its first run, held at its first turn
    assert stored(tmp_path) == {"sage": ("interrupted", False)}  # its identity is on disk already
    result = bench.invocation(id="inv_two").call("agent_delegate", {"agents": [{"id": "scout", "prompt": "look"}]})
    (scout,) = bench.agents.wait([result.structured["tasks"][0]["taskId"]], timeout=WAIT)  # sage's run goes on
    assert scout["status"] == "completed"
    assert stored(tmp_path) == {"sage": ("interrupted", False), "scout": ("completed", True)}
    model.release("sage")
    bench.agents.wait(timeout=WAIT)
    assert stored(tmp_path) == {"sage": ("completed", True), "scout": ("completed", True)}
    # a copy of the workspace taken mid-run, as a crash leaves it, reads the running child as interrupted
    (tmp_path / "ws" / ROSTER).write_text((tmp_path / "ws" / ROSTER).read_text().replace(
        '"status": "completed"', '"status": "running"', 1))
    reopened = make_bench("ws", profile=parent_profile(), seed=1)
    assert [c["status"] for c in reopened.agents.roster()] == ["interrupted", "completed"]


def test_two_benches_on_one_workspace_keep_each_others_children(make_bench, tmp_path):
    first = make_bench("ws", profile=parent_profile(), seed=1)
    second = make_bench("ws", profile=parent_profile(), seed=1)
    first.agents.model = second.agents.model = always_return()
    delegate(first, "scout")
    delegate(second, "sage", parent="inv_two")
    delegate(first, "scout", parent="inv_three")  # first's cached roster knows no sage: the file still does
    assert list(stored(tmp_path)) == ["scout", "sage"]
