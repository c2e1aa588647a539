"""The console's argument box, drawn in the browser (anywidget): typed text is never
overwritten by a text the kernel wrote before it saw the typing, and Ctrl+Enter calls."""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources
from typing import Any

import anywidget
import traitlets

CSS = """
.tb-args { width: 100%; min-width: 0; }
.tb-args .tb-args-text { box-sizing: border-box; width: 100%; height: 110px; resize: vertical;
  font-family: var(--jp-code-font-family); font-size: var(--jp-code-font-size);
  color: var(--jp-widgets-input-color); background: var(--jp-widgets-input-background-color);
  border: var(--jp-widgets-border-width) solid var(--jp-widgets-input-border-color); padding: 4px 6px; }
.tb-args .tb-args-text:focus { border-color: var(--jp-widgets-input-focus-border-color); outline: none; }
"""


class ArgumentsBox(anywidget.AnyWidget):
    """`value` is the text as typed. Write it from Python with `set_text` (stamped with the
    last edit seen, `edit_seq`); `on_call(fn)` gets the text when Ctrl+Enter is pressed."""

    _esm = resources.files(__package__) / "static" / "arguments.js"
    _css = CSS
    value = traitlets.Unicode("").tag(sync=True)
    placeholder = traitlets.Unicode("").tag(sync=True)
    disabled = traitlets.Bool(False).tag(sync=True)
    edit_seq = traitlets.Int(0).tag(sync=True)  # counted by the browser, one per edit
    value_seq = traitlets.Int(0).tag(sync=True)  # the edit count a kernel-written value had seen

    def set_text(self, text: str) -> None:
        with self.hold_sync():  # one message: the browser sees the stamp with the text
            self.value_seq = self.edit_seq
            self.value = text

    def on_call(self, fn: Callable[[str], Any]) -> None:
        def handler(_widget: Any, content: Any, _buffers: Any) -> None:
            if isinstance(content, dict) and content.get("kind") == "call" and isinstance(content.get("text"), str):
                fn(content["text"])

        self.on_msg(handler)
