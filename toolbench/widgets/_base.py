"""What every panel shares: the state it observes, its error line, and the one wrapper
through which all its handlers are wired (so no handler error escapes as a traceback)."""

from __future__ import annotations

import html
import json
import logging
from collections.abc import Callable
from typing import Any

import ipywidgets as w  # type: ignore[import-untyped]

from ..core.errors import ToolbenchError
from ._state import WorkbenchState

log = logging.getLogger("toolbench.widgets")


def pre(text: str, *, css: str = "") -> str:
    """Escaped text in a <pre> that keeps lines and wraps long ones."""
    style = "white-space:pre-wrap;word-break:break-all;margin:0;font-size:12px;" + css
    return f'<pre style="{style}">{html.escape(text)}</pre>'


def pretty(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def table(header: list[str], rows: list[list[str]]) -> str:
    """A small HTML table; cells are escaped."""
    head = "".join(f"<th style='text-align:left;padding:2px 8px'>{html.escape(h)}</th>" for h in header)
    body = "".join(
        "<tr>" + "".join(f"<td style='padding:2px 8px;vertical-align:top'>{html.escape(c)}</td>" for c in row) + "</tr>"
        for row in rows
    )
    return f"<table style='border-collapse:collapse;font-size:12px'><tr>{head}</tr>{body}</table>"


class Panel(w.VBox):
    """A VBox bound to a `WorkbenchState`, with an error line (`tb-error`) of its own."""

    css_class = ""

    def __init__(self, state: WorkbenchState, children: list[w.Widget], **kwargs: Any) -> None:
        self.state = state
        self.error_view = w.HTML(value="")
        self.error_view.add_class("tb-error")
        super().__init__(children=[*children, self.error_view], **kwargs)
        if self.css_class:
            self.add_class(self.css_class)

    # the one place handlers are wired -----------------------------------------------------
    def guard(self, fn: Callable[..., Any]) -> Callable[..., None]:
        """`fn` with its errors shown in this panel: a ToolbenchError by its code, anything
        else by its type (and logged), never as a traceback."""

        def handler(*args: Any) -> None:
            try:
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
        self.state.observe(event, self.guard(fn))  # type: ignore[arg-type]

    # errors -------------------------------------------------------------------------------
    def show_error(self, exc: BaseException) -> None:
        if isinstance(exc, ToolbenchError):
            code, message = exc.code, exc.message
        else:
            log.debug("widget handler failed", exc_info=exc)  # shown in the panel, not as a traceback
            code, message = "unexpected", f"{type(exc).__name__}: {exc}"
        self.error_view.value = (
            "<div style='color:#b00020;border-left:4px solid #b00020;padding:2px 8px'>"
            f"<b><code>{html.escape(code)}</code></b> {html.escape(message)}</div>"
        )
        self.error_code = code

    def clear_error(self) -> None:
        self.error_view.value = ""
        self.error_code = None

    error_code: str | None = None
