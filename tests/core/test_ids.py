"""ToolId: parsing, identity, and the catalog's duplicate check (reference §2.1, table 9.3)."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from toolbench import ToolbenchError, ToolDescriptor, ToolId
from toolbench.core.descriptors import check_unique

ID_CODES = {"tool.id_invalid", "tool.provider_id_empty", "tool.provider_id_invalid", "tool.native_name_empty"}


@pytest.mark.parametrize(
    ("text", "provider", "name", "kind"),
    [
        ("builtin:workspace.read_file", "builtin", "workspace.read_file", "builtin"),
        ("mcp/3f2a-uuid:issue.create", "mcp/3f2a-uuid", "issue.create", "mcp"),
        ("extension/contract:inspect", "extension/contract", "inspect", "extension"),
        ("mcp/reg-1:ns:tool.x", "mcp/reg-1", "ns:tool.x", "mcp"),  # split at the first `:` only
        ("builtin:a b", "builtin", "a b", "builtin"),
        ("remote/api:search", "remote/api", "search", "remote"),  # a tool source's own kind
    ],
)
def test_parse_gives_provider_name_and_kind_and_str_round_trips(text, provider, name, kind):
    tool_id = ToolId.parse(text)
    assert (tool_id.provider, tool_id.name, tool_id.kind) == (provider, name, kind)
    assert str(tool_id) == text
    assert ToolId.parse(str(tool_id)) == tool_id


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("", "tool.id_invalid"),
        ("builtin", "tool.id_invalid"),
        (":tool", "tool.provider_id_empty"),
        ("builtin:", "tool.native_name_empty"),
        ("mcp:registration-1", "tool.provider_id_invalid"),
        ("mcp/:tool", "tool.provider_id_invalid"),
        ("extension/:tool", "tool.provider_id_invalid"),
        ("plugin:tool", "tool.provider_id_invalid"),
        ("Remote/api:tool", "tool.provider_id_invalid"),
        ("builtin/x:tool", "tool.provider_id_invalid"),
        ("/x:tool", "tool.provider_id_invalid"),
        ("remote/:tool", "tool.provider_id_invalid"),
    ],
)
def test_parse_rejects_bad_text_with_its_code(text, code):
    with pytest.raises(ToolbenchError) as info:
        ToolId.parse(text)
    assert info.value.code == code


def test_parse_rejects_non_text():
    with pytest.raises(ToolbenchError) as info:
        ToolId.parse(42)  # type: ignore[arg-type]
    assert info.value.code in ID_CODES


def test_tool_ids_are_hashable_comparable_and_frozen():
    a, b = ToolId.parse("builtin:a"), ToolId.parse("builtin:b")
    assert a == ToolId.parse("builtin:a") and hash(a) == hash(ToolId.parse("builtin:a"))
    assert a < b and sorted([b, a]) == [a, b]
    assert len({a, b, ToolId.parse("builtin:a")}) == 2
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.name = "c"  # type: ignore[misc]


def test_same_native_name_under_different_providers_is_a_different_tool():
    assert ToolId.parse("builtin:search") != ToolId.parse("mcp/server:search")


def test_extension_constructor_requires_non_blank_parts():
    assert str(ToolId.extension("contract", "inspect")) == "extension/contract:inspect"
    for ext, name in [("", "x"), ("  ", "x"), ("ext", ""), ("ext", " \t")]:
        with pytest.raises(ToolbenchError) as info:
            ToolId.extension(ext, name)
        assert info.value.code == "extension.tool_identity_required"


def test_source_id_names_the_registration_or_extension():
    assert ToolId.parse("mcp/reg-1:x").source_id == "reg-1"
    assert ToolId.parse("extension/contract:x").source_id == "contract"
    assert ToolId.parse("builtin:x").source_id is None


def test_tool_id_in_a_pydantic_model_reads_text_and_writes_text():
    class Holder(BaseModel):
        tool: ToolId

    held = Holder.model_validate({"tool": "extension/e:n"})
    assert held.tool == ToolId.extension("e", "n")
    assert held.model_dump(mode="json") == {"tool": "extension/e:n"}
    with pytest.raises(ValueError, match=r"tool\.id_invalid"):
        Holder.model_validate({"tool": "no-separator"})


_provider = st.one_of(
    st.just("builtin"),
    st.text(st.characters(exclude_characters=":"), min_size=1).map(lambda s: f"mcp/{s}"),
    st.text(st.characters(exclude_characters=":"), min_size=1).map(lambda s: f"extension/{s}"),
    st.text(st.characters(exclude_characters=":"), min_size=1).map(lambda s: f"remote-api/{s}"),
)


@given(provider=_provider, name=st.text(min_size=1))
def test_any_valid_id_round_trips_through_its_text(provider, name):
    tool_id = ToolId(provider, name)
    assert ToolId.parse(str(tool_id)) == tool_id


@given(text=st.text())
def test_parse_raises_only_toolbench_errors_with_identity_codes(text):
    try:
        tool_id = ToolId.parse(text)
    except ToolbenchError as exc:
        assert exc.code in ID_CODES
    else:
        assert str(tool_id) == text


def test_catalog_refuses_two_descriptors_with_one_id():
    finish = ToolDescriptor(id=ToolId.parse("builtin:workspace.finish"))
    with pytest.raises(ToolbenchError) as info:
        check_unique([finish, ToolDescriptor(id=ToolId.parse("builtin:dice.roll")), finish])
    assert info.value.code == "tool.catalog_duplicate_id"
    # Table 9.3 pins this text.
    assert str(info.value) == "tool.catalog_duplicate_id: duplicate tool id `builtin:workspace.finish`"
