"""agent.delegate's LiveAgent form, `agents: [{id, prompt, ...}]` (reference liveagent-tools §8,
"Subagents: Agent / SendMessage validation"): the entry rules, whole-batch rejection with the
roster and the enabled templates, identities fixed at first creation, and the readonly mode."""

from __future__ import annotations

import pytest
from agents_support import WAIT, GatedModel, parent_profile, returning

from toolbench.core.agents import MAX_CHILDREN, Known, agents_batch_issues, batch_concurrency, normalize_entry
from toolbench.core.errors import CODES
from toolbench.testing import ScriptedModel


def spawn(inv, *entries):
    return inv.call("agent_delegate", {"agents": list(entries)})


def entry(agent_id="a1", prompt="Look around.", **fields):
    return {"id": agent_id, "prompt": prompt, **fields}


@pytest.fixture
def bench(make_bench):
    bench = make_bench(profile=parent_profile("builtin:workspace.write_file"), seed=1)
    bench.agents.model = returning()
    return bench


@pytest.fixture
def parent(bench):
    return bench.invocation(id="inv_root")


def codes(entries, roster=None, templates=("general",), active=0, git=False):
    return [(i.code, i.entry) for i in agents_batch_issues(entries, roster=roster or {}, templates=list(templates),
                                                           active=active, has_model=lambda t: True,
                                                           git_repository=git)]


# --- the pure rules -----------------------------------------------------------------------
def test_every_new_code_is_listed():
    for code in ("agent.duplicate_agent_id", "agent.unknown_template", "agent.identity_conflict",
                 "agent.roster_unreadable", "agent.roster_write_failed", "agent.worktree_unavailable",
                 "agent.output_path_outside_workspace", "agent.worktree_failed"):
        assert code in CODES
    assert "agent.child_busy" not in CODES  # a busy child's next run waits for it (upstream's per-id queue)


def test_a_good_batch_has_no_issues():
    assert codes([entry("a1"), entry("b.2", template="GENERAL", name="Bee", mode="readonly", resume=False)]) == []


@pytest.mark.parametrize("bad", ["", "-x", "a b", "x" * 65])
def test_ids_start_alphanumeric_then_up_to_63_more(bad):
    assert codes([entry(bad)]) == [("tool.invalid_arguments", 1)]


def test_duplicates_are_compared_case_insensitively():
    assert codes([entry("Scout"), entry("scout")]) == [("agent.duplicate_agent_id", 2)]


@pytest.mark.parametrize("prompt", ["", "   "])
def test_the_prompt_must_not_be_blank(prompt):
    assert codes([entry(prompt=prompt)]) == [("tool.invalid_arguments", 1)]


def test_templates_resolve_among_the_enabled_ones_only():
    assert codes([entry(template="Researcher")], templates=("general", "researcher")) == []
    assert codes([entry(template="writer")]) == [("agent.unknown_template", 1)]


def test_an_existing_identity_cannot_change():
    roster = {"a1": Known("A1", {"name": "Ann", "role": None, "identity": None, "template": "general"}, "readonly")}
    assert codes([entry("a1", name="Ann", template="General")], roster) == []  # the same values are fine
    (issue,) = agents_batch_issues([entry("a1", name="Bob", role="critic")], roster=roster, templates=["general"],
                                   active=0, has_model=lambda t: True)
    assert issue.code == "agent.identity_conflict" and "name, role" in issue.message and "`A1`" in issue.message


def test_entry_strings_are_trimmed_and_blank_ones_dropped():
    raw = {"id": " a1 ", "prompt": " go ", "name": "  ", "role": " critic ", "resume": False, "mode": ""}
    once = normalize_entry(raw)
    assert once == {"id": "a1", "prompt": "go", "role": "critic", "resume": False}
    assert normalize_entry(once) == once  # idempotent
    roster = {"a1": Known("A1", {"name": "Ann", "role": "critic", "identity": None, "template": "general"},
                          "readonly")}
    assert codes([normalize_entry({**raw, "name": " Ann "})], roster) == []


def test_worktree_mode_needs_a_git_repository():
    assert codes([entry(mode="worktree")]) == [("agent.worktree_unavailable", 1)]
    assert codes([entry(mode="worktree")], git=True) == []


def test_apply_policy_is_valid_only_with_worktree():
    assert codes([entry(apply_policy="auto")], git=True) == [("tool.invalid_arguments", 1)]
    assert codes([entry(mode="worktree", apply_policy="auto")], git=True) == []


def test_allowed_output_paths_need_explicit_and_explicit_needs_them():
    assert codes([entry(mode="worktree", apply_policy="auto", allowed_output_paths=["out"])], git=True) == [
        ("tool.invalid_arguments", 1)]
    assert codes([entry(mode="worktree", apply_policy="explicit")], git=True) == [("tool.invalid_arguments", 1)]
    assert codes([entry(mode="worktree", apply_policy="explicit", allowed_output_paths=["out", "a/*.md"])],
                 git=True) == []


