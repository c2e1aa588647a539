"""check(): every name and schema problem, per provider, with the rule it breaks."""

from __future__ import annotations

import pytest
from protocol_tools import ISSUE_CREATE, TOOLS, tool

from toolbench.protocols import PROTOCOLS, Problem, check, render


def rules(problems: list[Problem], protocol: str, *, fatal: bool | None = None) -> set[str]:
    return {p.rule for p in problems if p.protocol == protocol and (fatal is None or p.fatal == fatal)}


def fatal_protocols(problems: list[Problem]) -> set[str]:
    return {p.protocol for p in problems if p.fatal}


def test_the_reference_tools_have_no_fatal_problem_for_openai_or_anthropic():
    problems = check(TOOLS)
    assert not [p for p in problems if p.fatal and p.protocol in ("openai", "openai-responses", "anthropic")]


def test_a_dotted_name_fails_openai_and_anthropic_but_passes_gemini():
    problems = check([tool("workspace.read_file")])
    assert fatal_protocols(problems) == {"openai", "openai-responses", "anthropic"}
    assert rules(problems, "openai") == {"name.pattern"}
    assert rules(problems, "gemini") == set()


def test_a_65_byte_name_fails_openai_and_gemini_and_only_warns_for_anthropic():
    problems = check([tool("a" * 65)])
    assert rules(problems, "openai", fatal=True) == {"name.length"}
    assert rules(problems, "openai-responses", fatal=True) == {"name.length"}
    assert rules(problems, "gemini", fatal=True) == {"name.length"}
    assert rules(problems, "anthropic", fatal=True) == set()
    assert rules(problems, "anthropic", fatal=False) == {"name.length"}
    assert fatal_protocols(check([tool("a" * 64)])) == set()


def test_a_129_byte_name_fails_anthropic():
    assert rules(check([tool("a" * 129)]), "anthropic", fatal=True) == {"name.length"}


def test_name_length_counts_bytes():
    problems = check([tool("é" * 33)])  # 66 bytes, 33 characters
    assert "name.length" in rules(problems, "gemini", fatal=True)


@pytest.mark.parametrize(
    "name, fatal_for",
    [
        ("read_file", set()),
        ("read-file", set()),
        ("1read", {"gemini"}),
        ("-read", {"gemini"}),
        ("read file", set(PROTOCOLS)),
        ("read/file", set(PROTOCOLS)),
        ("", set(PROTOCOLS)),
        ("lecture_été", set(PROTOCOLS)),
        ("ns:read", {"openai", "openai-responses", "anthropic"}),
    ],
)
def test_name_rules_per_provider(name, fatal_for):
    assert fatal_protocols(check([tool(name)])) == fatal_for


def test_a_colon_only_warns_for_gemini():
    problems = check([tool("ns:read")], protocols=["gemini"])
    assert [(p.rule, p.fatal) for p in problems] == [("name.pattern", False)]


def test_duplicate_call_names_are_fatal_everywhere():
    problems = check([tool("same"), tool("same")])
    assert {p.protocol for p in problems if p.rule == "name.duplicate" and p.fatal} == set(PROTOCOLS)


def test_exclusive_minimum_is_fatal_for_gemini_openapi_and_render_repairs_it():
    schema = {"type": "object", "properties": {"n": {"type": "integer", "exclusiveMinimum": 0}}}
    problems = check([tool("count", schema)], schema="openapi")
    [problem] = [p for p in problems if p.protocol == "gemini"]
    assert (problem.rule, problem.fatal, problem.repaired) == ("schema.keyword_unsupported", True, True)
    assert problem.path == "/properties/n/exclusiveMinimum"
    assert "exclusiveMinimum" in problem.message
    assert fatal_protocols(problems) == {"gemini"}


def test_exclusive_minimum_only_warns_for_gemini_json_schema_whose_docs_do_not_list_it():
    schema = {"type": "object", "properties": {"n": {"type": "integer", "exclusiveMinimum": 0}}}
    [problem] = check([tool("count", schema)], protocols=["gemini"])
    assert (problem.rule, problem.fatal, problem.repaired, problem.path) == (
        "schema.keyword_unlisted", False, False, "/properties/n/exclusiveMinimum")


