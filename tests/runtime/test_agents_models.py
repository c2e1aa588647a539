"""`bench.agents.model` is any `toolbench.models.Model`: a child speaks the model's protocol
(its tools rendered for it, its history in its shape, its replies decoded by it); the callable
form is one more Model (`CallableModel`), and a provider's error fails the task with its code."""

from __future__ import annotations

import pytest
from agents_support import WAIT, delegate, parent_profile
from drive_support import chat_body, local_provider

from toolbench.models import ModelError, OpenAIChat
from toolbench.runtime.agents.loop import CallableModel, as_model
from toolbench.testing import ScriptedModel

# "mistral": the provider installed from tests/fixtures/user_provider (conftest, plugin_support)
PROTOCOLS = ["openai", "openai-responses", "anthropic", "gemini", "mistral"]
pytestmark = pytest.mark.user_provider
CHAT = ("openai", "mistral")  # the Chat Completions shape: the system prompt is the first message
ROLL = [("dice_roll", {"formula": "d6"}, "c1")]
RETURN = [("task_return", {"summary": "ok"})]


@pytest.fixture
def bench(make_bench):
    return make_bench(profile=parent_profile(), seed=1)


@pytest.fixture
def parent(bench):
    return bench.invocation(id="inv_root")


def _messages(protocol, body):
    """The conversation of a request body (OpenAI Chat's system message left out)."""
    if protocol in CHAT:
        return body["messages"][1:]
    return body["input"] if protocol == "openai-responses" else body["contents" if protocol == "gemini" else "messages"]


def _system(protocol, body):
    if protocol in CHAT:
        return body["messages"][0]["content"]
    if protocol == "openai-responses":
        return body["instructions"]
    if protocol == "anthropic":
        return body["system"]
    return body["systemInstruction"]["parts"][0]["text"]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_child_speaks_the_model_protocol(bench, parent, protocol):
    model = ScriptedModel([ROLL, RETURN], protocol=protocol)
    bench.agents.model = model
    delegate(parent, objective="Roll a die.", title="Roll")
    (task,) = bench.agents.wait(timeout=WAIT)
    assert (task["status"], task["summary"]) == ("completed", "ok")
    child = bench.agents.invocation("task_001")
    first, second = model.bodies
    assert first["tools"] == child.snapshot.render(protocol)
    assert _system(protocol, first).startswith("You are the agent `general`")
    assert _messages(protocol, first) == [model.user_message("# Roll\n\nRoll a die.")]
    # The second request: the brief, then round 1 as that provider's history (turn as it came).
    assert _messages(protocol, second) == [model.user_message("# Roll\n\nRoll a die."),
                                           *child.transcript(protocol, rounds=[1])]
    assert [r.call_name for r in child.records] == ["dice_roll", "task_return"]
    assert child.records[0].result.error_code is None


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_text_answer_stays_in_the_conversation_in_the_provider_shape(bench, parent, protocol):
    model = ScriptedModel(["I think I'm done.", RETURN], protocol=protocol)
    bench.agents.model = model
    delegate(parent)
    (task,) = bench.agents.wait(timeout=WAIT)
    assert (task["status"], task["rounds"]) == ("completed", 2)
    messages = _messages(protocol, model.bodies[1])
    assert messages[-1] == model.user_message(messages[-1]["content"] if protocol != "gemini"
                                              else messages[-1]["parts"][0]["text"])
    assert "agent.child_finish_denied" in str(messages[-1])
    assert "I think I'm done." in str(messages[-2]) and messages[-2]["role"] in ("assistant", "model")


def test_mail_reaches_the_child_as_the_provider_user_message(bench, parent):
    model = ScriptedModel([[("agent_send_message", {"to": "parent", "message": "hi"})], RETURN],
                          protocol="gemini")
    bench.agents.model = model
    delegate(parent)
    bench.agents.wait(timeout=WAIT)
    contents = model.bodies[1]["contents"]
    assert contents[0]["role"] == "user" and contents[1]["role"] == "model"
    assert "functionResponse" in contents[2]["parts"][0]


