"""The reference MCP servers, started as users run them, through the whole runtime (issue 13).

`@modelcontextprotocol/server-everything`, `-filesystem` and `-memory` from npm, `mcp-server-time`
and `mcp-server-git` from PyPI. Each is compared with a raw `mcp.Client` on its own process of the
same server: every tool is discovered with its schema, a simple call's text is what the raw client
reads, binary content is kept as attachment files and never inlined, nothing is said twice, and a
server killed in the middle of a call leaves that call's outcome unknown. One bench and one raw
client per server serve the module; the kill tests get a server of their own."""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import os
import re
import signal
import stat
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from mcp_support import child_pids, no_new_children, wait_until
from node_servers import ensure_node_servers
from real_servers import RawClient, make_files, make_repo, pypi_server, raw_text, read_chars

from toolbench import Invocation, Profile, ToolResult, Workbench
from toolbench.mcp import workspace_roots


@dataclass
class Servers:
    bench: Workbench
    raw: dict[str, RawClient]
    commands: dict[str, tuple[list[str], dict[str, str]]]
    files: dict[str, Path]
    repo: Path

    def invocation(self) -> Invocation:
        return self.bench.invocation()

    def call(self, inv: Invocation, server: str, tool: str, arguments: dict[str, Any]) -> ToolResult:
        name = next(b.call_name for b in inv.snapshot.bindings if str(b.tool_id) == f"mcp/{server}:{tool}")
        return inv.call(name, arguments)


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Servers]:
    node_bin = ensure_node_servers()
    base = tmp_path_factory.mktemp("real-servers")
    profile = Profile.default().edit(max_calls_per_run=1000, max_rounds=1000)
    # The files are in the workspace, where a bench's roots (what the filesystem server may
    # use, once told) lead; the raw clients declare the same roots.
    roots = workspace_roots(base / "ws", profile.workspace.visible_roots)
    files = make_files(base / "ws" / "work" / "files")
    repo = make_repo(base / "repo")
    commands = {
        "everything": ([str(node_bin / "mcp-server-everything")], {}),
        "filesystem": ([str(node_bin / "mcp-server-filesystem"), str(base / "ws" / "work" / "files")], {}),
        "memory": ([str(node_bin / "mcp-server-memory")], {}),
        "time": ([pypi_server("mcp-server-time"), "--local-timezone", "UTC"], {}),
        "git": ([pypi_server("mcp-server-git"), "--repository", str(repo)], {}),
    }
    memory = {"toolbench": {"MEMORY_FILE_PATH": str(base / "memory.jsonl")},
              "raw": {"MEMORY_FILE_PATH": str(base / "memory-raw.jsonl")}}
    baseline = child_pids()
    with ThreadPoolExecutor(len(commands)) as pool:  # the raw clients start while the bench connects
        started = {name: pool.submit(RawClient, command, memory["raw"] if name == "memory" else env, roots)
                   for name, (command, env) in commands.items()}
        bench = Workbench(base / "ws", profile=profile)
        for name, (command, env) in commands.items():
            info = bench.mcp.add(name, command=command, env=memory["toolbench"] if name == "memory" else env,
                                 id=name, timeout=60)
            assert info.state == "active", (name, info.diagnostic_code, info.diagnostic, info.stderr_tail)
        raw = {name: future.result() for name, future in started.items()}
    for descriptor in bench.mcp.descriptors():
        bench.enable(descriptor.id)
    try:
        yield Servers(bench, raw, commands, files, repo)
    finally:
        bench.close()
        for client in raw.values():
            client.close()
    assert no_new_children(baseline), "a server process outlived the test module"


# --- discovery -----------------------------------------------------------------------------

@pytest.mark.parametrize("server", ["everything", "filesystem", "memory", "time", "git"])
def test_every_tool_is_discovered_as_the_raw_client_lists_it(servers: Servers, server: str) -> None:
    listed = servers.raw[server].tools()
    info = servers.bench.mcp.info(server)
    assert [t.name for t in info.tools] == [t["name"] for t in listed]
    assert all(t.offered and t.problem_code is None for t in info.tools), [t for t in info.tools if not t.offered]
    schemas = {d.id.name: d.input_schema for d in servers.bench.mcp.descriptors() if d.id.provider == f"mcp/{server}"}
    assert schemas == {t["name"]: t["inputSchema"] for t in listed}
    inv = servers.invocation()
    offered = {str(b.tool_id) for b in inv.snapshot.bindings}
    assert {f"mcp/{server}:{t['name']}" for t in listed} <= offered


# --- simple calls: the raw client's text, said once --------------------------------------------

