"""render(): the tool list each provider takes, with the per-provider schema rules."""

from __future__ import annotations

import copy
import json
import time

import pytest
from protocol_sdk import ANTHROPIC_TOOL, OPENAI_TOOL, RESPONSES_TOOL, check_gemini, validate_tools
from protocol_tools import DICE_ROLL, FINISH, ISSUE_CREATE, READ_FILE, TOOLS, tool
from pydantic import ValidationError
from pydantic_core import ValidationError as CoreValidationError

from toolbench.core.errors import ToolbenchError
from toolbench.protocols import PROTOCOLS, render


def gemini_parameters(schema: dict) -> dict | None:
    """The OpenAPI-subset form (`schema="openapi"`), which the sanitiser tests below pin."""
    [declarations] = render("gemini", [tool("t", schema)], schema="openapi")
    return declarations["functionDeclarations"][0].get("parameters")


def test_render_openai_wraps_each_tool_as_a_function_and_keeps_the_schema():
    [rendered] = render("openai", [DICE_ROLL])
    assert rendered == {
        "type": "function",
        "function": {
            "name": "dice_roll",
            "description": "Roll dice, e.g. 3d6+4.",
            "parameters": DICE_ROLL.descriptor.input_schema,
        },
    }


def test_render_openai_responses_is_flat_and_always_says_strict():
    [rendered] = render("openai-responses", [DICE_ROLL])
    assert rendered == {
        "type": "function",
        "name": "dice_roll",
        "description": "Roll dice, e.g. 3d6+4.",
        "parameters": DICE_ROLL.descriptor.input_schema,
        "strict": False,
    }
    assert render("openai-responses", [DICE_ROLL], strict=True)[0]["strict"] is True


def test_render_anthropic_uses_input_schema():
    [rendered] = render("anthropic", [DICE_ROLL])
    assert rendered == {
        "name": "dice_roll",
        "description": "Roll dice, e.g. 3d6+4.",
        "input_schema": DICE_ROLL.descriptor.input_schema,
    }


def test_render_gemini_gives_one_tool_with_function_declarations():
    rendered = render("gemini", [DICE_ROLL, READ_FILE])
    assert [list(t) for t in rendered] == [["functionDeclarations"]]
    assert [d["name"] for d in rendered[0]["functionDeclarations"]] == ["dice_roll", "workspace_read_file"]
    assert render("gemini", []) == []


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_render_keeps_tool_order_and_empty_list(protocol):
    assert render(protocol, []) == []
    rendered = render(protocol, TOOLS)
    validate_tools(protocol, rendered)


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize("schema", ["json-schema", "openapi"])
def test_every_rendered_list_validates_with_the_provider_sdk(protocol, strict, schema):
    validate_tools(protocol, render(protocol, TOOLS, strict=strict, schema=schema))


def test_render_unknown_protocol_is_an_error():
    with pytest.raises(ToolbenchError) as info:
        render("mistral", TOOLS)
    assert info.value.code == "protocol.unknown"


def test_render_leaves_out_an_empty_description():
    bare = tool("bare", {"type": "object", "properties": {"x": {"type": "string"}}}, description="")
    assert "description" not in render("openai", [bare])[0]["function"]
    assert "description" not in render("anthropic", [bare])[0]
    assert "description" not in render("gemini", [bare])[0]["functionDeclarations"][0]


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("strict", [False, True])
def test_render_never_changes_the_tools(protocol, strict):
    before = copy.deepcopy([t.descriptor.input_schema for t in TOOLS])
    first = render(protocol, TOOLS, strict=strict)
    assert [t.descriptor.input_schema for t in TOOLS] == before
    assert json.loads(json.dumps(first)) == render(protocol, TOOLS, strict=strict)


