"""Provider state across rounds: thinking blocks, reasoning items, thought signatures and text
come back in the assistant turn, in their order, around the calls (recorded shapes in
tests/fixtures/protocols/*_{thinking,reasoning,empty_ids,int_enums}_response.json)."""

from __future__ import annotations

import copy

import pytest
from protocol_sdk import ANTHROPIC_MESSAGE, OPENAI_MESSAGE, RESPONSE_MODELS, RESPONSES_ITEM, validate_history
from protocol_tools import load_fixture
from pydantic_core import ValidationError as CoreValidationError

from toolbench.core.errors import ToolbenchError
from toolbench.protocols import AssistantTurn, Exchange, ResultView, decode_response, encode_history

THINKING = "anthropic_thinking_response.json"
REASONING = "openai_responses_reasoning_response.json"
EMPTY_IDS = "openai_chat_empty_ids_response.json"
GEMINI_THINKING = "gemini_thinking_response.json"


def answered(protocol: str, body: dict, seed: str = "inv_state_1") -> tuple[list[dict], AssistantTurn | None]:
    """The history of one decoded round whose calls all answered `ok <name>`."""
    decoded = decode_response(protocol, body, id_seed=seed)
    exchanges = [Exchange(c.call_id, c.call_name, {"echo": c.call_name}, ResultView(f"ok {c.call_name}"))
                 for c in decoded.calls]
    return encode_history(protocol, [exchanges], turns=[decoded.assistant]), decoded.assistant


@pytest.mark.parametrize(
    "name, protocol", [(THINKING, "anthropic"), (REASONING, "openai-responses"), (EMPTY_IDS, "openai"),
                       (GEMINI_THINKING, "gemini")])
def test_the_fixtures_are_valid_provider_responses(name, protocol):
    RESPONSE_MODELS[protocol].model_validate(load_fixture(name))


def test_anthropic_replays_thinking_redacted_thinking_and_text_before_its_tool_use_blocks():
    body = load_fixture(THINKING)
    thinking, redacted, text, _, _ = body["content"]
    history, _ = answered("anthropic", body)
    assert history == [
        {
            "role": "assistant",
            "content": [
                thinking,
                redacted,
                {"type": "text", "text": text["text"]},  # `citations: null` left out: the request takes absent
                {"type": "tool_use", "id": "toolu_01K8pQm3ZxY7vW2tR5sN4aB9", "name": "workspace_read_file",
                 "input": {"echo": "workspace_read_file"}},
                {"type": "tool_use", "id": "toolu_01L9qRn4AyZ8wX3uS6tO5bC0", "name": "dice_roll",
                 "input": {"echo": "dice_roll"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_01K8pQm3ZxY7vW2tR5sN4aB9",
                 "content": "ok workspace_read_file", "is_error": False},
                {"type": "tool_result", "tool_use_id": "toolu_01L9qRn4AyZ8wX3uS6tO5bC0", "content": "ok dice_roll",
                 "is_error": False},
            ],
        },
    ]
    assert thinking["signature"] and redacted["data"]
    validate_history("anthropic", history)


def test_responses_replay_the_reasoning_item_before_the_rounds_function_calls():
    body = load_fixture(REASONING)
    reasoning, read, dice = body["output"]
    history, _ = answered("openai-responses", body)
    assert history == [
        reasoning,  # id, summary and encrypted_content (store: false) as they came
        {"type": "function_call", "call_id": read["call_id"], "name": "workspace_read_file",
         "arguments": '{"echo":"workspace_read_file"}', "id": read["id"], "status": "completed"},
        {"type": "function_call", "call_id": dice["call_id"], "name": "dice_roll",
         "arguments": '{"echo":"dice_roll"}', "id": dice["id"], "status": "completed"},
        {"type": "function_call_output", "call_id": read["call_id"], "output": "ok workspace_read_file"},
        {"type": "function_call_output", "call_id": dice["call_id"], "output": "ok dice_roll"},
    ]
    assert reasoning["encrypted_content"]
    validate_history("openai-responses", history)


def test_chat_calls_without_ids_get_their_own_and_keep_their_extra_fields():
    body = load_fixture(EMPTY_IDS)
    decoded = decode_response("openai", body, id_seed="inv_state_1")
    ids = [c.call_id for c in decoded.calls]
    assert len(set(ids)) == 2 and all(i.startswith("tb-openai-") for i in ids)
    assert ids == [c.call_id for c in decode_response("openai", body, id_seed="inv_state_1").calls]  # deterministic
    assert set(ids).isdisjoint(c.call_id for c in decode_response("openai", body, id_seed="inv_state_2").calls)
    assert decode_response("openai", body).calls[0].call_id.startswith("tb-openai-")  # the response id seeds it

    history, _ = answered("openai", body)
    signature = body["choices"][0]["message"]["tool_calls"][0]["extra_content"]
    assert history[0] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": ids[0], "type": "function",
             "function": {"name": "workspace_read_file", "arguments": '{"echo":"workspace_read_file"}'},
             "extra_content": signature},
            {"id": ids[1], "type": "function", "function": {"name": "dice_roll", "arguments": '{"echo":"dice_roll"}'}},
        ],
    }
    assert [m["tool_call_id"] for m in history[1:]] == ids
    # `extra_content` is the Gemini endpoint's own field, which the OpenAI SDK does not model:
    # the rest of the message is what the SDK takes.
    plain = copy.deepcopy(history)
    del plain[0]["tool_calls"][0]["extra_content"]
    validate_history("openai", plain)


