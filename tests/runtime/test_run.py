"""`inv.run`: a model in the loop, offline (ScriptedModel answers as each provider would).

The real SDK clients against a local provider server are tests/models/test_models_sdk.py; here
the loop's rules: what goes out each round, when a run stops, errors never raised, the log."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from toolbench import Profile, ToolbenchError, TurnContract, Workbench
from toolbench.models import ModelError, OpenAIChat
from toolbench.models._base import provider_error
from toolbench.testing import ScriptedModel

# "mistral": the provider installed from tests/fixtures/user_provider (conftest, plugin_support)
PROTOCOLS = ("openai", "openai-responses", "anthropic", "gemini", "mistral")
pytestmark = pytest.mark.user_provider
TOOLS = ["builtin:dice.roll", "builtin:workspace.read_file", "builtin:workspace.list_files",
         "builtin:workspace.finish"]


@pytest.fixture
def bench(tmp_path: Path) -> Iterator[Workbench]:
    b = Workbench(tmp_path, Profile.default().edit(allow=TOOLS), seed=7)
    (b.workspace / "work").mkdir(exist_ok=True)
    (b.workspace / "work" / "notes.md").write_text("a dragon sleeps here\n", encoding="utf-8")
    yield b
    b.close()


def roll_then_answer(protocol: str) -> ScriptedModel:
    return ScriptedModel([[("dice_roll", {"formula": "2d6"}), ("workspace_read_file", {"path": "work/notes.md"})],
                          "The dragon sleeps; you rolled well."], protocol=protocol)


def messages_of(protocol: str, body: dict[str, Any]) -> list[Any]:
    """The conversation of a request body (Chat Completions' system message is the system prompt)."""
    messages = body[{"openai": "messages", "openai-responses": "input", "anthropic": "messages",
                     "gemini": "contents", "mistral": "messages"}[protocol]]
    return [m for m in messages if m.get("role") != "system"]


# --- what goes out -------------------------------------------------------------------------

@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_each_round_sends_the_rendered_tools_and_the_runs_transcript(bench: Workbench, protocol: str) -> None:
    inv = bench.invocation()
    model = roll_then_answer(protocol)
    run = inv.run(model, "Roll and read the notes.", system="You are terse.")

    assert run.stop_reason == "final" and run.error is None
    assert run.final_text == "The dragon sleeps; you rolled well."
    assert [r.content.startswith("Rolled 2d6") for r in run.results] == [True, False]
    assert "a dragon sleeps here" in run.results[1].content
    assert [(c.call_name, c.arguments) for c in run.calls] == [("dice_roll", {"formula": "2d6"}),
                                                               ("workspace_read_file", {"path": "work/notes.md"})]
    assert [c.result for c in run.calls] == run.results
    first, second = model.bodies
    assert first["tools"] == inv.snapshot.render(protocol)
    opening = [model.user_message("Roll and read the notes.")]
    assert messages_of(protocol, first) == opening
    assert messages_of(protocol, second) == opening + inv.transcript(protocol)
    assert [r.request for r in run.rounds] == model.bodies  # what was recorded is what was sent
    assert run.rounds[0].invocation_round == 1 and run.rounds[1].invocation_round is None
    system_of = {"openai": lambda b: b["messages"][0], "openai-responses": lambda b: b["instructions"],
                 "anthropic": lambda b: b["system"], "gemini": lambda b: b["systemInstruction"],
                 "mistral": lambda b: b["messages"][0]}
    assert "You are terse." in json.dumps(system_of[protocol](first))


def test_a_run_sends_only_its_own_rounds(bench: Workbench) -> None:
    inv = bench.invocation()
    inv.call("dice_roll", {"formula": "1d4"})  # fired by hand before the run: not the model's
    model = roll_then_answer("openai")
    run = inv.run(model, "go")
    second = model.bodies[1]["messages"]
    assert [m["role"] for m in second] == ["user", "assistant", "tool", "tool"]
    assert run.rounds[0].invocation_round == 2


def test_a_contract_limits_the_tools_and_sets_the_choice(bench: Workbench) -> None:
    inv = bench.invocation()
    model = ScriptedModel([[("dice_roll", {"formula": "1d6"})], "ok"], protocol="anthropic")
    contract = TurnContract(tools=["dice_roll"], choice="required")
    run = inv.run(model, "roll", contract=contract)
    assert run.stop_reason == "final"
    assert [t["name"] for t in model.bodies[0]["tools"]] == ["dice_roll"]
    assert model.bodies[0]["tool_choice"] == inv.snapshot.tool_choice("anthropic", contract)


# --- when a run stops -----------------------------------------------------------------------

def test_a_completion_tool_ends_the_run(bench: Workbench) -> None:
    model = ScriptedModel([[("dice_roll", {"formula": "1d6"}), ("workspace_finish", {"reason": "done"})],
                           "never asked"])
    run = bench.invocation().run(model, "go")
    assert run.stop_reason == "completion_tool"
    assert model.remaining == 1 and len(run.rounds) == 1


def test_max_rounds_stops_a_model_that_keeps_calling(bench: Workbench) -> None:
    model = ScriptedModel([[("dice_roll", {"formula": "1d6"})]] * 5)
    run = bench.invocation().run(model, "go", max_rounds=2)
    assert run.stop_reason == "max_rounds" and len(run.rounds) == 2 and model.remaining == 3


def test_the_profiles_max_rounds_is_the_default_limit(tmp_path: Path) -> None:
    bench = Workbench(tmp_path, Profile.default().edit(allow=TOOLS, run={"maxRounds": 3}))
    try:
        run = bench.invocation().run(ScriptedModel([[("dice_roll", {"formula": "1d6"})]] * 5), "go")
        assert run.stop_reason == "max_rounds" and len(run.rounds) == 3
    finally:
        bench.close()


def test_the_call_budget_ends_the_run(tmp_path: Path) -> None:
    bench = Workbench(tmp_path, Profile.default().edit(allow=TOOLS, max_calls_per_run=3))
    try:
        model = ScriptedModel([[("dice_roll", {"formula": "1d6"})] * 2] * 4)
        run = bench.invocation().run(model, "go")
        assert run.stop_reason == "budget" and len(run.rounds) == 2
        assert [r.error_code for r in run.results] == [None, None, None, "agent.tool_budget_exhausted"]
    finally:
        bench.close()


def test_bad_calls_are_answered_and_the_run_goes_on(bench: Workbench) -> None:
    model = ScriptedModel([[("no_such_tool", {}), ("dice_roll", "{not json"), ("dice_roll", {"formula": "d"})],
                           "sorry"], protocol="openai-responses")
    run = bench.invocation().run(model, "go")
    assert run.stop_reason == "final" and run.final_text == "sorry"
    assert [r.error_code for r in run.results] == ["model.unknown_tool_call", "tool.invalid_arguments",
                                                   "tool.invalid_arguments"]


# --- provider errors are results, never exceptions -------------------------------------------

class Failing:
    """A Model whose send fails as an SDK would, on a given round."""

    protocol, model = "openai", "failing"

    def __init__(self, exc: BaseException, *, after: int = 0) -> None:
        self.exc, self.after, self.sent = exc, after, 0
        self._inner = ScriptedModel([[("dice_roll", {"formula": "1d6"})]] * after)

    def user_message(self, text: str) -> dict[str, Any]:
        return self._inner.user_message(text)

    def request(self, **kw: Any) -> dict[str, Any]:
        return self._inner.request(**kw)

    async def send(self, body: dict[str, Any]) -> dict[str, Any]:
        self.sent += 1
        if self.sent > self.after:
            raise self.exc
        return await self._inner.send(body)

    def read(self, body: Any) -> Any:
        return self._inner.read(body)


class FakeStatusError(Exception):
    def __init__(self, status_code: int, message: str) -> None:
        super().__init__(message)
        self.status_code, self.message = status_code, message


class APITimeoutError(Exception):
    pass


class APIConnectionError(Exception):
    pass


@pytest.mark.parametrize(("exc", "code"), [
    (FakeStatusError(401, "invalid x-api-key"), "model.provider_auth"),
    (FakeStatusError(429, "slow down"), "model.provider_rate_limited"),
    (FakeStatusError(400, "messages.1: thinking blocks are required"), "model.request_rejected"),
    (FakeStatusError(529, "overloaded"), "model.provider_error"),
    (APITimeoutError("Request timed out."), "model.provider_timeout"),
    (APIConnectionError("Connection error."), "model.provider_unreachable"),
    (RuntimeError("boom"), "model.provider_error"),
])
def test_an_sdk_error_ends_the_run_with_its_code_and_message(bench: Workbench, exc: Exception, code: str) -> None:
    run = bench.invocation().run(Failing(provider_error(exc), after=1), "go")
    assert run.stop_reason == "provider_error"
    assert run.error is not None and run.error.code == code and run.error.round == 2
    assert str(exc) in run.error.message
    assert len(run.rounds) == 2 and run.rounds[1].response is None and run.rounds[1].error == run.error
    assert len(run.results) == 1  # the first round's call ran and stays recorded


def test_a_status_is_kept(bench: Workbench) -> None:
    run = bench.invocation().run(Failing(provider_error(FakeStatusError(429, "later"))), "go")
    assert run.error is not None and run.error.status == 429 and run.error.round == 1


@pytest.mark.parametrize(("body", "code"), [
    ({"nothing": "here"}, "model.invalid_response"),
    ({"choices": [{"index": 0, "message": {"role": "assistant", "content": None, "refusal": "I can't."},
                   "finish_reason": "stop"}]}, "model.provider_refusal"),
    ({"choices": [{"index": 0, "message": {"role": "assistant", "content": "cut", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "dice_roll", "arguments": "{\"form"}}]},
      "finish_reason": "length"}]}, "model.output_truncated"),
])
def test_a_body_the_run_cannot_use_ends_it_coded(bench: Workbench, body: dict[str, Any], code: str) -> None:
    class Odd(Failing):
        async def send(self, sent: dict[str, Any]) -> dict[str, Any]:
            return body

    run = bench.invocation().run(Odd(RuntimeError()), "go")
    assert run.stop_reason == "provider_error" and run.error is not None and run.error.code == code
    assert run.rounds[0].response == body  # what came is kept


