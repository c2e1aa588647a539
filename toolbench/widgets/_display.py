"""The notebook display of a bench: `display(bench)` shows the whole app.

Registered as the `toolbench.display` entry point (pyproject.toml), which `Workbench`'s display
hook looks up, so the runtime never imports the widgets.
"""

from __future__ import annotations

from typing import Any

from .app import WorkbenchApp


def show(bench: Any) -> None:
    from IPython.display import display

    display(WorkbenchApp(bench))  # type: ignore[no-untyped-call]