@pytest.mark.parametrize("path", ["/etc", "../up", "a/../../up", "C:/x"])
def test_an_allowed_output_path_outside_the_workspace_is_an_issue(path):
    assert codes([entry(mode="worktree", apply_policy="explicit", allowed_output_paths=[path])], git=True) == [
        ("agent.output_path_outside_workspace", 1)]


def test_at_most_eight_children_run_at_once():
    assert codes([entry(f"a{n}") for n in range(3)], active=MAX_CHILDREN - 2) == [("agent.child_limit_reached", 3)]


def test_every_issue_is_collected():
    found = codes([entry("-bad", prompt=""), entry("ok", template="nope"), entry("OK", mode="worktree")])
    assert found == [("tool.invalid_arguments", 1), ("tool.invalid_arguments", 1), ("agent.unknown_template", 2),
                     ("agent.duplicate_agent_id", 3), ("agent.worktree_unavailable", 3)]


# --- the tool -----------------------------------------------------------------------------
def test_a_batch_starts_named_children(bench, parent):
    bench.agents.model = ScriptedModel([[("task_return", {"summary": "one"})], [("task_return", {"summary": "two"})]])
    started = spawn(parent, entry("scout", name="Scout"), entry("critic", role="critic"))
    assert not started.is_error, started.content
    tasks = started.structured["tasks"]
    assert [(t["childId"], t["mode"], t["agentId"]) for t in tasks] == [
        ("scout", "readonly", "general"), ("critic", "readonly", "general")]
    bench.agents.wait(timeout=WAIT)
    assert [(c["id"], c["name"], c["role"], c["template"], c["status"]) for c in bench.agents.roster()] == [
        ("scout", "Scout", None, "general", "completed"), ("critic", None, "critic", "general", "completed")]


def test_a_rejected_batch_starts_nothing_and_lists_the_roster_and_templates(bench, parent):
    bench.agents.define("researcher", description="Reads and reports.")
    assert not spawn(parent, entry("scout", name="Scout")).is_error
    bench.agents.wait(timeout=WAIT)
    result = spawn(parent, entry("fresh"), entry("SCOUT", name="Other"), entry("x", template="nope"))
    assert result.is_error and result.error_code == "agent.identity_conflict"
    data = result.structured
    assert (data["kind"], data["status"]) == ("subagent_batch", "rejected")
    assert [(i["code"], i["entry"]) for i in data["issues"]] == [("agent.identity_conflict", 2),
                                                                 ("agent.unknown_template", 3)]
    assert [c["id"] for c in data["roster"]] == ["scout"]
    assert [t["id"] for t in data["templates"]] == ["general", "researcher"]
    assert "1. [agent.identity_conflict]" in result.content and "`scout`" in result.content
    assert "`researcher`: Reads and reports." in result.content
    assert [c["id"] for c in bench.agents.roster()] == ["scout"]  # `fresh` was not started
    assert len(bench.agents.tasks()) == 1


def test_the_forms_do_not_mix(parent):
    result = parent.call("agent_delegate", {"agents": [entry()], "agentId": "general",
                                            "task": {"objective": "x"}})
    assert result.is_error and result.error_code == "tool.invalid_arguments"


def test_unknown_entry_keys_and_bad_types_are_refused_by_the_schema(parent):
    for bad in (entry(apply_policy="auto"), entry(resume="yes"), entry(mode="sandbox")):
        result = spawn(parent, bad)
        assert result.is_error and result.error_code == "tool.invalid_arguments"


def test_a_running_child_runs_again_after_its_current_run(bench, parent):
    model = GatedModel([[("task_return", {"summary": "one"})], [("task_return", {"summary": "two"})]])
    bench.agents.model = model
    assert not spawn(parent, entry("scout")).is_error
    model.wait_asked()
    queued = spawn(parent, entry("scout"))
    assert not queued.is_error and queued.structured["tasks"][0]["status"] == "pending"
    model.release()
    assert [t["summary"] for t in bench.agents.wait(timeout=WAIT)] == ["one", "two"]


def test_a_template_without_a_model_is_refused(make_bench):
    bench = make_bench(profile=parent_profile(), seed=1)
    result = spawn(bench.invocation(id="inv_root"), entry())
    assert result.is_error and result.error_code == "agent.model_missing"
    assert bench.agents.tasks() == []


@pytest.mark.parametrize(("count", "value", "runs"), [(2, 99, 2), (2, 0, 1), (3, None, 3), (5, 2.7, 2), (1, -3, 1)])
def test_concurrency_is_clamped_as_upstream(count, value, runs):
    # upstream's cases: 2 agents with 99 -> 2; 0 -> 1; 3 agents and no value -> 3
    assert batch_concurrency(count, value) == runs
