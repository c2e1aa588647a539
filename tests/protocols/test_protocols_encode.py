"""encode_history(): past rounds as each provider's messages, every call paired with a result."""

from __future__ import annotations

import pytest
from protocol_sdk import ANTHROPIC_MESSAGE, OPENAI_MESSAGE, RESPONSES_ITEM, check_gemini, validate_history
from pydantic import TypeAdapter, ValidationError
from pydantic_core import ValidationError as CoreValidationError

from toolbench.core.arguments import ToolArguments
from toolbench.core.errors import ToolbenchError
from toolbench.protocols import PROTOCOLS, Exchange, ResultView, encode_history

UNKNOWN = (
    "## Tool error\n\nThe outcome of this call is unknown: it may or may not have run, and no result was "
    "recorded. Check the current state before repeating the call."
)

ROUNDS = [
    [
        Exchange("call_a", "workspace_read_file", {"path": "a.md"}, ResultView("line 1\nline 2")),
        Exchange(
            "call_b",
            "dice_roll",
            ToolArguments.decode('{"formula":').replay_object(),
            ResultView("  Tool arguments must be a JSON object.  ", is_error=True),
        ),
    ],
    [],
    [Exchange("call_c", "mcp__my_server__issue_create", {"title": "Fix"}, None)],
]


def test_openai_history():
    assert encode_history("openai", ROUNDS) == [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_a",
                    "type": "function",
                    "function": {"name": "workspace_read_file", "arguments": '{"path":"a.md"}'},
                },
                {"id": "call_b", "type": "function", "function": {"name": "dice_roll", "arguments": "{}"}},
            ],
        },
        {"role": "tool", "tool_call_id": "call_a", "content": "line 1\nline 2"},
        {"role": "tool", "tool_call_id": "call_b", "content": "## Tool error\n\nTool arguments must be a JSON object."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_c",
                    "type": "function",
                    "function": {"name": "mcp__my_server__issue_create", "arguments": '{"title":"Fix"}'},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "call_c", "content": UNKNOWN},
    ]


def test_responses_history():
    assert encode_history("openai-responses", ROUNDS) == [
        {"type": "function_call", "call_id": "call_a", "name": "workspace_read_file", "arguments": '{"path":"a.md"}'},
        {"type": "function_call", "call_id": "call_b", "name": "dice_roll", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "call_a", "output": "line 1\nline 2"},
        {
            "type": "function_call_output",
            "call_id": "call_b",
            "output": "## Tool error\n\nTool arguments must be a JSON object.",
        },
        {
            "type": "function_call",
            "call_id": "call_c",
            "name": "mcp__my_server__issue_create",
            "arguments": '{"title":"Fix"}',
        },
        {"type": "function_call_output", "call_id": "call_c", "output": UNKNOWN},
    ]


def test_anthropic_history():
    assert encode_history("anthropic", ROUNDS) == [
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "call_a", "name": "workspace_read_file", "input": {"path": "a.md"}},
                {"type": "tool_use", "id": "call_b", "name": "dice_roll", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "call_a", "content": "line 1\nline 2", "is_error": False},
                {
                    "type": "tool_result",
                    "tool_use_id": "call_b",
                    "content": "## Tool error\n\nTool arguments must be a JSON object.",
                    "is_error": True,
                },
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "call_c", "name": "mcp__my_server__issue_create", "input": {"title": "Fix"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "call_c", "content": UNKNOWN, "is_error": True},
            ],
        },
    ]


def test_gemini_history():
    assert encode_history("gemini", ROUNDS) == [
        {
            "role": "model",
            "parts": [
                {"functionCall": {"name": "workspace_read_file", "args": {"path": "a.md"}, "id": "call_a"}},
                {"functionCall": {"name": "dice_roll", "args": {}, "id": "call_b"}},
            ],
        },
        {
            "role": "user",
            "parts": [
                {
                    "functionResponse": {
                        "name": "workspace_read_file",
                        "response": {"output": "line 1\nline 2"},
                        "id": "call_a",
                    }
                },
                {
                    "functionResponse": {
                        "name": "dice_roll",
                        "response": {"error": "## Tool error\n\nTool arguments must be a JSON object."},
                        "id": "call_b",
                    }
                },
            ],
        },
        {
            "role": "model",
            "parts": [
                {"functionCall": {"name": "mcp__my_server__issue_create", "args": {"title": "Fix"}, "id": "call_c"}},
            ],
        },
        {
            "role": "user",
            "parts": [
                {
                    "functionResponse": {
                        "name": "mcp__my_server__issue_create",
                        "response": {"error": UNKNOWN},
                        "id": "call_c",
                    }
                },
            ],
        },
    ]


def test_gemini_never_sends_a_synthesised_id_and_replays_the_signature():
    rounds = [[Exchange("tb-gemini-0123456789ab-0", "dice_roll", {"formula": "d6"}, ResultView("4"), signature="c2ln")]]
    assert encode_history("gemini", rounds) == [
        {
            "role": "model",
            "parts": [{"functionCall": {"name": "dice_roll", "args": {"formula": "d6"}}, "thoughtSignature": "c2ln"}],
        },
        {"role": "user", "parts": [{"functionResponse": {"name": "dice_roll", "response": {"output": "4"}}}]},
    ]


def test_anthropic_leaves_out_an_empty_result_text():
    [_, user] = encode_history("anthropic", [[Exchange("t1", "workspace_finish", {}, ResultView(""))]])
    assert user["content"] == [{"type": "tool_result", "tool_use_id": "t1", "is_error": False}]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_every_history_validates_with_the_provider_sdk(protocol):
    validate_history(protocol, encode_history(protocol, ROUNDS))


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_every_call_is_paired_with_one_result_after_it(protocol):
    messages = encode_history(protocol, ROUNDS)
    calls, results = _ids(protocol, messages)
    assert [c for c, _ in calls] == ["call_a", "call_b", "call_c"]
    assert sorted(r for r, _ in results) == ["call_a", "call_b", "call_c"]
    position = dict(calls)
    assert all(at > position[r] for r, at in results)


