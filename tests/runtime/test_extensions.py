"""Extension tools: Python callables registered on the bench (reference §3.1 step 3, §3.4,
§5.5; table 9.8)."""

from __future__ import annotations

import asyncio
import json
from typing import Literal

import pytest

from toolbench import Profile, ToolbenchError, ToolId, ToolOutput

INSPECT_SCHEMA = {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}


def test_schema_is_derived_from_the_signature(bench):
    def weather(city: str, unit: Literal["c", "f"] = "c", days: int = 1, detail: bool | None = None) -> dict:
        """Today's weather."""
        return {}

    tool_id = bench.register_tool("demo", weather)
    assert tool_id == ToolId.parse("extension/demo:weather")
    (descriptor,) = [d for d in bench.catalog() if d.id == tool_id]
    schema = descriptor.input_schema
    assert descriptor.description == "Today's weather."
    assert descriptor.kind == "extension"
    assert schema["type"] == "object"
    assert schema["required"] == ["city"]
    assert schema["additionalProperties"] is False
    props = schema["properties"]
    assert list(props) == ["city", "unit", "days", "detail"]
    assert props["city"]["type"] == "string"
    assert props["unit"]["enum"] == ["c", "f"] and props["unit"]["default"] == "c"
    assert props["days"]["type"] == "integer" and props["days"]["default"] == 1
    assert "title" not in json.dumps(schema)


def test_given_name_description_and_schema_win(bench):
    tool_id = bench.register_tool("contract", lambda **kw: kw, name="inspect", description="Inspect it.",
                                  input_schema=INSPECT_SCHEMA)
    (descriptor,) = [d for d in bench.catalog() if d.id == tool_id]
    assert str(tool_id) == "extension/contract:inspect"
    assert descriptor.description == "Inspect it."
    assert descriptor.input_schema == INSPECT_SCHEMA


def test_decorator_registers_and_returns_the_function(bench):
    @bench.tool("deco", name="twice")
    def double(n: int) -> int:
        return n * 2

    assert double(2) == 4
    bench.enable("extension/deco:twice")
    assert bench.invocation().call("twice", {"n": 21}).content == "42"


@pytest.mark.parametrize(
    ("kwargs", "code"),
    [
        ({"fn": lambda *args: 1}, "bench.misuse"),
        ({"fn": lambda **kw: 1}, "bench.misuse"),
        ({"fn": "not callable"}, "bench.misuse"),
        ({"fn": lambda: 1, "name": "x", "input_schema": {"type": "array"}}, "bench.misuse"),
        ({"fn": lambda: 1, "name": "x", "scenes": ("group",)}, "bench.misuse"),
        ({"fn": lambda: 1, "name": "x", "scenes": ()}, "bench.misuse"),
        ({"fn": lambda: 1, "name": " "}, "extension.tool_identity_required"),
    ],
)
def test_registration_misuse_is_refused(bench, kwargs, code):
    with pytest.raises(ToolbenchError) as info:
        bench.register_tool("ext", **kwargs)
    assert info.value.code == code


def test_blank_extension_id_is_refused(bench):
    with pytest.raises(ToolbenchError) as info:
        bench.register_tool("  ", lambda: 1, name="x")
    assert info.value.code == "extension.tool_identity_required"


# --- calling ------------------------------------------------------------------------------


@pytest.mark.parametrize("asynchronous", [False, True])
def test_sync_and_async_tools_receive_the_arguments_and_return_json(bench, asynchronous):
    seen = []

    def inspect_sync(query: str, limit: int = 3) -> dict:
        seen.append((query, limit))
        return {"query": query, "hits": ["a", "é"], "limit": limit}

    async def inspect_async(query: str, limit: int = 3) -> dict:
        await asyncio.sleep(0)
        return inspect_sync(query, limit)

    bench.enable(bench.register_tool("contract", inspect_async if asynchronous else inspect_sync, name="inspect"))
    result = bench.invocation().call("inspect", '{"query": "dragon"}')
    assert not result.is_error and result.tool_id == "extension/contract:inspect"
    assert seen == [("dragon", 3)]
    assert result.content == '{"query":"dragon","hits":["a","é"],"limit":3}'  # compact JSON
    assert json.loads(result.content) == result.structured == {"query": "dragon", "hits": ["a", "é"], "limit": 3}


@pytest.mark.parametrize(
    ("value", "content"),
    [("plain text\n", "plain text\n"), (42, "42"), (None, "null"), ([1, "x"], '[1,"x"]'), (True, "true"),
     ("", "")],
)
def test_returned_values_become_content(bench, value, content):
    bench.enable(bench.register_tool("e", lambda: value, name="give"))
    result = bench.invocation().call("give", {})
    assert not result.is_error
    assert result.content == content
    assert result.structured == value


def test_a_tool_output_is_taken_as_it_is(bench):
    output = ToolOutput(content="shown", structured={"kept": True}, resource_refs=("work/a.md",))
    bench.enable(bench.register_tool("e", lambda: output, name="give"))
    result = bench.invocation().call("give", {})
    assert (result.content, result.structured, result.resource_refs) == ("shown", {"kept": True}, ("work/a.md",))


