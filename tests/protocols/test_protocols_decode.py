"""decode_calls(): a provider's full response body to the calls it holds, raw arguments kept."""

from __future__ import annotations

import copy

import pytest
from protocol_sdk import RESPONSE_MODELS
from protocol_tools import RESPONSE_FIXTURES, TOOLS, load_fixture, load_response

from toolbench.core.arguments import MISSING, ToolArguments
from toolbench.core.errors import ToolbenchError
from toolbench.protocols import PROTOCOLS, DecodedCall, decode_calls
from toolbench.protocols._gemini import FINISH_REASONS


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_fixtures_are_valid_provider_responses(protocol):
    RESPONSE_MODELS[protocol].model_validate(load_response(protocol))


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_each_fixture_calls_every_tool_in_order(protocol):
    calls = decode_calls(protocol, load_response(protocol))
    assert [c.call_name for c in calls] == [t.call_name for t in TOOLS]
    assert len({c.call_id for c in calls}) == len(calls)


def test_openai_arguments_stay_the_raw_json_string():
    calls = decode_calls("openai", load_response("openai"))
    assert calls[0] == DecodedCall(
        "call_Qm3J8yLk2VwZt5Rb9XcN1aPf", "workspace_read_file", '{"path":"notes/todo.md","offset":1}'
    )
    assert calls[1].arguments == '{"formula":'  # truncated JSON decodes; ToolArguments keeps it invalid
    assert not ToolArguments.decode(calls[1].arguments).is_valid
    assert calls[3].arguments == ""


def test_responses_use_call_id_not_item_id():
    calls = decode_calls("openai-responses", load_response("openai-responses"))
    assert calls[1] == DecodedCall("call_Mz4Hb7Kq1Ws8Ev2Rt6Yu3NiO", "dice_roll", '{"formula":"3d6+4"}')


def test_anthropic_input_is_an_object():
    calls = decode_calls("anthropic", load_response("anthropic"))
    assert calls[1] == DecodedCall("toolu_01B7hXkq2Rz3Vw4Yt5Us6Pn8", "dice_roll", {"formula": "3d6+4"})


def test_gemini_args_object_signature_and_missing_args():
    calls = decode_calls("gemini", load_response("gemini"))
    assert calls[0].arguments == {"path": "notes/todo.md", "offset": 1}
    assert calls[0].signature == "CiQB0e2Kb7Q2m3ZyX1pYc0lJdFZrR3ZqZ2lJb0xkR3c9PQ=="
    assert calls[1].signature is None
    assert calls[3].arguments is MISSING


@pytest.mark.parametrize(
    "protocol, path, value",
    [
        ("openai", ("choices", 0, "message", "tool_calls", 0, "function"), {"name": "workspace_read_file"}),
        ("openai-responses", ("output", 1), {"type": "function_call", "call_id": "c1", "name": "workspace_read_file"}),
        ("anthropic", ("content", 1), {"type": "tool_use", "id": "t1", "name": "workspace_read_file"}),
    ],
)
def test_an_absent_arguments_field_decodes_as_missing(protocol, path, value):
    response = load_response(protocol)
    _set(response, path, value)
    assert decode_calls(protocol, response)[0].arguments is MISSING


def test_unknown_call_names_decode_fine():
    response = load_response("openai")
    response["choices"][0]["message"]["tool_calls"][0]["function"]["name"] = "workspace.read_file"
    assert decode_calls("openai", response)[0].call_name == "workspace.read_file"


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_response_without_calls_decodes_to_nothing(protocol):
    response = {
        "openai": {
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "Done."}, "finish_reason": "stop"}]
        },
        "openai-responses": {
            "status": "completed",
            "output": [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Done."}]}],
        },
        "anthropic": {"content": [{"type": "text", "text": "Done."}], "stop_reason": "end_turn"},
        "gemini": {
            "candidates": [{"content": {"role": "model", "parts": [{"text": "Done."}]}, "finishReason": "STOP"}]
        },
    }[protocol]
    assert decode_calls(protocol, response) == []


# -- errors (reference §2.5 and table 9.12) ----------------------------------------------------


def _set(doc, path, value):
    for key in path[:-1]:
        doc = doc[key]
    doc[path[-1]] = value


def _del(doc, path):
    for key in path[:-1]:
        doc = doc[key]
    del doc[path[-1]]


CHAT_CALL = ("choices", 0, "message", "tool_calls", 0)
RESP_CALL = ("output", 1)
MSG_CALL = ("content", 1)
GEM_PART = ("candidates", 0, "content", "parts", 0)