def _ids(protocol, messages):
    calls, results = [], []
    for at, m in enumerate(messages):
        if protocol == "openai":
            calls += [(c["id"], at) for c in m.get("tool_calls", [])]
            if m["role"] == "tool":
                results.append((m["tool_call_id"], at))
        elif protocol == "openai-responses":
            (calls if m["type"] == "function_call" else results).append((m["call_id"], at))
        elif protocol == "anthropic":
            calls += [(b["id"], at) for b in m["content"] if b["type"] == "tool_use"]
            results += [(b["tool_use_id"], at) for b in m["content"] if b["type"] == "tool_result"]
        else:
            calls += [(p["functionCall"]["id"], at) for p in m["parts"] if "functionCall" in p]
            results += [(p["functionResponse"]["id"], at) for p in m["parts"] if "functionResponse" in p]
    return calls, results


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_an_empty_history_is_no_messages(protocol):
    assert encode_history(protocol, []) == []
    assert encode_history(protocol, [[], []]) == []


REUSED_ACROSS_ROUNDS = [[Exchange("c1", "dice_roll", {}, ResultView("1"))],
                        [Exchange("c1", "dice_roll", {}, ResultView("2"))]]


_REFUSED = [
    [[Exchange("", "dice_roll", {}, ResultView("1"))]],
    [[Exchange("c1", "", {}, ResultView("1"))]],
    [[Exchange("c1", "dice_roll", {}, ResultView("1")), Exchange("c1", "dice_roll", {}, ResultView("2"))]],
]


# An id reused in a later round is refused where ids pair across the history (Responses,
# Anthropic); Chat Completions takes it (the next test).
@pytest.mark.parametrize(("protocol", "rounds"), [
    *((p, r) for p in ("openai", "openai-responses", "anthropic") for r in _REFUSED),
    ("openai-responses", REUSED_ACROSS_ROUNDS), ("anthropic", REUSED_ACROSS_ROUNDS),
])
def test_a_history_no_provider_takes_is_refused(protocol, rounds):
    with pytest.raises(ToolbenchError) as info:
        encode_history(protocol, rounds)
    assert info.value.code == "protocol.history_invalid"


def test_chat_completions_takes_an_id_reused_in_a_later_round():
    """A tool message answers the assistant message before it; servers that number every
    answer's calls from call_0 send the same id each round, and their history must encode."""
    messages = encode_history("openai", REUSED_ACROSS_ROUNDS)
    assert [m["role"] for m in messages] == ["assistant", "tool", "assistant", "tool"]
    assert [m.get("tool_call_id") for m in messages if m["role"] == "tool"] == ["c1", "c1"]


def test_arguments_may_be_given_as_tool_arguments():
    invalid = ToolArguments.decode("[1,2]")
    [assistant, _] = encode_history("openai", [[Exchange("c1", "dice_roll", invalid, ResultView("x"))]])
    assert assistant["tool_calls"][0]["function"]["arguments"] == "{}"


# -- the validators can fail -------------------------------------------------------------------

BROKEN_OPENAI = [
    {"role": "tool", "tool_call_id": "c1", "content": "x", "name": "dice_roll"},  # extra key
    {"role": "tool", "content": "x"},  # no tool_call_id
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "dice_roll", "arguments": {}}}],
    },  # not a string
]


@pytest.mark.parametrize("broken", BROKEN_OPENAI)
def test_the_openai_validator_rejects_broken_messages(broken):
    with pytest.raises(CoreValidationError):
        OPENAI_MESSAGE.validate_python(broken)


def test_plain_type_adapters_are_too_lenient_which_is_why_the_tests_tighten_them():
    import openai.types.chat as chat

    plain = TypeAdapter(chat.ChatCompletionMessageParam)
    plain.validate_python(BROKEN_OPENAI[0])  # an extra key passes a plain TypedDict
    plain.validate_python(BROKEN_OPENAI[2])  # Iterable fields are only checked when iterated


@pytest.mark.parametrize(
    "broken",
    [
        {"type": "function_call_output", "call_id": "c1", "output": "x", "is_error": True},
        {"type": "function_call", "call_id": "c1", "name": "x"},
        {"type": "function_call", "call_id": "c1", "name": "x", "arguments": {}},
    ],
)
def test_the_responses_validator_rejects_broken_items(broken):
    with pytest.raises(CoreValidationError):
        RESPONSES_ITEM.validate_python(broken)


@pytest.mark.parametrize(
    "broken",
    [
        {"role": "tool", "content": [{"type": "tool_result", "tool_use_id": "c1"}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_call_id": "c1"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "c1", "name": "x", "input": "{}"}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1", "error": True}]},
    ],
)
def test_the_anthropic_validator_rejects_broken_messages(broken):
    with pytest.raises(CoreValidationError):
        ANTHROPIC_MESSAGE.validate_python(broken)


@pytest.mark.parametrize(
    "broken",
    [
        {"role": "model", "parts": [{"function_call": {"name": "x", "args": {}}}]},  # snake_case
        {"role": "model", "parts": [{"functionCall": {"name": "x", "arguments": {}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "x", "response": "text"}}]},
    ],
)
def test_the_gemini_validator_rejects_broken_contents(broken):
    from google.genai import types

    with pytest.raises((ValidationError, AssertionError)):
        check_gemini(types.Content, broken)