@pytest.mark.parametrize("value", [object(), {1, 2}, float("nan"), {"x": object()}])
def test_a_non_json_return_is_an_error_result(bench, value):
    bench.enable(bench.register_tool("e", lambda: value, name="give"))
    result = bench.invocation().call("give", {})
    assert result.is_error and result.error_code == "extension.tool_error"


@pytest.mark.parametrize("asynchronous", [False, True])
def test_a_raising_tool_gives_an_extension_error_with_its_message(bench, asynchronous):
    def fail(query: str) -> str:
        raise RuntimeError("Inspection failed in the extension")

    async def afail(query: str) -> str:
        fail(query)
        return ""

    bench.enable(bench.register_tool("contract", afail if asynchronous else fail, name="inspect"))
    inv = bench.invocation("session")
    result = inv.call("inspect", {"query": "x"})
    assert result.is_error and result.error_code == "extension.tool_error"
    assert "Inspection failed in the extension" in result.content
    assert result.structured["error"] == {"code": "extension.tool_error",
                                          "message": "Inspection failed in the extension"}
    assert inv.records[0].result == result
    assert not inv.call("dice_roll", {"formula": "d6"}).is_error  # the invocation goes on


def test_a_tool_error_raised_by_the_tool_keeps_its_code(bench):
    from toolbench import ToolError

    def picky(query: str) -> str:
        raise ToolError("tool.invalid_arguments", "query must not be empty")

    bench.enable(bench.register_tool("e", picky))
    result = bench.invocation().call("picky", {"query": ""})
    assert (result.error_code, result.content) == ("tool.invalid_arguments", "query must not be empty")


@pytest.mark.parametrize("wire", [{}, {"query": 3}, {"query": "x", "other": 1}])
def test_arguments_breaking_the_signature_are_refused_without_calling(bench, wire):
    called = []

    def inspect(query: str) -> None:
        called.append(query)

    bench.enable(bench.register_tool("e", inspect))
    result = bench.invocation().call("inspect", wire)
    assert result.error_code == "tool.invalid_arguments"
    assert called == []


@pytest.mark.parametrize(("wire", "error"), [
    ({"a": "21", "b": 1}, "`a` must be of type integer"),  # pydantic's lax mode would take it
    ({"a": True, "b": 1}, "`a` must be of type integer"),
    ({"a": 2.5, "b": 1}, "`a` must be of type integer"),
    ({"a": 2.0, "b": 1}, None),  # JSON Schema's integer: 2.0 is one, and the function gets 2
])
def test_signature_arguments_are_checked_as_the_schema_the_model_sees(bench, wire, error):
    def add(a: int, b: int) -> str:
        return f"{a!r} + {b!r}"

    bench.enable(bench.register_tool("e", add))
    result = bench.invocation().call("add", wire)
    if error is None:
        assert (result.is_error, result.content) == (False, "2 + 1")
    else:
        assert result.error_code == "tool.invalid_arguments" and result.content.startswith(error)


def test_arguments_breaking_a_given_schema_are_refused_without_calling(bench):
    called = []
    bench.enable(bench.register_tool("e", lambda **kw: called.append(kw), name="inspect",
                                     input_schema={**INSPECT_SCHEMA, "additionalProperties": False}))
    inv = bench.invocation()
    assert inv.call("inspect", {"query": 1}).error_code == "tool.invalid_arguments"
    assert inv.call("inspect", {"query": "x", "y": 1}).error_code == "tool.invalid_arguments"
    assert called == []


# --- enabling, scenes, disabling (table 9.8) ----------------------------------------------


def test_enabling_an_unregistered_extension_tool_is_refused(bench):
    before = bench.profile
    with pytest.raises(ToolbenchError) as info:
        bench.enable("extension/contract:inspect")
    assert info.value.code == "extension.tool_unavailable"
    assert bench.profile == before
    with pytest.raises(ToolbenchError) as info:
        bench.profile = bench.profile.edit(allow=[*bench.profile.tools.allow, "extension/contract:inspect"])
    assert info.value.code == "extension.tool_unavailable"


def test_new_enable_check_ignores_mcp_ids_and_already_active_ids(bench):
    bench.enable("mcp/not-registered:tool")  # nothing is validated for new MCP ids
    assert "mcp/not-registered:tool" in bench.profile.tools.allow
    tool_id = bench.register_tool("contract", lambda query: query, name="inspect")
    bench.enable(tool_id)
    bench.unregister_tool(tool_id)  # the extension page was cleared
    bench.profile = bench.profile.edit(name="renamed")  # saving again is fine: the id was active already
    assert str(tool_id) in bench.profile.tools.allow
    snapshot = bench.invocation().snapshot
    assert not [b for b in snapshot.bindings if b.tool_id.kind == "extension"]
    assert (str(tool_id), "extension.tool_unavailable") in {(d.tool_id, d.code) for d in snapshot.diagnostics}


