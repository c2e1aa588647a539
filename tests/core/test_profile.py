"""Profiles: defaults, loading, validation, unknown builtins, description overrides (reference
§3.1 step 4-5, §3.5, §7; table 9.3)."""

from __future__ import annotations

import json
import os

import pytest
from deadline import run_with_deadline

from toolbench import Profile, ToolbenchError, ToolDescriptor, ToolId, Workbench
from toolbench.core.snapshot import prepare

UPSTREAM_DEFAULT_ALLOW = [
    "builtin:agent.delegate",
    "builtin:agent.await",
    "builtin:chat.search",
    "builtin:chat.read_messages",
    "builtin:worldinfo.read_activated",
    "builtin:workspace.list_files",
    "builtin:workspace.search_files",
    "builtin:workspace.read_file",
    "builtin:workspace.write_file",
    "builtin:workspace.apply_patch",
    "builtin:workspace.shell",
    "builtin:workspace.commit",
    "builtin:workspace.finish",
]


def invalid(data) -> ToolbenchError:
    with pytest.raises(ToolbenchError) as info:
        Profile.parse(data)
    assert info.value.code == "agent.profile_invalid"
    return info.value


# --- defaults -----------------------------------------------------------------------------


def test_default_profile_values():
    tools = Profile.default().tools
    assert tools.allow == (*UPSTREAM_DEFAULT_ALLOW, "builtin:dice.roll")
    assert "builtin:workspace.shell" in tools.allow  # the shell is on by default
    assert "builtin:agent.handoff" not in tools.allow
    assert tools.deny == ()
    assert tools.max_calls_per_run == 80
    assert tools.max_calls_per_tool == {}
    assert tools.tool_descriptions == {}
    assert tools.external_result_inline_char_limit == 50_000
    assert tools.naming == "tauritavern"


def test_workbench_without_profile_uses_the_default(make_bench):
    bench = make_bench(profile=Profile.default())
    assert bench.profile == Profile.default()


# --- loading and saving -------------------------------------------------------------------


def test_json_profile_loads_with_upstream_camel_case_keys(tmp_path):
    path = tmp_path / "p.json"
    path.write_text(json.dumps({
        "name": "camel",
        "tools": {
            "allow": ["builtin:dice.roll", "extension/e:x"],
            "deny": ["extension/e:x"],
            "maxCallsPerRun": 7,
            "maxCallsPerTool": {"builtin:dice.roll": 2},
            "toolDescriptions": {"builtin:dice.roll": {"description": "Roll.", "properties": {"formula": "F"}}},
            "externalResultInlineCharLimit": 1234,
            "naming": "liveagent",
        },
    }), encoding="utf-8")
    tools = Profile.load(path).tools
    assert tools.allow == ("builtin:dice.roll", "extension/e:x")
    assert tools.deny == ("extension/e:x",)
    assert tools.max_calls_per_run == 7
    assert tools.max_calls_per_tool == {"builtin:dice.roll": 2}
    assert tools.tool_descriptions["builtin:dice.roll"].properties == {"formula": "F"}
    assert tools.external_result_inline_char_limit == 1234
    assert tools.naming == "liveagent"


def test_toml_profile_loads(tmp_path):
    path = tmp_path / "p.toml"
    path.write_text(
        'name = "from-toml"\n'
        "[tools]\n"
        'allow = ["builtin:dice.roll"]\n'
        "max_calls_per_run = 3\n"
        "externalResultInlineCharLimit = 99\n"
        '[tools.max_calls_per_tool]\n"builtin:dice.roll" = 1\n',
        encoding="utf-8",
    )
    profile = Profile.load(path)
    assert profile.name == "from-toml"
    assert profile.tools.allow == ("builtin:dice.roll",)
    assert profile.tools.max_calls_per_run == 3
    assert profile.tools.external_result_inline_char_limit == 99
    assert profile.tools.max_calls_per_tool == {"builtin:dice.roll": 1}


def test_save_then_load_gives_an_equal_profile(tmp_path):
    profile = Profile.default().edit(
        name="saved", allow=["builtin:dice.roll", "mcp/r:t"], deny=["mcp/r:t"], max_calls_per_run=5,
        max_calls_per_tool={"builtin:dice.roll": 1}, naming="liveagent",
        tool_descriptions={"builtin:dice.roll": {"description": "  kept  "}},
    )
    path = tmp_path / "out" / "saved.json"
    profile.save(path)
    assert Profile.load(path) == profile
    Profile.default().save(path)  # saving again replaces the file
    assert Profile.load(path) == Profile.default()


