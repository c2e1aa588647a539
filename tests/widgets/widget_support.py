"""Helpers of the widget tests (a module of its own: `conftest` names a module in every test
folder, so importing from it depends on which folder was collected first)."""

from __future__ import annotations

from toolbench.widgets import WorkbenchApp


def call(app: WorkbenchApp, call_name: str, arguments: str) -> None:
    """Fire a call from the console in raw mode, as a user would."""
    console = app.console
    console.mode.value = "raw"
    console.call_name.value = call_name
    console.arguments.value = arguments
    console.call_button.click()