@pytest.mark.parametrize("calls", [False, True])
def test_a_cut_answer_keeps_its_text_and_usage_and_ends_length_only_without_calls(bench: Workbench,
                                                                                  calls: bool) -> None:
    message: dict[str, Any] = {"role": "assistant", "content": "two hundred tokens of text"}
    if calls:
        message["tool_calls"] = [{"id": "c1", "type": "function", "function": {"name": "dice_roll", "arguments": "{"}}]
    body = {"choices": [{"index": 0, "message": message, "finish_reason": "length"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 200, "total_tokens": 210}}

    class Cut(Failing):
        async def send(self, sent: dict[str, Any]) -> dict[str, Any]:
            return body

    inv = bench.invocation()
    run = inv.run(Cut(RuntimeError()), "go")
    assert run.rounds[0].text == "two hundred tokens of text" and run.rounds[0].finish == "length"
    assert run.usage == body["usage"] and run.rounds[0].usage == body["usage"]
    if calls:  # a call may be cut: nothing runs, the run ends coded
        assert run.stop_reason == "provider_error" and run.error is not None
        assert run.error.code == "model.output_truncated" and run.final_text == "" and not inv.records
    else:
        assert run.stop_reason == "length" and run.error is None and run.final_text == "two hundred tokens of text"
    again = inv.runs[-1]  # read back from the log: the same
    assert (again.stop_reason, again.final_text, again.usage) == (run.stop_reason, run.final_text, run.usage)


def test_a_refused_round_keeps_its_usage(bench: Workbench) -> None:
    body = {"choices": [{"index": 0, "finish_reason": "content_filter", "message": {"role": "assistant",
            "content": None, "refusal": "no"}}], "usage": {"prompt_tokens": 7, "completion_tokens": 0}}

    class Refused(Failing):
        async def send(self, sent: dict[str, Any]) -> dict[str, Any]:
            return body

    run = bench.invocation().run(Refused(RuntimeError()), "go")
    assert run.error is not None and run.error.code == "model.provider_refusal"
    assert run.usage == {"prompt_tokens": 7, "completion_tokens": 0}


def test_a_model_error_raised_directly_is_kept(bench: Workbench) -> None:
    run = bench.invocation().run(Failing(ModelError("model.provider_timeout", "took too long")), "go")
    assert run.error is not None and run.error.code == "model.provider_timeout"


def test_misuse_raises_before_anything_is_sent(bench: Workbench) -> None:
    inv = bench.invocation()
    with pytest.raises(ToolbenchError, match=r"bench\.misuse"):
        inv.run(lambda m, t: "hi", "go")  # type: ignore[arg-type]  # the agents' callable is not a Model
    with pytest.raises(ToolbenchError, match=r"bench\.misuse"):
        inv.run(ScriptedModel(["x"]), "go", max_rounds=0)
    with pytest.raises(ToolbenchError, match=r"bench\.misuse"):
        inv.run(ScriptedModel(["x"]), 42)  # type: ignore[arg-type]
    assert inv.runs == []


# --- the log: runs read back, and a stopped run ------------------------------------------------

@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_run_reads_back_after_a_reopen(bench: Workbench, tmp_path: Path, protocol: str) -> None:
    inv = bench.invocation()
    run = inv.run(roll_then_answer(protocol), "go")
    bench.close()
    again = Workbench(tmp_path, Profile.default().edit(allow=TOOLS))
    try:
        (back,) = again.open_invocation(inv.id).runs
        assert (back.id, back.stop_reason, back.final_text, back.protocol) == (run.id, "final", run.final_text,
                                                                                 protocol)
        assert [r.request for r in back.rounds] == [r.request for r in run.rounds]
        assert [r.response for r in back.rounds] == [r.response for r in run.rounds]
        assert back.results == run.results and back.usage == run.usage and back.calls == run.calls
    finally:
        again.close()


def test_runs_get_their_own_ids_and_the_dataframe_has_a_row_per_call(bench: Workbench) -> None:
    inv = bench.invocation()
    first = inv.run(roll_then_answer("openai"), "one")
    second = inv.run(ScriptedModel(["just text"]), "two")
    assert first.id != second.id and [r.id for r in inv.runs] == [first.id, second.id]
    frame = first.to_dataframe()
    assert list(frame["call_id"])[:2] == [r.call_id for r in first.results] and len(frame) == 3
    assert frame["text"].iloc[-1] == first.final_text


def test_usage_adds_up_under_the_providers_names(bench: Workbench) -> None:
    class Counting(ScriptedModel):
        async def send(self, body: dict[str, Any]) -> dict[str, Any]:
            reply = await super().send(body)
            reply["usage"] = {"prompt_tokens": 10, "completion_tokens": 2, "completion_tokens_details":
                              {"reasoning_tokens": 1}}
            return reply

    run = bench.invocation().run(Counting([[("dice_roll", {"formula": "1d6"})], "done"]), "go")
    assert run.usage == {"prompt_tokens": 20, "completion_tokens": 4, "completion_tokens_details":
                         {"reasoning_tokens": 2}}


def test_a_cancelled_run_is_logged_as_stopped(bench: Workbench) -> None:
    async def scenario() -> None:
        asked = asyncio.Event()

        class Stuck(ScriptedModel):
            async def send(self, body: dict[str, Any]) -> dict[str, Any]:
                asked.set()
                await asyncio.Event().wait()  # never answers
                raise AssertionError

        task = asyncio.ensure_future(inv.arun(Stuck(["x"]), "go"))
        await asked.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    inv = bench.invocation()
    bench._kernel.loop.run(asyncio.wait_for(scenario(), 30))
    (run,) = inv.runs
    assert run.stop_reason == "stopped" and len(run.rounds) == 0


def test_an_openai_compatible_server_is_one_base_url_away() -> None:
    """The adapter passes the body to the client untouched: any OpenAI-shaped client works."""
    class Client:
        def __init__(self) -> None:
            self.chat = self
            self.completions = self
            self.with_raw_response = self
            self.sent: list[dict[str, Any]] = []

        def create(self, **body: Any) -> Any:
            self.sent.append(body)
            answer = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"},
                                   "finish_reason": "stop"}]}
            return type("Raw", (), {"text": json.dumps(answer)})()

    client = Client()
    model = OpenAIChat(client, "llama3.2", temperature=0)
    body = model.request(system=None, messages=[model.user_message("hello")], tools=[], tool_choice=None)
    assert body == {"temperature": 0, "model": "llama3.2", "messages": [{"role": "user", "content": "hello"}]}
    reply = asyncio.run(model.send(body))
    assert client.sent == [body] and model.read(reply).text == "hi"


