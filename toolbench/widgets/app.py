"""WorkbenchApp: every panel over one shared state, on one screen; what `display(bench)` shows.

The layout: a header (profile, invocation, state), then the tool list beside the call console,
the approvals and the chat (a model's run over the same invocation); the result below them, the
app's full width (what the model reads beside the file, stacked when narrow); then tabs for the
history, the snapshot (per-provider JSON, what was left out, the provider checks), the profile
and the MCP servers (one stylesheet, `_style.py`)."""

from __future__ import annotations

import html
from collections.abc import Mapping

import ipywidgets as w  # type: ignore[import-untyped]

from .. import Invocation, Workbench
from ..models import Model
from ._state import WorkbenchState
from ._style import style_widget
from .approval import ApprovalPanel
from .chat import ChatPanel
from .console import CallConsole
from .history import HistoryTable
from .mcp import McpPanel
from .profile import ProfilePanel
from .result import ResultViewer
from .snapshot import SnapshotPanel
from .tool_list import ToolList

TABS = ("History", "Snapshot", "Profile", "MCP servers")


class WorkbenchApp(w.VBox):
    """The whole workbench. `state` is shared by all panels: `tools`, `console`, `approval`,
    `chat`, `result`, `history`, `snapshot`, `profile`, `mcp`; `tabs` holds the last four.

    `models` are the adapters the chat offers, by name (`app.chat.models = {...}` later);
    without them the chat offers `bench.agents.model` when that is a `toolbench.models.Model`."""

    def __init__(self, bench: Workbench | WorkbenchState, invocation: Invocation | None = None, *,
                 models: Mapping[str, Model] | None = None) -> None:
        self.state = state = WorkbenchState.of(bench, invocation)
        self.console = CallConsole(state)
        self.tools = ToolList(state, on_pick=self.console.select)
        self.approval = ApprovalPanel(state)
        self.chat = ChatPanel(state, models=models)
        self.result = ResultViewer(state)
        self.history = HistoryTable(state)
        self.snapshot = SnapshotPanel(state)
        self.profile = ProfilePanel(state)
        self.mcp = McpPanel(state)
        self.header = w.HTML("")
        self.header.add_class("tb-header")
        self.notice = w.HTML("")
        self.notice.add_class("tb-notice")
        side = w.VBox([self.tools])
        side.add_class("tb-side")
        work = w.VBox([self.console, self.approval, self.chat])
        work.add_class("tb-work")
        main = w.Box([side, work])
        main.add_class("tb-main")
        self.tabs = w.Tab(children=[self.history, self.snapshot, self.profile, self.mcp], titles=TABS)
        self.tabs.add_class("tb-tabs")
        super().__init__(children=[style_widget(), self.header, self.notice, main, self.result, self.tabs])
        self.add_class("tb-app")
        self.console.call_name.observe(lambda change: self.tools.mark(change["new"]), names="value")
        for event in ("invocation", "profile", "closed"):
            state.observe(event, self._show_header)
        self.tools.mark(self.console.call_name.value)
        self._show_header()

    def _show_header(self) -> None:
        state = self.state
        snapshot = state.invocation.snapshot
        profile = state.bench.profile
        status = ("<b class='tb-closed-banner'>closed</b>" if state.closed else
                  f"<span class='tb-muted'>invocation <code>{html.escape(snapshot.id)}</code> · {snapshot.scene} · "
                  f"{len(snapshot.bindings)} tools</span>")
        self.header.value = (f"<div class='tb-bar' style='display:flex'><span class='tb-title'>toolbench</span>"
                             f"<span class='tb-muted'>profile <code>{html.escape(profile.name)}</code></span>"
                             f"{status}</div>")
        self.notice.value = f"<div class='tb-muted'>{html.escape(state.notice)}</div>" if state.notice else ""
        if state.closed:
            self.add_class("tb-closed")
