from __future__ import annotations

import ipywidgets as w
import pytest

from toolbench.widgets._form import SchemaForm

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


def test_each_schema_type_gets_its_widget():
    form = SchemaForm(SCHEMA)
    kinds = {name: type(f.input) for name, f in form.fields.items()}
    assert kinds == {"city": w.Text, "unit": w.Dropdown, "days": w.IntText, "scale": w.FloatText,
                     "verbose": w.Checkbox, "filters": w.Textarea, "tags": w.Textarea}
    assert [label for label, _ in form.fields["unit"].input.options] == ["c", "f"]


def test_required_fields_are_always_sent_and_optional_ones_once_edited():
    form = SchemaForm(SCHEMA)
    assert form.fields["city"].send is None and form.fields["unit"].send is not None
    assert form.value() == {"city": "", "verbose": False}
    form.fields["days"].input.value = 5
    form.fields["tags"].input.value = '["a", "b"]'
    assert form.value() == {"city": "", "verbose": False, "days": 5, "tags": ["a", "b"]}


def test_enums_keep_their_json_values():
    form = SchemaForm({"type": "object", "properties": {"n": {"enum": [1, 2, None]}}, "required": ["n"]})
    form.fields["n"].input.value = 2
    assert form.value() == {"n": None}


def test_bad_json_in_a_nested_field_raises_a_coded_error():
    from toolbench import ToolbenchError

    form = SchemaForm(SCHEMA)
    form.fields["filters"].input.value = "{"
    with pytest.raises(ToolbenchError) as info:
        form.value()
    assert info.value.code == "tool.invalid_arguments"


def test_a_tool_without_arguments_gets_an_empty_form():
    form = SchemaForm({"type": "object", "properties": {}})
    assert form.value() == {}
    assert "no arguments" in form.widget.children[0].value
