"""ApprovalPanel: the calls of `ask` tools waiting for the user (Approve / Deny), and which
extension and MCP tools ask."""

from __future__ import annotations

import html
from functools import partial

import ipywidgets as w  # type: ignore[import-untyped]

from .. import Invocation, ToolId, Workbench
from ._base import Panel, bar, pre, pretty, scroll
from ._state import PendingApproval, WorkbenchState
from ._style import add_panel_css

EXTENSION_PERMISSIONS = ("on", "ask")
MCP_PERMISSIONS = ("on", "off", "ask")

CSS = """
.tb-approval .tb-approval-card { border-left: 4px solid var(--jp-warn-color1); }
"""
add_panel_css("approval", CSS)


def muted(text: str) -> str:
    return f"<div class='tb-muted'>{text}</div>"


class ApprovalPanel(Panel):
    """A card per pending approval (`approve_buttons`, `deny_buttons`, in `state.approvals`
    order), the last decision (`last_decision`), and the permission of each extension and MCP
    tool (`permission_controls[tool_id]`)."""

    css_class = "tb-approval"

    def __init__(self, source: Workbench | WorkbenchState, invocation: Invocation | None = None) -> None:
        state = WorkbenchState.of(source, invocation)
        self.waiting = w.VBox([])
        self.decision = w.HTML("")
        self.last_decision = ""
        self.approve_buttons: list[w.Button] = []
        self.deny_buttons: list[w.Button] = []
        self.permission_controls: dict[str, w.Dropdown] = {}
        self.permissions = w.GridBox([], layout=w.Layout(grid_template_columns="minmax(0, 1fr) 80px",
                                                         grid_gap="2px 8px", align_items="center"))
        self.permission_note = w.HTML("")
        self.settings = w.Accordion(children=[w.VBox([
            scroll([self.permissions], size="tb-short"), self.permission_note,
        ])], titles=("which tools ask",), selected_index=None)  # folded: the panel stays compact
        super().__init__(state, [w.HTML("<b>Approvals</b>"), self.waiting, self.decision, self.settings])
        self._wire()
        self.refresh()

    def _wire(self) -> None:
        self.on_state("approval", self.show_waiting)
        for event in ("mcp", "invocation", "profile"):
            self.on_state(event, self.show_permissions)

    # views --------------------------------------------------------------------------------
    def refresh(self) -> None:
        self.show_waiting()
        self.show_permissions()

    def show_waiting(self) -> None:
        """A card per approval the state holds; a single muted line when none is waiting."""
        self.approve_buttons, self.deny_buttons = [], []
        cards = [self._card(item) for item in self.state.approvals]
        self.waiting.children = ([scroll(cards, size="tb-tall")] if cards
                                 else [w.HTML(muted("no call is waiting for approval"))])

    def _card(self, item: PendingApproval) -> w.VBox:
        request = item.request
        head = (f"<span class='tb-title'>{html.escape(request.call_name)}</span> "
                f"<code>{html.escape(str(request.tool_id))}</code> "
                f"<span class='tb-muted'>round {request.round} · call <code>{html.escape(request.call_id)}</code>"
                f" · invocation <code>{html.escape(request.invocation_id)}</code></span>")
        approve = w.Button(description="Approve", button_style="success", icon="check",
                           disabled=self.state.closed)
        approve.add_class("tb-approve")
        deny = w.Button(description="Deny", button_style="danger", icon="times", disabled=self.state.closed)
        deny.add_class("tb-deny")
        self.on_click(approve, partial(self._decide, item, True, approve, deny))
        self.on_click(deny, partial(self._decide, item, False, approve, deny))
        self.approve_buttons.append(approve)
        self.deny_buttons.append(deny)
        # A step of a call (a server start) shows what would happen, not the call's arguments.
        step = request.action != "call"
        what = [w.HTML(f"<div class='tb-approval-reason'><b>{html.escape(request.action)}</b>: "
                       f"{html.escape(_capped(request.reason))}</div>")] if step else []
        shown = request.details if step and request.details is not None else request.arguments
        card = w.VBox([w.HTML(head), *what, scroll([w.HTML(pre(_capped(pretty(shown))))], size="tb-short"),
                       bar([approve, deny])])
        card.add_class("tb-card")
        card.add_class("tb-approval-card")
        return card

    def show_permissions(self) -> None:
        """Each extension and MCP tool with its permission and a dropdown to change it."""
        bench = self.state.bench
        tools: list[tuple[ToolId, tuple[str, ...]]] = [
            (d.id, EXTENSION_PERMISSIONS) for d in bench.catalog() if d.kind == "extension"]
        tools += [(t.tool_id, MCP_PERMISSIONS) for s in bench.mcp.servers for t in s.tools if t.tool_id is not None]
        self.permission_controls = {}
        cells: list[w.Widget] = []
        for tool_id, choices in tools:
            current = bench.permission(tool_id)
            control = w.Dropdown(options=choices if current in choices else (*choices, current), value=current,
                                 layout=w.Layout(width="76px"), disabled=self.state.closed)
            control.add_class("tb-permission")
            self.on_change(control, partial(self._set_permission, tool_id))
            self.permission_controls[str(tool_id)] = control
            cells += [w.HTML(f"<code>{html.escape(str(tool_id))}</code>"), control]
        self.permissions.children = cells or [w.HTML(muted("no extension or MCP tool is registered"))]
        self.permission_note.value = muted(
            "<code>ask</code> makes each call fired from this app wait for Approve / Deny, from the next call "
            "on; turning an MCP tool <code>off</code> (or back on) changes what is offered from the next "
            "invocation only")

    # actions ------------------------------------------------------------------------------
    def _decide(self, item: PendingApproval, approve: bool, *buttons: w.Button) -> None:
        for button in buttons:
            button.disabled = True  # one decision per call; the card goes when the state says so
        item.decide(approve)
        self.last_decision = f"{'approved' if approve else 'denied'} `{item.request.call_name}`"
        self.decision.value = muted(f"{'approved' if approve else 'denied'} "
                                    f"<code>{html.escape(item.request.call_name)}</code>")

    def _set_permission(self, tool_id: ToolId, value: str) -> None:
        self.state.bench.set_permission(tool_id, value)
        self.state.mcp_changed()


MAX_SHOWN = 20_000  # characters of a request's arguments drawn in its card (a model may send megabytes)


def _capped(text: str) -> str:
    return text if len(text) <= MAX_SHOWN else text[:MAX_SHOWN] + f"\n… ({len(text) - MAX_SHOWN:,} more characters)"