def test_gemini_json_schema_lists_what_may_go_wrong_with_a_pydantic_mcp_schema():
    problems = check([ISSUE_CREATE], protocols=["gemini"])
    assert {(p.rule, p.path, p.fatal, p.repaired) for p in problems} == {
        ("schema.keyword_unlisted", "/properties/priority/exclusiveMinimum", False, False),
        ("schema.title_nested", "/properties/title/title", False, False),
    }


def test_gemini_json_schema_repairs_a_const_and_names_definitions():
    schema = {"type": "object", "properties": {"a": {"const": "x"}, "b": {"$ref": "#/definitions/B"}},
              "definitions": {"B": {"type": "string"}}}
    found = {(p.rule, p.path, p.repaired) for p in check([tool("t", schema)], protocols=["gemini"])}
    assert found == {("schema.keyword_unlisted", "/properties/a/const", True),
                     ("schema.keyword_unlisted", "/definitions", False)}


def test_check_lists_every_gemini_openapi_problem_of_a_pydantic_mcp_schema():
    problems = [p for p in check([ISSUE_CREATE], schema="openapi") if p.protocol == "gemini"]
    found = {(p.rule, p.path, p.fatal) for p in problems}
    assert found == {
        ("schema.keyword_unsupported", "/$schema", True),
        ("schema.keyword_unsupported", "/$id", True),
        ("schema.keyword_unsupported", "/properties/priority/exclusiveMinimum", True),
        ("schema.keyword_unsupported", "/properties/labels/uniqueItems", True),
        ("schema.ref", "/properties/assignee/anyOf/0", True),
        ("schema.keyword_unsupported", "/additionalProperties", False),
        ("schema.keyword_unsupported", "/properties/metadata/additionalProperties", False),
        ("schema.empty_object", "/properties/metadata", True),
        ("schema.required_undeclared", "/required", True),
    }
    # A free-form object is sent as a string: the request passes, but calls that fill it fail
    # the tool's own schema, so that one is not counted as repaired.
    assert {p.rule for p in problems if not p.repaired} == {"schema.empty_object"}


@pytest.mark.parametrize(
    "schema, rule",
    [
        ({"type": "object", "properties": {"a": {"type": ["string", "null"]}}}, "schema.type_list"),
        ({"type": "object", "properties": {"a": {"type": "array"}}}, "schema.array_items_missing"),
        ({"type": "object", "properties": {"a": {"type": "string", "format": "email"}}}, "schema.format_unsupported"),
        ({"type": "object", "properties": {"a": {"type": "integer", "enum": [1, 2]}}}, "schema.enum_not_string"),
        ({"type": "object", "properties": {"a": {"type": "object"}}}, "schema.empty_object"),
        ({"type": "object", "properties": {"a": {"type": "string", "const": "x"}}}, "schema.keyword_unsupported"),
        (
            {"type": "object", "properties": {"a": {"oneOf": [{"type": "string"}, {"type": "integer"}]}}},
            "schema.keyword_unsupported",
        ),
    ],
)
def test_gemini_openapi_schema_rules(schema, rule):
    problems = check([tool("t", schema)], protocols=["gemini"], schema="openapi")
    assert rule in rules(problems, "gemini", fatal=True)
    assert rules(check([tool("t", schema)], protocols=["gemini"]), "gemini", fatal=True) == set()


def test_a_multi_branch_any_of_is_kept_for_gemini_openapi():
    schema = {"type": "object", "properties": {"a": {"anyOf": [{"type": "string"}, {"type": "integer"}]}}}
    assert check([tool("t", schema)], protocols=["gemini"], schema="openapi") == []
    [declarations] = render("gemini", [tool("t", schema)], schema="openapi")
    assert declarations["functionDeclarations"][0]["parameters"]["properties"]["a"] == schema["properties"]["a"]


