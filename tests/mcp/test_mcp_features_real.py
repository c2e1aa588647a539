"""The reference server `@modelcontextprotocol/server-everything` (stdio, MCP 2025-11-25) through
`bench.mcp`: its static resources and the text and blob ones its templates make, a subscription
and its update, its prompts with arguments, completion with and without context, a log level
and the log messages that follow, ping.

server-everything sends `resources/updated` for the subscribed resources once at once and then
every 5 s after its `toggle-subscriber-updates` tool is called (`resources/subscriptions.js`), and
a log message once at once, then every 5 s, after `toggle-simulated-logging`
(`server/logging.js`); a subscription also logs one `info` line. The waits are bounded at 20 s."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from mcp_support import child_pids, no_new_children, wait_until
from node_servers import ensure_node_servers

from toolbench.core.ids import ToolId
from toolbench.core.loop import LoopThread
from toolbench.mcp import LOG_LEVELS, McpManager, ResourceUpdate

WAIT = 20.0  # over three of the server's 5 s intervals


@pytest.fixture(scope="module")
def everything(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[McpManager, LoopThread]]:
    command = [str(ensure_node_servers() / "mcp-server-everything")]
    baseline = child_pids()
    loop = LoopThread("test-everything-features")
    manager = McpManager(loop, tmp_path_factory.mktemp("everything") / "logs")
    info = manager.add("everything", command=command, timeout=30)
    assert info.state == "active", (info.diagnostic_code, info.diagnostic, info.stderr_tail)
    try:
        yield manager, loop
    finally:
        manager.close()
        loop.close()
    assert no_new_children(baseline), "server-everything outlived the test module"


def tool(everything: tuple[McpManager, LoopThread], name: str) -> str:
    manager, loop = everything
    return loop.run(manager.call(ToolId.parse(f"mcp/everything:{name}"), {})).content


def test_its_static_resources_list_and_read_as_text(everything: tuple[McpManager, LoopThread]) -> None:
    manager, _ = everything
    resources = manager.resources("everything")
    assert resources and all(r.uri.startswith("demo://resource/static/document/") for r in resources)
    assert all(r.server == "everything" and r.problem_code is None for r in resources)
    readme = next(r for r in resources if r.name.endswith(".md"))
    read = manager.read_resource("everything", readme.uri)
    [content] = read.contents
    assert (content.uri, content.mime_type, content.attachment) == (readme.uri, "text/markdown", None)
    assert read.text.strip() and read.text == content.text


def test_its_templates_make_text_and_blob_resources(everything: tuple[McpManager, LoopThread]) -> None:
    manager, _ = everything
    templates = {t.name: t for t in manager.resource_templates("everything")}
    assert templates["Dynamic Text Resource"].uri_template == "demo://resource/dynamic/text/{resourceId}"
    assert templates["Dynamic Blob Resource"].uri_template == "demo://resource/dynamic/blob/{resourceId}"
    text = manager.read_resource("everything", "demo://resource/dynamic/text/1")
    assert text.text.startswith("Resource 1: This is a plaintext resource") and text.attachments == ()
    blob = manager.read_resource("everything", "demo://resource/dynamic/blob/2")
    [attachment] = blob.attachments
    assert (attachment.kind, attachment.mime_type, attachment.uri) == ("blob", "text/plain",
                                                                     "demo://resource/dynamic/blob/2")
    assert attachment.data.startswith(b"Resource 2: This is a base64 blob") and blob.text == ""


def test_a_subscription_gets_the_servers_updates(everything: tuple[McpManager, LoopThread]) -> None:
    manager, _ = everything
    uri = manager.resources("everything")[0].uri
    events: list[ResourceUpdate] = []
    manager.on_resource_updated(events.append)
    manager.subscribe("everything", uri)
    try:
        tool(everything, "toggle-subscriber-updates")  # starts the updates: one now, then every 5 s
        assert wait_until(lambda: bool(events), WAIT), "no resources/updated within the deadline"
        assert events[0] == ResourceUpdate("everything", uri)
    finally:
        tool(everything, "toggle-subscriber-updates")
        manager.unsubscribe("everything", uri)
        manager.on_resource_updated(None)


def test_its_prompts_take_arguments_and_embed_resources(everything: tuple[McpManager, LoopThread]) -> None:
    manager, _ = everything
    prompts = {p.name: p for p in manager.prompts("everything")}
    assert {"simple-prompt", "args-prompt", "completable-prompt", "resource-prompt"} <= set(prompts)
    assert [(a.name, a.required) for a in prompts["args-prompt"].arguments] == [("city", True), ("state", False)]
    [message] = manager.get_prompt("everything", prompts["args-prompt"], {"city": "Oslo"}).messages
    assert (message.role, message.text) == ("user", "What's weather in Oslo?")
    intro, embedded = manager.get_prompt("everything", "resource-prompt",
                                         {"resourceType": "Blob", "resourceId": "3"}).messages
    assert "Blob resource with id: 3" in intro.text
    [attachment] = embedded.attachments
    assert embedded.kind == "resource" and attachment.data.startswith(b"Resource 3: This is a base64 blob")
    assert manager.get_prompt("everything", "simple-prompt").messages[0].text == (
        "This is a simple prompt without arguments.")


def test_completion_narrows_with_the_context(everything: tuple[McpManager, LoopThread]) -> None:
    manager, _ = everything
    assert manager.complete("everything", "completable-prompt", ("department", "E")).values == ("Engineering",)
    assert manager.complete("everything", "completable-prompt", ("name", "")).values == ()
    chosen = manager.complete("everything", "completable-prompt", {"name": "name", "value": "A"},
                              context={"department": "Engineering"})
    assert chosen.values == ("Alice",)
    [template] = [t for t in manager.resource_templates("everything") if "text" in t.uri_template]
    assert manager.complete("everything", template, ("resourceId", "7")).values == ("7",)


def test_a_log_level_then_log_messages_arrive(everything: tuple[McpManager, LoopThread]) -> None:
    manager, _ = everything
    before = len(manager.logs("everything"))
    manager.set_log_level("everything", "debug")
    try:
        tool(everything, "toggle-simulated-logging")  # one message now, then one every 5 s
        assert wait_until(lambda: len(manager.logs("everything")) > before, WAIT), "no log message arrived"
    finally:
        tool(everything, "toggle-simulated-logging")
    message = manager.logs("everything")[-1]
    assert message.server == "everything" and message.level in LOG_LEVELS and isinstance(message.data, str)


def test_ping_answers_with_its_round_trip(everything: tuple[McpManager, LoopThread]) -> None:
    manager, _ = everything
    assert manager.ping("everything") >= 0

