"""Jupyter widgets over a Workbench (ipywidgets 8).

`WorkbenchApp(bench)` is the whole workbench and what `display(bench)` shows; its panels
stand alone too: `ToolList`, `CallConsole`, `ApprovalPanel`, `ChatPanel`, `ResultViewer`, `HistoryTable`,
`SnapshotPanel`, `ProfilePanel`, `McpPanel`. Each takes a `Workbench` (and optionally an
invocation) or a shared `WorkbenchState`; state lives in the bench and the invocation, the
panels only show it and call the public API.

Stable CSS classes (tests and workshop material drive the UI through them): `tb-app` (and
`tb-closed` on it once the bench is closed), `tb-tool-list`, `tb-profile`, `tb-snapshot`,
`tb-console`, `tb-call-name` (pick or type), `tb-arguments`, `tb-form`, `tb-call-button`,
`tb-result`, `tb-result-content`, `tb-result-file`, `tb-file-prev`, `tb-file-next`,
`tb-file-page`, `tb-file-search`, `tb-result-attachment`, `tb-pending`, `tb-history`,
`tb-history-rerun`, `tb-history-copy`, `tb-history-copy-json`, `tb-mcp`, `tb-trace`,
`tb-approval`, `tb-chat`, `tb-chat-model`, `tb-chat-stream`, `tb-chat-input`, `tb-chat-send`,
`tb-chat-stop`, `tb-chat-transcript`, `tb-chat-live`, `tb-chat-status`, and `tb-error`, the error
line of each panel.
"""

from ._state import WorkbenchState
from .app import WorkbenchApp
from .approval import ApprovalPanel
from .chat import ChatPanel
from .console import CallConsole
from .history import HistoryTable
from .mcp import McpPanel
from .profile import ProfilePanel
from .result import ResultViewer
from .snapshot import SnapshotPanel
from .tool_list import ToolList

__all__ = [
    "ApprovalPanel",
    "CallConsole",
    "ChatPanel",
    "HistoryTable",
    "McpPanel",
    "ProfilePanel",
    "ResultViewer",
    "SnapshotPanel",
    "ToolList",
    "WorkbenchApp",
    "WorkbenchState",
]
