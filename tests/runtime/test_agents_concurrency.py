"""`agent.delegate`'s top-level `concurrency` for the LiveAgent form (reference liveagent-tools §8):
at most that many children of the batch run at once; the others stay pending until a slot frees."""

from __future__ import annotations

from agents_support import WAIT, GatedModel, parent_profile

RETURN = [("task_return", {"summary": "ok"})]


def test_concurrency_one_runs_the_children_one_after_another(make_bench):
    bench = make_bench(profile=parent_profile(), seed=1)
    model = GatedModel([RETURN, RETURN], gated=(1,))
    bench.agents.model = model
    inv = bench.invocation(id="inv_root")
    result = inv.call("agent_delegate", {"agents": [{"id": "a", "prompt": "One."}, {"id": "b", "prompt": "Two."}],
                                         "concurrency": 1})
    assert not result.is_error, result.content
    model.wait_asked(1)
    assert [t["status"] for t in bench.agents.tasks()] == ["running", "pending"]
    model.release(1)
    done = bench.agents.wait(timeout=WAIT)
    assert [t["status"] for t in done] == ["completed", "completed"] and len(model.script.requests) == 2


def test_concurrency_goes_with_the_agents_form_only(make_bench):
    bench = make_bench(profile=parent_profile(), seed=1)
    inv = bench.invocation(id="inv_root")
    result = inv.call("agent_delegate", {"agentId": "general", "task": {"objective": "x"}, "concurrency": 2})
    assert result.is_error and result.error_code == "tool.invalid_arguments"
