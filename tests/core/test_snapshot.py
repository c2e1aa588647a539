"""Snapshots: invariants, JSON round trip, and preparation from a profile and a catalog
(reference §3; tables 9.4, 9.7, 9.8).

Table 9.4's turn-contract rows (ToolTurnContract, tool choice) have no counterpart: toolbench
offers every binding of the snapshot on every call and has no turn contract to check."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys

import pytest

from toolbench import Binding, Profile, Snapshot, ToolbenchError, ToolDescriptor, ToolId
from toolbench.core.snapshot import prepare
from toolbench.tools.registry import BUILTINS

FIRST = ToolDescriptor(id=ToolId.parse("builtin:first"), description="first tool")
SECOND = ToolDescriptor(id=ToolId.parse("builtin:second"), description="second tool")
READ = ToolDescriptor(
    id=ToolId.parse("mcp/reg-1:read"),
    input_schema={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    server="files",
)


def two_bindings() -> tuple[Binding, ...]:
    return (Binding(descriptor=SECOND, call_name="second_alias"),
            Binding(descriptor=FIRST, call_name="first_alias", max_calls=2))


def snapshot_error(**fields) -> str:
    with pytest.raises(ToolbenchError) as info:
        Snapshot.build(**fields)
    return info.value.code


# --- invariants (table 9.4) ---------------------------------------------------------------


def test_binding_order_and_budgets_are_kept():
    snapshot = Snapshot.build(id="invocation", bindings=two_bindings(), max_calls_per_invocation=4)
    assert snapshot.bindings[0].call_name == "second_alias"
    assert [b.tool_id for b in snapshot.bindings] == [SECOND.id, FIRST.id]
    assert [b.max_calls for b in snapshot.bindings] == [None, 2]
    assert snapshot.max_calls_per_invocation == 4
    assert snapshot.call_names == {"second_alias": SECOND.id, "first_alias": FIRST.id}
    assert list(snapshot.call_names) == ["second_alias", "first_alias"]


def test_a_third_binding_reusing_an_alias_is_a_conflict():
    third = Binding(descriptor=READ, call_name="second_alias")
    assert snapshot_error(id="i", bindings=(*two_bindings(), third), max_calls_per_invocation=4) == \
        "tool.snapshot_duplicate_alias"


def test_the_same_binding_twice_is_a_conflict():
    binding = two_bindings()[0]
    assert snapshot_error(id="i", bindings=(binding, binding), max_calls_per_invocation=4) == \
        "tool.snapshot_duplicate_id"


@pytest.mark.parametrize(
    ("fields", "code"),
    [
        ({"max_calls_per_invocation": 0}, "tool.snapshot_budget_invalid"),
        ({"id": ""}, "tool.snapshot_id_empty"),
        ({"bindings": (Binding(descriptor=FIRST, call_name=""),)}, "tool.snapshot_alias_empty"),
        ({"bindings": (Binding(descriptor=FIRST, call_name="f", max_calls=0),)}, "tool.snapshot_tool_budget_invalid"),
    ],
)
def test_invariants_are_checked_on_construction(fields, code):
    base = {"id": "i", "bindings": two_bindings(), "max_calls_per_invocation": 4}
    assert snapshot_error(**{**base, **fields}) == code


def test_a_snapshot_with_no_tools_is_valid():
    assert Snapshot.build(id="i", bindings=(), max_calls_per_invocation=1).call_names == {}


def test_snapshots_are_frozen():
    snapshot = Snapshot.build(id="i", bindings=two_bindings(), max_calls_per_invocation=4)
    with pytest.raises(ValueError):
        snapshot.max_calls_per_invocation = 9  # type: ignore[misc]
    with pytest.raises(ValueError):
        snapshot.bindings[0].call_name = "x"  # type: ignore[misc]


# --- JSON round trip and mutated JSON -----------------------------------------------------


def valid_json() -> dict:
    bindings = (Binding(descriptor=FIRST, call_name="first", max_calls=2), Binding(descriptor=READ, call_name="read"))
    snapshot = Snapshot.build(id="inv_root", bindings=bindings, max_calls_per_invocation=4)
    return json.loads(json.dumps(snapshot.to_json()))


def test_snapshot_round_trips_through_json_text():
    data = valid_json()
    assert data["schemaVersion"] == 1
    assert data["maxCallsPerInvocation"] == 4
    assert [b["callName"] for b in data["bindings"]] == ["first", "read"]
    restored = Snapshot.from_json(data)
    assert restored == Snapshot.from_json(copy.deepcopy(data))
    assert restored.to_json() == data
    assert restored.binding_for("read").descriptor == READ
    assert restored.binding_of(FIRST.id).max_calls == 2


@pytest.mark.parametrize("hash_seed", ["1", "2", "6"])
def test_snapshot_json_is_the_same_in_every_process(hash_seed):
    """Sets iterate in hash order, which differs between processes (PYTHONHASHSEED): the JSON
    of a snapshot, and of it read back, must not."""
    code = (
        "import json\n"
        "from toolbench import Binding, Snapshot, ToolDescriptor, ToolId\n"
        "d = ToolDescriptor(id=ToolId.parse('builtin:x'), scenes=frozenset({'session', 'chat'}))\n"
        "s = Snapshot.build(id='i', bindings=(Binding(descriptor=d, call_name='x'),), max_calls_per_invocation=1)\n"
        "again = Snapshot.from_json(json.loads(json.dumps(s.to_json()))).to_json()\n"
        "print(json.dumps([s.to_json()['bindings'][0]['descriptor']['scenes'], again == s.to_json()]))\n"
    )
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env,
                         timeout=120)
    assert json.loads(out.stdout) == [["chat", "session"], True]


def test_prepared_snapshot_round_trips(upstream_catalog):
    snapshot = prepare(Profile.default().edit(allow=[str(i) for i in upstream_catalog], deny=[], naming="liveagent"),
                       upstream_catalog, snapshot_id="inv_rt", scene="session", snapshot_type=Snapshot)
    assert Snapshot.from_json(json.loads(json.dumps(snapshot.to_json()))) == snapshot


@pytest.mark.parametrize(
    ("path", "value", "code"),
    [
        (("schemaVersion",), 2, "tool.snapshot_schema_unsupported"),
        (("id",), "", "tool.snapshot_id_empty"),
        (("maxCallsPerInvocation",), 0, "tool.snapshot_budget_invalid"),
        (("bindings", 0, "callName"), "", "tool.snapshot_alias_empty"),
        (("bindings", 0, "maxCalls"), 0, "tool.snapshot_tool_budget_invalid"),
        (("bindings", 1, "callName"), "first", "tool.snapshot_duplicate_alias"),
        (("bindings", 1, "descriptor", "id"), "builtin:first", "tool.snapshot_duplicate_id"),
        (("bindings", 1, "descriptor", "id"), "no-separator", "tool.id_invalid"),
        (("unknownField",), 1, "tool.snapshot_invalid"),
        (("bindings", 0, "descriptor", "unknownField"), 1, "tool.snapshot_invalid"),
    ],
)
def test_mutated_snapshot_json_is_rejected_with_its_code(path, value, code):
    data = valid_json()
    target = data
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    with pytest.raises(ToolbenchError) as info:
        Snapshot.from_json(data)
    assert info.value.code == code


@pytest.mark.parametrize("data", [None, [], "snapshot", {"id": "x"}])
def test_non_snapshot_values_are_rejected(data):
    with pytest.raises(ToolbenchError) as info:
        Snapshot.from_json(data)
    assert info.value.code == "tool.snapshot_invalid"


# --- preparation: registry / policy (table 9.7) -------------------------------------------


def test_allow_order_deny_wins_and_per_tool_budget(upstream_catalog):
    profile = Profile.default().edit(
        allow=["builtin:workspace.read_file", "builtin:workspace.search_files", "builtin:workspace.finish",
               "builtin:agent.delegate"],
        deny=["builtin:workspace.search_files"],
        max_calls_per_tool={"builtin:workspace.read_file": 2},
        max_calls_per_run=9,
    )
    snapshot = prepare(profile, upstream_catalog, snapshot_id="inv_root", scene="chat")
    assert [(str(b.tool_id), b.call_name, b.max_calls) for b in snapshot.bindings] == [
        ("builtin:workspace.read_file", "workspace_read_file", 2),
        ("builtin:workspace.finish", "workspace_finish", None),
        ("builtin:agent.delegate", "agent_delegate", None),
    ]
    assert snapshot.id == "inv_root"
    assert snapshot.max_calls_per_invocation == 9
    assert snapshot.diagnostics == ()  # denied tools are not diagnosed: the profile asked for it


def test_return_mode_child_gets_task_return_and_the_profile_is_unchanged(upstream_catalog):
    allow = ["builtin:workspace.read_file", "builtin:workspace.search_files", "builtin:workspace.finish",
             "builtin:agent.delegate"]
    profile = Profile.default().edit(allow=allow, deny=["builtin:workspace.search_files"],
                                     max_calls_per_tool={"builtin:workspace.read_file": 2})
    task_return = upstream_catalog[ToolId.parse("builtin:task.return")]
    snapshot = prepare(profile, upstream_catalog, snapshot_id="child", return_mode=task_return)
    assert [(str(b.tool_id), b.call_name) for b in snapshot.bindings] == [
        ("builtin:workspace.read_file", "workspace_read_file"),
        ("builtin:task.return", "task_return"),
    ]
    assert snapshot.bindings[0].max_calls == 2
    assert profile.tools.allow == tuple(allow)


def test_allow_lists_a_tool_once_even_when_repeated(descriptor):
    tool = descriptor("extension/e:x")
    snapshot = prepare(Profile.default().edit(allow=[str(tool.id)] * 3), {tool.id: tool}, snapshot_id="i")
    assert [b.call_name for b in snapshot.bindings] == ["x"]


def test_deny_wins_over_allow_for_external_tools(descriptor):
    tool = descriptor("extension/e:x")
    profile = Profile.default().edit(allow=[str(tool.id)], deny=[str(tool.id)])
    assert prepare(profile, {tool.id: tool}, snapshot_id="i").bindings == ()


# --- scenes (§3.3) ------------------------------------------------------------------------


def test_session_scene_drops_the_nine_chat_only_builtins(upstream_catalog, upstream_builtins, session_excluded):
    profile = Profile.default().edit(allow=[f"builtin:{name}" for name in upstream_builtins])
    chat = prepare(profile, upstream_catalog, snapshot_id="c", scene="chat")
    session = prepare(profile, upstream_catalog, snapshot_id="s", scene="session")
    assert len(chat.bindings) == 16 and chat.diagnostics == ()
    offered = [b.tool_id.name for b in session.bindings]
    assert offered == [name for name in upstream_builtins if name not in session_excluded]
    assert {d.tool_id: d.code for d in session.diagnostics} == {
        f"builtin:{name}": "tool.scene_excluded" for name in session_excluded}
    assert session.scene == "session"


def test_registered_builtins_of_the_session_exclusion_list_are_chat_only(session_excluded):
    """The scene filter reads each descriptor's `scenes`: every implemented builtin of the
    nine must declare chat only (so does toolbench's own `agent.send_message`, an agent tool
    like the others), and every other builtin both scenes."""
    chat_only = {*session_excluded, "agent.send_message"}
    for tool_id, tool in BUILTINS.items():
        expected = {"chat"} if tool_id.name in chat_only else {"chat", "session"}
        assert set(tool.descriptor.scenes) == expected, tool_id


def test_session_invocation_leaves_out_chat_only_builtins(make_bench, session_excluded):
    bench = make_bench(profile=Profile.default())
    session = bench.invocation("session").snapshot
    offered = {b.tool_id.name for b in session.bindings}
    assert not offered & set(session_excluded)
    chat_only_implemented = {t.name for t in BUILTINS if t.name in session_excluded}
    for name in chat_only_implemented & {t[len("builtin:"):] for t in Profile.default().tools.allow}:
        assert (f"builtin:{name}", "tool.scene_excluded") in {(d.tool_id, d.code) for d in session.diagnostics}
        assert f"builtin:{name}" in {str(b.tool_id) for b in bench.invocation("chat").snapshot.bindings}


def test_external_tool_not_declaring_the_scene_is_left_out(descriptor):
    chat_only = descriptor("extension/contract:chat_only", scenes=frozenset({"chat"}))
    both = descriptor("extension/contract:inspect")
    profile = Profile.default().edit(allow=[str(chat_only.id), str(both.id)])
    catalog = {chat_only.id: chat_only, both.id: both}
    assert list(prepare(profile, catalog, snapshot_id="s", scene="session").call_names) == ["inspect"]
    assert list(prepare(profile, catalog, snapshot_id="c", scene="chat").call_names) == ["chat_only", "inspect"]


# --- unavailable external tools -----------------------------------------------------------


def test_unavailable_external_tools_are_diagnosed_not_fatal(descriptor):
    profile = Profile.default().edit(allow=["extension/gone:x", "mcp/gone:y", "builtin:dice.roll"])
    dice = descriptor("builtin:dice.roll")
    snapshot = prepare(profile, {dice.id: dice}, snapshot_id="i")
    assert list(snapshot.call_names) == ["dice_roll"]
    assert {d.tool_id: d.code for d in snapshot.diagnostics} == {
        "extension/gone:x": "extension.tool_unavailable", "mcp/gone:y": "mcp.tool_unavailable"}


def test_a_given_reason_for_an_unavailable_tool_is_kept():
    from toolbench import Diagnostic

    reason = Diagnostic(tool_id="mcp/r:t", code="mcp.server_start_failed", message="it did not start")
    snapshot = prepare(Profile.default().edit(allow=["mcp/r:t"]), {}, snapshot_id="i",
                       unavailable={ToolId.parse("mcp/r:t"): reason})
    assert snapshot.diagnostics == (reason,)


# --- call names in a snapshot (§2.4, table 9.8) -------------------------------------------


def test_extension_aliases_yield_to_builtins_and_to_each_other(upstream_catalog, descriptor):
    externals = [descriptor("extension/contract:inspect"), descriptor("extension/another:inspect"),
                 descriptor("extension/contract:workspace_write_file")]
    catalog = {**upstream_catalog, **{d.id: d for d in externals}}
    allow = [str(d.id) for d in externals] + list(Profile.default().tools.allow)
    snapshot = prepare(Profile.default().edit(allow=allow), catalog, snapshot_id="inv_root")
    names = {str(b.tool_id): b.call_name for b in snapshot.bindings}
    assert names["extension/contract:inspect"] == "inspect"
    assert names["extension/another:inspect"] == "inspect__2"
    assert names["extension/contract:workspace_write_file"] == "workspace_write_file__2"
    assert names["builtin:workspace.write_file"] == "workspace_write_file"
    assert [str(b.tool_id) for b in snapshot.bindings[:3]] == [str(d.id) for d in externals]


def test_first_in_allow_order_gets_the_bare_name(descriptor):
    a, b = descriptor("extension/a:inspect"), descriptor("extension/b:inspect")
    catalog = {a.id: a, b.id: b}
    forward = prepare(Profile.default().edit(allow=[str(a.id), str(b.id)]), catalog, snapshot_id="i")
    backward = prepare(Profile.default().edit(allow=[str(b.id), str(a.id)]), catalog, snapshot_id="i")
    assert forward.call_names == {"inspect": a.id, "inspect__2": b.id}
    assert backward.call_names == {"inspect": b.id, "inspect__2": a.id}


def test_task_return_is_reserved_even_without_return_mode(descriptor):
    tool = descriptor("extension/e:task_return")
    snapshot = prepare(Profile.default().edit(allow=[str(tool.id)]), {tool.id: tool}, snapshot_id="i")
    assert snapshot.call_names == {"task_return__2": tool.id}


def test_mcp_call_names_follow_the_profile_style(descriptor):
    tool = descriptor("mcp/0b7f-uuid:issue.create", server="my server")
    catalog = {tool.id: tool}
    for naming, expected in [("tauritavern", "mcp__my_server__issue_create"),
                             ("liveagent", "mcp_my_server_issue_create")]:
        profile = Profile.default().edit(allow=[str(tool.id)], naming=naming)
        assert list(prepare(profile, catalog, snapshot_id="i").call_names) == [expected]


def test_invocation_snapshot_id_is_the_invocation_id(bench):
    inv = bench.invocation(id="inv_root")
    assert inv.id == inv.snapshot.id == "inv_root"
    assert inv.snapshot.max_calls_per_invocation == bench.profile.tools.max_calls_per_run
