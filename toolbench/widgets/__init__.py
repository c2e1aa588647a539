"""Jupyter widgets over a Workbench (ipywidgets 8).

`WorkbenchApp(bench)` is the whole workbench and what `display(bench)` shows; its panels
stand alone too: `ProfilePanel`, `SnapshotPanel`, `CallConsole`, `ResultViewer`,
`HistoryTable`. Each takes a `Workbench` (and optionally an invocation) or a shared
`WorkbenchState`; state lives in the bench and the invocation, the panels only show it and
call the public API. Stable CSS classes: `tb-app`, `tb-profile`, `tb-snapshot`, `tb-console`,
`tb-call-name`, `tb-arguments`, `tb-call-button`, `tb-result`, `tb-result-content`,
`tb-result-file`, `tb-history` (and `tb-error`, the error line of each panel).
"""

from ._state import WorkbenchState
from .app import WorkbenchApp
from .console import CallConsole
from .history import HistoryTable
from .profile import ProfilePanel
from .result import ResultViewer
from .snapshot import SnapshotPanel

__all__ = [
    "CallConsole",
    "HistoryTable",
    "ProfilePanel",
    "ResultViewer",
    "SnapshotPanel",
    "WorkbenchApp",
    "WorkbenchState",
]
