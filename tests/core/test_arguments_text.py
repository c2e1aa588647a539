"""ToolArguments keeps the JSON text an object came as, so a replay can send it back verbatim."""

from __future__ import annotations

import pytest

from toolbench.core.arguments import ToolArguments

SPACED = '{\n  "b": 1,\n  "a": [1.0, "\\u00e9"]\n}'


def test_an_object_sent_as_text_keeps_the_text_and_means_the_object() -> None:
    args = ToolArguments.decode(SPACED)
    assert args.value == {"b": 1, "a": [1.0, "é"]}
    assert args.sent_text == SPACED
    assert args.stored_text() == SPACED
    assert args == ToolArguments.decode({"b": 1, "a": [1.0, "é"]})  # equal by meaning
    assert hash(args) == hash(ToolArguments.decode({"b": 1, "a": [1.0, "é"]}))


@pytest.mark.parametrize("wire", [{"a": 1}, None, "", "  ", "null", "{broken", "[1]", 3])
def test_objects_empty_forms_and_invalid_arguments_keep_no_text(wire) -> None:
    assert ToolArguments.decode(wire).sent_text is None


def test_compact_text_needs_no_keeping() -> None:
    args = ToolArguments.decode('{"a":1}')
    assert args.sent_text == '{"a":1}' and args.stored_text() is None


def test_the_kept_text_is_read_back_only_when_it_is_that_object() -> None:
    args = ToolArguments.decode(SPACED)
    back = ToolArguments.from_json(args.to_json(), args.stored_text())
    assert back.sent_text == SPACED and back == args
    assert ToolArguments.from_json({"b": 2}, SPACED).sent_text is None  # another object's text
    assert ToolArguments.from_json({"b": 1}, "{broken").sent_text is None
    assert ToolArguments.from_json({"b": 1}, 7).sent_text is None
    assert ToolArguments.from_json("{broken", SPACED).raw == "{broken"
