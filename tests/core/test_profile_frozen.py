"""Profiles are frozen values (issue 16): sections cannot be changed in place, lists are tuples,
maps are read-only, every section takes camelCase and snake_case keys and refuses unknown ones,
and `edit` (or `model_copy(update=...)`) makes a validated, changed copy."""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolbench import Profile, ToolbenchError

RICH = Profile.default().edit(
    allow=["builtin:dice.roll", "extension/e:x"], deny=["extension/e:x"],
    max_calls_per_tool={"builtin:dice.roll": 2},
    tool_descriptions={"builtin:dice.roll": {"description": "Roll.", "properties": {"formula": "F"}}},
)

# One field of every section, with a camelCase key and a valid value other than the default.
SECTION_FIELDS = [
    ("tools", "max_calls_per_run", "maxCallsPerRun", 5),
    ("workspace", "max_read_chars", "maxReadChars", 5_000),
    ("shell", "timeout_seconds", "timeoutSeconds", 5.0),
    ("chat", "max_chars_per_call", "maxCharsPerCall", 600),
    ("worldinfo", "scan_depth", "scanDepth", 4),
    ("memory", "quota_per_scope", "quotaPerScope", 3),
]


def invalid(data: Any) -> ToolbenchError:
    with pytest.raises(ToolbenchError) as info:
        Profile.parse(data)
    assert info.value.code == "agent.profile_invalid"
    return info.value


# --- nothing changes in place -------------------------------------------------------------


@pytest.mark.parametrize(("section", "field", "camel", "value"), SECTION_FIELDS)
def test_setting_a_section_field_is_refused(section, field, camel, value):
    profile = Profile.default()
    with pytest.raises(ToolbenchError) as info:
        setattr(getattr(profile, section), field, value)
    assert info.value.code == "bench.misuse"
    with pytest.raises(ToolbenchError):
        delattr(getattr(profile, section), field)
    assert profile == Profile.default()


def test_setting_a_profile_field_is_refused():
    profile = Profile.default()
    for field, value in (("name", "other"), ("tools", Profile.default().tools)):
        with pytest.raises(ToolbenchError) as info:
            setattr(profile, field, value)
        assert info.value.code == "bench.misuse"


def test_lists_are_tuples_that_cannot_grow(bench):
    tools = bench.profile.tools
    assert type(tools.allow) is tuple and type(tools.deny) is tuple
    assert type(bench.profile.workspace.visible_roots) is tuple
    with pytest.raises(AttributeError):
        tools.allow.append("builtin:nope")  # type: ignore[attr-defined]
    assert "builtin:nope" not in tools.allow


@pytest.mark.parametrize("field", ["max_calls_per_tool", "tool_descriptions"])
def test_maps_are_read_only(field):
    mapping = getattr(RICH.tools, field)
    before = dict(mapping)
    with pytest.raises(TypeError):
        mapping["builtin:dice.roll"] = 1
    with pytest.raises(TypeError):
        del mapping["builtin:dice.roll"]
    assert not hasattr(mapping, "update") and not hasattr(mapping, "pop")
    assert dict(mapping) == before


def test_description_override_properties_are_read_only():
    override = RICH.tools.tool_descriptions["builtin:dice.roll"]
    with pytest.raises(TypeError):
        override.properties["formula"] = "changed"  # type: ignore[index]
    assert override.properties == {"formula": "F"}


def test_maps_read_like_dicts():
    budgets = RICH.tools.max_calls_per_tool
    assert budgets == {"builtin:dice.roll": 2}
    assert {"builtin:dice.roll": 2} == budgets  # noqa: SIM300 (the dict on the left: the reflected comparison)
    assert budgets != {"builtin:dice.roll": 3}
    assert budgets.get("builtin:dice.roll") == 2 and budgets.get("mcp/r:t") is None
    assert list(budgets.items()) == [("builtin:dice.roll", 2)]
    assert repr(budgets) == "{'builtin:dice.roll': 2}"


# --- a running invocation keeps its profile -----------------------------------------------


def test_an_invocation_keeps_the_profile_it_was_made_with(make_bench):
    bench = make_bench()
    bench.register_tool("e", lambda: "y" * 500, name="big")
    bench.profile = bench.profile.edit(allow=["extension/e:big"], external_result_inline_char_limit=100)
    made_with = bench.profile
    running = bench.invocation("session")
    with pytest.raises(ToolbenchError):
        bench.profile.tools.external_result_inline_char_limit = 10_000
    bench.profile = bench.profile.edit(external_result_inline_char_limit=10_000)
    assert running.profile is made_with
    assert running.call("big", {}).structured["externalized"] is True
    assert bench.invocation("session").call("big", {}).content == "y" * 500  # the next one has the new limit


# --- one way to write keys in every section -----------------------------------------------


@pytest.mark.parametrize(("section", "field", "camel", "value"), SECTION_FIELDS)
@pytest.mark.parametrize("spelling", ["camel", "snake"])
def test_every_section_takes_camel_and_snake_case_keys(section, field, camel, value, spelling):
    key = camel if spelling == "camel" else field
    profile = Profile.parse({section: {key: value}})
    assert getattr(getattr(profile, section), field) == value


@pytest.mark.parametrize("section", ["tools", "workspace", "shell", "chat", "worldinfo", "memory"])
def test_unknown_keys_are_refused_in_every_section(section):
    assert f"unknown key `{section}.bogusKey`" in invalid({section: {"bogusKey": 1}}).message


@pytest.mark.parametrize("shell", [{"timeoutSeconds": True}, {"maxCommands": "5"}, {"maxCommands": 5.0},
                                   {"max_stdout_chars": None}])
def test_shell_limits_stay_strict(shell):
    assert "shell." in invalid({"shell": shell}).message