def test_enable_moves_a_denied_tool_back_and_disable_removes_it(bench):
    tool_id = bench.register_tool("e", lambda: 1, name="one")
    bench.profile = bench.profile.edit(allow=[*bench.profile.tools.allow, str(tool_id)], deny=[str(tool_id)])
    assert "one" not in bench.invocation().snapshot.call_names
    bench.enable(tool_id)
    assert bench.profile.tools.deny == ()
    assert "one" in bench.invocation().snapshot.call_names
    bench.disable(tool_id)
    assert str(tool_id) not in bench.profile.tools.allow
    assert "one" not in bench.invocation().snapshot.call_names


def test_a_chat_only_tool_is_not_offered_in_a_session(bench):
    inspect_id = bench.register_tool("contract", lambda query: query, name="inspect", scenes=("session",))
    chat_only = bench.register_tool("contract", lambda query: query, name="chat_only", scenes=("chat",))
    bench.enable(inspect_id)
    bench.enable(chat_only)
    session = bench.invocation("session").snapshot
    assert "inspect" in session.call_names and "chat_only" not in session.call_names
    assert (str(chat_only), "tool.scene_excluded") in {(d.tool_id, d.code) for d in session.diagnostics}
    chat = bench.invocation("chat").snapshot
    assert "chat_only" in chat.call_names and "inspect" not in chat.call_names
    assert [d.id for d in bench.catalog("session") if d.kind == "extension"] == [inspect_id]
    assert [d.id for d in bench.catalog("chat") if d.kind == "extension"] == [chat_only]


def test_a_disabled_tool_is_not_offered(bench):
    tool_id = bench.register_tool("contract", lambda query: query, name="inspect")
    bench.enable(tool_id)
    bench.disable(tool_id)
    snapshot = bench.invocation().snapshot
    assert not [b for b in snapshot.bindings if b.tool_id.kind == "extension"]


def test_registered_but_not_allowed_is_not_offered(bench):
    bench.register_tool("contract", lambda query: query, name="inspect")
    assert "inspect" not in bench.invocation().snapshot.call_names


def test_extension_aliases_next_to_a_builtin_of_the_same_name(make_bench):
    """Table 9.8: the first `inspect` gets the bare name, the second `inspect__2`, and an
    extension named like a builtin's alias yields to the builtin."""
    bench = make_bench(profile=Profile.default().edit(allow=["builtin:dice.roll"]))
    calls = []

    def make(tag: str):
        def tool(query: str) -> dict:
            calls.append((tag, query))
            return {"tag": tag, "query": query}
        return tool

    ids = [bench.register_tool("contract", make("c-inspect"), name="inspect"),
           bench.register_tool("another", make("a-inspect"), name="inspect"),
           bench.register_tool("contract", make("c-write"), name="workspace_write_file")]
    bench.profile = Profile.default().edit(allow=[str(i) for i in ids] + list(Profile.default().tools.allow))
    inv = bench.invocation(id="inv_root")
    names = {str(b.tool_id): b.call_name for b in inv.snapshot.bindings}
    assert [names[str(i)] for i in ids] == ["inspect", "inspect__2", "workspace_write_file__2"]
    if "builtin:workspace.write_file" in names:
        assert names["builtin:workspace.write_file"] == "workspace_write_file"
    aliases, tags = ["inspect", "inspect__2", "workspace_write_file__2"], ["c-inspect", "a-inspect", "c-write"]
    for tool_id, alias, tag in zip(ids, aliases, tags, strict=True):
        result = inv.call(alias, {"query": "status"})
        assert not result.is_error and result.tool_id == str(tool_id)
        assert json.loads(result.content) == {"tag": tag, "query": "status"}
    assert calls == [("c-inspect", "status"), ("a-inspect", "status"), ("c-write", "status")]


def test_a_tool_unregistered_after_the_snapshot_gives_an_error_result(bench):
    tool_id = bench.register_tool("e", lambda: "here", name="fleeting")
    bench.enable(tool_id)
    inv = bench.invocation()
    bench.unregister_tool(tool_id)
    result = inv.call("fleeting", {})
    assert result.is_error and result.error_code == "extension.tool_unavailable"


def test_demo_bench_offers_the_three_demo_tools_and_removes_its_workspace():
    from toolbench import Workbench

    bench = Workbench.demo()
    try:
        assert (bench.workspace / "work" / "notes.md").is_file()
        inv = bench.invocation()
        assert {"weather", "long_report", "fail"} <= set(inv.snapshot.call_names)
        weather = inv.call("weather", {"city": "Oslo", "unit": "f"})
        assert not weather.is_error and weather.structured["unit"] == "f"
        assert inv.call("fail", {}).error_code == "extension.tool_error"
        assert inv.call("weather", {"city": "Oslo", "unit": "k"}).error_code == "tool.invalid_arguments"
        long = inv.call("long_report", {})
        assert long.structured["externalized"] is True
        assert (bench.workspace / long.structured["path"]).is_file()
    finally:
        bench.close()
    assert not bench.workspace.exists()
