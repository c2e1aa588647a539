"""ToolArguments: decoding the wire, quoting, persistence and replay (reference §1, tables 9.1, 9.2)."""

from __future__ import annotations

import json

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from toolbench import MISSING, ToolArguments, ToolError

# JSON values as a provider's body could hold them. Text may hold a lone surrogate, as the
# JSON escape `"\ud83d"` (half an emoji) decodes to; never a surrogate pair split in two,
# which no JSON text decodes to.
_plain_text = st.text(max_size=12)
json_text = _plain_text | st.builds(lambda a, b: f"{a}\ud83d{b}", _plain_text, _plain_text)
json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | json_text
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(json_text, inner, max_size=5),
    max_leaves=12,
)
json_objects = st.dictionaries(json_text, json_values, max_size=3)


def nested_list(depth: int) -> list:
    root: list = []
    current = root
    for _ in range(depth):
        child: list = []
        current.append(child)
        current = child
    return root


def nested_dict(depth: int) -> dict:
    root: dict = {}
    current = root
    for _ in range(depth):
        current["a"] = {}
        current = current["a"]
    return root


# --- table 9.1 ---------------------------------------------------------------------------


@pytest.mark.parametrize("wire", [MISSING, None, "null", "  ", "\n\t", "\u3000", "{}", " null ", {}])
def test_empty_forms_decode_to_the_empty_object(wire):
    args = ToolArguments.decode(wire)
    assert args.is_valid and args.value == {}
    assert args == ToolArguments.decode()  # field absent


def test_object_and_its_string_encoding_decode_equal():
    assert ToolArguments.decode('{"depth":2}') == ToolArguments.decode({"depth": 2})
    assert ToolArguments.decode('{"depth":2}').value == {"depth": 2}


def test_whitespace_around_json_text_is_accepted():
    assert ToolArguments.decode(' {"a":1}\n').value == {"a": 1}


@pytest.mark.parametrize(
    ("wire", "raw"),
    [
        ([1, 2], "[1,2]"),
        ("[1,2]", "[1,2]"),
        ('{"path":', '{"path":'),
        (3, "3"),
        (True, "true"),
        ("7", "7"),
        ('"{}"', '"{}"'),  # double-encoded: one layer only is removed
        ("not json", "not json"),
        ("  [1, 2]  ", "  [1, 2]  "),  # kept verbatim, whitespace too
    ],
)
def test_non_objects_are_invalid_and_keep_their_raw_text(wire, raw):
    args = ToolArguments.decode(wire)
    assert not args.is_valid
    assert args.raw == raw


# --- table 9.2, quoting -------------------------------------------------------------------


def test_invalid_500_chars_round_trip_replay_and_quote():
    raw = "x" * 500
    args = ToolArguments.decode(raw)
    assert args.to_json() == raw
    assert ToolArguments.from_json(json.loads(json.dumps(args.to_json()))) == args
    assert args.replay_text() == "{}"
    assert args.replay_object() == {}
    with pytest.raises(ToolError) as info:
        args.as_dict()
    assert info.value.code == "tool.invalid_arguments"
    assert "x" * 200 + "…" in info.value.message
    assert "x" * 201 not in info.value.message
    assert len(info.value.message.encode("utf-8")) < 400


@pytest.mark.parametrize("length", [1, 199, 200])
def test_raw_text_up_to_200_chars_is_quoted_whole_without_ellipsis(length):
    raw = "[" + "y" * (length - 1)
    with pytest.raises(ToolError) as info:
        ToolArguments.decode(raw).as_dict()
    assert f"`{raw}`" in info.value.message
    assert "…" not in info.value.message


def test_quote_counts_characters_not_bytes():
    raw = "界" * 201
    with pytest.raises(ToolError) as info:
        ToolArguments.decode(raw).as_dict()
    assert f"`{'界' * 200}…`" in info.value.message


def test_as_dict_returns_the_object_when_valid():
    assert ToolArguments.decode('{"a":[1,{"b":null}]}').as_dict() == {"a": [1, {"b": None}]}


# --- persistence and replay ---------------------------------------------------------------


def test_valid_arguments_persist_as_the_object_and_replay_compact():
    args = ToolArguments.decode('{ "path" : "work/é.md", "n": 2 }')
    assert args.to_json() == {"path": "work/é.md", "n": 2}
    assert args.replay_text() == '{"path":"work/é.md","n":2}'
    assert args.replay_object() == {"path": "work/é.md", "n": 2}
    assert ToolArguments.from_json(args.to_json()) == args


def test_empty_arguments_replay_as_empty_object():
    assert ToolArguments.decode().replay_text() == "{}"
    assert ToolArguments.decode().to_json() == {}


