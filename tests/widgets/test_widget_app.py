from __future__ import annotations

import subprocess
import sys

import ipywidgets as w

from toolbench.widgets import (
    ApprovalPanel,
    CallConsole,
    HistoryTable,
    McpPanel,
    ProfilePanel,
    ResultViewer,
    SnapshotPanel,
    ToolList,
    WorkbenchApp,
)
from toolbench.widgets._arguments_box import ArgumentsBox
from toolbench.widgets._file_widget import FileView

STABLE = ("tb-app", "tb-tool-list", "tb-profile", "tb-snapshot", "tb-console", "tb-call-name", "tb-arguments",
          "tb-form", "tb-call-button", "tb-result", "tb-result-content", "tb-result-file", "tb-file-prev",
          "tb-file-next", "tb-file-search", "tb-file-page", "tb-pending", "tb-history", "tb-history-rerun",
          "tb-history-copy", "tb-history-copy-json", "tb-mcp", "tb-trace", "tb-approval", "tb-file-view",
          "tb-call-cancel", "tb-call-args")


def _walk(widget):
    yield widget
    for child in getattr(widget, "children", ()):
        yield from _walk(child)


def _classes(app):
    return {c: type(wd) for wd in _walk(app) for c in getattr(wd, "_dom_classes", ())}


def test_the_stable_css_classes_are_on_the_widgets(app):
    classes = _classes(app)
    for name in STABLE:
        assert name in classes, name
    assert classes["tb-call-name"] is w.Combobox  # pick from the list, or type any name
    assert issubclass(classes["tb-arguments"], ArgumentsBox)  # a textarea drawn in the browser
    assert issubclass(classes["tb-call-args"], ArgumentsBox) and issubclass(classes["tb-file-view"], FileView)
    assert classes["tb-call-button"] is w.Button


def test_panels_stand_alone(bench):
    for panel in (ToolList, ProfilePanel, SnapshotPanel, CallConsole, ApprovalPanel, ResultViewer, HistoryTable,
                  McpPanel):
        assert panel(bench).error_view.value == ""


def test_panels_share_one_state_in_the_app(app):
    panels = (app.tools, app.console, app.approval, app.result, app.history, app.snapshot, app.profile, app.mcp)
    assert all(p.state is app.state for p in panels)


def test_the_tool_list_picks_the_console_tool_and_follows_it(app):
    app.tools.pick("weather")
    assert app.console.call_name.value == "weather"
    assert "tb-selected" in app.tools.items["weather"]._dom_classes
    app.console.call_name.value = "dice_roll"
    assert "tb-selected" in app.tools.items["dice_roll"]._dom_classes
    assert "tb-selected" not in app.tools.items["weather"]._dom_classes


def test_the_tool_list_filters_by_name_tool_id_and_description(app):
    app.tools.filter.value = "extension/demo"
    shown = {n for n, row in app.tools.rows.items() if row.layout.display != "none"}
    assert shown == {"weather", "long_report", "fail"}
    assert "3 of" in app.tools.count.value
    app.tools.filter.value = ""
    assert all(row.layout.display != "none" for row in app.tools.rows.values())


def test_the_tool_list_shows_the_budget_left(bench):
    bench.profile = bench.profile.edit(max_calls_per_tool={"builtin:dice.roll": 2})
    app = WorkbenchApp(bench)
    app.state.call("dice_roll", '{"formula": "d6"}')
    assert "1 of 2 left" in app.tools.rows["dice_roll"].children[1].value


def test_display_of_a_bench_shows_the_app(bench, monkeypatch):
    import IPython.display

    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda obj: shown.append(obj))
    bench._ipython_display_()
    assert isinstance(shown[0], WorkbenchApp)


def test_display_of_a_closed_bench_says_so_without_a_traceback(tmp_path, capsys):
    from toolbench import Workbench

    bench = Workbench(tmp_path)
    bench.close()
    bench._ipython_display_()  # raised bench.closed from the app's first invocation
    out = capsys.readouterr().out
    assert out.startswith(f"Workbench(workspace={str(tmp_path.resolve())!r}, profile='default', closed)")
    assert "this bench is closed: open a new Workbench" in out


def test_importing_toolbench_does_not_import_ipywidgets():
    code = "import sys, toolbench; assert 'ipywidgets' not in sys.modules, 'ipywidgets imported'"
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_a_closed_bench_greys_out_the_whole_app(app):
    app.state.bench.close()
    assert "tb-closed" in app._dom_classes
    assert "closed" in app.header.value
    controls = [wd for wd in _walk(app) if "disabled" in wd.keys]
    assert controls and all(wd.disabled for wd in controls)
    assert "bench.closed" in app.console.error_view.value


def test_a_call_on_a_closed_bench_gives_bench_closed_not_a_run(app):
    inv = app.state.invocation
    app.state.bench.close()
    app.console.call_button.disabled = False  # as a stale front end might still send a click
    app.console.call_button.click()
    assert "bench.closed" in app.console.error_view.value
    assert inv.records == []


def test_a_new_profile_starts_a_new_invocation_and_says_so(app):
    first = app.state.invocation
    app.state.call("dice_roll", '{"formula": "d6"}')
    app.profile.apply()
    assert app.state.invocation is not first
    assert first.id in app.notice.value and app.state.invocation.id in app.notice.value
    assert app.state.previous == [first] and len(first.records) == 1


def test_the_app_offers_an_installed_source_and_says_which_was_skipped(tmp_path):
    """As the command line does, the app adds the sources installed packages declare
    (`toolbench.sources`) before its invocation freezes; a second panel over the bench adds
    nothing twice; a broken entry point, or a source whose tools cannot be read, is the app's
    notice, not a traceback, and leaves the bench working."""
    from plugin_support import installed_sources

    from toolbench import Profile, Workbench

    entries = {"remote": "tb_sources:Remote", "broken": "tb_sources:broken", "offline": "tb_sources:Offline"}
    with installed_sources(tmp_path / "site", entries), \
            Workbench(tmp_path / "ws", Profile.default().edit(allow=["remote/api:search"])) as bench:
        app = WorkbenchApp(bench)
        assert "search" in app.state.invocation.snapshot.call_names
        notice = app.notice.value
        assert "tool.source_plugin_skipped" in notice and "`broken`" in notice
        assert "`offline`" in notice and "the API is unreachable" in notice
        assert app.state.invocation.call("search", {}).content == "found"
        again = ToolList(bench)  # a panel of its own over the same bench: no kind taken twice
        assert "search" in again.state.invocation.snapshot.call_names
        assert "`broken`" in again.state.notice and "`remote`" not in again.state.notice
        assert bench.invocation("chat").call("search", {}).content == "found"  # the bench goes on working
