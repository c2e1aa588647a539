"""`mcp.json` placeholders and `envFile`, as VS Code, Cursor and Claude Code read them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from node_servers import node_bin

from toolbench.core.errors import ToolbenchError
from toolbench.core.ids import ToolId
from toolbench.core.loop import LoopThread
from toolbench.mcp import McpManager
from toolbench.mcp._config import ServerOptions, parse_mcp_json


def servers(**entries: Any) -> dict[str, Any]:
    return {"mcpServers": entries}


def config_error(source: Any) -> str:
    with pytest.raises(ToolbenchError) as caught:
        parse_mcp_json(source)
    assert caught.value.code == "mcp.config_invalid"
    return caught.value.message


@pytest.fixture(autouse=True)
def environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TB_TEST_TOKEN", "s3cret")
    monkeypatch.setenv("TB_TEST_EMPTY", "")
    monkeypatch.delenv("TB_TEST_UNSET", raising=False)


def test_the_three_placeholder_forms_are_expanded_in_every_field() -> None:
    [stdio, http] = parse_mcp_json(servers(
        files={"command": "${env:TB_TEST_TOKEN}-bin", "args": ["--key=${TB_TEST_TOKEN}", "${TB_TEST_UNSET:-fallback}"],
               "env": {"KEY": "${env:TB_TEST_TOKEN}", "EMPTY": "${TB_TEST_EMPTY:-used}"},
               "cwd": "${userHome}/${TB_TEST_TOKEN}"},
        web={"url": "https://h/${TB_TEST_TOKEN}/mcp", "headers": {"Authorization": "Bearer ${env:TB_TEST_TOKEN}"}},
    ))
    files, web = stdio.transport, http.transport
    assert files.command == "s3cret-bin" and files.args == ("--key=s3cret", "fallback")
    assert files.env == {"KEY": "s3cret", "EMPTY": "used"}  # `:-` also replaces an empty value
    assert files.cwd == f"{Path.home()}/s3cret"
    assert web.url == "https://h/s3cret/mcp" and web.headers == {"Authorization": "Bearer s3cret"}


def test_text_that_is_not_a_placeholder_stays_as_written() -> None:
    [entry] = parse_mcp_json(servers(x={"command": "run", "args": ["$TB_TEST_TOKEN", "$", "{x}", "100%"],
                                        "env": {"V": "${TB_TEST_TOKEN}"}}))
    assert entry.transport.args == ("$TB_TEST_TOKEN", "$", "{x}", "100%")  # no client expands a bare $NAME
    assert entry.transport.env == {"V": "s3cret"}


@pytest.mark.parametrize(("value", "named"), [
    ("${TB_TEST_UNSET}", "TB_TEST_UNSET"),
    ("${env:TB_TEST_UNSET}", "TB_TEST_UNSET"),
    ("${input:api-key}", "input:api-key"),
    ("${config:editor.tabSize}", "config:editor.tabSize"),
    ("${TB TEST}", "TB TEST"),
])
def test_an_unusable_placeholder_is_a_config_error_naming_it(value: str, named: str) -> None:
    message = config_error(servers(x={"command": "run", "env": {"K": value}}))
    assert named in message and "`env.K`" in message and "s3cret" not in message


def test_every_bad_entry_is_named_in_one_error() -> None:
    message = config_error(servers(a={"command": "${TB_TEST_UNSET}"}, b={"url": "https://h/${TB_TEST_UNSET}"}))
    assert "`a`" in message and "`b`" in message


def test_env_file_is_read_relative_to_the_config_and_env_wins(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text(
        "# secrets\nexport API_KEY=from-file\nQUOTED=\"two\\nlines\"\nSINGLE='${NOT_EXPANDED}'\n"
        "PLAIN=value # a comment\nSHARED=file\n\n", encoding="utf-8")
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps(servers(x={"command": "run", "envFile": ".env", "env": {"SHARED": "env"}})))
    [entry] = parse_mcp_json(config)
    assert entry.transport.env == {"API_KEY": "from-file", "QUOTED": "two\nlines", "SINGLE": "${NOT_EXPANDED}",
                            "PLAIN": "value", "SHARED": "env"}


@pytest.mark.parametrize(("entry", "named"), [
    ({"command": "run", "envFile": "missing.env"}, "missing.env"),
    ({"url": "https://h/mcp", "envFile": ".env"}, "envFile"),
    ({"command": "run", "envFile": "${TB_TEST_UNSET}/.env"}, "TB_TEST_UNSET"),
])
def test_a_bad_env_file_is_a_config_error(tmp_path: Path, entry: dict[str, Any], named: str) -> None:
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps(servers(x=entry)))
    assert named in config_error(config)


def test_a_malformed_env_file_line_is_named(tmp_path: Path) -> None:
    (tmp_path / "bad.env").write_text("GOOD=1\nnot a pair\n", encoding="utf-8")
    assert "line 2" in config_error(servers(x={"command": "run", "envFile": str(tmp_path / "bad.env")}))


def test_a_spec_does_not_show_its_secrets() -> None:
    spec = ServerOptions.of("x", command="run", env={"KEY": "s3cret"}).register(set())
    http = ServerOptions.of("y", url="https://h/mcp", headers={"Authorization": "Bearer s3cret"}).register(set())
    assert "s3cret" not in repr(spec) and "s3cret" not in repr(http)


def test_a_server_gets_the_expanded_environment(loop: LoopThread, manager: McpManager, tmp_path: Path) -> None:
    (tmp_path / "server.env").write_text("FROM_FILE=yes\n", encoding="utf-8")
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps(servers(everything={
        "command": node_bin("mcp-server-everything"), "args": ["stdio"], "envFile": "server.env",
        "env": {"TOKEN": "${env:TB_TEST_TOKEN}", "MODE": "${TB_TEST_UNSET:-default}"}, "id": "everything"})))
    [info] = manager.load_config(config)
    assert info.state == "active", info.diagnostic
    env = json.loads(loop.run(manager.call(ToolId.parse("mcp/everything:get-env"), {})).content)
    assert (env["TOKEN"], env["MODE"], env["FROM_FILE"]) == ("s3cret", "default", "yes")


def test_python_registrations_are_taken_literally() -> None:
    spec = ServerOptions.of("x", command="run", env={"K": "${TB_TEST_TOKEN}"}).register(set())
    assert spec.transport.env == {"K": "${TB_TEST_TOKEN}"}  # only mcp.json speaks the clients' placeholder language