def test_the_log_keeps_what_each_request_adds(bench: Workbench) -> None:
    """Requests repeat the tools and the conversation: the log stores each round's additions
    only, so it grows with the run (and a reopen rebuilds the bodies exactly)."""
    inv = bench.invocation()
    model = ScriptedModel([[("workspace_read_file", {"path": "work/notes.md"})]] * 6 + ["done"], protocol="anthropic")
    run = inv.run(model, "go")
    log = next(bench.workspace.rglob(f"{inv.id}/log.jsonl"))
    lines = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    stored = [line["round"]["request"] for line in lines if isinstance(line.get("round"), dict)]
    assert stored[0]["tools"] == inv.snapshot.render("anthropic")
    assert all(s["tools"] == {"$extends": len(stored[0]["tools"]), "tail": []} for s in stored[1:])
    assert [len(s["messages"]["tail"]) for s in stored[1:]] == [2] * 6  # a call, its result
    assert [r.request for r in inv.runs[0].rounds] == [r.request for r in run.rounds] == model.bodies


def test_runs_started_at_once_get_their_own_ids(bench: Workbench) -> None:
    inv = bench.invocation()

    async def both() -> list[Any]:
        return list(await asyncio.gather(inv.arun(ScriptedModel(["a"]), "one"), inv.arun(ScriptedModel(["b"]), "two")))

    first, second = bench._kernel.loop.run(both())
    assert first.id != second.id
    assert sorted(r.id for r in inv.runs) == sorted([first.id, second.id])