SIMPLE = [
    ("everything", "echo", {"message": "hello, world"}),
    ("everything", "get-sum", {"a": 2, "b": 40}),
    ("everything", "get-structured-content", {"location": "Chicago"}),
    ("filesystem", "read_text_file", {"path": "{files}/doc.txt"}),
    ("filesystem", "read_text_file", {"path": "{files}/doc.txt", "head": 1}),
    ("filesystem", "read_multiple_files", {"paths": ["{files}/doc.txt", "{files}/sub/a.md"]}),
    ("filesystem", "list_directory", {"path": "{files}"}),
    ("filesystem", "directory_tree", {"path": "{files}"}),
    ("filesystem", "search_files", {"path": "{files}", "pattern": "**/*.md"}),
    ("filesystem", "list_allowed_directories", {}),
    ("memory", "search_nodes", {"query": "nobody"}),
    ("time", "convert_time", {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}),
    ("git", "git_status", {"repo_path": "{repo}"}),
    ("git", "git_diff_unstaged", {"repo_path": "{repo}"}),
    ("git", "git_log", {"repo_path": "{repo}"}),
    ("git", "git_show", {"repo_path": "{repo}", "revision": "HEAD"}),
    ("git", "git_branch", {"repo_path": "{repo}", "branch_type": "local"}),
]


def fill(value: Any, servers: Servers) -> Any:
    if isinstance(value, str):
        return value.format(files=servers.files["text"].parent, repo=servers.repo)
    if isinstance(value, list):
        return [fill(v, servers) for v in value]
    if isinstance(value, dict):
        return {k: fill(v, servers) for k, v in value.items()}
    return value


@pytest.mark.parametrize(("server", "tool", "arguments"), SIMPLE,
                         ids=[f"{s}-{t}-{i}" for i, (s, t, _) in enumerate(SIMPLE)])
def test_a_simple_call_reads_as_the_raw_clients_text(servers: Servers, server: str, tool: str,
                                                      arguments: dict[str, Any]) -> None:
    arguments = fill(arguments, servers)
    wire = servers.raw[server].call(tool, arguments)
    result = servers.call(servers.invocation(), server, tool, arguments)
    assert not result.is_error and not wire.get("isError"), result.content
    assert result.content == raw_text(wire)  # the whole content: no `## Details` repeating it
    assert result.attachments == ()


def test_a_file_read_is_the_file_once_and_inline(servers: Servers) -> None:
    text = servers.files["text"].read_text(encoding="utf-8")
    result = servers.call(servers.invocation(), "filesystem", "read_text_file", {"path": str(servers.files["text"])})
    assert len(text) == 30_600 and result.content == text
    assert result.structured["structuredContent"] == {"content": text}  # the server's answer, kept for records


def test_memory_create_says_each_observation_once(servers: Servers) -> None:
    entities = [{"name": "Ada", "entityType": "person", "observations": ["wrote the first program", "liked maths"]}]
    wire = servers.raw["memory"].call("create_entities", {"entities": entities})
    result = servers.call(servers.invocation(), "memory", "create_entities", {"entities": entities})
    assert result.content == raw_text(wire)
    assert result.content.count("wrote the first program") == 1 and result.content.count("liked maths") == 1


# --- binary content: kept once as files, never inlined ------------------------------------------

def assert_kept(servers: Servers, result: ToolResult, data: bytes, kind: str, mime: str) -> None:
    [ref] = result.attachments
    assert (ref.kind, ref.mime_type, ref.size, ref.sha256) == (kind, mime, len(data), hashlib.sha256(data).hexdigest())
    assert re.fullmatch(r"tool-results/inv_\w+/round-\d{3}-call_[0-9a-f]{16}-1\.\w+", ref.path), ref.path
    path = servers.bench.workspace / ref.path
    assert path.read_bytes() == data
    assert not path.stat().st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)
    encoded = base64.b64encode(data).decode()
    assert encoded[:100] not in result.content and encoded[:100] not in json.dumps(result.structured)


@pytest.mark.parametrize(("name", "kind", "mime"), [("png", "image", "image/png"), ("wav", "audio", "audio/wav")])
def test_a_media_read_keeps_the_file_as_an_attachment(servers: Servers, name: str, kind: str, mime: str) -> None:
    data = servers.files[name].read_bytes()
    inv = servers.invocation()
    result = servers.call(inv, "filesystem", "read_media_file", {"path": str(servers.files[name])})
    assert_kept(servers, result, data, kind, mime)
    assert result.content == "" and not inv.records[-1].externalized  # was 262,816 characters for a 197 KB PNG
    chat = inv.transcript("openai")[-1]
    assert chat["role"] == "tool" and f"`{result.attachments[0].path}`" in chat["content"]
    [block] = inv.transcript("anthropic")[-1]["content"]
    if kind == "image":  # Anthropic takes the image as a block; audio only as the list's line
        assert block["content"][1]["source"]["data"] == base64.b64encode(data).decode()
    else:
        assert isinstance(block["content"], str) and "left out" in block["content"]


def test_the_image_tool_gives_its_text_and_the_image(servers: Servers) -> None:
    wire = servers.raw["everything"].call("get-tiny-image", {})
    result = servers.call(servers.invocation(), "everything", "get-tiny-image", {})
    [image] = [b for b in wire["content"] if b["type"] == "image"]
    assert result.content == raw_text(wire)
    assert_kept(servers, result, base64.b64decode(image["data"]), "image", "image/png")