def test_workbench_accepts_a_profile_path(tmp_path, make_bench):
    path = tmp_path / "p.json"
    Profile.default().edit(allow=["builtin:dice.roll"], max_calls_per_run=3).save(path)
    bench = make_bench(profile=path)
    assert bench.profile.tools.max_calls_per_run == 3
    assert bench.invocation().snapshot.max_calls_per_invocation == 3


@pytest.mark.parametrize(("name", "text", "found"), [
    ("empty.yaml", "", "nothing"), ("a-list.yaml", "- 1\n", "a list"), ("a-number.json", "3", "a number"),
])
def test_a_profile_file_that_holds_no_mapping_says_what_it_holds(tmp_path, name, text, found):
    (tmp_path / name).write_text(text, encoding="utf-8")
    with pytest.raises(ToolbenchError, match=f"holds {found}, not a profile: a profile is a mapping"):
        Profile.load(tmp_path / name)


def test_missing_profile_file_is_refused(tmp_path):
    with pytest.raises(ToolbenchError) as info:
        Profile.load(tmp_path / "absent.json")
    assert info.value.code == "agent.profile_invalid"


# --- validation ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "key"),
    [
        ({"bogusKey": 1}, "bogusKey"),
        ({"tools": {"allow": [], "maxRounds": 80}}, "maxRounds"),
        ({"tools": {"toolDescriptions": {"builtin:dice.roll": {"title": "x"}}}}, "title"),
    ],
)
def test_unknown_keys_are_refused_and_named(data, key):
    assert key in invalid(data).message


def test_unknown_key_in_a_file_is_refused_and_named(tmp_path):
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"tools": {"allowList": []}}), encoding="utf-8")
    with pytest.raises(ToolbenchError) as info:
        Profile.load(path)
    assert info.value.code == "agent.profile_invalid"
    assert "allowList" in info.value.message


@pytest.mark.parametrize(
    "tools",
    [
        {"maxCallsPerRun": "many"},
        {"allow": "builtin:dice.roll"},
        {"allow": [1]},
        {"maxCallsPerTool": {"builtin:dice.roll": "two"}},
        {"naming": "camel"},
        {"toolDescriptions": {"builtin:dice.roll": {"properties": ["formula"]}}},
        {"externalResultInlineCharLimit": None},
    ],
)
def test_wrong_types_are_refused(tools):
    invalid({"tools": tools})


def test_a_profile_that_is_not_an_object_is_refused():
    invalid(["builtin:dice.roll"])


@pytest.mark.parametrize(
    "tools",
    [
        {"maxCallsPerRun": 0},
        {"maxCallsPerRun": -1},
        {"maxCallsPerTool": {"builtin:dice.roll": 0}},
        {"externalResultInlineCharLimit": 0},
    ],
)
def test_zero_budgets_are_refused(tools):
    invalid({"tools": tools})


@pytest.mark.parametrize(
    ("tools", "bad"),
    [
        ({"allow": ["dice.roll"]}, "dice.roll"),
        ({"deny": ["mcp:registration-1"]}, "mcp:registration-1"),
        ({"maxCallsPerTool": {"builtin:": 1}}, "builtin:"),
        ({"toolDescriptions": {":x": {"description": "d"}}}, ":x"),
    ],
)
def test_bad_tool_ids_are_refused_and_named(tools, bad):
    # A current profile: a version-1 one would read the bare `dice.roll` as builtin (profile_migrate).
    assert f"`{bad}`" in invalid({"schemaVersion": 2, "tools": tools}).message


def test_edit_validates_the_new_values():
    with pytest.raises(ToolbenchError) as info:
        Profile.default().edit(max_calls_per_run=0)
    assert info.value.code == "agent.profile_invalid"


# --- unknown builtins ---------------------------------------------------------------------


@pytest.mark.parametrize("key", ["allow", "deny"])
def test_workbench_refuses_a_profile_naming_an_unknown_builtin(tmp_path, key):
    profile = Profile.default().edit(**{key: ["builtin:dice.roll", "builtin:no.such_tool"]})
    with pytest.raises(ToolbenchError) as info:
        Workbench(tmp_path / "ws", profile=profile)
    assert info.value.code == "agent.profile_unknown_tool"
    assert "builtin:no.such_tool" in info.value.message


