"""Profile schema versions and the load-time migration (reference §7; upstream profile.rs)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolbench import Profile, ToolbenchError
from toolbench.core.profile_migrate import SCHEMA_VERSION

# TauriTavern's built-in default profile as its docs print it (docs/Agent/ProfilesAndPreset.md
# §12, schemaVersion 2 era: bare tool names, skill tools, skill read limits).
UPSTREAM_DEFAULT_WRITER = {
    "schemaVersion": 2,
    "kind": "tauritavern.agentProfile",
    "id": "default-writer",
    "displayName": "Default Writer",
    "preset": {"mode": "currentPromptSnapshot", "required": False},
    "model": {"mode": "currentPromptSnapshot"},
    "run": {"presentation": "foreground", "directRunnable": True, "modelRetry": {"maxRetries": 3, "intervalMs": 3000}},
    "delegation": {"canDelegate": True},
    "instructions": {"agentSystemPrompt": None},
    "tools": {
        "allow": ["workspace.list_files", "workspace.search_files", "workspace.read_file", "workspace.write_file",
                  "workspace.apply_patch", "workspace.finish", "chat.search", "chat.read_messages",
                  "worldinfo.read_activated", "skill.list", "skill.search", "skill.read"],
        "deny": [],
        "toolDescriptions": {},
        "maxRounds": 80,
        "maxCallsPerRun": 80,
    },
    "skills": {"visible": ["*"], "deny": [], "maxReadCharsPerCall": 20000, "maxReadCharsPerRun": 80000},
    "workspace": {"visibleRoots": ["output", "scratch", "plan", "summaries", "persist"],
                  "writableRoots": ["output", "scratch", "plan", "summaries", "persist"]},
    "plan": {"mode": "none", "beta": True, "nodes": []},
    "output": {"artifacts": [{"id": "main", "path": "output/main.md", "kind": "markdown", "target": "messageBody",
                              "required": True}]},
}


def upstream(version: int, **tools: object) -> dict[str, object]:
    doc = json.loads(json.dumps(UPSTREAM_DEFAULT_WRITER))
    doc["schemaVersion"] = version
    doc["tools"].update(tools)
    return doc


def codes(profile: Profile) -> list[tuple[str, str]]:
    return [(m.code, m.key) for m in profile.migrations]


def test_the_upstream_default_writer_loads():
    profile = Profile.parse(upstream(2))
    assert profile.name == "default-writer" and profile.description == "Default Writer"
    assert profile.tools.allow[:3] == ("builtin:workspace.list_files", "builtin:workspace.search_files",
                                       "builtin:workspace.read_file")
    assert not any("skill." in t for t in profile.tools.allow)
    assert (profile.run.max_rounds, profile.run.presentation, profile.run.can_delegate, profile.run.can_handoff) == (
        80, "foreground", True, False)
    assert profile.workspace.visible_roots == ("output", "scratch", "plan", "summaries", "persist")
    assert profile.schema_version == SCHEMA_VERSION


def test_migration_notes_name_each_change():
    found = codes(Profile.parse(upstream(2)))
    assert found[0] == ("agent.profile_migrated", "kind")
    assert ("agent.profile_key_renamed", "tools.maxRounds") in found
    assert found.count(("agent.profile_tool_prefixed", "tools.allow")) == 12
    assert found.count(("agent.profile_tool_retired", "tools.allow")) == 3
    assert ("agent.profile_key_dropped", "skills.maxReadCharsPerCall") in found
    assert ("agent.profile_key_dropped", "run.directRunnable") in found
    for section in ("preset", "model", "instructions", "plan", "output", "skills"):
        assert ("agent.profile_key_dropped", section) in found


# Upstream's profile-migration test (reference §7): versions 1-3, the four maps, the legacy key.
@pytest.mark.parametrize("version", [1, 2])
def test_bare_names_get_builtin_and_retired_ones_go_from_all_four_maps(version):
    profile = Profile.parse(upstream(
        version, allow=["workspace.read_file", "agent.list", "skill.run_script"], deny=["skill.search", "chat.search"],
        maxCallsPerTool={"workspace.read_file": 2, "skill.read": 1},
        toolDescriptions={"workspace.read_file": {"description": "Read."}, "skill.list": {"description": "x"}}))
    assert profile.tools.allow == ("builtin:workspace.read_file",)
    assert profile.tools.deny == ("builtin:chat.search",)
    assert dict(profile.tools.max_calls_per_tool) == {"builtin:workspace.read_file": 2}
    assert list(profile.tools.tool_descriptions) == ["builtin:workspace.read_file"]


@pytest.mark.parametrize("version", [3, 4])
def test_from_version_3_names_are_ids_and_retired_ones_still_go(version):
    doc = upstream(version, allow=["builtin:workspace.read_file", "builtin:agent.list"])
    if version == 4:
        del doc["skills"]["maxReadCharsPerCall"], doc["skills"]["maxReadCharsPerRun"]
    profile = Profile.parse(doc)
    assert profile.tools.allow == ("builtin:workspace.read_file",)
    assert ("agent.profile_tool_prefixed", "tools.allow") not in codes(profile)


def test_the_legacy_inline_limit_is_renamed():
    profile = Profile.parse(upstream(3, allow=["builtin:workspace.read_file"], mcpResultInlineCharLimit=1234))
    assert profile.tools.external_result_inline_char_limit == 1234
    assert ("agent.profile_key_renamed", "tools.mcpResultInlineCharLimit") in codes(profile)


def test_skill_read_limits_are_dropped_before_version_4_and_refused_in_it():
    assert Profile.parse(upstream(3, allow=["builtin:workspace.read_file"])).tools.allow
    with pytest.raises(ToolbenchError) as info:
        Profile.parse(upstream(4, allow=["builtin:workspace.read_file"]))
    assert info.value.code == "agent.profile_invalid"


def test_delegation_flags_take_upstreams_default_when_absent():
    doc = upstream(3, allow=["builtin:workspace.read_file"])
    doc["delegation"] = {"callable": True}
    profile = Profile.parse(doc)
    assert (profile.run.can_delegate, profile.run.can_handoff) == (False, False)
    assert ("agent.profile_key_dropped", "delegation.callable") in codes(profile)


@pytest.mark.parametrize(("doc", "code"), [
    ({"kind": "tauritavern.agentProfile", "schemaVersion": 5, "tools": {}}, "agent.profile_schema_unsupported"),
    ({"kind": "tauritavern.agentProfile", "tools": {"allow": []}}, "agent.profile_schema_unsupported"),
    ({"schemaVersion": 3}, "agent.profile_schema_unsupported"),
    ({"schema_version": "2"}, "agent.profile_schema_unsupported"),
    ({"kind": "tauritavern.agentProfile", "schemaVersion": 2, "bogus": 1}, "agent.profile_invalid"),
])
def test_unknown_versions_and_keys_are_refused(doc, code):
    with pytest.raises(ToolbenchError) as info:
        Profile.parse(doc)
    assert info.value.code == code


def test_a_version_1_toolbench_profile_gets_the_version_and_builtin_prefix():
    profile = Profile.parse({"tools": {"allow": ["dice.roll", "builtin:workspace.read_file"]}})
    assert profile.tools.allow == ("builtin:dice.roll", "builtin:workspace.read_file")
    assert codes(profile) == [("agent.profile_migrated", "schemaVersion"),
                              ("agent.profile_tool_prefixed", "tools.allow")]


def test_a_current_profile_has_no_migrations_and_round_trips(tmp_path):
    saved = Profile.default().edit(max_rounds=7, presentation="background")
    data = json.loads(saved.to_json_text())
    assert data["schema_version"] == SCHEMA_VERSION
    assert data["run"] == {"max_rounds": 7, "presentation": "background", "can_delegate": True, "can_handoff": True,
                           "allowed_agents": ["*"]}
    saved.save(tmp_path / "p.json")
    loaded = Profile.load(tmp_path / "p.json")
    assert loaded == saved and loaded.migrations == ()


def test_load_migrates_a_file_and_leaves_it_as_it_was(tmp_path):
    path = tmp_path / "default-writer.json"
    text = json.dumps(UPSTREAM_DEFAULT_WRITER)
    path.write_text(text, encoding="utf-8")
    profile = Profile.load(path)
    assert profile.run.max_rounds == 80 and profile.migrations
    assert path.read_text(encoding="utf-8") == text


def test_an_edit_of_a_migrated_profile_carries_no_notes():
    assert Profile.parse(upstream(2)).edit(name="mine").migrations == ()


@pytest.mark.parametrize(("key", "value"), [
    ("tools", 5), ("tools", "x"), ("tools", [1]), ("run", 5), ("delegation", "yes"), ("skills", [1]),
    ("workspace", 5), ("schemaVersion", True), ("schemaVersion", 2.0)])
def test_a_section_of_the_wrong_shape_is_profile_invalid_naming_it(key, value):
    doc = upstream(2)
    doc[key] = value
    with pytest.raises(ToolbenchError) as info:
        Profile.parse(doc, source="mine.json")
    unsupported = key == "schemaVersion"
    assert info.value.code == ("agent.profile_schema_unsupported" if unsupported else "agent.profile_invalid")
    assert info.value.message.startswith("mine.json") and key in info.value.message


def _paths(value, prefix=()):
    """Every key path of a document (objects' keys and lists' indexes)."""
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, child in items:
        yield (*prefix, key)
        yield from _paths(child, (*prefix, key))


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
                    max_leaves=8)
PATHS = list(_paths(UPSTREAM_DEFAULT_WRITER))


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(PATHS), JSON, st.sampled_from([1, 2, 3, 4]))
def test_any_value_anywhere_in_a_tauritavern_profile_is_a_profile_or_a_coded_error(path, value, version):
    doc = upstream(version)
    if version == 4:
        del doc["skills"]["maxReadCharsPerCall"], doc["skills"]["maxReadCharsPerRun"]
    where = doc
    for key in path[:-1]:  # the paths' folders are all in the copy (version 4 drops two leaves)
        where = where[key]
    where[path[-1]] = value
    try:
        Profile.parse(doc)
    except ToolbenchError as exc:
        assert exc.code in ("agent.profile_invalid", "agent.profile_schema_unsupported")