def test_resources_reach_the_model_text_inline_and_blobs_as_attachments(servers: Servers) -> None:
    inv = servers.invocation()
    text = servers.call(inv, "everything", "get-resource-reference", {"resourceType": "Text", "resourceId": 1})
    assert "Resource `demo://resource/dynamic/text/1` (text/plain):" in text.content
    assert "Resource 1: This is a plaintext resource" in text.content and text.attachments == ()
    wire = servers.raw["everything"].call("get-resource-reference", {"resourceType": "Blob", "resourceId": 2})
    blob = servers.call(inv, "everything", "get-resource-reference", {"resourceType": "Blob", "resourceId": 2})
    [resource] = [b["resource"] for b in wire["content"] if b["type"] == "resource"]
    assert blob.content == raw_text(wire)
    # The server stamps the blob with the time of the call: compare the two answers without it.
    kept = (servers.bench.workspace / blob.attachments[0].path).read_bytes()
    stamp = re.compile(rb"created at [0-9:]+ [AP]M")
    assert stamp.sub(b"", kept) == stamp.sub(b"", base64.b64decode(resource["blob"])) != kept
    assert_kept(servers, blob, kept, "blob", "text/plain")
    links = servers.call(inv, "everything", "get-resource-links", {"count": 2})
    assert "Resource link `demo://resource/dynamic/blob/1`" in links.content
    assert "Resource link `demo://resource/dynamic/text/2`" in links.content


def test_a_gzip_resource_is_a_blob_attachment(servers: Servers) -> None:
    original = b"toolbench keeps binary content as files\n" * 50
    arguments = {"name": "notes.txt.gz", "outputType": "resource",
                 "data": "data:text/plain;base64," + base64.b64encode(original).decode()}
    result = servers.call(servers.invocation(), "everything", "gzip-file-as-resource", arguments)
    assert not result.is_error, result.content
    [ref] = result.attachments
    assert (ref.kind, ref.mime_type, ref.path[-3:]) == ("blob", "application/gzip", ".gz")
    assert ref.uri is not None and ref.uri.endswith("notes.txt.gz")
    assert gzip.decompress((servers.bench.workspace / ref.path).read_bytes()) == original


# --- a killed server ------------------------------------------------------------------------------

@pytest.fixture
def victim(tmp_path: Path) -> Iterator[tuple[Workbench, Invocation, int]]:
    """A bench of its own with one server-everything, for the tests that kill it."""
    command = [str(ensure_node_servers() / "mcp-server-everything")]
    baseline = child_pids()
    bench = Workbench(tmp_path / "ws", profile=Profile.default())
    try:
        info = bench.mcp.add("victim", command=command, id="victim", timeout=30)
        assert info.state == "active" and info.pid is not None, info.diagnostic
        for descriptor in bench.mcp.descriptors():
            bench.enable(descriptor.id)
        yield bench, bench.invocation(), info.pid
    finally:
        bench.close()
    assert no_new_children(baseline), "the killed server left a process behind"


def call_name(inv: Invocation, tool: str) -> str:
    return next(b.call_name for b in inv.snapshot.bindings if str(b.tool_id) == f"mcp/victim:{tool}")


def test_a_server_killed_mid_call_leaves_the_outcome_unknown(victim: tuple[Workbench, Invocation, int]) -> None:
    bench, inv, pid = victim
    before = read_chars(pid)
    results: list[ToolResult] = []
    worker = threading.Thread(target=lambda: results.append(
        inv.call(call_name(inv, "trigger-long-running-operation"), {"duration": 60, "steps": 1})))
    worker.start()
    assert wait_until(lambda: read_chars(pid) > before), "the server never read the request"
    os.killpg(os.getpgid(pid), signal.SIGKILL)
    worker.join(timeout=30)
    [result] = results
    assert result.is_error and result.error_code == "mcp.call_outcome_unknown"
    assert inv.blocked is not None  # nothing more runs in this invocation until the state is checked
    assert inv.call(call_name(inv, "echo"), {"message": "x"}).error_code == "agent.tool_not_started"
    assert wait_until(lambda: bench.mcp.info("victim").state == "failed")


def test_a_server_killed_between_calls_fails_the_next_call_unsent(victim: tuple[Workbench, Invocation, int]) -> None:
    bench, inv, pid = victim
    assert inv.call(call_name(inv, "echo"), {"message": "before"}).content == "Echo: before"
    os.killpg(os.getpgid(pid), signal.SIGKILL)
    assert wait_until(lambda: bench.mcp.info("victim").state == "failed")
    after = inv.call(call_name(inv, "echo"), {"message": "after"})
    assert after.is_error and after.error_code in ("mcp.server_unavailable", "mcp.call_not_sent")
    assert inv.blocked is None  # the call did not run: nothing is unknown
