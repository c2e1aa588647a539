"""Bodies as some vendors send them, coded as what they mean."""

from __future__ import annotations

import pytest

from toolbench import ToolbenchError
from toolbench.protocols import decode_calls, decode_results
from toolbench.protocols.types import DecodedCall


def test_azure_content_filter_without_a_message_is_a_refusal_naming_the_filters() -> None:
    body = {"id": "chatcmpl-az", "choices": [{"index": 0, "finish_reason": "content_filter", "content_filter_results": {
        "hate": {"filtered": False, "severity": "safe"}, "violence": {"filtered": True, "severity": "high"},
        "jailbreak": {"filtered": True, "detected": True}}}]}
    with pytest.raises(ToolbenchError) as caught:
        decode_calls("openai", body)
    assert caught.value.code == "model.provider_refusal"
    assert "violence" in caught.value.message and "jailbreak" in caught.value.message
    assert "hate" not in caught.value.message


def test_a_choice_without_a_message_that_was_not_filtered_is_still_invalid() -> None:
    with pytest.raises(ToolbenchError) as caught:
        decode_calls("openai", {"choices": [{"index": 0, "finish_reason": "stop"}]})
    assert caught.value.code == "model.invalid_response"


def test_gemini_results_with_a_client_s_own_ids_pair_by_order_and_name() -> None:
    calls = [DecodedCall("tb-gemini-aaaaaaaaaaaa-0", "shout", {"text": "hi"}),
             DecodedCall("tb-gemini-aaaaaaaaaaaa-1", "dice_roll", {}),
             DecodedCall("tb-gemini-aaaaaaaaaaaa-2", "shout", {"text": "yo"})]
    request = {"contents": [
        {"role": "user", "parts": [{"text": "go"}]},
        {"role": "model", "parts": [{"functionCall": {"id": f"client-{i}", "name": c.call_name, "args": c.arguments}}
                                    for i, c in enumerate(calls)]},
        {"role": "user", "parts": [
            {"functionResponse": {"id": "client-1", "name": "dice_roll", "response": {"output": "4"}}},
            {"functionResponse": {"id": "client-0", "name": "shout", "response": {"output": "HI"}}},
            {"functionResponse": {"id": "client-2", "name": "shout", "response": {"output": "YO"}}}]}]}
    results = decode_results("gemini", request, calls)
    assert {k: v.content for k, v in results.items() if k.startswith("tb-")} == {
        "tb-gemini-aaaaaaaaaaaa-0": "HI", "tb-gemini-aaaaaaaaaaaa-1": "4", "tb-gemini-aaaaaaaaaaaa-2": "YO"}


def test_chat_results_still_pair_by_id_only() -> None:
    calls = [DecodedCall("call_a", "shout", "{}")]
    request = {"messages": [{"role": "tool", "tool_call_id": "call_other", "content": "HI"}]}
    assert "call_a" not in decode_results("openai", request, calls)
