"""encode_tool_choice(): none / auto / required / a specific tool, per provider."""

from __future__ import annotations

import pytest
from protocol_sdk import validate_tool_choice
from pydantic import ValidationError
from pydantic_core import ValidationError as CoreValidationError

from toolbench.core.errors import ToolbenchError
from toolbench.protocols import PROTOCOLS, encode_tool_choice

NAMES = ["workspace_read_file", "mcp_search"]

TABLE = [
    ("openai", "none", "none"),
    ("openai", "auto", "auto"),
    ("openai", "required", "required"),
    ("openai", {"name": "mcp_search"}, {"type": "function", "function": {"name": "mcp_search"}}),
    ("openai-responses", "none", "none"),
    ("openai-responses", "auto", "auto"),
    ("openai-responses", "required", "required"),
    ("openai-responses", {"name": "mcp_search"}, {"type": "function", "name": "mcp_search"}),
    ("anthropic", "none", {"type": "none"}),
    ("anthropic", "auto", {"type": "auto"}),
    ("anthropic", "required", {"type": "any"}),
    ("anthropic", {"name": "mcp_search"}, {"type": "tool", "name": "mcp_search"}),
    ("gemini", "none", {"functionCallingConfig": {"mode": "NONE"}}),
    ("gemini", "auto", {"functionCallingConfig": {"mode": "AUTO"}}),
    ("gemini", "required", {"functionCallingConfig": {"mode": "ANY"}}),
    (
        "gemini",
        {"name": "mcp_search"},
        {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["mcp_search"]}},
    ),
]


@pytest.mark.parametrize("protocol, choice, expected", TABLE)
def test_tool_choice_table(protocol, choice, expected):
    encoded = encode_tool_choice(protocol, choice, NAMES)
    assert encoded == expected
    validate_tool_choice(protocol, encoded)


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("choice", ["required", {"name": "mcp_search"}])
def test_required_or_specific_with_no_tools(protocol, choice):
    with pytest.raises(ToolbenchError) as info:
        encode_tool_choice(protocol, choice, [])
    assert info.value.code == "agent.tool_choice_requires_tools"


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("name", ["workspace.read_file", "builtin_unknown", "mcp_other"])
def test_a_specific_tool_must_be_advertised(protocol, name):
    with pytest.raises(ToolbenchError) as info:
        encode_tool_choice(protocol, {"name": name}, NAMES)
    assert info.value.code == "agent.tool_choice_tool_not_advertised"


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("choice", ["none", "auto"])
def test_none_or_auto_with_no_tools_sends_no_tool_choice(protocol, choice):
    assert encode_tool_choice(protocol, choice, []) is None


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("choice", ["any", "AUTO", None, {"name": 3}, {"type": "function", "name": "mcp_search"}])
def test_a_choice_of_another_shape_is_refused(protocol, choice):
    with pytest.raises(ToolbenchError) as info:
        encode_tool_choice(protocol, choice, NAMES)
    assert info.value.code == "protocol.tool_choice_invalid"


def test_call_names_may_be_a_mapping():
    assert encode_tool_choice("openai", {"name": "a"}, {"a": "builtin:a"}) == {
        "type": "function",
        "function": {"name": "a"},
    }


@pytest.mark.parametrize(
    "protocol, wrong",
    [
        ("openai", {"type": "function", "name": "flat"}),
        ("openai", "any"),
        ("openai-responses", {"type": "function", "function": {"name": "nested"}}),
        ("anthropic", {"type": "required"}),
        ("anthropic", {"type": "tool", "function": {"name": "x"}}),
        ("gemini", {"functionCallingConfig": {"mode": "REQUIRED"}}),  # the SDK only warns; the check fails
        ("gemini", {"function_calling_config": {"mode": "ANY"}}),
        ("gemini", {"functionCallingConfig": {"mode": "ANY", "allowed": ["x"]}}),
    ],
)
def test_the_tool_choice_validators_can_fail(protocol, wrong):
    with pytest.raises((CoreValidationError, ValidationError, AssertionError, UserWarning)):
        validate_tool_choice(protocol, wrong)
