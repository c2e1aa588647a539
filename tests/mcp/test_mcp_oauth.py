"""OAuth 2.1 sign-in to HTTP servers, against the official conformance suite's auth servers.

The suite's scenario servers (started alone, as its interactive mode does) are real: a protected
MCP server, its protected-resource metadata, and an authorization server with registration,
PKCE checks and a token endpoint. The person's browser is played by the `on_authorize`
handler: it opens the authorization URL, whose redirect lands on toolbench's loopback port.
"""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from node_servers import NODE_BIN, ensure_node_servers

from toolbench import Workbench
from toolbench.core.errors import ToolbenchError
from toolbench.mcp import OAuth
from toolbench.mcp._config import parse_mcp_json


class Scenario:
    """One conformance scenario's servers, running until the test ends."""

    def __init__(self, name: str) -> None:
        ensure_node_servers()
        env = {**os.environ, "PATH": f"{NODE_BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
        self.process = subprocess.Popen([str(NODE_BIN / "conformance"), "client", "--scenario", name],
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
        assert self.process.stdout is not None
        for _ in range(20):
            line = self.process.stdout.readline()
            if line.startswith("Server URL: "):
                self.url = line.split(": ", 1)[1].strip()
                return
        self.process.kill()
        raise AssertionError(f"the conformance harness did not start {name}")

    def stop(self) -> str:
        """Stop the servers; what the harness printed (its checks)."""
        self.process.terminate()
        out, _ = self.process.communicate(timeout=30)
        return out


@pytest.fixture
def scenario() -> Iterator[type[Scenario]]:
    started: list[Scenario] = []

    class Started(Scenario):
        def __init__(self, name: str) -> None:
            super().__init__(name)
            started.append(self)

    yield Started
    for one in started:
        if one.process.poll() is None:
            one.stop()


@pytest.fixture
def tokens(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "home" / "tokens"
    monkeypatch.setenv("TOOLBENCH_TOKEN_DIR", str(folder))
    return folder


class Browser:
    """The person: opens each authorization URL (its redirect goes to toolbench's loopback port)."""

    def __init__(self) -> None:
        self.opened: list[str] = []

    def __call__(self, url: str) -> None:
        self.opened.append(url)
        with urllib.request.urlopen(url, timeout=20) as page:
            self.page = page.read().decode()


def _issuer(url: str) -> str:
    """The authorization server the resource's metadata names (what a careful user configures)."""
    parts = urlsplit(url)
    with urllib.request.urlopen(f"{parts.scheme}://{parts.netloc}/.well-known/oauth-protected-resource{parts.path}",
                                timeout=10) as reply:
        issuer: str = json.loads(reply.read())["authorization_servers"][0]
        return issuer


def _bench(tmp_path: Path, name: str = "ws") -> Workbench:
    return Workbench(workspace=tmp_path / name)


def _allow(bench: Workbench, info: object) -> None:
    bench.profile = bench.profile.edit(allow=[str(t.tool_id) for t in info.tools if t.tool_id])  # type: ignore[attr-defined]


def test_a_sign_in_round_trip_with_pkce_through_the_loopback_redirect(
        tmp_path: Path, tokens: Path, scenario: type[Scenario]) -> None:
    server = scenario("auth/metadata-default")
    browser = Browser()
    with _bench(tmp_path) as bench:
        bench.mcp.on_authorize(browser)
        info = bench.mcp.add("secured", url=server.url, timeout=30)
        assert info.state == "active", info.diagnostic
        [url] = browser.opened
        query = {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}
        assert query["code_challenge_method"] == "S256" and len(query["code_challenge"]) == 43
        redirect = urlsplit(query["redirect_uri"])
        assert (redirect.scheme, redirect.hostname, redirect.path) == ("http", "127.0.0.1", "/callback")
        assert "Signed in" in browser.page  # what the person's tab shows
        _allow(bench, info)
        result = bench.invocation("chat").call("mcp__secured__test-tool", {})
        assert (result.is_error, result.content) == (False, "test")
        assert bench.mcp.signed_in("secured")
    checks = server.stop()
    assert "pkce-verifier-matches-challenge" in checks and "FAILURE" not in checks
    # The tokens: one file, owner-only, in an owner-only folder outside the workspace.
    [file] = list(tokens.iterdir())
    assert stat.S_IMODE(file.stat().st_mode) == 0o600 and stat.S_IMODE(tokens.stat().st_mode) == 0o700
    assert json.loads(file.read_text())["tokens"]["access_token"].startswith("test-token-")


def test_a_stored_token_signs_in_again_without_a_person(
        tmp_path: Path, tokens: Path, scenario: type[Scenario]) -> None:
    server = scenario("auth/metadata-default")
    with _bench(tmp_path, "first") as bench:
        bench.mcp.on_authorize(Browser())
        assert bench.mcp.add("secured", url=server.url, timeout=30).state == "active"

    def nobody(url: str) -> None:
        raise AssertionError("asked a person to sign in although a token is stored")

    with _bench(tmp_path, "second") as bench:
        bench.mcp.on_authorize(nobody)
        assert bench.mcp.add("secured", url=server.url, timeout=30).state == "active"
        bench.mcp.sign_out("secured")
        assert not bench.mcp.signed_in("secured")
        bench.mcp.on_authorize(False)
        info = bench.mcp.refresh("secured", restart=True)[0]
        assert (info.state, info.diagnostic_code) == ("failed", "mcp.sign_in_required")
        assert "toolbench check --sign-in" in (info.diagnostic or "")


def test_a_stale_stored_token_is_refreshed_without_a_person(
        tmp_path: Path, tokens: Path, scenario: type[Scenario]) -> None:
    server = scenario("auth/metadata-default")
    with _bench(tmp_path, "first") as bench:
        bench.mcp.on_authorize(Browser())
        assert bench.mcp.add("secured", url=server.url, timeout=30).state == "active"
    [file] = list(tokens.iterdir())
    stored = json.loads(file.read_text())
    old = stored["tokens"]["access_token"]
    # An hour later: the access token has expired; the server issued a refresh token with it.
    stored["tokens"]["refresh_token"], stored["expires_at"] = "refresh-1", stored["expires_at"] - 7200
    file.write_text(json.dumps(stored))

    def nobody(url: str) -> None:
        raise AssertionError("asked a person to sign in although the token could be refreshed")

    with _bench(tmp_path, "second") as bench:
        bench.mcp.on_authorize(nobody)
        assert bench.mcp.add("secured", url=server.url, timeout=30).state == "active"
    refreshed = json.loads(file.read_text())
    assert refreshed["tokens"]["access_token"] != old and refreshed["expires_at"] > stored["expires_at"] + 7000


def test_no_token_is_written_anywhere_but_the_token_store(
        tmp_path: Path, tokens: Path, scenario: type[Scenario], capfd: pytest.CaptureFixture[str]) -> None:
    server = scenario("auth/metadata-default")
    with _bench(tmp_path) as bench:
        bench.mcp.on_authorize(Browser())
        info = bench.mcp.add("secured", url=server.url, timeout=30)
        _allow(bench, info)
        inv = bench.invocation("chat")
        inv.call("mcp__secured__test-tool", {})
        from toolbench.widgets._state import WorkbenchState
        from toolbench.widgets.mcp import McpPanel

        panel = McpPanel(WorkbenchState(bench, inv))
        panel.server.value = "secured"
        views = [panel.server_list.children[0].children[0].value, panel.diagnostics_view.value,
                 panel.tools_view.value, *(str(o) for o in panel.trace.options)]
        seen = [repr(bench.mcp.info("secured")), repr(bench.mcp.servers), repr(inv.records), *views,
                *(m.text for m in bench.mcp.trace("secured")), inv.to_dataframe().to_csv()]
        workspace = bench.workspace
    [file] = list(tokens.iterdir())
    token = json.loads(file.read_text())["tokens"]["access_token"]
    out, err = capfd.readouterr()
    written = [p.read_bytes().decode(errors="replace") for p in workspace.rglob("*") if p.is_file()]
    assert written, "the workspace holds the run's records"
    assert not [text for text in [*seen, *written, out, err] if token in text]


def test_check_says_a_server_needs_sign_in_then_passes_with_the_stored_token(
        tmp_path: Path, tokens: Path, scenario: type[Scenario]) -> None:
    server = scenario("auth/metadata-default")
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"secured": {"type": "http", "url": server.url}}}))
    env = {**os.environ, "TOOLBENCH_TOKEN_DIR": str(tokens)}
    command = [sys.executable, "-m", "toolbench", "check", "--mcp-config", str(config), "--workspace",
               str(tmp_path / "ws")]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 2
    [line] = done.stderr.splitlines()
    assert re.match(r"toolbench: mcp\.sign_in_required: MCP server `secured`: ", line), line
    with _bench(tmp_path, "person") as bench:  # a person signs in once
        bench.mcp.on_authorize(Browser())
        bench.mcp.load_config(config)
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    assert (done.returncode, done.stderr) == (0, ""), done.stdout
    token = json.loads(next(tokens.iterdir()).read_text())["tokens"]["access_token"]
    assert token not in done.stdout


