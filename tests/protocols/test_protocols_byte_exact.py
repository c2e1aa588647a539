"""Byte-exact state: what a provider sent that must go back goes back as it came.

The property, per provider, over a two-round run: the second request's conversation starts with
the first request's, then the first answer as the API takes it back, byte for byte
(`json.dumps` of both sides). "As the API takes it back" is the answer's assistant message
(Chat Completions), output items (Responses), content blocks (Anthropic) or candidate parts
(Gemini), less what the API documents as output-only (Chat's `annotations`; an `audio` object
goes back as its `id`) and less null fields, which the request types take as absent. Chat's
`content` is the one null that stays: the message always has it.

Where the API does not define the bytes: Anthropic's assistant message and Gemini's model
Content are wrappers toolbench builds (`{"role", "content"}`, `{"role", "parts"}`): the blocks
and parts inside, and the argument objects' key order, are what they came as; the wrapper is
the API's own form of a turn.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from toolbench import Profile, Workbench
from toolbench.models import Anthropic, Gemini, OpenAIChat, OpenAIResponses
from toolbench.protocols import Exchange, ResultView, decode_response, encode_history
from toolbench.testing import LocalProvider, ScriptedModel

PROTOCOLS = ("openai", "openai-responses", "anthropic", "gemini")
KEY = {"openai": "messages", "openai-responses": "input", "anthropic": "messages", "gemini": "contents"}
# Whitespace, newlines, key order that is not sorted, a float written as 1.0, a non-ASCII
# character and an escape: what a re-serialisation would change.
ARGUMENTS = '{\n    "zeta": 1,\n    "alpha": {"b": 2, "a": 1.0},\n    "text": "\\u00e9 caf\u00e9\\n"\n    }'
OUTPUT_ONLY = {"openai": {"annotations"}}  # ChatCompletionMessage fields the assistant message param lacks


def take_back(protocol: str, response: dict[str, Any]) -> list[dict[str, Any]]:
    """The first answer as the API takes it back (module docstring)."""
    if protocol == "openai":
        message = response["choices"][0]["message"]
        kept = {k: v for k, v in message.items()
                if k not in OUTPUT_ONLY["openai"] and (v is not None or k == "content")}
        if isinstance(kept.get("audio"), dict):
            kept["audio"] = {"id": kept["audio"]["id"]}
        return [kept]
    if protocol == "openai-responses":
        return [{k: v for k, v in item.items() if v is not None} for item in response["output"]]
    if protocol == "anthropic":
        blocks = [{k: v for k, v in b.items() if v is not None} for b in response["content"]]
        return [{"role": "assistant", "content": blocks}]
    parts = response["candidates"][0]["content"]["parts"]
    return [{"role": "model", "parts": [{k: v for k, v in p.items() if v is not None} for p in parts]}]


def assert_prefix(protocol: str, first: dict[str, Any], second: dict[str, Any], answer: dict[str, Any]) -> None:
    before, back = first[KEY[protocol]], take_back(protocol, answer)
    after = second[KEY[protocol]]
    assert json.dumps(after[:len(before) + len(back)]) == json.dumps(before + back)


@pytest.fixture
def bench(tmp_path: Path) -> Iterator[Workbench]:
    with Workbench(tmp_path / "ws", profile=Profile.default().edit(allow=["builtin:dice.roll"]), seed=1) as bench:
        bench.enable(bench.register_tool("t", lambda **kw: kw, name="echo", input_schema={"type": "object"}))
        yield bench


def wire(value: Any) -> Any:
    return json.loads(json.dumps(value))


# --- the scripted model, every protocol ----------------------------------------------------------

@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_each_request_starts_with_the_one_before_and_its_answer_byte_for_byte(bench: Workbench,
                                                                             protocol: str) -> None:
    plan = [[("echo", ARGUMENTS), ("dice_roll", '{"formula": "d6"}')], [("echo", '{"x" : [ 1 ,2 ]}')], "done"]
    model = ScriptedModel(plan, protocol=protocol)
    run = bench.invocation().run(model, "go")
    assert run.stop_reason == "final"
    for before, after, answer in zip(model.bodies, model.bodies[1:], [r.response for r in run.rounds], strict=False):
        assert_prefix(protocol, before, after, answer)


# --- the real SDK clients against LocalProvider ---------------------------------------------------

def deepseek_like_chat() -> dict[str, Any]:
    """A Chat Completions answer as DeepSeek's thinking mode sends it: `reasoning_content` beside
    the calls, content "", arguments pretty-printed; OpenAI's own null and output-only fields."""
    body = LocalProvider.chat_calls([("echo", ARGUMENTS, "call_0"), ("dice_roll", '{ "formula" : "d6" }', "call_1")])
    calls = body["choices"][0]["message"]["tool_calls"]
    body["choices"][0]["message"] = {"role": "assistant", "content": "", "reasoning_content": "Echo, then roll.",
                                     "tool_calls": calls, "refusal": None, "annotations": []}
    return body