def test_setting_a_profile_with_an_unknown_builtin_is_refused_and_keeps_the_old(bench):
    before = bench.profile
    with pytest.raises(ToolbenchError) as info:
        bench.profile = Profile.default().edit(allow=["builtin:nope"])
    assert info.value.code == "agent.profile_unknown_tool"
    assert bench.profile == before


def test_prepare_refuses_an_unknown_builtin():
    with pytest.raises(ToolbenchError) as info:
        prepare(Profile.default().edit(allow=["builtin:ghost"]), {}, snapshot_id="inv")
    assert info.value.code == "agent.profile_unknown_tool"


def test_known_upstream_builtins_not_implemented_yet_are_left_out_with_a_diagnostic(make_bench):
    bench = make_bench(profile=Profile.default())
    snapshot = bench.invocation().snapshot
    offered = {str(b.tool_id) for b in snapshot.bindings}
    explained = {d.tool_id: d.code for d in snapshot.diagnostics}
    assert "builtin:dice.roll" in offered
    for text in Profile.default().tools.allow:
        assert text in offered or text in explained, text
    for tool_id, code in explained.items():
        assert tool_id not in offered
        assert code in {"tool.not_implemented", "tool.scene_excluded"}


# --- description overrides ----------------------------------------------------------------

SCHEMA = {
    "type": "object",
    "properties": {"query": {"type": "string", "description": "old"}, "limit": {"type": "integer"}},
    "required": ["query"],
    "additionalProperties": False,
}


def test_override_sets_texts_verbatim_and_keeps_the_schema():
    search = ToolDescriptor(id=ToolId.parse("builtin:chat.search"), description="old", input_schema=SCHEMA)
    profile = Profile.default().edit(
        allow=["builtin:chat.search"],
        tool_descriptions={"builtin:chat.search": {"description": "  Custom description  ",
                                                   "properties": {"query": "  Custom query  "}}},
    )
    (binding,) = prepare(profile, {search.id: search}, snapshot_id="inv").bindings
    schema = binding.descriptor.input_schema
    assert binding.descriptor.description == "  Custom description  "
    assert schema["properties"]["query"] == {"type": "string", "description": "  Custom query  "}
    assert schema["properties"]["limit"] == {"type": "integer"}
    assert schema["required"] == ["query"]
    assert search.input_schema["properties"]["query"]["description"] == "old"  # the catalog's copy is untouched


OVERRIDE_CASES = [
    (SCHEMA, {"properties": {"nope": "x"}}, "tool.description_override_unknown_property"),
    ({"type": "object"}, {"properties": {"query": "x"}}, "tool.description_override_properties_invalid"),
    ({"type": "object", "properties": {"query": True}}, {"properties": {"query": "x"}},
     "tool.description_override_property_schema_invalid"),
]


@pytest.mark.parametrize(("schema", "override", "code"), OVERRIDE_CASES)
def test_invalid_builtin_override_fails_preparation(schema, override, code):
    tool = ToolDescriptor(id=ToolId.parse("builtin:chat.search"), input_schema=schema)
    profile = Profile.default().edit(allow=[str(tool.id)], tool_descriptions={str(tool.id): override})
    with pytest.raises(ToolbenchError) as info:
        prepare(profile, {tool.id: tool}, snapshot_id="inv")
    assert info.value.code == code


@pytest.mark.parametrize(("schema", "override", "code"), OVERRIDE_CASES)
@pytest.mark.parametrize("tool_id", ["extension/e:search", "mcp/reg:search"])
def test_invalid_external_override_drops_the_tool_with_a_diagnostic(schema, override, code, tool_id):
    tool = ToolDescriptor(id=ToolId.parse(tool_id), input_schema=schema, server="srv")
    other = ToolDescriptor(id=ToolId.parse("extension/e:other"))
    profile = Profile.default().edit(allow=[tool_id, str(other.id)], tool_descriptions={tool_id: override})
    snapshot = prepare(profile, {tool.id: tool, other.id: other}, snapshot_id="inv")
    assert [str(b.tool_id) for b in snapshot.bindings] == ["extension/e:other"]
    (diagnostic,) = snapshot.diagnostics
    assert (diagnostic.tool_id, diagnostic.code) == (tool_id, "agent.tool_override_invalid")
    assert code in diagnostic.message


def test_invalid_builtin_override_fails_the_invocation(bench):
    bench.profile = bench.profile.edit(tool_descriptions={"builtin:dice.roll": {"properties": {"sides": "x"}}})
    with pytest.raises(ToolbenchError) as info:
        bench.invocation()
    assert info.value.code == "tool.description_override_unknown_property"