def test_client_credentials_from_mcp_json_need_no_person(
        tmp_path: Path, tokens: Path, scenario: type[Scenario]) -> None:
    server = scenario("auth/client-credentials-basic")
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"machine": {"url": server.url, "oauth": {
        "grant": "client_credentials", "clientId": "conformance-test-client", "clientSecret": "${env:CC_SECRET}",
        "issuer": _issuer(server.url)}}}}))
    env = {**os.environ, "TOOLBENCH_TOKEN_DIR": str(tokens), "CC_SECRET": "conformance-test-secret"}
    done = subprocess.run([sys.executable, "-m", "toolbench", "check", "--mcp-config", str(config), "--workspace",
                           str(tmp_path / "ws")], capture_output=True, text=True, env=env, timeout=120)
    assert (done.returncode, done.stderr) == (0, ""), done.stdout
    assert "conformance-test-secret" not in done.stdout
    assert "client-credentials-basic-auth" in server.stop()


def test_a_refused_authorization_is_a_coded_failure(tmp_path: Path, tokens: Path, scenario: type[Scenario]) -> None:
    server = scenario("auth/metadata-default")

    def deny(url: str) -> None:  # the person clicks "Deny": the server redirects with error=access_denied
        redirect = parse_qs(urlsplit(url).query)["redirect_uri"][0]
        state = parse_qs(urlsplit(url).query)["state"][0]
        urllib.request.urlopen(f"{redirect}?error=access_denied&error_description=no&state={state}", timeout=10)

    with _bench(tmp_path) as bench:
        bench.mcp.on_authorize(deny)
        info = bench.mcp.add("secured", url=server.url, timeout=30)
    assert (info.state, info.diagnostic_code) == ("failed", "mcp.sign_in_failed")
    assert "access_denied: no" in (info.diagnostic or "")