def test_arguments_are_frozen_and_hashable():
    args = ToolArguments.decode({"a": 1})
    with pytest.raises(AttributeError):
        args.foo = 1  # type: ignore[attr-defined]
    assert len({args, ToolArguments.decode('{"a":1}'), ToolArguments.decode("[1]")}) == 2


def test_a_dict_is_copied_as_its_json_would_be():
    wire = {"items": ["a"], "n": 1, "half": "\ud83d"}
    args = ToolArguments.decode(wire)
    wire["items"].append("changed after the call")
    assert args.value == {"items": ["a"], "n": 1, "half": "\ud83d"}
    assert ToolArguments.decode({1: "x"}).value == {"1": "x"}  # JSON keys are strings


@pytest.mark.parametrize("wire", [{"s": {1, 2}}, {"b": b"bytes"}, {"o": object()}])
def test_a_dict_json_cannot_hold_is_invalid_and_kept_readable(wire):
    args = ToolArguments.decode(wire)
    assert not args.is_valid and args.raw == repr(wire)
    with pytest.raises(ToolError) as err:
        args.as_dict()
    assert err.value.code == "tool.invalid_arguments"


def test_missing_is_a_falsy_singleton():
    assert not MISSING
    assert repr(MISSING) == "MISSING"
    assert type(MISSING)() is MISSING


# --- huge and deeply nested inputs --------------------------------------------------------


@pytest.mark.parametrize(
    "wire",
    [
        "[" * 100_000,
        "[" * 100_000 + "]" * 100_000,
        '{"a":' * 50_000 + "1" + "}" * 50_000,
        "x" * 5_000_000,
        nested_list(100_000),
        [nested_list(50_000), nested_dict(50_000)],
    ],
    ids=["open-brackets", "deep-array-text", "deep-object-text", "5M-chars", "deep-list", "deep-mixed-list"],
)
def test_decode_never_raises_on_huge_or_deeply_nested_invalid_input(wire):
    args = ToolArguments.decode(wire)
    assert not args.is_valid
    assert isinstance(args.raw, str)
    assert ToolArguments.decode(args.to_json()) == args


def test_a_nested_dict_decodes_as_its_json_text_does():
    assert ToolArguments.decode(nested_dict(100)) == ToolArguments.decode(json.dumps(nested_dict(100)))
    # Deeper than JSON can carry: invalid, as the same text would be, and never a crash.
    args = ToolArguments.decode(nested_dict(100_000))
    assert not args.is_valid and isinstance(args.raw, str)


def test_decode_of_a_huge_object_text():
    wire = json.dumps({f"k{i}": "v" * 100 for i in range(20_000)})
    assert len(ToolArguments.decode(wire).value) == 20_000


# --- properties ---------------------------------------------------------------------------


@given(wire=json_values)
@example(wire=float("1e308"))
@example(wire="\ud83d")
def test_decode_never_raises_for_any_json_value(wire):
    args = ToolArguments.decode(wire)
    assert args.is_valid == (isinstance(wire, dict) or wire is None or _is_empty_text_form(wire))


@given(text=st.text() | json_text)
@example(text='{"a":"\\ud800"}')
@example(text="\ufeff{}")
def test_decode_never_raises_for_any_text(text):
    args = ToolArguments.decode(text)
    if not args.is_valid:
        assert args.raw == text  # verbatim


@settings(max_examples=50)
@given(obj=json_objects)
def test_one_decode_of_the_string_encoding_equals_the_object_form(obj):
    assert ToolArguments.decode(json.dumps(obj)) == ToolArguments.decode(obj)
    assert ToolArguments.decode(json.dumps(obj, ensure_ascii=False)) == ToolArguments.decode(obj)


@settings(max_examples=60)
@given(wire=json_values | json_text)
def test_decode_is_idempotent_on_its_persisted_form(wire):
    args = ToolArguments.decode(wire)
    assert ToolArguments.decode(args.to_json()) == args
    assert ToolArguments.from_json(args.to_json()) == args
    stored = json.loads(json.dumps(args.to_json()))  # through a JSON file
    assert ToolArguments.from_json(stored) == args


@settings(max_examples=40)
@given(wire=json_values | json_text)
def test_replay_forms_are_json_objects(wire):
    args = ToolArguments.decode(wire)
    assert isinstance(json.loads(args.replay_text()), dict)
    assert json.loads(args.replay_text()) == args.replay_object()


def _is_empty_text_form(wire: object) -> bool:
    if not isinstance(wire, str):
        return False
    if not wire.strip():
        return True
    try:
        return isinstance(json.loads(wire), dict | None)
    except ValueError:
        return False
