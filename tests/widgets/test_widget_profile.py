from __future__ import annotations

import json

from toolbench import Profile


def test_an_invalid_budget_shows_the_error_and_changes_nothing(app):
    before = app.state.bench.profile
    inv = app.state.invocation
    app.profile.max_calls.value = 0
    app.profile.apply_button.click()
    assert "agent.profile_invalid" in app.profile.error_view.value
    assert "max_calls_per_run" in app.profile.error_view.value
    assert app.state.bench.profile == before
    assert app.state.invocation is inv


def test_an_invalid_per_tool_budget_shows_the_error(app):
    app.profile.rows["builtin:dice.roll"].budget.value = "lots"
    app.profile.apply_button.click()
    assert "agent.profile_invalid" in app.profile.error_view.value


def test_toggling_allow_and_deny_and_budgets_freezes_a_new_snapshot(app):
    panel = app.profile
    assert panel.rows["extension/demo:fail"].allow.value is True
    panel.rows["extension/demo:fail"].allow.value = False
    panel.rows["extension/demo:weather"].deny.value = True
    panel.rows["builtin:dice.roll"].budget.value = "3"
    panel.inline_limit.value = 1000
    panel.apply_button.click()
    assert panel.error_view.value == ""
    tools = app.state.bench.profile.tools
    assert "extension/demo:fail" not in tools.allow
    assert tools.deny == ("extension/demo:weather",)
    assert tools.max_calls_per_tool == {"builtin:dice.roll": 3}
    assert tools.external_result_inline_char_limit == 1000
    names = list(app.state.invocation.snapshot.call_names)
    assert "dice_roll" in names and "long_report" in names
    assert "fail" not in names and "weather" not in names
    assert list(app.console.call_name.options) == names
    assert "dice_roll</code> 3" in app.console.budget.value


def test_kinds_are_shown_per_tool(app):
    labels = [c.value for c in app.profile.tools.children if type(c).__name__ == "Label"]
    assert "builtin" in labels and "extension" in labels


def test_save_then_load_a_profile_file(app, tmp_path):
    path = tmp_path / "mine.json"
    panel = app.profile
    panel.max_calls.value = 12
    panel.path.value = str(path)
    panel.save_button.click()
    assert Profile.parse(json.loads(path.read_text())).tools.max_calls_per_run == 12
    panel.bundled.value = "default (embedded)"
    panel.load_bundled.click()
    assert app.state.bench.profile.tools.max_calls_per_run == Profile.default().tools.max_calls_per_run
    panel.load_file.click()
    assert app.state.bench.profile.tools.max_calls_per_run == 12
    assert panel.max_calls.value == 12


def test_loading_a_broken_file_shows_the_error(app, tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{"tools": {"nope": 1}}')
    app.profile.path.value = str(path)
    app.profile.load_file.click()
    assert "agent.profile_invalid" in app.profile.error_view.value


def test_enabling_an_unregistered_extension_tool_is_refused_in_the_panel(app, tmp_path):
    path = tmp_path / "ghost.json"
    Profile.default().edit(allow=["extension/ghost:tool"]).save(path)
    before = app.state.bench.profile
    app.profile.path.value = str(path)
    app.profile.load_file.click()
    assert "extension.tool_unavailable" in app.profile.error_view.value
    assert app.state.bench.profile == before