def test_invalid_extension_override_leaves_the_tool_out_of_the_invocation(bench):
    tool_id = bench.register_tool("e", lambda query: query, name="lookup")
    bench.enable(tool_id)
    bench.profile = bench.profile.edit(tool_descriptions={str(tool_id): {"properties": {"nope": "x"}}})
    snapshot = bench.invocation().snapshot
    assert "lookup" not in snapshot.call_names
    assert [(d.tool_id, d.code) for d in snapshot.diagnostics] == [(str(tool_id), "agent.tool_override_invalid")]


def test_valid_override_reaches_the_invocation(bench):
    bench.profile = bench.profile.edit(
        tool_descriptions={"builtin:dice.roll": {"description": "Roll it.", "properties": {"formula": "NdS"}}})
    (binding,) = bench.invocation().snapshot.bindings
    assert binding.descriptor.description == "Roll it."
    assert binding.descriptor.input_schema["properties"]["formula"]["description"] == "NdS"


def test_upstream_legacy_inline_limit_key_is_read_as_the_new_field() -> None:
    profile = Profile.parse({"tools": {"mcpResultInlineCharLimit": 1234}})
    assert profile.tools.external_result_inline_char_limit == 1234


@pytest.mark.parametrize(("name", "text"), [
    ("bad.json", "{not json"),
    ("bad.toml", "= nope"),
    ("nested-allow.json", '{"tools": {"allow": [["x"]]}}'),
    ("nested-deny.yaml", "tools:\n  deny: [[x]]\n"),
    ("deep.json", "[" * 5000 + "]" * 5000),
    ("deep.yaml", "[" * 5000 + "]" * 5000),
    ("huge-int.yaml", "tools:\n  maxCallsPerRun: " + "9" * 5000 + "\n"),
    ("empty.yaml", ""),
    ("a-list.yaml", "- 1\n"),
])
def test_a_malformed_profile_file_is_coded_never_raw(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ToolbenchError) as info:
        Profile.load(path)
    assert info.value.code == "agent.profile_invalid"


def test_a_profile_path_that_is_no_regular_file_is_coded_without_blocking(tmp_path):
    """A FIFO, a folder, a device or a file over the cap: one `agent.profile_invalid`, at once."""
    os.mkfifo(tmp_path / "fifo.json")
    (tmp_path / "folder.json").mkdir()
    (tmp_path / "huge.json").write_bytes(b"{}" + b" " * (8 << 20))
    (tmp_path / "utf16.json").write_bytes(b'\xff\xfe{"name": "x"}')
    paths = [str(tmp_path / n) for n in ("fifo.json", "folder.json", "huge.json", "utf16.json")] + ["/dev/zero"]
    seen = run_with_deadline("""
import sys
from toolbench import Profile, ToolbenchError
codes = []
for path in sys.argv[1:]:
    try:
        Profile.load(path)
        codes.append("loaded")
    except ToolbenchError as exc:
        codes.append(exc.code)
report(codes)
""", args=tuple(paths), deadline=30, memory_mb=1024)
    assert seen == ["agent.profile_invalid"] * 5


def test_a_yaml_profile_alias_bomb_is_refused_at_once(tmp_path):
    """A "billion laughs" YAML profile (nine levels of nine aliases) is refused, not expanded. A guard:
    today no profile field would expand it (pydantic refuses the shape first); the YAML reader now
    refuses aliases before any field sees them, as it does for skills and memories."""
    laughs = "l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
        f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]\n" for i in range(1, 9))
    path = tmp_path / "laughs.yaml"
    path.write_text(laughs + "tools:\n  deny: *l8\n", encoding="utf-8")
    code = run_with_deadline("""
import sys
from toolbench import Profile, ToolbenchError
try:
    Profile.load(sys.argv[1])
    report("loaded")
except ToolbenchError as exc:
    report(exc.code)
""", args=(str(path),), deadline=10, memory_mb=1024)
    assert code == "agent.profile_invalid"


def test_a_yaml_profile_past_the_front_matter_cap_loads_within_the_files_own(tmp_path):
    path = tmp_path / "big.yaml"
    path.write_text("tools:\n  toolDescriptions:\n    builtin:dice.roll:\n      description: " + "d" * 300_000 + "\n",
                    encoding="utf-8")
    profile = Profile.load(path)
    assert len(profile.tools.tool_descriptions["builtin:dice.roll"].description) == 300_000