def test_a_resumed_roster_child_keeps_its_rounds_in_its_protocol(bench, parent):
    model = ScriptedModel([ROLL, RETURN, RETURN], protocol="anthropic")
    bench.agents.model = model
    for prompt in ("First job.", "Second job."):
        assert not parent.call("agent_delegate", {"agents": [{"id": "scout", "prompt": prompt}]}).is_error
        bench.agents.wait(timeout=WAIT)
    third = model.bodies[2]
    kinds = [block.get("type") if isinstance(block, dict) else "text"
             for m in third["messages"] for block in (m["content"] if isinstance(m["content"], list) else [m])]
    assert "tool_use" in kinds and "tool_result" in kinds
    assert third["messages"][-1]["content"].endswith("Second job.")
    assert third["system"] == model.bodies[0]["system"]


class _Failing:
    """A Model whose provider answers 429."""

    protocol, model = "openai", "down"

    def user_message(self, text):
        return {"role": "user", "content": text}

    def request(self, *, system, messages, tools, tool_choice):
        return {"messages": list(messages), "tools": list(tools)}

    async def send(self, body):
        raise ModelError("model.provider_rate_limited", "rate limited (429): slow down", status=429)

    def read(self, body):
        raise AssertionError("never read")


def test_a_provider_error_fails_the_task_with_its_code(bench, parent):
    bench.agents.model = _Failing()
    delegate(parent)
    (task,) = bench.agents.wait(timeout=WAIT)
    assert task["status"] == "failed" and task["error"]["code"] == "agent.child_model_failed"
    assert task["error"]["message"].startswith("ModelError: model.provider_rate_limited")


def test_a_reply_that_is_not_the_provider_shape_fails_the_task(bench, parent):
    class Garbled(_Failing):
        async def send(self, body):
            return {"choices": "nope"}

        def read(self, body):
            return OpenAIChat.read(body)

    bench.agents.model = Garbled()
    delegate(parent)
    (task,) = bench.agents.wait(timeout=WAIT)
    assert task["error"]["code"] == "agent.child_model_failed"
    assert "model.invalid_response" in task["error"]["message"]


def test_the_callable_form_is_a_model_of_the_openai_protocol():
    def fn(messages, tools):
        return "hi"

    wrapped = as_model(fn)
    assert isinstance(wrapped, CallableModel) and (wrapped.protocol, wrapped.model) == ("openai", "fn")
    scripted = ScriptedModel(["x"], protocol="anthropic")
    assert as_model(scripted) is scripted


def test_a_child_driven_through_the_openai_sdk_against_a_local_server(bench, parent):
    openai = pytest.importorskip("openai")
    answers = [(200, chat_body(calls=[("call_a", "dice_roll", {"formula": "d6"})])),
               (429, {"error": {"message": "slow down", "type": "rate_limit"}})]
    with local_provider(answers) as server:
        client = openai.OpenAI(base_url=server.url + "/v1", api_key="test", max_retries=0, timeout=5)
        bench.agents.model = OpenAIChat(client, "local-model", temperature=0)
        delegate(parent, objective="Roll.")
        (task,) = bench.agents.wait(timeout=WAIT)
    assert task["status"] == "failed" and task["rounds"] == 2
    assert task["error"]["message"].startswith("ModelError: model.provider_rate_limited")
    first, second = server.requests
    assert (first["model"], first["temperature"]) == ("local-model", 0)
    assert first["tools"] == bench.agents.invocation("task_001").snapshot.render("openai")
    assert second["messages"][2]["tool_calls"][0]["id"] == "call_a"
    assert second["messages"][3]["role"] == "tool" and second["messages"][3]["tool_call_id"] == "call_a"


def test_the_conversation_is_in_the_model_protocol(bench, parent):
    bench.agents.model = ScriptedModel(["Not yet.", ROLL, RETURN], protocol="anthropic")
    delegate(parent, objective="Roll.", title="Roll")
    bench.agents.wait(timeout=WAIT)
    conversation = bench.agents.conversation("task_001")
    assert conversation[0] == {"role": "user", "content": "# Roll\n\nRoll."}
    assert conversation[1] == {"role": "assistant", "content": [{"type": "text", "text": "Not yet."}]}
    assert conversation[2]["content"].startswith("agent.child_finish_denied")
    assert [b["type"] for b in conversation[3]["content"]] == ["tool_use"]
    assert [b["type"] for b in conversation[4]["content"]] == ["tool_result"]