INVALID_CALLS = [
    ("openai", "set", CHAT_CALL, "not an object", "tool call 0 is not an object"),
    ("openai", "del", (*CHAT_CALL, "function"), None, "no `function`"),
    ("openai", "set", (*CHAT_CALL, "function", "name"), "", "empty name"),
    ("openai", "set", (*CHAT_CALL, "id"), "call_7HsD2kLpQ9xVbN4mZr8TyWc3", "twice"),
    ("openai", "set", (*CHAT_CALL, "type"), "custom", "type 'custom'"),
    ("openai-responses", "set", (*RESP_CALL, "name"), "", "empty name"),
    ("openai-responses", "del", (*RESP_CALL, "call_id"), None, "call_id is required"),
    ("openai-responses", "set", RESP_CALL, 7, "not an object"),
    ("anthropic", "del", (*MSG_CALL, "id"), None, "id is required"),
    ("anthropic", "set", (*MSG_CALL, "name"), None, "empty name"),
    ("anthropic", "set", (*MSG_CALL, "id"), "toolu_01B7hXkq2Rz3Vw4Yt5Us6Pn8", "twice"),
    ("gemini", "set", (*GEM_PART, "functionCall", "name"), "", "empty name"),
    ("gemini", "set", (*GEM_PART, "functionCall"), "read", "not an object"),
    ("gemini", "set", ("candidates", 0, "finishReason"), "MALFORMED_FUNCTION_CALL", "MALFORMED_FUNCTION_CALL"),
    ("gemini", "set", ("candidates", 0, "finishReason"), "UNEXPECTED_TOOL_CALL", "UNEXPECTED_TOOL_CALL"),
]


@pytest.mark.parametrize("protocol, op, path, value, says", INVALID_CALLS)
def test_malformed_calls_are_invalid_tool_calls(protocol, op, path, value, says):
    response = load_response(protocol)
    _set(response, path, value) if op == "set" else _del(response, path)
    with pytest.raises(ToolbenchError) as info:
        decode_calls(protocol, response)
    assert info.value.code == "model.invalid_tool_call"
    assert says in info.value.message


REFUSED_OR_CUT = [
    (
        "openai",
        {
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": None, "refusal": "I can't help with that."},
                }
            ]
        },
        "model.provider_refusal",
    ),
    (
        "openai",
        {
            "choices": [
                {"index": 0, "finish_reason": "content_filter", "message": {"role": "assistant", "content": None}}
            ]
        },
        "model.provider_refusal",
    ),
    (
        "openai",
        {
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "length",
                    "message": {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {
                                "id": "call_1",
                                "type": "function",
                                "function": {"name": "dice_roll", "arguments": '{"for'},
                            }
                        ],
                    },
                }
            ]
        },
        "model.output_truncated",
    ),
    (
        "openai-responses",
        {"status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"}, "output": []},
        "model.output_truncated",
    ),
    (
        "openai-responses",
        {"status": "incomplete", "incomplete_details": {"reason": "content_filter"}, "output": []},
        "model.provider_refusal",
    ),
    (
        "openai-responses",
        {
            "status": "completed",
            "output": [
                {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "refusal", "refusal": "I can't help with that."}],
                }
            ],
        },
        "model.provider_refusal",
    ),
    ("anthropic", {"content": [], "stop_reason": "refusal"}, "model.provider_refusal"),
    ("anthropic", {"content": [], "stop_reason": "max_tokens"}, "model.output_truncated"),
    ("anthropic", {"content": [], "stop_reason": "model_context_window_exceeded"}, "model.output_truncated"),
    ("gemini", {"candidates": [{"finishReason": "SAFETY", "index": 0}]}, "model.provider_refusal"),
    ("gemini", {"candidates": [{"finishReason": "RECITATION", "index": 0}]}, "model.provider_refusal"),
    ("gemini", {"promptFeedback": {"blockReason": "SAFETY"}}, "model.provider_refusal"),
    (
        "gemini",
        {
            "candidates": [
                {
                    "finishReason": "MAX_TOKENS",
                    "index": 0,
                    "content": {"role": "model", "parts": [{"functionCall": {"name": "dice_roll", "args": {}}}]},
                }
            ]
        },
        "model.output_truncated",
    ),
]


@pytest.mark.parametrize("protocol, response, code", REFUSED_OR_CUT)
def test_refusals_and_truncation(protocol, response, code):
    with pytest.raises(ToolbenchError) as info:
        decode_calls(protocol, response)
    assert info.value.code == code


