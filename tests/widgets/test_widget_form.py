"""The schema form of the call console: one field per property, each kind of schema shown by its
own widget, and `value()` giving the arguments object (or a coded error naming the field)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import ipywidgets as w
import pytest

from tests.deadline import run_with_deadline
from toolbench import ToolbenchError, Workbench
from toolbench.core.schema_check import check_arguments
from toolbench.widgets._form import SchemaForm, example_arguments

SCHEMA = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "description": "where"},
        "unit": {"type": "string", "enum": ["c", "f"], "default": "c"},
        "days": {"type": "integer", "default": 3},
        "scale": {"type": "number"},
        "verbose": {"type": "boolean"},
        "filters": {"type": "object"},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["city", "verbose"],
}

# The reference MCP servers' schemas (`@modelcontextprotocol/server-filesystem`, `-memory`, `-everything`).
EDIT_FILE = {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object", "properties": {
    "path": {"type": "string"},
    "edits": {"type": "array", "items": {"type": "object", "properties": {
        "oldText": {"type": "string", "description": "Text to search for - must match exactly"},
        "newText": {"type": "string", "description": "Text to replace with"}}, "required": ["oldText", "newText"]}},
    "dryRun": {"default": False, "description": "Preview changes using git-style diff format", "type": "boolean"}},
    "required": ["path", "edits"]}
CREATE_ENTITIES = {"type": "object", "properties": {"entities": {"type": "array", "items": {
    "type": "object", "properties": {
        "name": {"type": "string", "description": "The name of the entity"},
        "entityType": {"type": "string", "description": "The type of the entity"},
        "observations": {"type": "array", "items": {"type": "string"}}},
    "required": ["name", "entityType", "observations"]}}}, "required": ["entities"]}
RESOURCE_LINKS = {"type": "object", "properties": {"count": {
    "default": 3, "description": "Number of resource links to return (1-10)", "type": "number", "minimum": 1,
    "maximum": 10}}}
MCP_SCHEMAS = [EDIT_FILE, CREATE_ENTITIES, RESOURCE_LINKS]


def _walk(widget: Any) -> Iterator[Any]:
    yield widget
    for child in getattr(widget, "children", ()):
        yield from _walk(child)


def _errors_shown(form: SchemaForm) -> list[str]:
    return [wd.value for wd in _walk(form.widget) if "tb-field-error" in getattr(wd, "_dom_classes", ()) and wd.value]


def _builtin_schemas() -> list[tuple[str, dict[str, Any]]]:
    with Workbench.demo() as bench:
        return [(str(d.id), d.input_schema) for d in bench.catalog()]


def _obj(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required or []}


# kinds ---------------------------------------------------------------------------------------
def test_each_schema_type_gets_its_widget():
    form = SchemaForm(SCHEMA)
    kinds = {name: type(f.input) for name, f in form.fields.items()}
    assert kinds == {"city": w.Text, "unit": w.Dropdown, "days": w.IntText, "scale": w.FloatText,
                     "verbose": w.Checkbox, "filters": w.Textarea, "tags": w.VBox}
    assert form.fields["tags"].kind == "array" and form.fields["filters"].kind == "json"
    assert [label for label, _ in form.fields["unit"].input.options] == ["c", "f"]
    assert "tb-form" in form.widget._dom_classes


def test_apply_patch_texts_are_multi_line_and_its_path_single_line():
    schema = dict(_builtin_schemas())["builtin:workspace.apply_patch"]
    fields = SchemaForm(schema).fields
    assert type(fields["old_string"].input) is w.Textarea and type(fields["new_string"].input) is w.Textarea
    assert type(fields["path"].input) is w.Text


@pytest.mark.parametrize(("name", "prop", "multi"), [
    ("content", {"type": "string"}, True),
    ("oldText", {"type": "string"}, True),  # camelCase: the last word counts
    ("commit_message", {"type": "string"}, True),
    ("notes", {"type": "string", "maxLength": 201}, True),
    ("notes", {"type": "string", "maxLength": 200}, False),
    ("page", {"type": "string", "contentMediaType": "text/html"}, True),
    ("page", {"type": "string", "format": "markdown"}, True),
    ("link", {"type": "string", "format": "uri"}, False),
    ("path", {"type": "string"}, False),
])
def test_the_multi_line_rule(name, prop, multi):
    field = SchemaForm(_obj({name: prop})).fields[name]
    assert (type(field.input) is w.Textarea) is multi


def test_what_the_form_cannot_show_is_a_json_box_checked_on_value():
    form = SchemaForm(_obj({
        "either": {"anyOf": [_obj({"a": {"type": "string"}}, ["a"]), _obj({"b": {"type": "integer"}})]},
        "map": {"type": "object", "additionalProperties": {"type": "integer"}},
        "anything": {},
        "pair": {"type": ["string", "integer"]},
    }, ["either", "map", "anything", "pair"]))
    assert {f.kind for f in form.fields.values()} == {"json"}
    assert all(type(f.input) is w.Textarea for f in form.fields.values())
    assert form.value() == {"either": {"a": ""}, "map": {}, "anything": "", "pair": ""}
    form.fields["map"].input.value = '{"x": 1}'
    assert form.value()["map"] == {"x": 1}


# sending -------------------------------------------------------------------------------------
def test_required_fields_are_always_sent_and_optional_ones_once_edited():
    form = SchemaForm(SCHEMA)
    assert form.fields["city"].send is None and form.fields["unit"].send is not None
    assert form.value() == {"city": "", "verbose": False}
    form.fields["days"].input.value = 5
    form.fields["tags"].add_item()
    form.fields["tags"].items[0].input.value = "a"
    assert form.fields["days"].send.value and form.fields["tags"].send.value
    assert form.value() == {"city": "", "verbose": False, "days": 5, "tags": ["a"]}
    form.fields["days"].send.value = False
    assert "days" not in form.value()


def test_required_marks_and_defaults_fill_the_fields():
    form = SchemaForm(SCHEMA)
    assert "*" in form.fields["city"].row.children[0].children[0].value
    assert "*" not in form.fields["days"].row.children[0].children[0].value
    assert form.fields["days"].input.value == 3 and form.fields["unit"].input.value == 0


def test_editing_a_nested_child_ticks_the_parents_send():
    schema = _obj({"task": _obj({"objective": {"type": "string"}, "title": {"type": "string"}}, ["objective"]),
                   "todos": {"type": "array", "items": _obj({"content": {"type": "string"}}, ["content"])}})
    form = SchemaForm(schema)
    assert form.value() == {}
    task = form.fields["task"]
    task.form.fields["title"].input.value = "short"
    assert task.send.value and task.form.fields["title"].send.value
    assert form.value() == {"task": {"objective": "", "title": "short"}}
    todos = form.fields["todos"]
    todos.add_item(edit=False)
    assert not todos.send.value
    todos.items[0].form.fields["content"].input.value = "write tests"
    assert todos.send.value
    assert form.value()["todos"] == [{"content": "write tests"}]


# nested objects and arrays -------------------------------------------------------------------
def test_a_nested_object_round_trips_to_the_right_dict():
    schema = _obj({"agentId": {"type": "string"},
                   "handoff": _obj({"objective": {"type": "string"}, "retries": {"type": "integer"},
                                    "inner": _obj({"flag": {"type": "boolean"}}, ["flag"])}, ["objective", "inner"])},
                  ["agentId", "handoff"])
    form = SchemaForm(schema)
    handoff = form.fields["handoff"]
    assert handoff.kind == "object" and "tb-form" in handoff.form.widget._dom_classes
    assert "*" in handoff.form.fields["objective"].row.children[0].children[0].value  # its own required marks
    form.fields["agentId"].input.value = "coder"
    handoff.form.fields["objective"].input.value = "fix it"
    handoff.form.fields["retries"].input.value = 2
    handoff.form.fields["inner"].form.fields["flag"].input.value = True
    assert form.value() == {"agentId": "coder",
                            "handoff": {"objective": "fix it", "retries": 2, "inner": {"flag": True}}}


def test_add_and_remove_buttons_change_the_array():
    form = SchemaForm(EDIT_FILE)
    edits = form.fields["edits"]
    assert edits.items == [] and form.value() == {"path": "", "edits": []}
    edits.add_button.click()
    edits.add_button.click()
    edits.items[0].form.fields["oldText"].input.value = "a"
    edits.items[1].form.fields["oldText"].input.value = "b"
    assert form.value()["edits"] == [{"oldText": "a", "newText": ""}, {"oldText": "b", "newText": ""}]
    edits.remove_buttons[0].click()
    assert form.value()["edits"] == [{"oldText": "b", "newText": ""}]
    assert len(edits.input.children) == 1


def test_min_items_are_pre_filled_and_max_items_stop_the_add_button():
    schema = dict(_builtin_schemas())["builtin:chat.read_messages"]
    form = SchemaForm(schema)
    messages = form.fields["messages"]
    assert len(messages.items) == 1 and form.value() == {"messages": [{"index": 0}]}
    for _ in range(19):
        messages.add_button.click()
    assert messages.add_button.disabled and len(form.value()["messages"]) == 20


def test_an_object_default_fills_its_optional_children_and_sends_them():
    schema = _obj({"opts": {**_obj({"a": {"type": "integer"}, "b": {"type": "string"}}), "default": {"b": "x"}}})
    form = SchemaForm(schema)
    opts = form.fields["opts"]
    assert opts.form.fields["b"].input.value == "x" and opts.form.fields["b"].send.value
    opts.send.value = True
    assert form.value() == {"opts": {"b": "x"}}


# values ----------------------------------------------------------------------------------------
def test_enums_keep_their_json_values():
    form = SchemaForm({"type": "object", "properties": {"n": {"enum": [1, 2, None]}}, "required": ["n"]})
    assert [label for label, _ in form.fields["n"].input.options] == ["1", "2", "null"]
    assert form.value() == {"n": 1}
    form.fields["n"].input.value = 1
    assert form.value() == {"n": 2} and type(form.value()["n"]) is int
    form.fields["n"].input.value = 2
    assert form.value() == {"n": None}


def test_a_const_is_shown_read_only_and_always_sent():
    form = SchemaForm(_obj({"kind": {"const": "search"}, "version": {"type": "integer", "const": 2}}))
    assert type(form.fields["kind"].input) is w.HTML and form.fields["kind"].send is None
    assert form.value() == {"kind": "search", "version": 2}


@pytest.mark.parametrize("prop", [
    {"anyOf": [{"type": "integer", "minimum": 0}, {"type": "null"}]},
    {"type": ["integer", "null"], "minimum": 0},
    {"oneOf": [{"type": "null"}, {"$ref": "#/$defs/count"}]},
])
def test_a_nullable_field_gets_a_null_box_that_sends_none(prop):
    schema = {**_obj({"left": prop, "must": prop}, ["must"]), "$defs": {"count": {"type": "integer", "minimum": 0}}}
    form = SchemaForm(schema)
    left, must = form.fields["left"], form.fields["must"]
    assert type(left.input) is w.IntText and left.null is not None
    assert not must.null.value and form.value() == {"must": 0}  # a required field starts non-null
    left.null.value = True
    assert left.send.value and form.value() == {"must": 0, "left": None}
    left.input.value = 4  # editing the value clears null
    assert not left.null.value and form.value()["left"] == 4


def test_an_optional_nullable_field_with_a_null_default_starts_null():
    form = SchemaForm({"type": "object", "properties": {"maybe": {"anyOf": [{"type": "integer"}, {"type": "null"}],
                                                                  "default": None}}})
    maybe = form.fields["maybe"]
    assert maybe.null.value and not maybe.send.value and form.value() == {}
    maybe.send.value = True
    assert form.value() == {"maybe": None}


def test_an_out_of_range_number_is_an_error_next_to_its_field():
    schema = dict(_builtin_schemas())["builtin:workspace.list_files"]
    form = SchemaForm(schema)
    depth = form.fields["depth"]
    assert "≥ 1 and ≤ 4" in depth.row.children[0].children[0].value  # the bounds as a hint
    depth.input.value = 9
    with pytest.raises(ToolbenchError) as info:
        form.value()
    assert info.value.code == "tool.invalid_arguments"
    assert "`depth` is 9" in info.value.message and "≤ 4" in info.value.message
    assert "tb-field-error" in depth.error._dom_classes and "`depth` is 9" in depth.error.value
    depth.input.value = 4
    assert form.value() == {"depth": 4} and depth.error.value == ""


def test_bad_json_in_a_nested_field_raises_a_coded_error():
    form = SchemaForm(SCHEMA)
    form.fields["filters"].input.value = "{"
    with pytest.raises(ToolbenchError) as info:
        form.value()
    assert info.value.code == "tool.invalid_arguments"
    assert "`filters` is not valid JSON" in info.value.message


def test_bad_json_deep_inside_names_its_path_and_shows_next_to_the_field():
    schema = _obj({"edits": {"type": "array", "items": _obj(
        {"old_string": {"type": "string"}, "meta": {"type": "object"}}, ["old_string", "meta"])}}, ["edits"])
    form = SchemaForm(schema)
    edits = form.fields["edits"]
    edits.add_item()
    edits.add_item()
    meta = edits.items[1].form.fields["meta"]
    meta.input.value = "{not json"
    with pytest.raises(ToolbenchError) as info:
        form.value()
    assert info.value.code == "tool.invalid_arguments"
    assert "`edits[1].meta` is not valid JSON" in info.value.message
    assert _errors_shown(form) == [meta.error.value] and "edits[1].meta" in meta.error.value


def test_a_tool_without_arguments_gets_an_empty_form():
    form = SchemaForm({"type": "object", "properties": {}})
    assert form.value() == {}
    assert "no arguments" in form.widget.children[0].value
    assert SchemaForm(None).value() == {}


# example_arguments -----------------------------------------------------------------------------
def test_example_arguments_takes_required_properties_in_the_documented_order():
    schema = _obj({
        "d": {"type": "integer", "default": 7, "enum": [1, 7]},
        "c": {"const": "x", "enum": ["y"]},
        "e": {"type": "string", "enum": ["first", "second"], "examples": ["z"]},
        "x": {"type": "string", "examples": ["an example"]},
        "s": {"type": "string"}, "s3": {"type": "string", "minLength": 3},
        "i": {"type": "integer", "minimum": 5}, "n": {"type": "number"}, "neg": {"type": "integer", "maximum": -2},
        "b": {"type": "boolean"}, "a": {"type": "array", "items": {"type": "string"}},
        "a2": {"type": "array", "minItems": 2, "items": {"type": "integer", "minimum": 1}},
        "o": _obj({"inner": {"type": "string"}, "skip": {"type": "string"}}, ["inner"]),
        "u": {"anyOf": [{"type": "null"}, {"type": "integer"}, {"type": "string"}]},
        "optional": {"type": "string"},
    }, ["d", "c", "e", "x", "s", "s3", "i", "n", "neg", "b", "a", "a2", "o", "u"])
    assert example_arguments(schema) == {
        "d": 7, "c": "x", "e": "first", "x": "an example", "s": "", "s3": "xxx", "i": 5, "n": 0, "neg": -2,
        "b": False, "a": [], "a2": [1, 1], "o": {"inner": ""}, "u": 0}
    assert example_arguments(None) == {} and example_arguments({"type": "string"}) == {}  # type: ignore[arg-type]


def test_example_arguments_never_gives_null_for_a_required_field():
    schema = _obj({"a": {"type": ["string", "null"], "default": None}, "b": {"enum": [None, "on"]},
                   "c": {"anyOf": [{"type": "null"}, {"type": "boolean"}]}, "only": {"type": "null"}},
                  ["a", "b", "c", "only"])
    assert example_arguments(schema) == {"a": "", "b": "on", "c": False, "only": None}


def test_refs_are_resolved_and_cycles_end():
    # In a child with a deadline: a cycle that did not end would hang the suite (no wall-clock
    # assertion: the time is the benchmarks' business).
    found = run_with_deadline("""