def test_anthropic_shares_a_schema_it_does_not_change():
    [rendered] = render("anthropic", [READ_FILE])
    assert rendered["input_schema"] is READ_FILE.descriptor.input_schema
    [rendered] = render("anthropic", [ISSUE_CREATE])
    assert rendered["input_schema"] is not ISSUE_CREATE.descriptor.input_schema
    assert rendered["input_schema"]["$defs"] is ISSUE_CREATE.descriptor.input_schema["$defs"]


# -- Claude: only $schema and $id are removed (reference §2.6, table 9.12) ----------------------


def test_claude_sanitise_removes_only_schema_and_id_at_every_level():
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "urn:x",
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "mode": {"const": "fast", "$id": "urn:mode"},
            "$id": {"type": "string", "description": "a property that happens to be called $id"},
            "nested": {"type": "object", "properties": {"a": {"$schema": "x", "type": "string"}}},
        },
    }
    [rendered] = render("anthropic", [tool("t", schema)])
    assert rendered["input_schema"] == {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "mode": {"const": "fast"},
            "$id": {"type": "string", "description": "a property that happens to be called $id"},
            "nested": {"type": "object", "properties": {"a": {"type": "string"}}},
        },
    }


# -- Gemini: upstream rules plus the survey's rejected keywords (reference §2.6, table 9.12) -------


def test_gemini_openapi_pins_the_reference_table_and_keeps_nested_required():
    schema = {
        "type": "object",
        "properties": {
            "query": {"type": "string"},
            "filter": {
                "type": "object",
                "properties": {"tag": {"type": "string"}},
                "required": ["tag"],
            },
            "options": {"type": "object"},
            "extra": {"type": "object", "properties": {}, "additionalProperties": True},
        },
        "required": ["query", "missing", "filter"],
    }
    assert gemini_parameters(schema) == {
        "type": "object",
        "properties": {
            "query": {"type": "string"},
            "filter": {"type": "object", "properties": {"tag": {"type": "string"}}, "required": ["tag"]},
            "options": {"type": "string"},  # free-form nested object becomes string
            "extra": {"type": "string"},
        },
        "required": ["query", "filter"],  # pruned to declared properties
    }


def test_gemini_drops_the_top_level_required_when_nothing_is_declared():
    assert gemini_parameters({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["b"]}) == {
        "type": "object",
        "properties": {"a": {"type": "string"}},
    }


@pytest.mark.parametrize(
    "keyword, value",
    [
        ("$schema", "x"),
        ("$id", "x"),
        ("additionalProperties", False),
        ("patternProperties", {"^x": {"type": "string"}}),
        ("unevaluatedProperties", False),
        ("dependencies", {"a": ["b"]}),
        ("dependentRequired", {"a": ["b"]}),
        ("dependentSchemas", {"a": {"required": ["b"]}}),
        ("allOf", [{"type": "string"}, {"minLength": 1}]),
        ("not", {"type": "null"}),
        ("if", {"minLength": 1}),
        ("then", {"maxLength": 3}),
        ("else", {"maxLength": 9}),
        ("const", 3),
        ("examples", ["x"]),
        ("exclusiveMinimum", 0),
        ("exclusiveMaximum", 9),
        ("multipleOf", 2),
        ("uniqueItems", True),
    ],
)
def test_gemini_removes_each_rejected_keyword_at_every_level(keyword, value):
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "object", "properties": {"b": {"type": "string", keyword: value}}, keyword: value}
        },
        keyword: value,
    }
    rendered = gemini_parameters(schema)
    assert rendered is not None
    assert keyword not in repr(rendered).replace("'b'", "")
    check_gemini(__import__("google.genai").genai.types.Schema, rendered)


@pytest.mark.parametrize(
    "keyword, value",
    [("title", "X"), ("default", "x"), ("anyOf", [{"type": "string"}, {"type": "integer", "minimum": 1}])],
)
def test_gemini_openapi_keeps_what_its_schema_has_at_every_level(keyword, value):
    schema = {
        "type": "object",
        "properties": {"a": {"type": "object", "properties": {"b": {"type": "string", keyword: value}}}},
        keyword: value,
    }
    rendered = gemini_parameters(schema)
    assert rendered is not None
    assert rendered[keyword] == value
    assert rendered["properties"]["a"]["properties"]["b"][keyword] == value
    check_gemini(__import__("google.genai").genai.types.Schema, rendered)


