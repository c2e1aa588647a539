"""ToolList: the current snapshot's tools, filterable; a click picks one for the console."""

from __future__ import annotations

import html
from collections.abc import Callable
from functools import partial

import ipywidgets as w  # type: ignore[import-untyped]

from .. import Binding, Invocation, Workbench
from ._base import Panel, scroll
from ._state import WorkbenchState


def matches(binding: Binding, query: str) -> bool:
    """The filter: every word of `query` in the call name, the ToolId or the description."""
    text = f"{binding.call_name} {binding.tool_id} {binding.descriptor.description}".casefold()
    return all(word in text for word in query.casefold().split())


class ToolList(Panel):
    """One row per binding: its call name (a button; `tb-tool-item`), ToolId, kind and the
    calls it has left. `on_pick(call_name)` is told of a click; `selected` is highlighted."""

    css_class = "tb-tool-list"

    def __init__(self, source: Workbench | WorkbenchState, invocation: Invocation | None = None,
                 *, on_pick: Callable[[str], None] | None = None) -> None:
        state = WorkbenchState.of(source, invocation)
        self.filter = w.Text(placeholder="filter tools", continuous_update=True)
        self.filter.add_class("tb-tool-filter")
        self.count = w.HTML("")
        self.items: dict[str, w.Button] = {}
        self.rows: dict[str, w.VBox] = {}
        self.box = scroll([], size="tb-tall")
        self.selected: str | None = None
        self.on_pick = on_pick
        super().__init__(state, [w.HTML("<span class='tb-title'>Tools</span>"), self.filter, self.count, self.box])
        self._wire()
        self.refresh()

    def _wire(self) -> None:
        self.on_change(self.filter, lambda _v: self._apply_filter())
        self.on_state("invocation", self.refresh)
        self.on_state("mcp", self.refresh)
        self.on_state("result", self._show_left)

    def refresh(self) -> None:
        self.items, self.rows = {}, {}
        for binding in self.state.invocation.snapshot.bindings:
            button = w.Button(description=binding.call_name, tooltip=f"{binding.call_name}\n{binding.tool_id}",
                              layout=w.Layout(width="100%"))
            button.add_class("tb-tool-item")
            self.on_click(button, partial(self.pick, binding.call_name))
            info = w.HTML("")
            self.items[binding.call_name] = button
            self.rows[binding.call_name] = w.VBox([button, info], layout=w.Layout(margin="0 0 3px 0"))
        self.box.children = list(self.rows.values())
        self._show_left()
        self._apply_filter()
        self._highlight()

    def pick(self, call_name: str) -> None:
        self.mark(call_name)
        if self.on_pick is not None:
            self.on_pick(call_name)

    def mark(self, call_name: str | None) -> None:
        """Highlight `call_name` (the console's tool, however it was chosen)."""
        self.selected = call_name
        self._highlight()

    def _show_left(self) -> None:
        left = self.state.invocation.budget()["per_tool"]
        for binding in self.state.invocation.snapshot.bindings:
            row = self.rows.get(binding.call_name)
            if row is None:
                continue
            budget = f" · {left[binding.call_name]} of {binding.max_calls} left" if binding.call_name in left else ""
            tool_id = html.escape(str(binding.tool_id), quote=True)
            row.children[1].value = (f"<div class='tb-tool-info' title='{tool_id}'><code>{tool_id}</code> · "
                                     f"{binding.tool_id.kind}{budget}</div>")

    def _apply_filter(self) -> None:
        query = self.filter.value.strip()
        shown = 0
        for binding in self.state.invocation.snapshot.bindings:
            visible = not query or matches(binding, query)
            shown += visible
            self.rows[binding.call_name].layout.display = None if visible else "none"
        total = len(self.rows)
        snapshot = html.escape(self.state.invocation.id)
        self.count.value = (f"<span class='tb-muted'>{shown} of {total} tools</span>" if query else
                            f"<span class='tb-muted'>{total} tools in snapshot <code>{snapshot}</code></span>")

    def _highlight(self) -> None:
        for name, button in self.items.items():
            if name == self.selected:
                button.add_class("tb-selected")
            else:
                button.remove_class("tb-selected")
