"""A provider outside the package, installed: tests/fixtures/user_provider (`tb_mistral`) declares
Mistral's chat completions in the entry-point group `toolbench.providers`, and without a
`register` call it works in every path a built-in provider does: a live run through the real
openai SDK, the run read back after a reopen (text and usage), replay of the run and of its
request/response pairs, MCP sampling, a sub-agent, and the command line. The built-in
providers' own tests run it too (`protocol="mistral"` in tests/runtime, tests/models,
tests/mcp; see conftest). Broken entry points are skipped with notices, and a provider with only
`Provider`'s six methods still works where it did."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from agents_support import WAIT, delegate, parent_profile
from plugin_support import MISTRAL_ENTRY, installed, pythonpath, write_dist

from toolbench import Profile, ToolbenchError, Workbench
from toolbench.mcp._requests import sampling_request
from toolbench.mcp._sampling import sample
from toolbench.models import ModelReply, OpenAIChat, reader_for
from toolbench.protocols import (
    PROTOCOLS,
    DecodedResponse,
    Exchange,
    Problem,
    RenderableTool,
    RenderOptions,
    full_provider,
    get_provider,
    names,
    notices,
    register,
    unregister,
)
from toolbench.testing import LocalProvider, ScriptedModel

PROFILE = Profile.default().edit(allow=["builtin:workspace.read_file", "builtin:dice.roll"])
ROLL = [("dice_roll", {"formula": "1d6"})]
READ = [("workspace_read_file", {"path": "work/notes.md"})]  # the same result every time it is replayed
MODEL = "mistral-large-latest"


@pytest.fixture
def site(tmp_path: Path) -> Path:
    root = tmp_path / "site"
    write_dist(root, "tb_mistral", MISTRAL_ENTRY)
    return root


@pytest.fixture
def mistral(site: Path) -> Iterator[Any]:
    with installed(site):
        yield get_provider("mistral")


def test_an_installed_provider_is_known_by_name_without_a_register_call(mistral):
    import tb_mistral

    assert mistral is tb_mistral.MISTRAL
    assert names() == (*PROTOCOLS, "mistral") and notices() == ()
    assert full_provider("mistral") is mistral  # a BaseProvider: its model side is its own (the shape's)
    body = mistral.calls_body(ROLL, text="Rolling.", usage=(20, 5), model=MODEL)
    assert mistral.read_reply(body) == ModelReply(body, "Rolling.", {"prompt_tokens": 20, "completion_tokens": 5,
                                                                     "total_tokens": 25}, "tool_calls")


def test_the_sdk_drives_it_and_the_run_reads_back_and_replays(tmp_path, mistral):
    answers = [LocalProvider.calls_body("mistral", READ, text="Reading.", usage=(120, 18), model=MODEL),
               LocalProvider.text_body("mistral", "A dragon.", n=2, usage=(160, 9), model=MODEL)]
    with Workbench(tmp_path / "ws", PROFILE, seed=7) as bench, LocalProvider(answers) as local:
        (bench.workspace / "work").mkdir(exist_ok=True)
        (bench.workspace / "work" / "notes.md").write_text("a dragon sleeps here\n", encoding="utf-8")
        inv = bench.invocation(id="inv_mistral")
        run = inv.run(OpenAIChat(local.openai(), MODEL, protocol="mistral", temperature=0), "Read the notes",
                      system="You read notes.")
        sent = [r.body for r in local.requests]
        assert bench.replay(run).ok
        pairs = [{"request": q, "response": r.response} for q, r in zip(sent, run.rounds, strict=True)]
        assert bench.replay(pairs, protocol="mistral").ok
        assert bench.replay(pairs).ok  # its shape is OpenAI's: the built-in provider reads it the same
    assert (run.protocol, run.stop_reason, run.final_text) == ("mistral", "final", "A dragon.")
    assert "a dragon sleeps here" in run.results[0].content
    assert run.usage == {"prompt_tokens": 280, "completion_tokens": 27, "total_tokens": 307}
    assert sent[0]["messages"][0] == {"role": "system", "content": "You read notes."}
    assert sent[0]["temperature"] == 0 and sent[0]["model"] == MODEL
    assert sent[1]["messages"][-1]["name"] == "workspace_read_file"  # Mistral's own tool message
    with Workbench(tmp_path / "ws", PROFILE) as again:
        (back,) = again.open_invocation(inv.id).runs
    assert [(r.text, r.usage, r.finish) for r in back.rounds] == [
        ("Reading.", {"prompt_tokens": 120, "completion_tokens": 18, "total_tokens": 138}, "tool_calls"),
        ("A dragon.", {"prompt_tokens": 160, "completion_tokens": 9, "total_tokens": 169}, "stop")]
    assert back.usage == run.usage and back.results == run.results


def test_mcp_sampling_with_a_model_of_it_maps_as_its_shape_does(mistral):
    params = {"systemPrompt": "Be brief.", "maxTokens": 32, "stopSequences": ["END"],
              "messages": [{"role": "user", "content": {"type": "text", "text": "Hi?"}}]}
    with LocalProvider([LocalProvider.text_body("mistral", "Hello.", model=MODEL)]) as local:
        result = asyncio.run(sample(OpenAIChat(local.openai(), MODEL, protocol="mistral"),
                                    sampling_request("srv", "tool", "call_1", params)))
        [body] = [r.body for r in local.requests]
    assert result == {"role": "assistant", "content": {"type": "text", "text": "Hello."}, "model": MODEL,
                      "stopReason": "endTurn"}
    assert body["messages"] == [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi?"}]
    assert (body["max_tokens"], body["stop"]) == (32, ["END"])


def test_a_sub_agent_of_it_keeps_its_conversation_in_its_shape(tmp_path, mistral):
    model = ScriptedModel(["Thinking it over.", [("task_return", {"summary": "ok"})]], protocol="mistral")
    with Workbench(tmp_path / "ws", parent_profile(), seed=1) as bench:
        bench.agents.model = model
        delegate(bench.invocation(id="inv_root"), objective="Roll a die.", title="Roll")
        (task,) = bench.agents.wait(timeout=WAIT)
        conversation = bench.agents.conversation(task["taskId"])
    assert task["status"] == "completed"
    system, brief, answer, denied, _call, result = conversation
    assert system["role"] == "system" and system["content"].startswith("You are the agent `general`")
    assert brief == {"role": "user", "content": "# Roll\n\nRoll a die."}
    assert answer == {"role": "assistant", "content": "Thinking it over."}
    assert "agent.child_finish_denied" in denied["content"]
    assert result["role"] == "tool" and result["name"] == "task_return"  # Mistral's own tool message
    assert model.bodies[1]["messages"] == conversation[:4]


def test_the_command_line_finds_it_through_its_entry_point(site):
    out = subprocess.run([sys.executable, "-m", "toolbench", "snapshot", "--protocol", "mistral"],
                         capture_output=True, text=True, timeout=120, env=pythonpath(site))
    assert out.returncode == 0, out.stderr
    tools = json.loads(out.stdout)
    assert tools and all(t["type"] == "function" and "name" in t["function"] for t in tools)
    listed = subprocess.run([sys.executable, "-m", "toolbench", "snapshot", "--help"], capture_output=True, text=True,
                            timeout=120, env=pythonpath(site))
    assert "mistral" in listed.stdout


# --- what cannot be used is skipped, with a notice --------------------------------------------------

def _broken(root: Path) -> None:
    write_dist(root, "tb_broken", {
        "missing": "tb_not_a_module:PROVIDER",  # the import fails
        "number": "json:__doc__",  # a str, not a Provider
        "openai": "tb_fake_openai:FAKE",  # a built-in name on another provider
        "other": "tb_mistral:MISTRAL",  # the entry point's name is not the provider's
        "failing": "json:JSONDecodeError",  # a class that cannot be made without arguments
    })
    write_dist(root, "tb_mistral_again", {"mistral": "tb_mistral_twin:TWIN"})  # a second "mistral"
    (root / "tb_mistral_twin.py").write_text("from tb_mistral import MistralChat\nTWIN = MistralChat('mistral')\n")
    (root / "tb_fake_openai.py").write_text("from toolbench.protocols import ChatCompletionsProvider\n"
                                            "FAKE = ChatCompletionsProvider('openai')\n")


def test_broken_entry_points_are_skipped_with_notices(site):
    _broken(site)
    with installed(site):
        assert names() == (*PROTOCOLS, "mistral")
        skipped = notices()
        assert all(n.startswith("protocol.plugin_skipped: entry point `") for n in skipped)
        assert sorted(n.split("`")[1].split(" =")[0] for n in skipped) == [
            "failing", "missing", "mistral", "number", "openai", "other"]
        assert "is built in" in next(n for n in skipped if "`openai =" in n)
        assert "is taken" in next(n for n in skipped if "`mistral =" in n)  # the first one found won
        assert get_provider("mistral").name == "mistral"


def test_import_and_the_command_line_survive_broken_entry_points(site):
    _broken(site)
    env = pythonpath(site)
    probe = subprocess.run([sys.executable, "-c", "import toolbench, toolbench.protocols as p; "
                            "print(len(p.names()), len(p.notices()))"], capture_output=True, text=True, timeout=120,
                           env=env)
    assert probe.returncode == 0, probe.stderr
    assert probe.stdout.split() == ["5", "6"]
    out = subprocess.run([sys.executable, "-m", "toolbench", "snapshot", "--protocol", "openai"],
                         capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 0, out.stderr


def test_a_factory_entry_point_and_a_self_registering_module_are_accepted(tmp_path):
    root = tmp_path / "site"
    write_dist(root, "tb_local", {"local-llm": "tb_local:make", "self-reg": "tb_self:SELF"})
    (root / "tb_local.py").write_text("from toolbench.protocols import ChatCompletionsProvider\n"
                                      "def make():\n    return ChatCompletionsProvider('local-llm')\n")
    (root / "tb_self.py").write_text("from toolbench.protocols import ResponsesProvider, register\n"
                                     "SELF = register(ResponsesProvider('self-reg'))\n")
    with installed(root):
        assert names()[4:] == ("local-llm", "self-reg") and notices() == ()
        assert get_provider("self-reg").looks_like({"request": {}, "response": {"output": []}})
    with pytest.raises(ToolbenchError) as info:
        get_provider("local-llm")  # forgotten with the distribution
    assert info.value.code == "protocol.unknown"


# --- a provider with only the six methods, as before ------------------------------------------------

class Echo:
    """A provider written against `Provider` alone: no model side."""

    name = "echo"

    def render_list(self, tools: Sequence[RenderableTool], options: RenderOptions) -> list[dict[str, Any]]:
        return [{"tool": t.call_name} for t in tools]

    def check_tools(self, tools: Sequence[RenderableTool], options: RenderOptions) -> list[Problem]:
        return []

    def decode(self, response: Any, id_seed: str | None = None) -> DecodedResponse:
        return DecodedResponse(())

    def encode_history(self, rounds: Any, turns: Any = None) -> list[dict[str, Any]]:
        return []

    def encode_result(self, exchange: Exchange) -> dict[str, Any]:
        return {"echo": exchange.call_id}

    def encode_tool_choice(self, choice: Any, call_names: Any) -> None:
        return None

    def user_message(self, text: str) -> dict[str, Any]:  # one method of the model side: it is used
        return {"echo": text}


@pytest.fixture
def echo() -> Iterator[Echo]:
    provider = register(Echo())
    yield provider
    unregister("echo")


def test_a_six_method_provider_gets_the_defaults_where_it_has_no_method(echo):
    full = full_provider("echo")
    assert full.render_list([], RenderOptions()) == [] and full.name == "echo"
    assert full.user_message("hi") == {"echo": "hi"}  # its own
    assert full.read_reply({"x": 1}) == ModelReply({"x": 1})  # an empty reading, as before
    assert reader_for("echo")({"x": 1}).text == "" and reader_for("gone")({}).usage == {}
    assert full.answer_messages({}, "done") == [{"role": "assistant", "content": "done"}]
    assert full.sampling_message("assistant", [{"type": "text", "text": "A."}]) == {"echo": "(assistant) A."}
    assert not full.looks_like({"request": {}, "response": {"choices": []}})
    with pytest.raises(ToolbenchError) as info:
        full.text_body("hi")
    assert info.value.code == "protocol.unsupported"
    with pytest.raises(ToolbenchError) as misuse:
        ScriptedModel(["hi"], protocol="echo")
    assert misuse.value.code == "bench.misuse"


def test_an_adapter_or_a_scripted_model_takes_a_provider_name_it_knows(mistral):
    assert OpenAIChat(None, MODEL, protocol="mistral").protocol == "mistral"
    assert OpenAIChat.read(mistral.text_body("hi")).text == "hi"  # the class reads as its built-in provider
    for make in (lambda p: OpenAIChat(None, MODEL, protocol=p), lambda p: ScriptedModel(["x"], protocol=p)):
        with pytest.raises(ToolbenchError) as unknown:
            make("nope")
        with pytest.raises(ToolbenchError) as an_object:
            make(mistral)  # a run log records the name
        assert unknown.value.code in ("protocol.unknown", "bench.misuse") and an_object.value.code == "bench.misuse"
