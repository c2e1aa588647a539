from __future__ import annotations

import subprocess
import sys

import ipywidgets as w

from toolbench.widgets import CallConsole, HistoryTable, ProfilePanel, ResultViewer, SnapshotPanel, WorkbenchApp

STABLE = ("tb-app", "tb-profile", "tb-snapshot", "tb-console", "tb-call-name", "tb-arguments", "tb-call-button",
          "tb-result", "tb-result-content", "tb-result-file", "tb-history")


def _walk(widget):
    yield widget
    for child in getattr(widget, "children", ()):
        yield from _walk(child)


def test_the_stable_css_classes_are_on_the_widgets(app):
    classes = {c: type(wd) for wd in _walk(app) for c in getattr(wd, "_dom_classes", ())}
    for name in STABLE:
        assert name in classes, name
    assert classes["tb-call-name"] is w.Dropdown
    assert classes["tb-arguments"] is w.Textarea
    assert classes["tb-call-button"] is w.Button


def test_panels_stand_alone(bench):
    for panel in (ProfilePanel, SnapshotPanel, CallConsole, ResultViewer, HistoryTable):
        assert panel(bench).error_view.value == ""


def test_panels_share_one_state_in_the_app(app):
    assert app.console.state is app.result.state is app.history.state is app.profile.state is app.snapshot.state


def test_display_of_a_bench_shows_the_app(bench, monkeypatch):
    import IPython.display

    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda obj: shown.append(obj))
    bench._ipython_display_()
    assert isinstance(shown[0], WorkbenchApp)


def test_importing_toolbench_does_not_import_ipywidgets():
    code = "import sys, toolbench; assert 'ipywidgets' not in sys.modules, 'ipywidgets imported'"
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_a_closed_bench_shows_its_error_code_in_the_panel(app):
    app.state.bench.close()
    app.snapshot.scene.value = "session"
    assert "bench.closed" in app.snapshot.error_view.value