def test_oauth_in_mcp_json_is_read_with_placeholders_and_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SECRET", "s3")
    [options] = parse_mcp_json({"mcpServers": {"x": {"url": "https://h/mcp", "oauth": {
        "clientId": "app", "clientSecret": "${env:SECRET}", "scopes": ["read", "write"], "callbackPort": 8765}}}})
    oauth = options.transport.oauth  # type: ignore[attr-defined]
    assert oauth == OAuth(client_id="app", client_secret="s3", scopes=("read", "write"), callback_port=8765)
    assert "s3" not in repr(oauth) and "s3" not in repr(options)
    bad = [({"grant": "password"}, "`oauth.grant` is one of"), ({"callbackPort": 0}, "port number"),
           ({"grant": "client_credentials"}, "needs `client_id`, `client_secret`"),
           ({"clientMetadataUrl": "http://x/y"}, "https://"), ({"client_id": "a"}, "`oauth` takes clientId"),
           ({"scopes": [""]}, "list of scope names")]
    for value, message in bad:
        with pytest.raises(ToolbenchError) as caught:
            parse_mcp_json({"mcpServers": {"x": {"url": "https://h/mcp", "oauth": value}}})
        assert caught.value.code == "mcp.config_invalid" and message in caught.value.message, value
    with pytest.raises(ToolbenchError, match="a stdio server takes no `oauth`"):
        parse_mcp_json({"mcpServers": {"x": {"command": "srv", "oauth": {"clientId": "a"}}}})