def responses_as_recorded() -> dict[str, Any]:
    """A Responses answer with its function_call items in the order OpenAI sends their fields."""
    body = LocalProvider.responses_calls([("echo", ARGUMENTS), ("dice_roll", '{"formula": "d6"}')])
    order = ("id", "type", "status", "arguments", "call_id", "name")
    body["output"] = [{k: item[k] for k in order} if item["type"] == "function_call" else item
                      for item in body["output"]]
    return body


ANSWERS = {
    "openai": (deepseek_like_chat, LocalProvider.chat_text),
    "openai-responses": (responses_as_recorded, LocalProvider.responses_text),
    "anthropic": (lambda: LocalProvider.anthropic_calls([("echo", json.loads(ARGUMENTS))], text="Echoing."),
                  LocalProvider.anthropic_text),
    "gemini": (lambda: LocalProvider.gemini_calls([("echo", json.loads(ARGUMENTS)), ("dice_roll", {"formula": "d6"})]),
               LocalProvider.gemini_text),
}
ADAPTERS = {
    "openai": lambda p: OpenAIChat(p.openai(), "deepseek-chat"),
    "openai-responses": lambda p: OpenAIResponses(p.openai(), "gpt-5-mini", store=False),
    "anthropic": lambda p: Anthropic(p.anthropic(), "claude-sonnet-4-5", max_tokens=2048),
    "gemini": lambda p: Gemini(p.gemini(), "gemini-2.5-flash"),
}


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_through_the_sdk_round_two_starts_with_round_one_and_its_answer(bench: Workbench, protocol: str) -> None:
    calls, text = ANSWERS[protocol]
    answer = calls()
    with LocalProvider([answer, text("done")]) as provider:
        run = bench.invocation().run(ADAPTERS[protocol](provider), "go")
    assert run.stop_reason == "final", run.error
    first, second = (r.body for r in provider.requests)
    assert_prefix(protocol, first, second, wire(answer))


def test_deepseek_reasoning_content_and_the_argument_text_go_back_as_sent(bench: Workbench) -> None:
    with LocalProvider([deepseek_like_chat(), LocalProvider.chat_text("done")]) as provider:
        bench.invocation().run(ADAPTERS["openai"](provider), "go")
    assistant = provider.requests[1].body["messages"][1]
    assert assistant["reasoning_content"] == "Echo, then roll."
    assert [c["function"]["arguments"] for c in assistant["tool_calls"]] == [ARGUMENTS, '{ "formula" : "d6" }']
    assert "annotations" not in assistant and "refusal" not in assistant


# --- the records keep the text: transcripts, after a reopen too ------------------------------------

def test_a_reopened_invocation_sends_the_argument_text_it_was_given(tmp_path: Path) -> None:
    def make() -> Workbench:
        bench = Workbench(tmp_path / "ws", profile=Profile.default().edit(allow=["builtin:dice.roll"]))
        bench.enable(bench.register_tool("t", lambda **kw: kw, name="echo", input_schema={"type": "object"}))
        return bench

    with make() as bench:
        inv = bench.invocation(id="inv_text")
        inv.call("echo", ARGUMENTS, call_id="c1")
        inv.call("echo", '{"already":"compact"}', call_id="c2")
        inv.call("echo", {"b": 1, "a": 2}, call_id="c3")  # an object: its key order is kept
        inv.call("echo", "{broken", call_id="c4")  # invalid: replayed as {} (the model is told why)
        inv.call("echo", " ", call_id="c5")  # the empty forms are the empty object
        before = inv.transcript("openai")
    with make() as again:
        after = again.open_invocation("inv_text").transcript("openai")
    sent = [m["tool_calls"][0]["function"]["arguments"] for m in after if m["role"] == "assistant"]
    assert sent == [ARGUMENTS, '{"already":"compact"}', '{"b":1,"a":2}', "{}", "{}"]
    assert after == before
    responses = [i["arguments"] for i in encode_history("openai-responses", [[Exchange(
        "c1", "echo", json.loads(ARGUMENTS), None, arguments_text=ARGUMENTS)]]) if i["type"] == "function_call"]
    assert responses == [ARGUMENTS]


