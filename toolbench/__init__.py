"""toolbench: a workbench for an LLM agent's tool runtime.

Load a profile, preview the snapshot an invocation freezes (tool descriptions, schemas and
the call names a model sees, per provider), fire tool calls as a model would, malformed ones
included, and read the result the model gets next to the full `tool-results/` file.

Every name of `__all__` is importable from here (`from toolbench import Workbench`); each is
imported on first use, so `import toolbench` (and `toolbench --help`, and an MCP server that
imports one name) costs only the modules that name needs.
"""

# Private aliases: the module's public names are `__all__`'s alone (tests/test_public_api.py).
import importlib as _importlib
import typing as _typing

if _typing.TYPE_CHECKING:  # what type checkers and IDEs read; at run time `__getattr__` imports these
    from .core.arguments import MISSING, ToolArguments
    from .core.descriptors import ToolDescriptor
    from .core.errors import CODES, ToolbenchError, ToolError
    from .core.ids import ToolId
    from .core.profile import Profile
    from .core.results import Attachment, AttachmentRef, ToolOutput, ToolResult
    from .core.snapshot import Binding, Diagnostic
    from .core.turn import TurnContract
    from .protocols.snapshot import Snapshot
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

# The module each public name lives in (a test keeps it equal to `__all__` and to the imports above).
# Submodules a user reaches as attributes (`toolbench.protocols`, `toolbench.testing`): loaded on
# first use too, as they were when `import toolbench` loaded the whole package.
_SUBPACKAGES = frozenset({"core", "evals", "examples", "mcp", "models", "protocols", "runtime", "testing", "tools",
                          "widgets"})
_HOME = {
    "MISSING": ".core.arguments", "ToolArguments": ".core.arguments",
    "ToolDescriptor": ".core.descriptors",
    "CODES": ".core.errors", "ToolbenchError": ".core.errors", "ToolError": ".core.errors",
    "ToolId": ".core.ids",
    "Profile": ".core.profile",
    "Attachment": ".core.results", "AttachmentRef": ".core.results", "ToolOutput": ".core.results",
    "ToolResult": ".core.results",
    "Binding": ".core.snapshot", "Diagnostic": ".core.snapshot", "Snapshot": ".protocols.snapshot",
    "TurnContract": ".core.turn",
    "ApprovalRequest": ".runtime.approval",
    "Workbench": ".runtime.bench",
    "Invocation": ".runtime.invocation",
    "CallRecord": ".runtime.records",
    "CallDiff": ".runtime.replay", "Replay": ".runtime.replay",
    "Run": ".runtime.run", "RunCall": ".runtime.run", "RunError": ".runtime.run", "RunRound": ".runtime.run",
    "ToolSource": ".runtime.sources",
    "ToolContext": ".tools.base",
}

if not _typing.TYPE_CHECKING:  # hidden from mypy, so a misspelt `toolbench.X` stays an error there

    def __getattr__(name: str) -> object:
        """Import a public name on first use (PEP 562) and keep it, so the next use is a plain lookup."""
        if name in _SUBPACKAGES:  # `toolbench.protocols.register(...)` after a plain `import toolbench`
            module = _importlib.import_module(f".{name}", __name__)
            globals()[name] = module
            return module
        home = _HOME.get(name)
        if home is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = getattr(_importlib.import_module(home, __name__), name)
        globals()[name] = value
        return value


def __dir__() -> list[str]:
    """The public names with the module's own, as `dir(toolbench)` and `help(toolbench)` list them."""
    return sorted({*globals(), *__all__})
