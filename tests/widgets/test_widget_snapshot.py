from __future__ import annotations

from toolbench.widgets import SnapshotPanel
from toolbench.widgets.snapshot import UNAVAILABLE


def test_bindings_table_lists_call_name_toolid_kind_budget_description(bench):
    bench.profile = bench.profile.edit(max_calls_per_tool={"builtin:dice.roll": 4})
    panel = SnapshotPanel(bench)
    table = panel.bindings.value
    for text in ("dice_roll", "builtin:dice.roll", "extension/demo:weather", "extension", "4", "Roll dice."):
        assert text in table


def test_diagnostics_say_what_was_left_out(bench):
    panel = SnapshotPanel(bench)
    assert "tool.not_implemented" in panel.diagnostics.value or "nothing left out" in panel.diagnostics.value
    bench.enable("mcp/ghost:search")
    panel = SnapshotPanel(bench)
    assert "mcp/ghost:search" in panel.diagnostics.value and "mcp.tool_unavailable" in panel.diagnostics.value


def test_the_protocol_selector_renders_that_providers_json(app):
    panel = app.snapshot
    panel.protocol.value = "openai"
    assert UNAVAILABLE not in panel.rendered.value
    assert "&quot;function&quot;" in panel.rendered.value
    panel.protocol.value = "gemini"
    assert "functionDeclarations" in panel.rendered.value


def test_the_tool_pick_shows_one_tools_entry_as_the_whole_list_renders_it(app):
    import html
    import json
    import re

    panel = app.snapshot
    snapshot = app.state.invocation.snapshot
    assert [v for _label, v in panel.tool.options][1:] == [b.call_name for b in snapshot.bindings]
    for protocol in ("openai", "openai-responses", "anthropic", "gemini"):
        panel.protocol.value = protocol
        panel.tool.value = "dice_roll"
        shown = json.loads(html.unescape(re.sub(r"<[^>]+>", "", panel.rendered.value)))
        whole = snapshot.render(protocol)
        if protocol == "gemini":  # one entry of declarations: the picked one alone
            [entry] = shown
            [declaration] = entry["functionDeclarations"]
            assert declaration in whole[0]["functionDeclarations"] and declaration["name"] == "dice_roll"
        else:
            [entry] = shown
            assert entry in whole and "dice_roll" in json.dumps(entry)
    panel.tool.value = ""
    assert json.loads(html.unescape(re.sub(r"<[^>]+>", "", panel.rendered.value))) == snapshot.render("gemini")


def test_a_missing_protocols_package_is_said_not_raised(bench, monkeypatch):
    from toolbench import Snapshot

    def missing(self, protocol):
        raise ImportError("no protocols")

    monkeypatch.setattr(Snapshot, "render", missing)
    panel = SnapshotPanel(bench)
    assert UNAVAILABLE in panel.rendered.value
    assert panel.error_view.value == ""


def test_changing_the_scene_freezes_a_new_invocation(app):
    before = app.state.invocation
    app.snapshot.scene.value = "session"
    assert app.state.invocation is not before
    assert app.state.invocation.snapshot.scene == "session"
    assert app.state.invocation.id in app.snapshot.title.value