# --- Chat Completions: the assistant message's own fields ------------------------------------------

def chat_body(message: dict[str, Any]) -> dict[str, Any]:
    return {"id": "chatcmpl-1", "choices": [{"index": 0, "finish_reason": "tool_calls", "message": message}]}


CALL = {"id": "call_1", "type": "function", "function": {"name": "echo", "arguments": '{"a": 1}'}}


def replayed(message: dict[str, Any]) -> dict[str, Any]:
    decoded = decode_response("openai", wire(chat_body(message)))
    exchanges = [Exchange(c.call_id, c.call_name, json.loads(c.arguments), ResultView("ok"),
                          arguments_text=c.arguments) for c in decoded.calls]
    return encode_history("openai", [exchanges], turns=[decoded.assistant])[0]


def test_every_field_of_the_message_goes_back_in_its_order_but_output_only_and_null_ones() -> None:
    message = {"role": "assistant", "content": "", "reasoning_content": "think", "tool_calls": [CALL],
               "reasoning_details": [{"type": "reasoning.text", "text": "think"}], "refusal": None,
               "annotations": [{"type": "url_citation"}], "function_call": None}
    back = replayed(message)
    assert json.dumps(back) == json.dumps({"role": "assistant", "content": "", "reasoning_content": "think",
                                           "tool_calls": [CALL],
                                           "reasoning_details": [{"type": "reasoning.text", "text": "think"}]})


def test_an_audio_answer_goes_back_as_its_id() -> None:
    audio = {"id": "audio_1", "data": "UklGRg==", "expires_at": 1, "transcript": "hello"}
    back = replayed({"role": "assistant", "content": None, "audio": audio, "tool_calls": [CALL]})
    assert back == {"role": "assistant", "content": None, "audio": {"id": "audio_1"}, "tool_calls": [CALL]}


def test_a_plain_message_keeps_no_turn_and_replays_as_before() -> None:
    decoded = decode_response("openai", chat_body({"role": "assistant", "content": None, "tool_calls": [CALL]}))
    assert decoded.assistant is None
    assert replayed({"role": "assistant", "content": None, "tool_calls": [CALL]}) == {
        "role": "assistant", "content": None, "tool_calls": [CALL]}


def test_a_call_s_own_fields_and_content_parts_come_back() -> None:
    call = {**CALL, "extra_content": {"google": {"thought_signature": "sig"}}}
    parts = [{"type": "thinking", "thinking": [{"type": "text", "text": "hm"}]}, {"type": "text", "text": "ok"}]
    back = replayed({"role": "assistant", "content": parts, "tool_calls": [call]})
    assert back == {"role": "assistant", "content": parts, "tool_calls": [call]}


def test_a_call_goes_back_with_its_fields_in_the_order_they_came() -> None:
    call = {"type": "function", "function": CALL["function"], "id": "call_1"}  # as llama.cpp orders them
    back = replayed({"role": "assistant", "content": None, "tool_calls": [call]})
    assert json.dumps(back["tool_calls"]) == json.dumps([call])


def test_a_turn_logged_before_messages_were_kept_whole_replays_its_text() -> None:
    from toolbench.protocols import AssistantTurn

    turn = AssistantTurn("openai", ({"item": {"type": "text", "text": "Rolling."}}, {"call": "call_1"}))
    exchange = Exchange("call_1", "echo", {"a": 1}, ResultView("ok"))
    assert encode_history("openai", [[exchange]], turns=[turn])[0] == {
        "role": "assistant", "content": "Rolling.", "tool_calls": [{**CALL, "function": {
            "name": "echo", "arguments": '{"a":1}'}}]}
