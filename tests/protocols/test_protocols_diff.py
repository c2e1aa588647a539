"""golden() and diff(): a tool list kept as a golden file, and what changed since."""

from __future__ import annotations

import json

from protocol_tools import DICE_ROLL, FINISH, ISSUE_CREATE, READ_FILE, TOOLS, tool

from toolbench.protocols import diff, golden


def test_golden_is_json_and_idempotent():
    entries = golden(TOOLS)
    assert entries[1] == {
        "call_name": "dice_roll",
        "tool_id": "builtin:dice.roll",
        "description": "Roll dice, e.g. 3d6+4.",
        "input_schema": DICE_ROLL.descriptor.input_schema,
    }
    assert json.loads(json.dumps(entries)) == entries
    assert golden(entries) == entries
    assert "tool_id" not in golden([tool("no_id")])[0]


def test_no_change_is_empty():
    result = diff(TOOLS, golden(TOOLS))
    assert result.is_empty
    assert str(result) == "no changes"


def test_added_removed_and_renamed():
    renamed = tool("read", READ_FILE.descriptor.input_schema, READ_FILE.descriptor.description, READ_FILE.tool_id)
    new = tool("new_tool", tool_id="extension/x:new")
    result = diff(TOOLS, [renamed, DICE_ROLL, ISSUE_CREATE, new])
    assert result.added == ("new_tool",)
    assert result.removed == ("workspace_finish",)
    assert result.renamed == (("workspace_read_file", "read"),)
    assert not result.description_changed and not result.schema_changed and not result.order_changed
    assert str(result).splitlines() == [
        "+ added `new_tool`",
        "- removed `workspace_finish`",
        "~ renamed `workspace_read_file` -> `read`",
    ]


def test_description_and_schema_changes_name_the_paths():
    schema = json.loads(json.dumps(DICE_ROLL.descriptor.input_schema))
    schema["properties"]["formula"]["description"] = "NdS+M"
    schema["properties"]["times"] = {"type": "integer"}
    del schema["required"]
    changed = tool("dice_roll", schema, "Roll some dice.", DICE_ROLL.tool_id)
    result = diff(golden([DICE_ROLL]), [changed])
    assert result.description_changed == ("dice_roll",)
    assert result.schema_changed == (
        ("dice_roll", ("/properties/formula/description", "/properties/times", "/required")),
    )
    assert "~ schema of `dice_roll` changed at /properties/formula/description" in str(result)


def test_order_changes_are_reported():
    result = diff(TOOLS, [DICE_ROLL, READ_FILE, ISSUE_CREATE, FINISH])
    assert result.order_changed
    assert not result.is_empty
    assert "~ order changed: workspace_read_file, dice_roll" in str(result)


def test_tools_without_ids_match_by_call_name():
    a = tool("a", {"type": "object", "properties": {"x": {"type": "string"}}})
    b = tool("a", {"type": "object", "properties": {"x": {"type": "integer"}}})
    result = diff([a], [b])
    assert result.schema_changed == (("a", ("/properties/x/type",)),)
    assert not result.added and not result.removed


def test_same_call_name_different_ids_is_a_swap_not_a_change():
    before = tool("search", tool_id="mcp/one:search")
    after = tool("search", tool_id="mcp/two:search")
    result = diff([before], [after])
    assert (result.added, result.removed) == (("search",), ("search",))


def test_a_type_change_between_equal_looking_values_is_a_change():
    a = tool("a", {"type": "object", "properties": {"n": {"type": "integer", "maximum": 1}}})
    b = tool("a", {"type": "object", "properties": {"n": {"type": "integer", "maximum": True}}})
    assert diff([a], [b]).schema_changed == (("a", ("/properties/n/maximum",)),)