def test_chat_keeps_the_assistant_text_of_a_tool_round():
    body = {"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-4.1", "choices": [
        {"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": "Rolling now.", "refusal": None,
            "tool_calls": [{"id": "call_1", "type": "function",
                            "function": {"name": "dice_roll", "arguments": '{"formula":"d6"}'}}]}}]}
    RESPONSE_MODELS["openai"].model_validate(body)
    history, _ = answered("openai", body)
    assert history[0]["content"] == "Rolling now."
    validate_history("openai", history)


def test_gemini_replays_thought_parts_and_signatures_in_their_place():
    body = load_fixture(GEMINI_THINKING)
    thought, read, _ = body["candidates"][0]["content"]["parts"]
    history, _ = answered("gemini", body)
    assert history[0] == {
        "role": "model",
        "parts": [
            thought,
            {"functionCall": {"name": "workspace_read_file", "args": {"echo": "workspace_read_file"}},
             "thoughtSignature": read["thoughtSignature"]},
            {"functionCall": {"name": "dice_roll", "args": {"echo": "dice_roll"}}},
        ],
    }
    assert [p["functionResponse"]["name"] for p in history[1]["parts"]] == ["workspace_read_file", "dice_roll"]
    validate_history("gemini", history)


def test_a_response_of_plain_calls_has_no_turn_to_keep():
    assert decode_response("anthropic", load_fixture("anthropic_messages_response.json")).assistant is not None  # text
    plain = {"content": [{"type": "tool_use", "id": "t1", "name": "dice_roll", "input": {}}], "stop_reason": "tool_use"}
    assert decode_response("anthropic", plain).assistant is None


def test_a_turn_of_another_protocol_is_left_out():
    decoded = decode_response("anthropic", load_fixture(THINKING))
    exchanges = [Exchange(c.call_id, c.call_name, {}, ResultView("ok")) for c in decoded.calls]
    assert encode_history("openai", [exchanges], turns=[decoded.assistant]) == encode_history("openai", [exchanges])


def test_a_call_the_turn_names_but_the_round_lacks_is_left_out_and_extra_calls_follow():
    decoded = decode_response("anthropic", load_fixture(THINKING))
    only_dice = [Exchange(decoded.calls[1].call_id, "dice_roll", {}, ResultView("4")),
                 Exchange("toolu_extra", "dice_roll", {}, ResultView("5"))]
    [assistant, user] = encode_history("anthropic", [only_dice], turns=[decoded.assistant])
    kinds = [b["type"] for b in assistant["content"]]
    assert kinds == ["thinking", "redacted_thinking", "text", "tool_use", "tool_use"]
    assert [b.get("id") for b in assistant["content"][3:]] == [decoded.calls[1].call_id, "toolu_extra"]
    assert [b["tool_use_id"] for b in user["content"]] == [decoded.calls[1].call_id, "toolu_extra"]


def test_editing_a_history_does_not_change_the_kept_turn():
    history, turn = answered("anthropic", load_fixture(THINKING))
    history[0]["content"][0]["thinking"] = "edited"
    assert turn is not None and turn.items[0]["item"]["thinking"] != "edited"


def test_one_turn_per_round_is_required():
    with pytest.raises(ToolbenchError) as info:
        encode_history("anthropic", [[Exchange("t1", "dice_roll", {}, ResultView("1"))]], turns=[None, None])
    assert info.value.code == "protocol.history_invalid"


# -- the validators can fail on state blocks ----------------------------------------------------


@pytest.mark.parametrize(
    "validator, broken",
    [
        (ANTHROPIC_MESSAGE, {"role": "assistant", "content": [{"type": "thinking", "thinking": "no signature"}]}),
        (ANTHROPIC_MESSAGE, {"role": "assistant", "content": [{"type": "redacted_thinking"}]}),
        (ANTHROPIC_MESSAGE, {"role": "assistant", "content": [{"type": "text", "text": "x", "citations": [{}]}]}),
        (RESPONSES_ITEM, {"type": "reasoning", "id": "rs_1"}),  # no summary
        (RESPONSES_ITEM, {"type": "reasoning", "id": "rs_1", "summary": [], "signature": "x"}),
        (OPENAI_MESSAGE, {"role": "assistant", "content": None,
                          "tool_calls": [{"id": "c", "type": "function", "function": {"name": "x", "arguments": "{}"},
                                          "extra_content": {}}]}),
    ],
)
def test_the_validators_reject_broken_state_blocks(validator, broken):
    with pytest.raises(CoreValidationError):
        validator.validate_python(broken)