WHY = "I can't help with that: it asks for someone's home address."


def _explained(protocol, why):
    """A refusal body of each shape that carries the provider's explanation `why`."""
    chat = {"choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": None, "refusal": why}}]}
    part = {"type": "message", "role": "assistant", "content": [{"type": "refusal", "refusal": why}]}
    return {
        "openai": [chat],
        "openai-responses": [
            {"status": "completed", "output": [part]},
            {"status": "incomplete", "incomplete_details": {"reason": "content_filter"}, "output": [part]},
        ],
        "anthropic": [
            {"content": [], "stop_reason": "refusal",
             "stop_details": {"type": "refusal", "category": "privacy", "explanation": why}},
            {"content": [{"type": "text", "text": why}], "stop_reason": "refusal"},  # no stop_details
        ],
        "gemini": [
            {"candidates": [{"finishReason": "SAFETY", "index": 0, "finishMessage": why}]},
            {"promptFeedback": {"blockReason": "SAFETY", "blockReasonMessage": why}},
        ],
    }[protocol]


@pytest.mark.parametrize("protocol", ["openai", "openai-responses", "anthropic", "gemini"])
def test_a_refusal_keeps_the_providers_explanation_quoted_and_bounded(protocol):
    for body in _explained(protocol, WHY):
        with pytest.raises(ToolbenchError) as info:
            decode_calls(protocol, body)
        assert info.value.code == "model.provider_refusal"
        assert f'"{WHY}"' in info.value.message
    for body in _explained(protocol, "x" * 50_000 + "\n"):
        with pytest.raises(ToolbenchError) as info:
            decode_calls(protocol, body)
        assert info.value.code == "model.provider_refusal"
        assert '"' + "x" * 200 + '…"' in info.value.message and len(info.value.message) < 400


def test_refusal_and_truncation_fixtures_are_valid_provider_responses():
    # The hand-written error bodies above are partial; filled out, they are what the SDKs parse.
    base = load_response("anthropic")
    for _, response, _ in (c for c in REFUSED_OR_CUT if c[0] == "anthropic"):
        RESPONSE_MODELS["anthropic"].model_validate({**base, **response})
    for _, response, _ in (c for c in REFUSED_OR_CUT if c[0] == "gemini"):
        RESPONSE_MODELS["gemini"].model_validate(response)


@pytest.mark.parametrize(
    "protocol, response",
    [
        ("openai", []),
        ("openai", {"choices": []}),
        ("openai", {"choices": [{"index": 0}]}),
        ("openai-responses", {"status": "completed"}),
        ("openai-responses", {"status": "failed", "error": {"code": "server_error", "message": "boom"}, "output": []}),
        ("anthropic", {"stop_reason": "tool_use"}),
        ("gemini", {}),
        ("gemini", {"candidates": ["x"]}),
    ],
)
def test_a_body_of_the_wrong_shape_is_an_invalid_response(protocol, response):
    with pytest.raises(ToolbenchError) as info:
        decode_calls(protocol, response)
    assert info.value.code == "model.invalid_response"


def test_unknown_protocol():
    with pytest.raises(ToolbenchError) as info:
        decode_calls("cohere", {})
    assert info.value.code == "protocol.unknown"


# -- Gemini call ids ---------------------------------------------------------------------------


def test_gemini_synthesises_deterministic_ids():
    first = decode_calls("gemini", load_response("gemini"))
    again = decode_calls("gemini", load_response("gemini"))
    assert [c.call_id for c in first] == [c.call_id for c in again]
    assert all(c.call_id.startswith("tb-gemini-") for c in first)
    assert [c.call_id.rsplit("-", 1)[1] for c in first] == ["0", "1", "2", "3"]


def test_gemini_ids_follow_the_seed_then_the_response_id():
    response = load_response("gemini")
    round_1 = decode_calls("gemini", response, id_seed="inv_1/round-001")
    round_2 = decode_calls("gemini", response, id_seed="inv_1/round-002")
    assert {c.call_id for c in round_1}.isdisjoint(c.call_id for c in round_2)
    other = copy.deepcopy(response)
    other["responseId"] = "another"
    assert decode_calls("gemini", other)[0].call_id != decode_calls("gemini", response)[0].call_id
    del other["responseId"]
    assert decode_calls("gemini", other)[0].call_id.startswith("tb-gemini-")