def test_gemini_openapi_reports_undeclared_required_names_at_every_level():
    schema = {"type": "object", "properties": {"a": {"type": "object", "properties": {"b": {"type": "string"}},
                                                     "required": ["b", "c"]}}}
    [problem] = check([tool("t", schema)], protocols=["gemini"], schema="openapi")
    assert (problem.rule, problem.path, problem.repaired) == (
        "schema.required_undeclared", "/properties/a/required", True)


@pytest.mark.parametrize("schema", [{"type": "string"}, {"properties": {}}, {"anyOf": [{"type": "object"}]}, []])
def test_a_root_that_is_not_an_object_schema_is_fatal_everywhere(schema):
    problems = check([tool("t", schema)])
    assert fatal_protocols(problems) == set(PROTOCOLS)
    assert all(
        p.rule
        in (
            "schema.root_not_object",
            "schema.not_object",
            "schema.root_combinator",
            "schema.keyword_unsupported",
            "schema.union_dropped",
        )
        for p in problems
        if p.fatal
    )


def test_anthropic_refuses_a_combinator_at_the_root_and_bad_property_keys():
    schema = {"type": "object", "anyOf": [{"required": ["a"]}], "properties": {"a b": {"type": "string"}}}
    problems = check([tool("t", schema)], protocols=["anthropic"])
    assert rules(problems, "anthropic", fatal=True) == {"schema.root_combinator", "schema.property_name"}


def test_openai_counts_tools():
    problems = check([tool(f"t{i}") for i in range(129)], protocols=["openai", "openai-responses"])
    assert [(p.protocol, p.rule, p.fatal) for p in problems] == [
        ("openai", "list.too_many_tools", True),
        ("openai-responses", "list.too_many_tools", False),
    ]


def test_a_long_description_only_warns_for_openai():
    problems = check([tool("t", description="x" * 1025)])
    assert [(p.protocol, p.rule, p.fatal) for p in problems] == [
        ("openai", "description.length", False),
        ("openai-responses", "description.length", False),
    ]


# -- strict mode -------------------------------------------------------------------------------


def test_anthropic_strict_problems_say_what_the_rewrite_loses():
    schema = {
        "type": "object",
        "properties": {
            "n": {"type": "integer", "minimum": 1},
            "when": {"type": "string", "format": "date"},
            "tags": {"type": "object", "additionalProperties": {"type": "string"}},
            "any": {},
        },
        "required": ["n"],
    }
    assert check([tool("t", schema)], protocols=["anthropic"]) == []
    found = {(p.rule, p.path, p.repaired) for p in check([tool("t", schema)], strict=True, protocols=["anthropic"])}
    assert found == {
        ("strict.additional_properties", "", True),
        ("strict.keyword_unsupported", "/properties/n/minimum", True),
        ("strict.additional_properties", "/properties/tags", False),
        ("strict.type_missing", "/properties/any", False),
    }


def test_strict_mode_problems_are_listed_only_when_asked():
    schema = {"type": "object", "properties": {"a": {"type": "string"}}}
    assert check([tool("t", schema)], protocols=["openai"]) == []
    problems = check([tool("t", schema)], strict=True, protocols=["openai"])
    assert {(p.rule, p.fatal, p.repaired) for p in problems} == {
        ("strict.additional_properties", True, True),
        ("strict.required", True, True),
    }


@pytest.mark.parametrize(
    "schema, rule",
    [
        ({"type": "object", "properties": {}, "additionalProperties": True}, "strict.additional_properties"),
        (
            {
                "type": "object",
                "properties": {"m": {"type": "object", "additionalProperties": {"type": "string"}}},
                "required": ["m"],
                "additionalProperties": False,
            },
            "strict.additional_properties",
        ),
        ({"type": "object", "anyOf": [{"required": ["a"]}], "additionalProperties": False}, "strict.root"),
        ({"type": "object", "allOf": [{}], "additionalProperties": False}, "strict.keyword_unsupported"),
        ({"type": "object", "if": {}, "then": {}, "additionalProperties": False}, "strict.keyword_unsupported"),
    ],
)
def test_strict_mode_problems_render_cannot_repair(schema, rule):
    problems = check([tool("t", schema)], strict=True, protocols=["openai"])
    assert rule in {p.rule for p in problems if p.fatal and not p.repaired}


