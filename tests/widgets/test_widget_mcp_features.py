"""The MCP tab's resources, prompts and logs tabs: what a server offers besides tools, read,
filled in and fetched through `bench.mcp`, as MCP Inspector shows it."""

from __future__ import annotations

import time

from tests.mcp.feature_servers import PNG, modern_server
from toolbench import Workbench
from toolbench.widgets._mcp_features import attachment_html
from toolbench.widgets._state import WorkbenchState
from toolbench.widgets.mcp import TABS, McpPanel


def panel_on(bench: Workbench, asked: list[dict[str, object]] | None = None) -> McpPanel:
    bench.mcp.add("features", server=modern_server(asked))
    return McpPanel(WorkbenchState(bench, bench.invocation("chat", id="inv_x")))


def open_tab(panel: McpPanel, name: str) -> None:
    panel.tabs.selected_index = TABS.index(name)


def test_the_resources_tab_lists_reads_text_and_previews_a_blob(bench: Workbench) -> None:
    panel = panel_on(bench)
    views = panel.features
    assert "tb-mcp-resources" in views.resources._dom_classes
    open_tab(panel, "resources")
    listed = views.resource_list.value
    assert "demo://text" in listed and "demo://image.png" in listed and "demo://items/{item}" in listed
    assert "template: fill in" in listed
    views.uri.value = "demo://text"
    views.read_button.click()
    assert "hello, resource" in views.resource_view.value and "text/plain" in views.resource_view.value
    views.uri.value = "demo://image.png"
    views.read_button.click()
    assert "data:image/png;base64," in views.resource_view.value and f"{len(PNG):,} bytes" in views.resource_view.value
    views.uri.value = "demo://items/{item}".replace("{item}", "42")  # a template filled in
    views.read_button.click()
    assert "item 42" in views.resource_view.value
    assert panel.error_code is None


def test_a_subscription_shows_the_updates_it_gets(bench: Workbench) -> None:
    panel = panel_on(bench)
    views = panel.features
    open_tab(panel, "resources")
    views.uri.value = "demo://text"
    views.subscribe_button.click()
    assert "following: demo://text" in views.updates_view.value
    bench.profile = bench.profile.edit(allow=["mcp/features:poke"])
    bench.invocation("chat").call("mcp__features__poke", {"uri": "demo://text"})
    deadline = time.monotonic() + 10
    while "features: demo://text" not in views.updates_view.value and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "features: demo://text" in views.updates_view.value
    views.subscribe_button.click()
    assert "following" not in views.updates_view.value


def test_the_prompts_tab_fills_arguments_with_completion_and_gets_the_messages(bench: Workbench) -> None:
    asked: list[dict[str, object]] = []
    panel = panel_on(bench, asked)
    views = panel.features
    assert "tb-mcp-prompts" in views.prompts._dom_classes
    open_tab(panel, "prompts")
    assert set(views.prompt.options) == {"weather", "picture"}
    views.prompt.value = "weather"
    assert set(views.argument_boxes) == {"city", "days"}
    assert views.argument_boxes["city"].description == "city *"  # required
    views.argument_boxes["city"].value = "Os"
    views.arguments.children[0].children[1].click()  # suggest
    assert asked[-1]["argument"] == {"name": "city", "value": "Os"}
    assert "Oslo" in views.argument_boxes["city"].options
    views.argument_boxes["city"].value = "Oslo"
    views.get_button.click()
    assert "What is the weather in Oslo for 1 day(s)?" in views.prompt_view.value
    views.prompt.value = "picture"
    views.get_button.click()
    assert "Look at this:" in views.prompt_view.value and "data:image/png;base64," in views.prompt_view.value


def test_what_a_server_does_not_offer_is_a_muted_line_not_an_error(bench: Workbench) -> None:
    panel = panel_on(bench)
    views = panel.features
    open_tab(panel, "logs")
    views.ping_button.click()  # a 2026-07-28 session has no ping
    assert "tb-muted" in views.ping_view.value and panel.error_code is None
    views.level.value = "debug"
    assert panel.error_code is None and "no log messages yet" in views.logs_view.value


def test_a_failed_read_is_a_coded_error_in_the_panel(bench: Workbench) -> None:
    panel = panel_on(bench)
    open_tab(panel, "resources")
    panel.features.uri.value = "demo://nothing-here"
    panel.features.read_button.click()
    assert panel.error_code == "mcp.request_failed" and "Traceback" not in panel.error_view.value


def test_an_attachment_that_is_no_image_shows_its_type_and_size() -> None:
    from toolbench.core.results import Attachment

    shown = attachment_html(Attachment("blob", "application/pdf", b"%PDF-1.4"))
    assert "blob: application/pdf, 8 bytes" in shown and "<img" not in shown and "PDF" not in shown
    text = attachment_html(Attachment("blob", "text/plain", b"Resource 2: <b>base64</b>"))
    assert "Resource 2: &lt;b&gt;base64&lt;/b&gt;" in text
