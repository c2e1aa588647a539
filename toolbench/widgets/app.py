"""WorkbenchApp: every panel over one shared state; what `display(bench)` shows."""

from __future__ import annotations

import ipywidgets as w  # type: ignore[import-untyped]

from ..runtime.bench import Workbench
from ..runtime.invocation import Invocation
from ._state import WorkbenchState
from .console import CallConsole
from .history import HistoryTable
from .profile import ProfilePanel
from .result import ResultViewer
from .snapshot import SnapshotPanel


class WorkbenchApp(w.VBox):
    """The whole workbench: profile and snapshot (as tabs), then the call console, the result
    and the history, always in view. `state` is shared by all panels."""

    def __init__(self, bench: Workbench | WorkbenchState, invocation: Invocation | None = None) -> None:
        self.state = WorkbenchState.of(bench, invocation)
        self.profile = ProfilePanel(self.state)
        self.snapshot = SnapshotPanel(self.state)
        self.console = CallConsole(self.state)
        self.result = ResultViewer(self.state)
        self.history = HistoryTable(self.state)
        tabs = w.Tab(children=[self.snapshot, self.profile], titles=("Snapshot", "Profile"))
        super().__init__(children=[w.HTML("<h3 style='margin:4px 0'>toolbench</h3>"), tabs, self.console,
                                   self.result, self.history])
        self.add_class("tb-app")