def test_a_server_that_numbers_every_answers_calls_from_call_0(bench: Workbench) -> None:
    """Some OpenAI-compatible servers send `call_0` in every answer: the run goes on (each tool
    message answers the assistant message before it)."""
    model = ScriptedModel([[("dice_roll", {"formula": "1d6"}, "call_0")]] * 3 + ["done"])
    run = bench.invocation().run(model, "go")
    assert run.stop_reason == "final" and len(run.results) == 3
    assert [m.get("tool_call_id") for m in model.bodies[-1]["messages"] if m["role"] == "tool"] == ["call_0"] * 3


def test_a_model_that_lets_its_clients_error_out_ends_the_run_coded(bench: Workbench) -> None:
    class Raw(Failing):
        async def send(self, body: dict[str, Any]) -> dict[str, Any]:
            raise FakeStatusError(429, "slow down")

    run = bench.invocation().run(Raw(RuntimeError()), "go")
    assert run.stop_reason == "provider_error" and run.error is not None
    assert (run.error.code, run.error.status) == ("model.provider_rate_limited", 429)


def test_a_run_that_raises_is_logged_as_an_error_not_a_stop(bench: Workbench) -> None:
    class Broken(ScriptedModel):
        def request(self, **kw: Any) -> dict[str, Any]:
            raise KeyError("an adapter bug")

    inv = bench.invocation()
    with pytest.raises(KeyError):
        inv.run(Broken(["x"]), "go")
    (run,) = inv.runs
    assert run.stop_reason == "error" and run.error is not None and run.error.code == "KeyError"
