"""What every panel shares: the state it observes, its error line, and the one wrapper
through which all its handlers are wired (so no handler error escapes as a traceback)."""

from __future__ import annotations

import html
import json
import logging
import re
from collections.abc import Callable
from typing import Any

import ipywidgets as w  # type: ignore[import-untyped]

from .. import ToolbenchError
from ._state import WorkbenchState
from ._style import style_widget

log = logging.getLogger("toolbench.widgets")


def pre(text: str, *, css: str = "") -> str:
    """Escaped text in a <pre> that keeps lines and wraps long ones (`tb-pre`)."""
    style = f' style="{css}"' if css else ""
    return f'<pre class="tb-pre"{style}>{html.escape(text)}</pre>'


def pretty(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


_BREAK = re.compile(r"[/._:-]+")


def breakable(text: str) -> str:
    """Escaped text that may wrap after `/ . _ : -` (an id's word boundaries), not mid-word."""
    return _BREAK.sub(lambda m: m.group(0) + "<wbr>", html.escape(text))


def table(header: list[str], rows: list[list[str]]) -> str:
    """A small HTML table (`tb-table`: sticky header, the last column kept wide for prose);
    cells are escaped, wrap at word and id boundaries, and show their text as a tooltip."""
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td title='{html.escape(c, quote=True)}'>{breakable(c)}</td>" for c in row)
                   + "</tr>" for row in rows)
    return f"<table class='tb-table'><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def scroll(children: list[w.Widget], *, size: str = "") -> w.VBox:
    """A box of bounded height that scrolls (`tb-scroll`; `size` `tb-tall` or `tb-short`)."""
    box = w.VBox(children)
    box.add_class("tb-scroll")
    if size:
        box.add_class(size)
    return box


def bar(children: list[w.Widget]) -> w.HBox:
    """A row of controls that never shrinks to nothing under a growing neighbour (`tb-bar`)."""
    box = w.HBox(children)
    box.add_class("tb-bar")
    return box


def controls(widget: w.Widget) -> list[w.Widget]:
    """Every widget under `widget` (itself included) that can be disabled."""
    found = [widget] if "disabled" in widget.keys else []
    for child in getattr(widget, "children", ()):
        found += controls(child)
    return found


class Panel(w.VBox):
    """A VBox bound to a `WorkbenchState`, with an error line (`tb-error`) of its own."""

    css_class = ""

    def __init__(self, state: WorkbenchState, children: list[w.Widget], **kwargs: Any) -> None:
        self.state = state
        self.error_view = w.HTML(value="")
        self.error_view.add_class("tb-error")
        super().__init__(children=[style_widget(), *children, self.error_view], **kwargs)
        self.add_class("tb-panel")
        if self.css_class:
            self.add_class(self.css_class)
        self.state.observe("closed", self._show_closed)
        if self.state.closed:
            self._show_closed()

    def _show_closed(self) -> None:
        """A closed bench: every control greys out; the panel says why."""
        for control in controls(self):
            control.disabled = True
        self.error_view.value = ("<div class='tb-closed-banner'><b><code>bench.closed</code></b> this workbench "
                                 "is closed: open a new one to call tools</div>")
        self.error_code = "bench.closed"

    # the one place handlers are wired -----------------------------------------------------
    def guard(self, fn: Callable[..., Any], *, clear: bool = True) -> Callable[..., None]:
        """`fn` with its errors shown in this panel: a ToolbenchError by its code, anything
        else by its type (and logged), never as a traceback. A user's action (`clear`) first
        clears the last error; a redraw after a state change does not (it would hide it)."""

        def handler(*args: Any) -> None:
            try:
                if clear:
                    self.clear_error()
                fn(*args)
            except Exception as exc:  # a widget callback has nowhere to raise to
                self.show_error(exc)

        return handler

    def on_click(self, button: w.Button, fn: Callable[[], Any]) -> None:
        button.on_click(self.guard(lambda _b: fn()))

    def on_change(self, widget: w.Widget, fn: Callable[[Any], Any], name: str = "value") -> None:
        widget.observe(self.guard(lambda change: fn(change["new"])), names=name)

    def on_state(self, event: str, fn: Callable[[], Any]) -> None:
        self.state.observe(event, self.guard(fn, clear=False))  # type: ignore[arg-type]

    # errors -------------------------------------------------------------------------------
    def show_error(self, exc: BaseException) -> None:
        if isinstance(exc, ToolbenchError):
            code, message = exc.code, exc.message
        else:
            log.debug("widget handler failed", exc_info=exc)  # shown in the panel, not as a traceback
            code, message = "unexpected", f"{type(exc).__name__}: {exc}"
        self.error_view.value = (f"<div class='tb-error-line'><b><code>{html.escape(code)}</code></b> "
                                 f"{html.escape(message)}</div>")
        self.error_code = code

    def clear_error(self) -> None:
        self.error_view.value = ""
        self.error_code = None

    error_code: str | None = None
