"""A button that writes its text to the browser's clipboard (anywidget): the kernel cannot
reach the clipboard, the page can, within the click that asked for it."""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources
from typing import Any

import anywidget
import traitlets


class CopyButton(anywidget.AnyWidget):
    """`text` is what a click copies: set it before the click (the page copies at once, no round
    trip). After a click, `outcome` says where the text went: "clipboard", "refused: <why>" (the
    browser said no: the caller offers the text another way) or "kernel" (clicked from Python)."""

    _esm = resources.files(__package__) / "static" / "copy_button.js"
    description = traitlets.Unicode("").tag(sync=True)
    tooltip = traitlets.Unicode("").tag(sync=True)
    disabled = traitlets.Bool(False).tag(sync=True)
    text = traitlets.Unicode("").tag(sync=True)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.outcome = ""
        self._handlers: list[Callable[[CopyButton], Any]] = []
        self.on_msg(self._from_page)

    def on_click(self, fn: Callable[[CopyButton], Any]) -> None:
        self._handlers.append(fn)

    def click(self) -> None:
        """A click from Python (a notebook, a test): nothing reaches a clipboard."""
        self._clicked("kernel")

    def _from_page(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if isinstance(content, dict) and content.get("kind") == "copied":
            self._clicked("clipboard")
        elif isinstance(content, dict) and content.get("kind") == "refused":
            self._clicked(f"refused: {str(content.get('why', ''))[:200]}")

    def _clicked(self, outcome: str) -> None:
        self.outcome = outcome
        for fn in self._handlers:
            fn(self)