def test_gemini_keeps_ids_the_provider_sent():
    response = load_response("gemini")
    response["candidates"][0]["content"]["parts"][1]["functionCall"]["id"] = "b2x9k1qe"
    RESPONSE_MODELS["gemini"].model_validate(response)
    calls = decode_calls("gemini", response)
    assert calls[1].call_id == "b2x9k1qe"
    assert calls[0].call_id.startswith("tb-gemini-")


# -- Chat Completions calls without ids (Gemini's OpenAI-compatible endpoint) -------------------


@pytest.mark.parametrize("op", ["empty", "null", "absent"])
def test_a_chat_call_without_an_id_gets_one_of_its_own(op):
    response = load_response("openai")
    call = response["choices"][0]["message"]["tool_calls"][1]
    if op == "absent":
        del call["id"]
    else:
        call["id"] = "" if op == "empty" else None
    calls = decode_calls("openai", response, id_seed="inv_1_1")
    assert calls[1].call_id.startswith("tb-openai-") and calls[1].call_id.endswith("-1")
    assert calls[0].call_id == "call_Qm3J8yLk2VwZt5Rb9XcN1aPf"  # ids that came are kept
    assert calls[1].call_id != decode_calls("openai", response, id_seed="inv_1_2")[1].call_id


# -- Vertex AI's integer enums -------------------------------------------------------------------


@pytest.mark.parametrize(
    "finish, code",
    [(2, "model.output_truncated"), (3, "model.provider_refusal"), (4, "model.provider_refusal"),
     (6, "model.provider_refusal"), (7, "model.provider_refusal"), (8, "model.provider_refusal"),
     (9, "model.invalid_tool_call"), (10, "model.provider_refusal"), (15, "model.invalid_tool_call"),
     ("MAX_TOKENS", "model.output_truncated"), ("SAFETY", "model.provider_refusal")],
)
def test_gemini_finish_reasons_are_read_as_names_or_vertex_numbers(finish, code):
    response = load_fixture("gemini_vertex_int_enums_response.json")
    response["candidates"][0]["finishReason"] = finish
    with pytest.raises(ToolbenchError) as info:
        decode_calls("gemini", response)
    assert info.value.code == code


def test_a_vertex_response_with_integer_enums_decodes():
    response = load_fixture("gemini_vertex_int_enums_response.json")
    [call] = decode_calls("gemini", response, id_seed="inv_1_1")
    assert (call.call_name, call.arguments) == ("dice_roll", {"formula": "1d20"})
    # google-genai parses names only; with the numbers named, the body is the SDK's shape.
    RESPONSE_MODELS["gemini"].model_validate(_vertex_names(response))


def test_a_vertex_prompt_block_reason_number_is_a_refusal():
    with pytest.raises(ToolbenchError) as info:
        decode_calls("gemini", {"promptFeedback": {"blockReason": 1}})
    assert info.value.code == "model.provider_refusal"


_VERTEX_ENUMS = {
    "finishReason": FINISH_REASONS,
    "category": ("HARM_CATEGORY_UNSPECIFIED", "HARM_CATEGORY_HATE_SPEECH", "HARM_CATEGORY_DANGEROUS_CONTENT",
                 "HARM_CATEGORY_HARASSMENT", "HARM_CATEGORY_SEXUALLY_EXPLICIT"),
    "probability": ("HARM_PROBABILITY_UNSPECIFIED", "NEGLIGIBLE", "LOW", "MEDIUM", "HIGH"),
    "severity": ("HARM_SEVERITY_UNSPECIFIED", "HARM_SEVERITY_NEGLIGIBLE", "HARM_SEVERITY_LOW"),
}


def _vertex_names(value):
    if isinstance(value, dict):
        return {k: _VERTEX_ENUMS[k][v] if k in _VERTEX_ENUMS and type(v) is int else _vertex_names(v)
                for k, v in value.items()}
    if isinstance(value, list):
        return [_vertex_names(v) for v in value]
    return value


# -- Anthropic refusals ----------------------------------------------------------------------------


def test_an_anthropic_refusal_says_the_providers_explanation():
    explanation = "This request could enable cyber harm, such as malware development."
    response = {**load_response("anthropic"), "content": [], "stop_reason": "refusal",
                "stop_details": {"type": "refusal", "category": "cyber", "explanation": explanation}}
    RESPONSE_MODELS["anthropic"].model_validate(response)
    with pytest.raises(ToolbenchError) as info:
        decode_calls("anthropic", response)
    assert info.value.code == "model.provider_refusal"
    assert explanation in info.value.message


def test_fixture_names_match_the_advertised_tools():
    assert set(RESPONSE_FIXTURES) == set(PROTOCOLS)
