"""toolbench: a workbench for an LLM agent's tool runtime.

Load a profile, preview the snapshot an invocation freezes (tool descriptions, schemas and
the call names a model sees, per provider), fire tool calls as a model would, malformed ones
included, and read the result the model gets next to the full `tool-results/` file.
"""

from .core.arguments import MISSING, ToolArguments
from .core.descriptors import ToolDescriptor
from .core.errors import CODES, ToolbenchError, ToolError
from .core.ids import ToolId
from .core.profile import Profile
from .core.results import Attachment, AttachmentRef, ToolOutput, ToolResult
from .core.snapshot import Binding, Diagnostic, Snapshot
from .core.turn import TurnContract
from .runtime.approval import ApprovalRequest
from .runtime.bench import Workbench
from .runtime.invocation import Invocation
from .runtime.records import CallRecord
from .runtime.replay import CallDiff, Replay
from .runtime.run import Run, RunCall, RunError, RunRound
from .runtime.sources import ToolSource
from .tools.base import ToolContext

__all__ = [
    "CODES",
    "MISSING",
    "ApprovalRequest",
    "Attachment",
    "AttachmentRef",
    "Binding",
    "CallDiff",
    "CallRecord",
    "Diagnostic",
    "Invocation",
    "Profile",
    "Replay",
    "Run",
    "RunCall",
    "RunError",
    "RunRound",
    "Snapshot",
    "ToolArguments",
    "ToolContext",
    "ToolDescriptor",
    "ToolError",
    "ToolId",
    "ToolOutput",
    "ToolResult",
    "ToolSource",
    "ToolbenchError",
    "TurnContract",
    "Workbench",
]
