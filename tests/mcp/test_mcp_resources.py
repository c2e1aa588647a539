"""A server's resources through `bench.mcp`, with in-process servers: listings over pages (and
a paginator that never ends), text and blob reads, subscriptions on both protocol revisions
(`resources/subscribe`, and the `subscriptions/listen` stream of 2026-07-28), tool-list changes
re-listed, and the coded errors: no capability, a server error, a timeout, a server not active."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Callable
from typing import Any

import pytest
from feature_servers import PNG, LegacyState, bare_server, legacy, legacy_server, modern_server, paged_server
from mcp.server.mcpserver import MCPServer
from mcp_support import wait_until

from toolbench.core.errors import ToolbenchError
from toolbench.core.results import ToolOutput
from toolbench.mcp import MAX_PAGES, McpManager, ResourceUpdate
from toolbench.mcp._mapping import map_tool_result

Call = Callable[..., ToolOutput]


def code_of(action: Callable[[], Any]) -> str:
    with pytest.raises(ToolbenchError) as info:
        action()
    return info.value.code


# --- listings -------------------------------------------------------------------------------

def test_resources_are_listed_across_every_page(manager: McpManager) -> None:
    server, asked = paged_server(3)
    manager.add("paged", server=server)
    listed = manager.resources("paged")
    assert [r.uri for r in listed] == [f"demo://r/{p}/{i}" for p in range(3) for i in range(2)]
    assert asked == [None, "1", "2"]
    assert {r.server for r in listed} == {"paged"} and all(r.problem_code is None for r in listed)


def test_a_paginator_that_never_ends_stops_at_max_pages_and_keeps_the_server(manager: McpManager) -> None:
    server, asked = paged_server(None)
    manager.add("endless", server=server)
    assert code_of(lambda: manager.resources("endless")) == "mcp.request_failed"
    assert len(asked) == MAX_PAGES
    assert manager.info("endless").state == "active"


def test_a_repeated_page_cursor_is_refused(manager: McpManager) -> None:
    server, asked = paged_server(5, repeat=True)
    manager.add("loops", server=server)
    with pytest.raises(ToolbenchError, match="repeated") as info:
        manager.resources("loops")
    assert info.value.code == "mcp.request_failed" and asked == [None, "1"]


def test_resources_and_templates_carry_what_the_server_listed(manager: McpManager) -> None:
    manager.add("features", server=modern_server())
    text = next(r for r in manager.resources("features") if r.uri == "demo://text")
    assert (text.name, text.mime_type, text.description) == ("text", "text/plain", "a text")
    assert text.to_json()["mimeType"] == "text/plain"
    [template] = manager.resource_templates("features")
    assert (template.uri_template, template.name, template.mime_type) == ("demo://items/{item}", "item", "text/plain")


# --- reads ----------------------------------------------------------------------------------

def test_a_text_resource_reads_verbatim_and_a_blob_becomes_an_attachment(manager: McpManager) -> None:
    manager.add("features", server=modern_server())
    text = manager.read_resource("features", "demo://text")
    assert (text.server, text.uri, text.text, text.attachments) == ("features", "demo://text", "hello, resource", ())
    [content] = text.contents
    assert (content.mime_type, content.problem) == ("text/plain", None)
    blob = manager.read_resource("features", "demo://image.png")
    [attachment] = blob.attachments
    assert (attachment.data, attachment.mime_type, attachment.uri) == (PNG, "image/png", "demo://image.png")
    assert blob.text == "" and blob.contents[0].text is None
    # the tool-result rule, not a second one: an embedded blob resource maps to the same attachment
    wire = {"uri": "demo://image.png", "mimeType": "image/png", "blob": base64.b64encode(PNG).decode()}
    assert map_tool_result({"content": [{"type": "resource", "resource": wire}]}).attachments == (attachment,)


def test_a_template_resource_reads_through_its_uri(manager: McpManager) -> None:
    manager.add("features", server=modern_server())
    assert manager.read_resource("features", "demo://items/42").text == "item 42"


def test_a_server_error_is_request_failed_with_the_json_rpc_code(manager: McpManager) -> None:
    server, _ = paged_server(1)
    manager.add("paged", server=server)
    with pytest.raises(ToolbenchError) as info:
        manager.read_resource("paged", "demo://missing")
    assert info.value.code == "mcp.request_failed"
    assert "-32602" in info.value.message and "demo://missing" in info.value.message
    assert manager.info("paged").state == "active"


def test_a_read_past_the_timeout_is_request_timeout_and_the_server_stays(manager: McpManager) -> None:
    manager.add("features", server=modern_server(), timeout=0.5)
    assert code_of(lambda: manager.read_resource("features", "demo://slow")) == "mcp.request_timeout"
    assert manager.info("features").state == "active"
    assert manager.read_resource("features", "demo://text").text == "hello, resource"


# --- what is refused, and why ---------------------------------------------------------------

@pytest.mark.parametrize("action", [
    lambda m: m.resources("bare"),
    lambda m: m.resource_templates("bare"),
    lambda m: m.read_resource("bare", "demo://x"),
    lambda m: m.subscribe("bare", "demo://x"),
    lambda m: m.prompts("bare"),
    lambda m: m.get_prompt("bare", "p"),
    lambda m: m.complete("bare", "p", ("a", "")),
])
def test_a_server_without_the_capability_says_so(manager: McpManager, action: Callable[[McpManager], Any]) -> None:
    manager.add("bare", server=bare_server())
    with pytest.raises(ToolbenchError, match="MCP server `bare` declares no") as info:
        action(manager)
    assert info.value.code == "mcp.capability_missing"


def test_a_2025_server_without_logging_says_so_and_still_answers_ping(manager: McpManager) -> None:
    manager.add("bare", transport=legacy(bare_server()))
    assert code_of(lambda: manager.set_log_level("bare", "info")) == "mcp.capability_missing"
    assert manager.ping("bare") >= 0


def test_a_server_that_is_not_active_is_unavailable_and_an_unknown_one_unknown(manager: McpManager) -> None:
    manager.add("later", server=modern_server(), connect=False)
    manager.add("off", server=modern_server(), enabled=False)
    with pytest.raises(ToolbenchError, match="refresh") as info:
        manager.resources("later")
    assert info.value.code == "mcp.server_unavailable"
    with pytest.raises(ToolbenchError, match="enable") as info:
        manager.read_resource("off", "demo://text")
    assert info.value.code == "mcp.server_unavailable"
    assert code_of(lambda: manager.prompts("nobody")) == "mcp.server_unknown"


@pytest.mark.parametrize("uri", ["", None, 3])
def test_a_uri_that_is_not_text_is_misuse(manager: McpManager, uri: Any) -> None:
    manager.add("features", server=modern_server())
    assert code_of(lambda: manager.read_resource("features", uri)) == "bench.misuse"
    assert code_of(lambda: manager.subscribe("features", uri)) == "bench.misuse"


def test_on_resource_updated_returns_the_handler_it_replaces_and_takes_only_callables(manager: McpManager) -> None:
    def first(event: ResourceUpdate) -> None:
        return None

    assert manager.on_resource_updated(first) is None
    assert manager.on_resource_updated(None) is first
    assert code_of(lambda: manager.on_resource_updated("not a handler")) == "bench.misuse"  # type: ignore[arg-type]


# --- subscriptions: 2026-07-28 (subscriptions/listen) ----------------------------------------

def _sync_and_async(events: list[ResourceUpdate]) -> list[Callable[[ResourceUpdate], Any]]:
    async def later(event: ResourceUpdate) -> None:
        await asyncio.sleep(0)
        events.append(event)

    return [events.append, later]


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_a_2026_subscription_delivers_updates_through_a_listen_stream(manager: McpManager, call: Call,
                                                                     kind: str) -> None:
    events: list[ResourceUpdate] = []
    manager.on_resource_updated(_sync_and_async(events)[kind == "async"])
    manager.add("features", server=modern_server())
    manager.subscribe("features", "demo://text")
    manager.subscribe("features", "demo://text")  # one subscription
    call("mcp/features:poke", uri="demo://text")
    assert wait_until(lambda: bool(events)), "no resources/updated arrived"
    assert events[0] == ResourceUpdate("features", "demo://text")
    assert events[0].to_json() == {"server": "features", "uri": "demo://text"}
    listens = [m for m in manager.trace("features") if m.method == "subscriptions/listen"]
    assert len(listens) == 1 and "demo://text" in listens[0].text


def test_a_2026_unsubscribe_stops_the_updates_of_that_resource(manager: McpManager, call: Call) -> None:
    events: list[ResourceUpdate] = []
    manager.on_resource_updated(events.append)
    manager.add("features", server=modern_server())
    manager.subscribe("features", "demo://text")
    manager.subscribe("features", "demo://image.png")
    manager.unsubscribe("features", "demo://text")
    manager.unsubscribe("features", "demo://never")  # not followed: nothing to do
    call("mcp/features:poke", uri="demo://text")
    call("mcp/features:poke", uri="demo://image.png")
    assert wait_until(lambda: any(e.uri == "demo://image.png" for e in events))
    assert [e.uri for e in events] == ["demo://image.png"]  # the stream is ordered: text came first, if at all


def test_a_2026_server_that_serves_no_listen_stream_declares_no_subscriptions(manager: McpManager) -> None:
    server = MCPServer("quiet", subscriptions=False)

    @server.resource("demo://text")
    def text() -> str:
        return "t"

    manager.add("quiet", server=server)
    with pytest.raises(ToolbenchError, match="no resource subscriptions") as info:
        manager.subscribe("quiet", "demo://text")
    assert info.value.code == "mcp.capability_missing"


def test_2026_sessions_have_no_ping_or_log_level(manager: McpManager) -> None:
    manager.add("features", server=modern_server())
    assert code_of(lambda: manager.ping("features")) == "mcp.not_in_protocol"
    assert code_of(lambda: manager.set_log_level("features", "debug")) == "mcp.not_in_protocol"


# --- subscriptions: 2025 (resources/subscribe) -----------------------------------------------

def test_a_2025_subscription_uses_resources_subscribe_and_delivers_updates(manager: McpManager, call: Call) -> None:
    state = LegacyState()
    events: list[ResourceUpdate] = []
    manager.on_resource_updated(events.append)
    manager.add("old", transport=legacy(legacy_server(state)))
    manager.subscribe("old", "demo://a")
    manager.subscribe("old", "demo://a")
    assert state.subscribed == ["demo://a"]
    call("mcp/old:poke", uri="demo://a")
    assert wait_until(lambda: bool(events))
    assert events == [ResourceUpdate("old", "demo://a")]
    manager.unsubscribe("old", "demo://a")
    manager.unsubscribe("old", "demo://a")
    assert state.unsubscribed == ["demo://a"]
    assert not any(m.method == "subscriptions/listen" for m in manager.trace("old"))


def test_a_2025_ping_answers_with_its_round_trip(manager: McpManager) -> None:
    manager.add("old", transport=legacy(legacy_server(LegacyState())))
    seconds = manager.ping("old")
    assert isinstance(seconds, float) and seconds >= 0


def test_a_handler_that_raises_does_not_break_the_session(manager: McpManager, call: Call) -> None:
    def broken(event: ResourceUpdate) -> None:
        raise RuntimeError("display failed")

    manager.on_resource_updated(broken)
    manager.add("old", transport=legacy(legacy_server(LegacyState())))
    manager.subscribe("old", "demo://a")
    call("mcp/old:poke", uri="demo://a")
    assert call("mcp/old:poke", uri="demo://a").content == "done"
    assert manager.read_resource("old", "demo://a").text == "a"


# --- tools/list_changed ---------------------------------------------------------------------

def test_a_tool_list_change_is_listed_again(manager: McpManager, call: Call) -> None:
    state = LegacyState()
    manager.add("old", transport=legacy(legacy_server(state)))
    assert "grown" not in [t.name for t in manager.info("old").tools]
    call("mcp/old:grow")
    assert wait_until(lambda: "grown" in [t.name for t in manager.info("old").tools]), "the tools were not re-listed"
    assert "mcp/old:grown" in {str(d.id) for d in manager.descriptors()}
    assert call("mcp/old:grown").content == "done"


def test_a_2026_tool_list_change_waits_for_refresh(manager: McpManager, call: Call) -> None:
    manager.add("features", server=modern_server())
    call("mcp/features:grow")
    assert "grown" not in [t.name for t in manager.info("features").tools]  # no stream: nothing arrived
    manager.refresh("features")
    assert "grown" in [t.name for t in manager.info("features").tools]


def test_the_server_info_says_which_revision_and_capabilities_the_session_has(manager: McpManager) -> None:
    manager.add("features", server=modern_server())
    manager.add("old", transport=legacy(legacy_server(LegacyState())))
    manager.add("bare", server=bare_server())
    modern, old, bare = manager.info("features"), manager.info("old"), manager.info("bare")
    assert (modern.protocol_version, old.protocol_version) == ("2026-07-28", "2025-11-25")
    assert modern.server_capabilities is not None and "prompts" in modern.server_capabilities
    assert old.server_capabilities is not None and old.server_capabilities["resources"]["subscribe"] is True
    assert bare.server_capabilities is not None and "resources" not in bare.server_capabilities