from toolbench.widgets._form import SchemaForm, example_arguments
def obj(properties, required):
    return {"type": "object", "properties": properties, "required": required}
tree = {"$defs": {"Node": obj({"child": {"$ref": "#/$defs/Node"}, "name": {"type": "string"}}, ["child", "name"])},
        **obj({"root": {"$ref": "#/$defs/Node"}, "old": {"$ref": "#/definitions/Old"},
               "a": {"$ref": "#/$defs/A"}, "self": {"$ref": "#"}, "far": {"$ref": "other.json#/x"}},
              ["root", "old", "a", "self", "far"]),
        "definitions": {"Old": {"type": "integer", "minimum": 2}}}
tree["$defs"].update({"A": {"$ref": "#/$defs/B"}, "B": {"$ref": "#/$defs/A"}})
example = example_arguments(tree)
form = SchemaForm(tree)
report({"example": example, "same": form.value() == example,
        "kinds": [form.fields["root"].kind, form.fields["old"].kind]})
""", deadline=60)
    example = found["example"]
    assert example["old"] == 2 and example["a"] == "" and example["far"] == ""
    depth, node = 0, example["root"]
    while node:
        node, depth = node.get("child"), depth + 1
    assert 3 < depth < 20  # cut off, not infinite
    assert found["same"] and found["kinds"] == ["object", "integer"]


def test_every_builtin_form_builds_and_its_untouched_value_is_the_valid_example():
    schemas = _builtin_schemas()
    assert len(schemas) > 20
    for name, schema in [*schemas, *(("mcp", s) for s in MCP_SCHEMAS)]:
        form = SchemaForm(schema)
        value = form.value()
        assert value == example_arguments(schema), name
        check_arguments(schema, value)


def test_todo_write_is_a_list_of_sub_forms_and_checks_once_filled():
    schema = dict(_builtin_schemas())["builtin:todo.write"]
    form = SchemaForm(schema)
    todos = form.fields["todos"]
    item = todos.add_item()
    assert type(item.form.fields["status"].input) is w.Dropdown
    item.form.fields["content"].input.value = "ship it"
    item.form.fields["activeForm"].input.value = "shipping it"
    item.form.fields["status"].input.value = 1
    value = form.value()
    assert value == {"todos": [{"content": "ship it", "status": "in_progress", "activeForm": "shipping it"}]}
    check_arguments(schema, value)


# presentation and bounds ------------------------------------------------------------------------
def test_descriptions_are_grey_wrapped_text_and_colours_come_from_the_theme():
    form = SchemaForm(EDIT_FILE)
    form.fields["edits"].add_item()
    label = form.fields["dryRun"].row.children[0].children[0]
    assert "Preview changes" in label.value and "var(--jp-ui-font-color2)" in label.value
    assert "overflow-wrap:anywhere" in label.value and "word-break:normal" in label.value
    assert label.layout.min_width == "140px"
    assert "var(--jp-border-color2)" in form.fields["edits"].input.layout.border_left
    html = " ".join(str(getattr(wd, "value", "")) for wd in _walk(form.widget) if isinstance(wd, w.HTML))
    assert "#" not in html  # no fixed colours
    for f in form.fields.values():
        if not isinstance(f.input, w.Box):
            assert f.input.layout.min_height not in (None, "0", "0px")


def test_five_hundred_properties_show_a_page_at_a_time():
    schema = _obj({f"p{i}": {"type": ["string", "integer", "boolean", "number"][i % 4], "description": "d" * 60}
                   for i in range(500)}, ["p0", "p499"])
    form = SchemaForm(schema)
    assert len(form.fields) == 500
    more = form.widget.children[-1]
    assert isinstance(more, w.Button) and len(form.widget.children) == 41
    form.fields["p498"].input.value = True  # a field not shown yet still works
    assert form.value() == {"p0": "", "p499": 0.0, "p498": True}
    more.click()
    assert len(form.widget.children) == 81


def test_deep_nesting_ends_in_a_json_box():
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(30):
        schema = _obj({"n": schema, "x": {"type": "integer"}}, ["n"])
    form = SchemaForm(schema)
    value = form.value()
    assert value == example_arguments(schema)
    field, depth = form.fields["n"], 0
    while field.kind == "object":
        field, depth = field.form.fields["n"], depth + 1
    assert field.kind == "json" and 3 < depth < 10


def test_lists_of_lists_stay_bounded():
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(6):
        schema = {"type": "array", "minItems": 5, "items": schema}
    huge = {"type": "array", "minItems": 5000, "items": {"type": "string"}}
    schema = _obj({"a": schema, "huge": huge}, ["a", "huge"])
    form = SchemaForm(schema)
    value = form.value()
    assert value == example_arguments(schema)
    assert form.fields["huge"].kind == "json"