def test_a_token_folder_inside_the_workspace_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        scenario: type[Scenario]) -> None:
    server = scenario("auth/metadata-default")
    monkeypatch.setenv("TOOLBENCH_TOKEN_DIR", str(tmp_path / "ws" / "notes" / "tokens"))
    with _bench(tmp_path) as bench:
        bench.mcp.on_authorize(Browser())
        info = bench.mcp.add("secured", url=server.url, timeout=30)
        assert (info.state, info.diagnostic_code) == ("failed", "mcp.token_store_unsafe")
        assert not (bench.workspace / "notes").exists()


def test_the_app_offers_sign_in_and_shows_the_page_to_open(
        tmp_path: Path, tokens: Path, scenario: type[Scenario]) -> None:
    import threading
    import time

    from toolbench.widgets._state import WorkbenchState
    from toolbench.widgets.mcp import McpPanel

    server = scenario("auth/metadata-default")
    with _bench(tmp_path) as bench:
        bench.mcp.on_authorize(False)
        assert bench.mcp.add("secured", url=server.url, timeout=30).diagnostic_code == "mcp.sign_in_required"
        panel = McpPanel(WorkbenchState(bench, bench.invocation("chat", id="inv_x")))
        button = panel.row_buttons["secured"]["signin"]
        assert "tb-mcp-signin" in button._dom_classes
        shown: list[str] = []

        def person() -> None:  # watches the panel, then opens the link it shows
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and "href=" not in panel.signin_link.value:
                time.sleep(0.05)
            shown.append(panel.signin_link.value)
            href = re.search(r"href='([^']+)'", panel.signin_link.value)
            if href:
                urllib.request.urlopen(href.group(1).replace("&amp;", "&"), timeout=20).read()

        watcher = threading.Thread(target=person, daemon=True)
        watcher.start()
        button.click()
        watcher.join(30)
        assert "open the authorization page" in shown[0] and "target='_blank'" in shown[0]
        assert bench.mcp.info("secured").state == "active"
        assert panel.signin_link.value == "" and "signin" not in panel.row_buttons["secured"]


def test_check_sign_in_prints_the_page_to_open_and_keeps_the_token(
        tmp_path: Path, tokens: Path, scenario: type[Scenario]) -> None:
    server = scenario("auth/metadata-default")
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"secured": {"url": server.url}}}))
    env = {**os.environ, "TOOLBENCH_TOKEN_DIR": str(tokens), "BROWSER": "true"}  # a browser that opens nothing
    command = [sys.executable, "-m", "toolbench", "check", "--mcp-config", str(config), "--sign-in",
               "--workspace", str(tmp_path / "ws")]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert process.stderr is not None
        line = process.stderr.readline()  # the one line the person reads
        assert line.startswith("Sign in to MCP server `secured`: open http://localhost:"), line
        with urllib.request.urlopen(line.split(": open ", 1)[1].strip(), timeout=20) as page:
            assert b"Signed in" in page.read()
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert (process.returncode, err) == (0, ""), out
    assert "secured (http, active): 1 tool(s)" in out
    assert json.loads(next(tokens.iterdir()).read_text())["tokens"]["access_token"] not in out + line


def test_a_linked_token_folder_or_file_is_refused(tmp_path: Path) -> None:
    import asyncio

    from mcp.shared.auth import OAuthToken

    from toolbench.mcp._token_store import TokenFolder

    real = tmp_path / "elsewhere"
    real.mkdir()
    (tmp_path / "tokens").symlink_to(real)
    with pytest.raises(ToolbenchError) as caught:
        TokenFolder(tmp_path / "tokens").file("s", "https://h/mcp").read()
    assert caught.value.code == "mcp.token_store_unsafe"
    folder = TokenFolder(tmp_path / "own")
    store = folder.file("s", "https://h/mcp")
    asyncio.run(store.set_tokens(OAuthToken(access_token="t0", expires_in=60)))
    target = tmp_path / "planted.json"
    target.write_text("{}")
    (folder.path / store.name).unlink()
    (folder.path / store.name).symlink_to(target)
    with pytest.raises(ToolbenchError) as caught:
        store.read()
    assert caught.value.code == "mcp.token_store_unsafe"
    with pytest.raises(ToolbenchError):  # nor written through: the planted file is left as it was
        asyncio.run(store.set_tokens(OAuthToken(access_token="t1")))
    assert target.read_text() == "{}"
