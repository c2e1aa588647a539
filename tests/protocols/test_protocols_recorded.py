"""decode_results / decode_result: the tool results a request body carried back to the model."""

from __future__ import annotations

import pytest

from toolbench.core.errors import ToolbenchError
from toolbench.protocols import (
    PROTOCOLS,
    DecodedCall,
    Exchange,
    ResultView,
    decode_result,
    decode_results,
    encode_result,
)


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("is_error", [False, True])
def test_an_encoded_result_reads_back_as_it_was(protocol, is_error):
    exchange = Exchange("call_1", "shout", {}, ResultView("  HI\nthere  ", is_error=is_error))
    read = decode_result(protocol, encode_result(protocol, exchange))
    assert read.is_error is is_error
    assert read.content == ("HI\nthere" if is_error else "  HI\nthere  ")  # an error's text is sent trimmed
    assert read.call_id == "call_1"


def test_chat_results_are_read_by_id_from_every_tool_message():
    request = {"messages": [
        {"role": "user", "content": "go"},
        {"role": "tool", "tool_call_id": "a", "content": "one"},
        {"role": "assistant", "content": "x"},
        {"role": "tool", "tool_call_id": "b", "content": [{"type": "text", "text": "two"}]},
        {"role": "tool", "tool_call_id": "c", "content": "## Tool error\n\nbroken"}]}
    results = decode_results("openai", request)
    assert {k: (v.content, v.is_error) for k, v in results.items()} == {
        "a": ("one", False), "b": ("two", False), "c": ("broken", True)}


def test_anthropic_takes_its_flag_and_joins_text_blocks():
    request = {"messages": [{"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t1", "is_error": True, "content": "nope"},
        {"type": "tool_result", "tool_use_id": "t2",
         "content": [{"type": "text", "text": "a"}, {"type": "image", "source": {}}, {"type": "text", "text": "b"}]},
        {"type": "tool_result", "tool_use_id": "t3"}]}]}
    results = decode_results("anthropic", request)
    assert (results["t1"].content, results["t1"].is_error) == ("nope", True)
    assert (results["t2"].content, results["t2"].is_error) == ("a\nb", False)
    assert (results["t3"].content, results["t3"].is_error) == ("", False)


def test_gemini_results_without_ids_pair_by_name_in_order_from_the_newest_turn():
    old = {"role": "user", "parts": [{"functionResponse": {"name": "roll", "response": {"output": "old"}}}]}
    new = {"role": "user", "parts": [
        {"functionResponse": {"name": "roll", "response": {"output": "first"}}},
        {"function_response": {"name": "look", "response": {"error": "dark"}}},
        {"functionResponse": {"name": "roll", "response": {"result": 7}}},
        {"functionResponse": {"id": "fc_9", "name": "other", "response": {"output": "by id"}}}]}
    calls = [DecodedCall("g-0", "roll", {}), DecodedCall("g-1", "look", {}), DecodedCall("g-2", "roll", {})]
    results = decode_results("gemini", {"contents": [old, new]}, calls)
    assert {k: (v.content, v.is_error) for k, v in results.items()} == {
        "g-0": ("first", False), "g-1": ("dark", True), "g-2": ('{"result":7}', False), "fc_9": ("by id", False)}


@pytest.mark.parametrize(("protocol", "request_body"), [
    ("openai", []), ("openai", {"messages": {}}), ("anthropic", "x"), ("gemini", {"contents": 3}),
    ("openai-responses", {"input": {}}),
])
def test_a_request_not_of_the_shape_is_invalid_response(protocol, request_body):
    with pytest.raises(ToolbenchError) as caught:
        decode_results(protocol, request_body)
    assert caught.value.code == "model.invalid_response"


def test_the_responses_bare_input_holds_no_results():
    assert decode_results("openai-responses", {"input": "hello"}) == {}