def test_gemini_openapi_sends_a_many_branch_one_of_as_any_of_and_drops_a_null_default():
    schema = {"type": "object", "properties": {
        "a": {"oneOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]},
        "b": {"type": "string", "default": None},
    }}
    assert gemini_parameters(schema) == {"type": "object", "properties": {
        "a": {"anyOf": [{"type": "string"}, {"type": "integer"}], "nullable": True},
        "b": {"type": "string"},
    }}


def test_gemini_inlines_refs_and_collapses_nullable_unions():
    rendered = gemini_parameters(ISSUE_CREATE.descriptor.input_schema)
    assert rendered == {
        "title": "IssueCreate",
        "type": "object",
        "properties": {
            "title": {"type": "string", "title": "Title", "minLength": 1},
            "priority": {"type": "integer", "default": 3},
            "labels": {"type": "array", "items": {"type": "string"}},
            "assignee": {
                "type": "object", "properties": {"login": {"type": "string"}}, "required": ["login"], "nullable": True
            },
            "metadata": {"type": "string"},
        },
        "required": ["title"],
    }


def test_gemini_turns_a_recursive_ref_into_a_string():
    schema = {
        "type": "object",
        "properties": {"tree": {"$ref": "#/$defs/Node"}},
        "$defs": {"Node": {"type": "object", "properties": {"child": {"$ref": "#/$defs/Node"}}}},
    }
    assert gemini_parameters(schema) == {
        "type": "object",
        "properties": {"tree": {"type": "object", "properties": {"child": {"type": "string"}}}},
    }


@pytest.mark.parametrize(
    "prop, expected",
    [
        ({"type": ["string", "null"]}, {"type": "string", "nullable": True}),
        ({"type": ["string", "integer"]}, {}),
        ({"type": "array"}, {"type": "array", "items": {"type": "string"}}),
        ({"type": "string", "format": "uri"}, {"type": "string"}),
        ({"type": "string", "format": "date-time"}, {"type": "string", "format": "date-time"}),
        ({"type": "integer", "enum": [1, 2]}, {"type": "integer"}),
        ({"enum": ["a", "b"]}, {"type": "string", "enum": ["a", "b"]}),
        ({"const": "only"}, {"type": "string", "enum": ["only"]}),
        (
            {"oneOf": [{"type": "string"}, {"type": "null"}], "description": "d"},
            {"type": "string", "description": "d", "nullable": True},
        ),
        ({"type": "object", "description": "free"}, {"type": "string", "description": "free"}),
    ],
)
def test_gemini_normalises_what_its_schema_cannot_say(prop, expected):
    rendered = gemini_parameters({"type": "object", "properties": {"p": prop}})
    assert rendered == {"type": "object", "properties": {"p": expected}}


@pytest.mark.parametrize("schema", ["json-schema", "openapi"])
def test_gemini_leaves_out_parameters_for_a_tool_without_properties(schema):
    [declarations] = render("gemini", [FINISH], schema=schema)
    assert declarations["functionDeclarations"] == [{"name": "workspace_finish", "description": "Finish the run."}]


# -- Gemini parametersJsonSchema (the default) ------------------------------------------------------


def test_gemini_sends_the_json_schema_as_it_is_by_default():
    [declarations] = render("gemini", [READ_FILE, DICE_ROLL])
    [read, dice] = declarations["functionDeclarations"]
    assert read == {
        "name": "workspace_read_file",
        "description": "Read a text file from the workspace.",
        "parametersJsonSchema": READ_FILE.descriptor.input_schema,
    }
    assert read["parametersJsonSchema"] is READ_FILE.descriptor.input_schema  # shared, not copied
    assert "parameters" not in dice and dice["parametersJsonSchema"] == DICE_ROLL.descriptor.input_schema


def test_gemini_json_schema_keeps_what_the_openapi_subset_loses():
    [declarations] = render("gemini", [ISSUE_CREATE])
    sent = declarations["functionDeclarations"][0]["parametersJsonSchema"]
    source = {k: v for k, v in ISSUE_CREATE.descriptor.input_schema.items() if k not in ("$schema", "$id")}
    assert sent == source  # $ref/$defs, anyOf with null, bounds, defaults, titles, the map of strings


def test_gemini_json_schema_sends_a_const_as_its_one_value_enum():
    schema = {"type": "object", "properties": {"const": {"const": "x"}, "both": {"const": 1, "enum": [1, 2]}}}
    [declarations] = render("gemini", [tool("t", schema)])
    assert declarations["functionDeclarations"][0]["parametersJsonSchema"] == {
        "type": "object", "properties": {"const": {"enum": ["x"]}, "both": {"const": 1, "enum": [1, 2]}}}


def test_gemini_schema_choice_is_checked():
    with pytest.raises(ToolbenchError) as info:
        render("gemini", TOOLS, schema="proto")
    assert info.value.code == "bench.misuse"


# -- OpenAI strict mode --------------------------------------------------------------------------


def test_openai_without_strict_sends_the_schema_unchanged():
    [rendered] = render("openai", [ISSUE_CREATE])
    assert rendered["function"]["parameters"] == ISSUE_CREATE.descriptor.input_schema
    assert "strict" not in rendered["function"]


def test_openai_strict_closes_objects_requires_every_property_and_makes_optional_ones_nullable():
    schema = {
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "limit": {"type": "integer"},
            "mode": {"type": "string", "enum": ["fast", "slow"]},
            "kind": {"type": ["string", "integer"]},
            "owner": {"$ref": "#/$defs/User"},
            "either": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
            "nested": {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
        },
        "required": ["path", "nested"],
        "$defs": {"User": {"type": "object", "properties": {"login": {"type": "string"}}}},
    }
    [rendered] = render("openai", [tool("t", schema)], strict=True)
    function = rendered["function"]
    assert function["strict"] is True
    assert function["parameters"] == {
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "limit": {"type": ["integer", "null"]},
            "mode": {"type": ["string", "null"], "enum": ["fast", "slow", None]},
            "kind": {"type": ["string", "integer", "null"]},
            "owner": {"anyOf": [{"$ref": "#/$defs/User"}, {"type": "null"}]},
            "either": {"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]},
            "nested": {
                "type": "object",
                "properties": {"a": {"type": "string"}},
                "required": ["a"],
                "additionalProperties": False,
            },
        },
        "required": ["path", "limit", "mode", "kind", "owner", "either", "nested"],
        "$defs": {
            "User": {
                "type": "object",
                "properties": {"login": {"type": ["string", "null"]}},
                "additionalProperties": False,
                "required": ["login"],
            }
        },
        "additionalProperties": False,
    }


def test_strict_is_idempotent():
    once = render("openai", [ISSUE_CREATE], strict=True)[0]["function"]["parameters"]
    twice = render("openai", [tool("t", once)], strict=True)[0]["function"]["parameters"]
    assert once == twice


def test_strict_leaves_gemini_alone():
    assert render("gemini", TOOLS, strict=True) == render("gemini", TOOLS)


# -- Anthropic strict tools and deferred loading ------------------------------------------------------


def test_anthropic_strict_marks_each_tool_and_rewrites_the_schema_as_the_sdk_does():
    [rendered] = render("anthropic", [ISSUE_CREATE], strict=True)
    assert rendered["strict"] is True
    assert rendered["input_schema"] == {
        "$defs": {"User": {"type": "object", "properties": {"login": {"type": "string"}}, "additionalProperties": False,
                           "required": ["login"]}},
        "type": "object",
        "title": "IssueCreate",
        "properties": {
            "title": {"type": "string", "title": "Title", "description": "{minLength: 1}"},
            "priority": {"type": "integer", "description": "{exclusiveMinimum: 0, default: 3}"},
            "labels": {"type": "array", "items": {"type": "string"}, "description": "{uniqueItems: true}"},
            "assignee": {"anyOf": [{"$ref": "#/$defs/User"}, {"type": "null"}], "description": "{default: null}"},
            "metadata": {"type": "object", "properties": {}, "additionalProperties": False},
        },
        "additionalProperties": False,
        "required": ["title", "missing"],
    }
    import anthropic

    assert anthropic.transform_schema(ISSUE_CREATE.descriptor.input_schema)["properties"].keys() == (
        rendered["input_schema"]["properties"].keys())


def test_anthropic_defer_loading_marks_the_named_tools():
    rendered = render("anthropic", [READ_FILE, DICE_ROLL], defer_loading=["dice_roll"])
    assert ["defer_loading" in t for t in rendered] == [False, True]
    assert rendered[1]["defer_loading"] is True
    validate_tools("anthropic", rendered)
    with pytest.raises(ToolbenchError) as info:
        render("anthropic", [DICE_ROLL], defer_loading="dice_roll")
    assert info.value.code == "bench.misuse"


# -- the validators can fail -------------------------------------------------------------------


@pytest.mark.parametrize(
    "validator, broken",
    [
        (OPENAI_TOOL, {"type": "function", "name": "flat_is_responses_style", "parameters": {}}),
        (OPENAI_TOOL, {"type": "function", "function": {"name": "x"}, "extra": 1}),
        (RESPONSES_TOOL, {"type": "function", "function": {"name": "chat_style"}}),
        (RESPONSES_TOOL, {"type": "function", "name": "no_strict", "parameters": {}}),
    ],
)
def test_openai_tool_validators_reject_wrong_shapes(validator, broken):
    with pytest.raises(CoreValidationError):
        validator.validate_python(broken)


@pytest.mark.parametrize(
    "broken",
    [
        {"type": "function", "function": {"name": "chat_style", "parameters": {"type": "object"}}},
        {"input_schema": {"type": "object"}},
        {"name": "x", "input_schema": {"type": "object"}, "parameters": {}},
    ],
)
def test_anthropic_tool_validator_rejects_wrong_shapes(broken):
    ANTHROPIC_TOOL.validate_python({"name": "x", "input_schema": {"type": "object"}})  # the control passes
    with pytest.raises(CoreValidationError):
        ANTHROPIC_TOOL.validate_python(broken)


@pytest.mark.parametrize(
    "broken",
    [
        {"function_declarations": [{"name": "snake_case_keys"}]},
        {"functionDeclarations": [{"name": "x", "parameters": {"type": "object", "exclusiveMinimum": 0}}]},
        {"functionDeclarations": [{"name": "x", "input_schema": {}}]},
        {"functionDeclarations": [{"name": "x", "parameters": {"type": "objekt"}}]},  # the SDK only warns
    ],
)
def test_gemini_tool_validator_rejects_wrong_shapes(broken):
    from google.genai import types

    with pytest.raises((ValidationError, AssertionError, UserWarning)):
        check_gemini(types.Tool, broken)


# Speed is a benchmark, not a test (a wall clock fails on a loaded machine): benchmarks/bench_snapshot.py
# renders 2,000 tools per protocol against its 100 ms target.


def _timed(protocol, tools, strict):
    start = time.process_time()
    render(protocol, tools, strict=strict)
    return time.process_time() - start


def test_gemini_openapi_keeps_no_keyword_the_survey_saw_refused_and_departs_from_upstream_knowingly():
    from toolbench.protocols._gemini_schema import KEPT, KEPT_AGAINST_UPSTREAM, SURVEY_REJECTED, UPSTREAM_REMOVED

    assert not KEPT & SURVEY_REJECTED
    assert KEPT & UPSTREAM_REMOVED == KEPT_AGAINST_UPSTREAM
