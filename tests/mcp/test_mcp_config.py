"""Registrations, ids, `mcp.json`, and the rules that keep a listed tool out (pure functions)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolbench.core.errors import CODES, ToolbenchError
from toolbench.examples.demo_mcp import build_server
from toolbench.mcp import HttpTransport, InProcessTransport, SdkTransport, StdioTransport
from toolbench.mcp._config import ServerOptions, ServerSpec, allocate_id, parse_mcp_json, slugify
from toolbench.mcp._tools import name_problem, output_check, schema_problem


@pytest.mark.parametrize(
    ("name", "slug"),
    [("demo", "demo"), ("My Server", "my-server"), ("  GitHub__Tools!! ", "github-tools"), ("服务器", "server"),
     ("a.b/c", "a-b-c"), ("---", "server")],
)
def test_slug_is_lowercase_ascii_with_dashes(name: str, slug: str) -> None:
    assert slugify(name) == slug


def test_ids_are_unique_with_numbered_suffixes() -> None:
    assert allocate_id("My Server", set()) == "my-server"
    assert allocate_id("my server", {"my-server"}) == "my-server-2"
    assert allocate_id("MY_SERVER", {"my-server", "my-server-2"}) == "my-server-3"


def make_spec(name: Any, *, taken_ids: set[str], **options: Any) -> ServerSpec:
    return ServerOptions.of(name, **options).register(taken_ids)


def test_command_forms_and_transport_kinds() -> None:
    spec = make_spec("x", taken_ids=set(), command="python", args=["-m", "srv"], env={"N": 1}, cwd=Path("/tmp"))
    stdio = spec.transport
    assert isinstance(stdio, StdioTransport) and stdio.kind == "stdio"
    assert ((stdio.command, *stdio.args), stdio.env, stdio.cwd) == (("python", "-m", "srv"), {"N": "1"}, "/tmp")
    assert make_spec("x", taken_ids=set(), command=["python", "-m"], args=["srv"]).transport == StdioTransport(
        "python", ["-m", "srv"])
    assert make_spec("x", taken_ids=set(), url="https://h/mcp", headers={"A": "b"}).transport.kind == "http"
    assert make_spec("x", taken_ids=set(), server=build_server()).transport.kind == "memory"
    assert make_spec("x", taken_ids={"x"}, id="custom-1", url="http://h").id == "custom-1"


def test_transport_values_normalise_once_and_compare_by_value() -> None:
    stdio = StdioTransport(["python", "-m"], ["srv"], env={"N": 1}, cwd=Path("/tmp"))
    assert (stdio.command, stdio.args, stdio.env, stdio.cwd) == ("python", ("-m", "srv"), {"N": "1"}, "/tmp")
    assert StdioTransport(stdio.command, stdio.args, stdio.env, stdio.cwd) == stdio  # idempotent
    assert HttpTransport("https://h/mcp", {"A": 1}).headers == {"A": "1"}
    server = build_server()
    assert InProcessTransport(server) == InProcessTransport(server) != InProcessTransport(build_server())
    with pytest.raises(AttributeError):
        stdio.command = "other"  # type: ignore[misc]
    assert [t.kind for t in (stdio, HttpTransport("http://h"), InProcessTransport(server))] == [
        "stdio", "http", "memory"]
    assert (StdioTransport.stderr_log, HttpTransport.stderr_log, InProcessTransport.stderr_log) == (True, False, False)


@pytest.mark.parametrize("make", [
    lambda: StdioTransport(""), lambda: StdioTransport([]), lambda: StdioTransport("x", "-y"),
    lambda: StdioTransport(5), lambda: StdioTransport("x", env={"A": None}), lambda: HttpTransport("ftp://h"),
    lambda: HttpTransport("http://h", headers=["A"]), lambda: InProcessTransport(object()),
    lambda: SdkTransport("not callable"),
])
def test_a_bad_transport_value_is_a_config_error(make: Callable[[], object]) -> None:
    with pytest.raises(ToolbenchError) as caught:
        make()
    assert caught.value.code == "mcp.config_invalid"


def test_add_takes_a_transport_value_instead_of_its_fields() -> None:
    http = HttpTransport("https://h/mcp")
    assert ServerOptions.of("x", transport=http) == ServerOptions("x", http)
    assert ServerOptions.of("x", url="https://h/mcp") == ServerOptions("x", http)
    for stray in ({"args": ["-y"]}, {"headers": {"A": "b"}}, {"url": "https://h/mcp"}):
        with pytest.raises(ToolbenchError) as caught:
            ServerOptions.of("x", transport=http, **stray)
        assert caught.value.code == "mcp.config_invalid" and "`x`" in caught.value.message
    with pytest.raises(TypeError, match="comand"):
        ServerOptions.of("x", comand="python")  # type: ignore[call-arg]


@pytest.mark.parametrize(("entry", "transport"), [
    ({"type": "streamable-http", "url": "http://h/mcp"}, HttpTransport("http://h/mcp")),
    ({"type": "streamableHttp", "url": "http://h/mcp"}, HttpTransport("http://h/mcp")),
    ({"transport": "http", "url": "http://h/mcp"}, HttpTransport("http://h/mcp")),
    ({"type": "STDIO", "command": "x"}, StdioTransport("x")),
    ({"url": "http://h/mcp", "headers": {"A": "b"}}, HttpTransport("http://h/mcp", {"A": "b"})),
])
def test_mcp_json_types_pick_the_transport_class(entry: dict[str, Any], transport: object) -> None:
    [options] = parse_mcp_json({"mcpServers": {"a": entry}})
    assert options.transport == transport


@pytest.mark.parametrize("entry", [
    {"type": "http", "command": "x"},
    {"type": "stdio", "url": "http://h/mcp"},
    {"type": "stdio", "command": "x", "headers": {"A": "b"}},
    {"command": "x", "url": "http://h/mcp"},
    {"type": "websocket", "url": "ws://h"},
])
def test_mcp_json_fields_must_fit_the_type(entry: dict[str, Any]) -> None:
    with pytest.raises(ToolbenchError) as caught:
        parse_mcp_json({"mcpServers": {"a": entry}})
    assert caught.value.code == "mcp.config_invalid" and "`a`" in caught.value.message


@pytest.mark.parametrize(
    ("options", "code"),
    [
        ({}, "mcp.config_invalid"),
        ({"command": ["a"], "url": "http://h"}, "mcp.config_invalid"),
        ({"command": []}, "mcp.config_invalid"),
        ({"command": [" "]}, "mcp.config_invalid"),
        ({"url": "ftp://h"}, "mcp.config_invalid"),
        ({"url": "http://h", "env": {"A": "b"}}, "mcp.config_invalid"),
        ({"command": ["a"], "headers": {"A": "b"}}, "mcp.config_invalid"),
        ({"server": object()}, "mcp.config_invalid"),
        ({"command": ["a"], "timeout": 0}, "mcp.config_invalid"),
        ({"command": ["a"], "timeout": float("inf")}, "mcp.config_invalid"),
        ({"command": ["a"], "env": {"A": ["list"]}}, "mcp.config_invalid"),
        ({"command": ["a"], "id": "Bad Id"}, "mcp.config_invalid"),
        ({"command": ["a"], "id": "taken"}, "mcp.server_exists"),
    ],
)
def test_bad_registrations_raise_with_a_code(options: dict[str, Any], code: str) -> None:
    with pytest.raises(ToolbenchError) as caught:
        make_spec("srv", taken_ids={"taken"}, **options)
    assert caught.value.code == code and code in CODES


def test_blank_name_is_refused() -> None:
    with pytest.raises(ToolbenchError) as caught:
        make_spec("  ", taken_ids=set(), command=["a"])
    assert caught.value.code == "mcp.config_invalid"


def test_mcp_json_entries_in_file_order(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {
        "files": {"command": "npx", "args": ["-y", "server-files"], "env": {"ROOT": "/data"}, "cwd": "sub"},
        "web": {"url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer t"}, "type": "http"},
        "off": {"command": "x", "disabled": True, "autoApprove": ["ignored"]},
        "typed": {"type": "stdio", "command": "y", "timeout": 5, "id": "typed-1"},
    }}))
    entries = parse_mcp_json(path)
    assert [e.name for e in entries] == ["files", "web", "off", "typed"]
    assert entries[0] == ServerOptions("files", StdioTransport("npx", ["-y", "server-files"], env={"ROOT": "/data"},
                                                               cwd=str(tmp_path / "sub")), enabled=True)
    assert entries[1].transport == HttpTransport("http://127.0.0.1:9/mcp", {"Authorization": "Bearer t"})
    # no `cwd`: the server starts in the file's folder (its relative args mean what they say there)
    assert entries[2].enabled is False and entries[2].transport == StdioTransport("x", cwd=str(tmp_path))
    assert entries[3].timeout == 5 and entries[3].id == "typed-1"


@pytest.mark.parametrize(
    "document",
    [
        {"servers": {}},
        {"mcpServers": []},
        {"mcpServers": {"a": "npx"}},
        {"mcpServers": {"a": {"type": "sse", "url": "http://h/sse"}}},
        {"mcpServers": {"a": {"args": ["x"]}}},
        {"mcpServers": {"a": {"command": "x", "args": "-y"}}},
        {"mcpServers": {"a": {"command": "x", "disabled": "yes"}}},
    ],
)
def test_bad_mcp_json_raises_config_invalid(document: dict[str, Any]) -> None:
    with pytest.raises(ToolbenchError) as caught:
        parse_mcp_json(document)
    assert caught.value.code == "mcp.config_invalid"


def test_every_bad_entry_is_named_at_once(tmp_path: Path) -> None:
    with pytest.raises(ToolbenchError) as caught:
        parse_mcp_json({"mcpServers": {"good": {"command": "x"}, "one": {}, "two": {"url": "nope"}}})
    assert "`one`" in caught.value.message and "`two`" in caught.value.message
    missing = tmp_path / "missing.json"
    with pytest.raises(ToolbenchError) as caught:
        parse_mcp_json(missing)
    assert caught.value.code == "mcp.config_invalid"


@pytest.mark.parametrize(
    ("name", "valid"),
    [("echo", True), ("issue.create", True), ("get weather", True), ("a/b:c", True), ("工具", True),
     ("x" * 128, True), ("x" * 129, True), ("", False), (" padded", False), ("tab\tname", False),
     ("new\nline", False), ("bell\x07", False), (None, False), (5, False)],
)
def test_tool_name_rule(name: Any, valid: bool) -> None:
    assert (name_problem(name) is None) is valid


@pytest.mark.parametrize(
    ("schema", "valid"),
    [
        ({"type": "object"}, True),
        ({"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]}, True),
        ({"type": "object", "$schema": "http://json-schema.org/draft-07/schema#", "properties": {}}, True),
        ({"type": "string"}, False),
        ({"properties": {}}, False),
        ({"type": "object", "properties": {"x": {"type": 5}}}, False),
        ({"type": "object", "required": "x"}, False),
        ({"type": "object", "minProperties": -1}, False),
        ([], False),
        # a `$schema` naming no known dialect is checked as draft 2020-12
        ({"type": "object", "$schema": "https://example.com/own-dialect"}, True),
        ({"type": "object", "$schema": "https://example.com/own-dialect", "properties": {"x": {"type": 5}}}, False),
        ({"type": "object", "properties": {"a": {"$ref": "#/$defs/a"}}, "$defs": {"a": {"type": "string"}}}, True),
        # a $ref resolves within the schema or not at all: arguments could not be checked against it
        ({"type": "object", "properties": {"a": {"$ref": "#/$defs/missing"}}}, False),
        ({"type": "object", "properties": {"a": {"$ref": "http://127.0.0.1:9/a.json"}}}, False),
    ],
)
def test_input_schema_rule(schema: Any, valid: bool) -> None:
    assert (schema_problem(schema) is None) is valid


def test_input_schema_problem_names_where_the_schema_breaks() -> None:
    problem = schema_problem({"type": "object", "properties": {"x": {"type": 5}}})
    assert problem is not None and problem.startswith("inputSchema is not a valid JSON Schema at properties/x/type: ")
    assert "does not resolve" in str(schema_problem({"type": "object", "properties": {"a": {"$ref": "#/nope"}}}))


def test_output_check_reports_the_shallowest_mismatch() -> None:
    check, problem = output_check({"type": "object", "properties": {"p": {"type": "object", "properties": {
        "x": {"type": "integer"}}}}, "required": ["p", "q"]})
    assert check is not None and problem is None
    assert check.problem({"structuredContent": {"p": {"x": 1}, "q": 0}}) is None
    assert check.problem({"structuredContent": {"p": {"x": "one"}, "q": 0}}) == (
        'structuredContent does not match the outputSchema at p/x: "one" is not of type "integer"')
    found = check.problem({"structuredContent": {"p": {"x": "one"}}})
    assert found is not None and found.startswith("structuredContent does not match the outputSchema at (root): ")
    assert check.problem({"isError": True}) is None


def test_an_output_schema_whose_ref_does_not_resolve_is_no_check() -> None:
    check, problem = output_check({"type": "object", "properties": {"a": {"$ref": "#/$defs/missing"}}})
    assert check is None and problem is not None and problem.startswith("outputSchema has a $ref that does not resolve")


def test_checking_tools_imports_no_pure_python_jsonschema() -> None:
    """jsonschema's format grammars took seconds to import before `toolbench check` listed a tool."""
    code = ("import sys\nfrom toolbench.mcp._tools import build_records, schema_problem\n"
            "schema_problem({'type': 'object', 'properties': {'x': {'type': 'string', 'format': 'uri'}}})\n"
            "slow = ('jsonschema', 'rfc3987_syntax', 'referencing')\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in slow))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip() == "[]"


def test_every_mcp_code_in_the_package_is_listed() -> None:
    package = Path(__file__).resolve().parents[2] / "toolbench" / "mcp"
    used = {m for path in package.glob("*.py") for m in re.findall(r'"(mcp\.[a-z_]+)"', path.read_text())}
    assert {"mcp.tool_error", "mcp.call_outcome_unknown", "mcp.tool_schema_invalid"} <= used  # the scan works
    assert sorted(used - set(CODES)) == []


@pytest.mark.parametrize(("entry", "kind"), [
    ({"url": "https://h/mcp", "env": {}}, "http"),
    ({"url": "https://h/mcp", "args": []}, "http"),
    ({"url": "https://h/mcp", "cwd": ""}, "http"),
    ({"command": "x", "headers": {}}, "stdio"),
])
def test_an_empty_field_of_the_other_transport_is_unset_as_clients_read_it(entry: dict[str, Any], kind: str) -> None:
    [options] = parse_mcp_json({"mcpServers": {"s": entry}})
    assert options.transport.kind == kind


def test_an_mcp_json_nested_past_the_cap_is_a_config_error_and_one_under_it_reads(tmp_path: Path) -> None:
    from toolbench.mcp._config import CONFIG_DEPTH, read_mcp_json

    def nested(levels: int) -> str:  # mcpServers -> a -> args -> lists: 4 levels before the lists
        lists = levels - 3
        return '{"mcpServers": {"a": {"command": "x", "args": ' + "[" * lists + "]" * lists + "}}}"

    path = tmp_path / "mcp.json"
    path.write_text(nested(CONFIG_DEPTH))
    assert read_mcp_json(path)["mcpServers"]["a"]["command"] == "x"
    for levels in (CONFIG_DEPTH + 1, 900):  # 900: json.loads takes it, the readers after it would not
        path.write_text(nested(levels))
        with pytest.raises(ToolbenchError) as caught:
            parse_mcp_json(path)
        assert caught.value.code == "mcp.config_invalid"


def test_expanded_values_map_what_the_environment_gave_to_the_placeholder_as_written() -> None:
    from toolbench.mcp import expanded_values

    document = {"mcpServers": {"a": {"command": "${env:TOKEN}/bin", "args": ["${TOKEN}", "${SHORT}", "${NONE:-dflt}",
                                                                            "${input:x}", "${/}"],
                                     "env": {"K": "${NONE}"}}}}
    env = {"TOKEN": "sk-123456", "SHORT": "ab"}
    assert expanded_values(document, env) == {"sk-123456": "${env:TOKEN}"}  # the first form met names it


# -- roots (see toolbench.mcp._roots) -------------------------------------------------------------


def test_roots_from_add_normalise_to_workspace_false_or_absolute_folders(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert make_spec("a", taken_ids=set(), command="x").roots == "workspace"  # the default
    assert make_spec("a", taken_ids=set(), command="x", roots=None).roots == "workspace"
    assert make_spec("a", taken_ids=set(), url="http://h/mcp", roots="workspace").roots == "workspace"
    assert make_spec("a", taken_ids=set(), server=build_server(), roots=False).roots is False
    spec = make_spec("a", taken_ids=set(), command="x", roots=["rel", Path("/data/p/../q"), "~/notes",
                                                                "file:///srv/a%20b", "/data/q"])
    assert spec.roots == (tmp_path / "rel", Path("/data/q"), Path.home() / "notes", Path("/srv/a b"))
    assert make_spec("a", taken_ids=set(), command="x", roots=[]).roots == ()  # declared, with no folder


@pytest.mark.parametrize(
    ("roots", "says"),
    [(True, "not true"), ("Workspace", "other than"), ("/data", "a list of one"), (Path("/data"), "a list of one"),
     (5, "not int"), ({"a": "/x"}, "not dict"), ([5], "`roots[0]`"), (["/a", ""], "`roots[1]`"),
     ([b"/a"], "`roots[0]`"), (["file://other-host/x"], "`roots[0]`"), (["~no-such-user-here/x"], "`roots[0]`")],
)
def test_bad_roots_are_config_errors_naming_the_server_and_what_is_allowed(roots: Any, says: str) -> None:
    with pytest.raises(ToolbenchError) as caught:
        make_spec("files", taken_ids=set(), command="x", roots=roots)
    error = caught.value
    assert error.code == "mcp.config_invalid" and says in error.message
    assert error.message.startswith("MCP server `files`: ")
    if not says.startswith("`roots["):
        assert '"workspace"' in error.message and "false" in error.message and "list of folder paths" in error.message


def test_mcp_json_roots_read_like_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DATA_HOME", "/srv/data")
    path = tmp_path / "conf" / "mcp.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"mcpServers": {
        "listed": {"command": "x", "roots": ["../project", "~/notes", "${env:DATA_HOME}/a", "${DATA_HOME}", "/abs"]},
        "off": {"url": "http://h/mcp", "roots": False},
        "ws": {"command": "x", "roots": "workspace"},
        "plain": {"command": "x"},
        "null": {"command": "x", "roots": None},
        "empty": {"command": "x", "roots": []},
    }}))
    roots = {options.name: options.roots for options in parse_mcp_json(path)}
    assert roots == {"listed": (tmp_path / "project", Path.home() / "notes", Path("/srv/data/a"), Path("/srv/data"),
                                Path("/abs")),
                     "off": False, "ws": "workspace", "plain": "workspace", "null": "workspace", "empty": ()}
    [options] = parse_mcp_json({"mcpServers": {"a": {"command": "x", "roots": ["rel"]}}})  # no file: the cwd
    assert options.roots == (Path.cwd() / "rel",)