def test_strict_mode_size_limits():
    deep: dict = {"type": "string"}
    for _ in range(11):
        deep = {"type": "object", "properties": {"x": deep}, "required": ["x"], "additionalProperties": False}
    many_values = {
        "type": "object",
        "properties": {"e": {"type": "string", "enum": [f"v{i}" for i in range(1001)]}},
        "required": ["e"],
        "additionalProperties": False,
    }
    big_enum = {
        "type": "object",
        "properties": {"e": {"type": "string", "enum": [f"{i:060d}" for i in range(251)]}},
        "required": ["e"],
        "additionalProperties": False,
    }
    many_props = {
        "type": "object",
        "properties": {f"p{i}": {"type": "string"} for i in range(5001)},
        "required": [f"p{i}" for i in range(5001)],
        "additionalProperties": False,
    }
    found = {
        name: {p.rule for p in check([tool(name, s)], strict=True, protocols=["openai"])}
        for name, s in [
            ("deep", deep),
            ("many_values", many_values),
            ("big_enum", big_enum),
            ("many_props", many_props),
        ]
    }
    assert found == {
        "deep": {"strict.limit_depth"},
        "many_values": {"strict.limit_enum"},
        "big_enum": {"strict.limit_enum"},
        "many_props": {"strict.limit_properties"},
    }


# -- what render says it repairs, it repairs ---------------------------------------------------


MESSY = tool(
    "t",
    {
        "type": "object",
        "properties": {
            "a": {"type": ["string", "null"], "format": "email"},
            "b": {"type": "array", "uniqueItems": True},
            "c": {"type": "integer", "enum": [1, 2], "multipleOf": 2},
            "d": {"type": "object", "properties": {"e": {"type": "string"}}},
        },
        "required": ["a", "zzz"],
    },
)


@pytest.mark.parametrize("protocol, key", [("openai", "function"), ("openai-responses", None)])
def test_strict_render_leaves_no_repaired_problem(protocol, key):
    tools = [*TOOLS, MESSY]
    assert any(p.repaired for p in check(tools, strict=True, protocols=[protocol]))
    rendered = render(protocol, tools, strict=True)
    again = [tool(t.call_name, (r[key] if key else r)["parameters"]) for t, r in zip(tools, rendered, strict=True)]
    assert [p for p in check(again, strict=True, protocols=[protocol]) if p.repaired] == []


@pytest.mark.parametrize("schema, field", [("openapi", "parameters"), ("json-schema", "parametersJsonSchema")])
def test_gemini_render_leaves_no_repaired_problem(schema, field):
    consts = tool("c", {"type": "object", "properties": {"k": {"const": "x"}}})
    tools = [*TOOLS, MESSY, consts]
    assert any(p.repaired for p in check(tools, protocols=["gemini"], schema=schema))
    [rendered] = render("gemini", tools, schema=schema)
    again = [
        tool(d["name"], d.get(field, {"type": "object", "properties": {}}))
        for d in rendered["functionDeclarations"]
    ]
    assert [p for p in check(again, protocols=["gemini"], schema=schema) if p.repaired] == []
    if schema == "openapi":
        assert check(again, protocols=["gemini"], schema=schema) == []


def test_gemini_openapi_infers_an_untyped_root_with_properties():
    untyped = tool("t", {"properties": {"a": {"type": "string"}}})
    [problem] = check([untyped], protocols=["gemini"], schema="openapi")
    assert (problem.rule, problem.fatal, problem.repaired) == ("schema.root_not_object", True, True)
    rendered = render("gemini", [untyped], schema="openapi")
    assert rendered[0]["functionDeclarations"][0]["parameters"]["type"] == "object"
    [problem] = check([untyped], protocols=["gemini"])  # JSON Schema is sent as it is: not repaired
    assert (problem.rule, problem.repaired) == ("schema.root_not_object", False)
    [problem] = check([untyped], protocols=["openai"])
    assert not problem.repaired
