"""The file view: a scroll box over a text of any length, drawn in the browser (anywidget).

The kernel holds the text and renders rows (`_file_view.Rows`); the browser asks for the rows it
is about to show and scrolls to `focus` when the kernel moves it (go to line, a search hit, a
page). Only the rows in view cross the wire, so a 200,000-line file costs what a page does."""

from __future__ import annotations

import logging
from importlib import resources
from typing import Any

import anywidget
import traitlets

from . import _file_view as fv

log = logging.getLogger("toolbench.widgets")

MAX_ROWS_PER_MESSAGE = 2_000  # what one answer to the browser may carry, whatever it asks
_STATIC = resources.files(__package__) / "static"

CSS = """
.tb-fv { min-width: 0; max-width: 100%; }
.tb-fv .tb-fv-scroll { position: relative; overflow: auto; border: 1px solid var(--jp-border-color2);
  background: var(--jp-layout-color0); outline: none; contain: strict; min-height: 40px; }
.tb-fv .tb-fv-scroll:focus-visible { box-shadow: 0 0 0 1px var(--jp-brand-color1); }
.tb-fv .tb-fv-spacer { width: 1px; }
.tb-fv .tb-fv-window { position: absolute; top: 0; left: 0; min-width: 100%; width: max-content; }
.tb-fv .tb-fv-row { height: 18px; line-height: 18px; white-space: pre; padding-right: 8px;
  font-family: var(--jp-code-font-family); font-size: var(--jp-code-font-size); color: var(--jp-content-font-color1); }
.tb-fv .tb-fv-wait { color: var(--jp-ui-font-color3); }
"""


class FileView(anywidget.AnyWidget):
    """The rows of `rows` (a `Rows`), scrolled by `focus` (`{"row", "align", "seq"}`); the
    browser reports the first row in view (`top_row`) and how many it shows (`shown`)."""

    _esm = _STATIC / "file_view.js"
    _css = CSS
    count = traitlets.Int(0).tag(sync=True)
    version = traitlets.Int(0).tag(sync=True)
    focus = traitlets.Dict().tag(sync=True)
    top_row = traitlets.Int(0).tag(sync=True)
    shown = traitlets.Int(0).tag(sync=True)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._rows = fv.Rows()
        self._seq = 0
        self.on_msg(self._on_message)

    @property
    def rows(self) -> fv.Rows:
        return self._rows

    def show(self, rows: fv.Rows) -> None:
        """Draw `rows` (the browser drops what it had and asks again)."""
        self._rows = rows
        with self.hold_sync():
            self.count = rows.count
            self.version += 1

    def scroll_to(self, line: int, *, align: str = "center") -> None:
        """Bring line `line` into view: in the middle of the box, or at its top (`"start"`)."""
        self._seq += 1  # a new focus even on the same row: the person may have scrolled away
        self.focus = {"row": self._rows.row_of(line), "align": align, "seq": self._seq}

    def _on_message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        try:  # what the browser sends is data: a bad message is logged, never raised into the kernel
            if not isinstance(content, dict) or content.get("kind") != "want":
                return
            version, first, last = content.get("version"), content.get("first"), content.get("last")
            if version != self.version or not isinstance(first, int) or not isinstance(last, int):
                return  # an answer for rows drawn before: the browser asks again
            first = max(0, first)
            last = min(last, first + MAX_ROWS_PER_MESSAGE)
            self.send({"kind": "rows", "version": version, "first": first, "html": self._rows.html(first, last)})
        except Exception:
            log.debug("the file view's message failed", exc_info=True)
