"""`bench.cron.model`: a due prompt task runs as `inv.run(model, prompt)` in a fresh invocation,
and its run entry records the run; without a model it stays a due prompt."""

from __future__ import annotations

from datetime import datetime

import pytest
from drive_support import chat_body, local_provider

from toolbench import Profile, ToolbenchError
from toolbench.models import ModelError, OpenAIChat
from toolbench.testing import ScriptedModel

CRON = ["builtin:cron.create", "builtin:cron.list_logs", "builtin:dice.roll"]
T0 = datetime(2026, 3, 10, 9, 0, 0)
PROMPT = {"name": "remind", "cron": "0 0 9 * * *", "type": "prompt", "prompt": "Roll for the weather"}


@pytest.fixture
def bench(make_bench):
    return make_bench(profile=Profile.default().edit(allow=CRON), seed=3)


@pytest.fixture
def inv(bench):
    made = bench.invocation()
    assert not made.call("cron_create", PROMPT).is_error
    return made


@pytest.mark.parametrize("protocol", ["openai", "openai-responses", "anthropic", "gemini"])
def test_a_due_prompt_is_answered_by_the_model(bench, inv, protocol):
    model = ScriptedModel([[("dice_roll", {"formula": "d6"})], "Sunny."], protocol=protocol)
    bench.cron.model = model
    [run] = bench.cron.run_due(T0)
    assert (run.status, run.output, run.prompt) == ("ran", "Sunny.", "Roll for the weather")
    assert run.extra["invocation_id"] == "cron_task-0001_1"
    assert (run.extra["stop_reason"], run.extra["error_code"]) == ("final", None)
    ran = bench.open_invocation("cron_task-0001_1")
    [recorded] = ran.runs
    assert recorded.id == run.extra["run_id"] and recorded.final_text == "Sunny."
    assert [r.call_name for r in ran.records] == ["dice_roll"]
    assert model.bodies[0]["tools"] == ran.snapshot.render(protocol)
    logs = inv.call("cron_list_logs", {"task_id": "task-0001"}).structured["logs"]
    assert (logs[0]["status"], logs[0]["run_id"]) == ("ran", run.extra["run_id"])


def test_each_run_gets_its_own_invocation(bench, inv):
    bench.cron.model = ScriptedModel(["one", "two"])
    bench.cron.run_due(T0)
    [second] = bench.cron.run_due(datetime(2026, 3, 11, 9, 0, 0))
    assert (second.extra["invocation_id"], second.output) == ("cron_task-0001_2", "two")


class _RateLimited:
    protocol, model = "openai", "down"

    def user_message(self, text):
        return {"role": "user", "content": text}

    def request(self, *, system, messages, tools, tool_choice):
        return {"messages": list(messages)}

    async def send(self, body):
        raise ModelError("model.provider_rate_limited", "rate limited (429): later", status=429)

    def read(self, body):
        raise AssertionError("never read")


def test_a_provider_error_fails_the_run_entry_with_its_code(bench, inv):
    bench.cron.model = _RateLimited()
    [run] = bench.cron.run_due(T0)
    assert (run.status, run.extra["stop_reason"], run.extra["error_code"]) == \
        ("failed", "provider_error", "model.provider_rate_limited")
    assert "later" in run.output
    task = bench.cron.tasks()[0]
    assert task.runs == 1  # the run counts: the task's window moves on


def test_a_run_that_ends_without_an_answer_is_failed_with_its_stop_reason(make_bench):
    bench = make_bench(profile=Profile.default().edit(allow=CRON, max_calls_per_run=2))
    assert not bench.invocation().call("cron_create", PROMPT).is_error
    bench.cron.model = ScriptedModel([[("dice_roll", {"formula": "d6"})]] * 3)
    [run] = bench.cron.run_due(T0)
    assert (run.status, run.extra["stop_reason"], run.output) == ("failed", "budget", "budget")


def test_without_a_model_prompts_stay_due(bench, inv):
    [run] = bench.cron.run_due(T0)
    assert run.status == "prompt_due" and run.extra == {}


@pytest.mark.parametrize("value", [lambda messages, tools: "x", "gpt-4.1"])
def test_cron_takes_only_a_model(bench, value):
    with pytest.raises(ToolbenchError) as err:
        bench.cron.model = value
    assert err.value.code == "bench.misuse"


def test_the_scene_is_checked(bench):
    with pytest.raises(ToolbenchError) as err:
        bench.cron.scene = "party"
    assert err.value.code == "bench.misuse"


def test_a_prompt_through_the_openai_sdk_against_a_local_server(bench, inv):
    openai = pytest.importorskip("openai")
    with local_provider([(200, chat_body("Cloudy."))]) as server:
        client = openai.OpenAI(base_url=server.url + "/v1", api_key="test", max_retries=0, timeout=5)
        bench.cron.model = OpenAIChat(client, "local-model")
        [run] = bench.cron.run_due(T0)
    assert (run.status, run.output) == ("ran", "Cloudy.")
    assert server.requests[0]["messages"] == [{"role": "user", "content": "Roll for the weather"}]


def test_a_model_that_raises_fails_its_task_and_the_others_run(bench, inv):
    """One task's model raising does not abort run_due: the task is failed with the error's
    name, the others run and every window moves on; each run's invocation is closed."""
    import os

    class Broken(ScriptedModel):
        def request(self, **kw):
            raise KeyError("an adapter bug")

    assert not inv.call("cron_create", {**PROMPT, "name": "second"}).is_error
    bench.cron.model = Broken(["x"] * 10)
    runs = bench.cron.run_due(T0)
    assert [(r.status, r.extra["error_code"]) for r in runs] == [("failed", "KeyError")] * 2
    assert bench.cron.run_due(T0) == []  # the windows moved on: nothing runs twice
    before = len(os.listdir("/proc/self/fd"))
    for day in (11, 12, 13):
        assert len(bench.cron.run_due(datetime(2026, 3, day, 9, 0, 0))) == 2
    assert len(os.listdir("/proc/self/fd")) == before  # each run's invocation log is closed