def test_bad_mcp_json_roots_are_named_with_their_server_and_never_quote_a_value(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SECRET_DIR", "sk-not-a-folder")
    with pytest.raises(ToolbenchError) as caught:
        parse_mcp_json({"mcpServers": {"good": {"command": "x"}, "yes": {"command": "x", "roots": True},
                                       "one": {"command": "x", "roots": "${SECRET_DIR}"},
                                       "unset": {"command": "x", "roots": ["${NOT_SET_ROOTS_VAR}"]}}})
    message = caught.value.message
    assert caught.value.code == "mcp.config_invalid"
    assert all(f"`{name}`" in message for name in ("yes", "one", "unset")) and "`good`" not in message
    assert "sk-not-a-folder" not in message and "roots[0]" in message


@given(st.lists(st.one_of(st.text(st.sampled_from("ab/.~ -"), min_size=1, max_size=12),
                          st.builds(lambda s: f"file:///{s}", st.text(st.sampled_from("ab/%20"), max_size=8))),
                max_size=5))
def test_the_roots_normaliser_is_idempotent(paths: list[str]) -> None:
    from toolbench.mcp._roots import roots_setting

    try:
        once = roots_setting(paths, base=Path("/base"))
    except ToolbenchError as exc:  # a blank entry, `~name` of no user: refused, with its index
        assert exc.code == "mcp.config_invalid" and "`roots[" in exc.message
        return
    assert isinstance(once, tuple) and all(p.is_absolute() for p in once)
    assert roots_setting(once, base=Path("/elsewhere")) == once
    assert roots_setting(list(map(str, once))) == once