def test_shell_seconds_take_an_int():
    assert Profile.parse({"shell": {"timeoutSeconds": 5}}).shell.timeout_seconds == 5.0


# --- edit and model_copy make validated copies ---------------------------------------------


@pytest.mark.parametrize(("section", "field", "camel", "value"), SECTION_FIELDS[1:])
def test_edit_merges_a_mapping_into_its_section(section, field, camel, value):
    base = Profile.default().edit(tools={"max_calls_per_run": 7}, **{section: {camel: value}})
    assert getattr(getattr(base, section), field) == value
    again = base.edit(name="again", **{section: {}})
    assert getattr(getattr(again, section), field) == value  # merged into, not replaced
    assert again.tools.max_calls_per_run == 7
    assert getattr(getattr(Profile.default(), section), field) != value  # the original is untouched


def test_edit_merges_the_shell_keeping_the_other_limits():
    one = Profile.default().edit(shell={"max_commands": 7})
    two = one.edit(shell={"timeoutSeconds": 5})
    assert (two.shell.max_commands, two.shell.timeout_seconds) == (7, 5.0)
    assert one.shell.timeout_seconds == 30.0


def test_edit_takes_tools_fields_by_either_name():
    assert Profile.default().edit(maxCallsPerRun=5).tools.max_calls_per_run == 5
    assert Profile.default().edit(max_calls_per_run=5).tools.max_calls_per_run == 5


def test_edit_takes_a_section_value_whole():
    shell = Profile.default().edit(shell={"max_commands": 7}).shell
    assert Profile.default().edit(shell=shell).shell == shell


@pytest.mark.parametrize(("changes", "key"), [
    ({"bogus": 1}, "bogus"),
    ({"shell": {"bogus": 1}}, "shell.bogus"),
    ({"memory": {"quotaPerScopes": 1}}, "memory.quotaPerScopes"),
])
def test_edit_refuses_unknown_keys_and_names_them(changes, key):
    with pytest.raises(ToolbenchError) as info:
        Profile.default().edit(**changes)
    assert info.value.code == "agent.profile_invalid"
    assert f"unknown key `{key}`" in info.value.message


def test_edit_refuses_a_section_that_is_not_a_mapping():
    with pytest.raises(ToolbenchError) as info:
        Profile.default().edit(shell=5)
    assert info.value.code == "agent.profile_invalid"


def test_model_copy_validates_like_edit():
    shell = Profile.default().shell
    assert shell.model_copy(update={"timeout_seconds": 2.0}).timeout_seconds == 2.0
    assert shell.model_copy(update={"timeoutSeconds": 2.0}).timeout_seconds == 2.0
    with pytest.raises(ToolbenchError) as info:
        shell.model_copy(update={"timeout_seconds": 0})
    assert info.value.code == "agent.profile_invalid"
    copied = Profile.default().model_copy(update={"allow": ["builtin:dice.roll"]})
    assert copied.tools.allow == ("builtin:dice.roll",)
    with pytest.raises(ToolbenchError) as info:
        Profile.default().model_copy(update={"allow": ["not an id"]})
    assert info.value.code == "agent.profile_invalid"
    assert Profile.default().model_copy() == Profile.default()


# --- equality, hashing and the stored form ------------------------------------------------


def test_equal_profiles_hash_alike():
    same = Profile.default().edit(
        allow=["builtin:dice.roll", "extension/e:x"], deny=["extension/e:x"],
        max_calls_per_tool={"builtin:dice.roll": 2},
        tool_descriptions={"builtin:dice.roll": {"description": "Roll.", "properties": {"formula": "F"}}},
    )
    assert same == RICH and hash(same) == hash(RICH)
    assert len({RICH, same, Profile.default()}) == 2
    assert RICH.edit(max_calls_per_tool={"builtin:dice.roll": 3}) != RICH


def test_the_stored_form_has_json_lists_and_objects(tmp_path):
    data = json.loads(RICH.to_json_text())
    assert data["tools"]["allow"] == ["builtin:dice.roll", "extension/e:x"]
    assert data["tools"]["max_calls_per_tool"] == {"builtin:dice.roll": 2}
    assert data["tools"]["tool_descriptions"] == {"builtin:dice.roll": {"description": "Roll.",
                                                                        "properties": {"formula": "F"}}}
    assert RICH.model_dump(mode="json") == data
    assert json.loads(RICH.model_dump_json()) == data
    RICH.save(tmp_path / "p.json")
    assert Profile.load(tmp_path / "p.json") == RICH


@pytest.mark.parametrize("changes", [
    {"maxCallsPerRun": 5, "max_calls_per_run": 6},
    {"tools": {"maxCallsPerRun": 5}, "max_calls_per_run": 7},
])
def test_one_field_given_in_both_spellings_is_refused(changes: dict[str, Any]) -> None:
    with pytest.raises(ToolbenchError) as info:
        Profile.default().edit(**changes)
    assert info.value.code == "agent.profile_invalid"


def test_a_profile_pickles_at_every_protocol_and_its_maps_merge_like_dicts() -> None:
    import pickle

    profile = Profile.default().edit(max_calls_per_tool={"builtin:dice.roll": 2})
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        assert pickle.loads(pickle.dumps(profile, protocol=protocol)) == profile
    merged = profile.tools.max_calls_per_tool | {"builtin:workspace.read_file": 3}
    assert dict(merged) == {"builtin:dice.roll": 2, "builtin:workspace.read_file": 3}


def test_the_store_s_fallback_writer_takes_a_profile_with_hostile_text() -> None:
    from toolbench.runtime.store import json_text

    profile = Profile.default().edit(description="\ud83d", max_calls_per_tool={"builtin:dice.roll": 1})
    assert '"builtin:dice.roll":1' in json_text(profile).replace(" ", "")
