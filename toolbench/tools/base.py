"""What a builtin tool is: a descriptor and a handler over a context it is given.

A tool module knows its context (the workspace, the profile, per-invocation state) and
`ToolError`; it never sees the invocation, the gate or the records.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.descriptors import ToolDescriptor

if TYPE_CHECKING:
    import asyncio

    from ..core.profile import Profile


@dataclass(frozen=True, slots=True)
class ToolOutput:
    """A tool's successful answer: the text the model reads and the JSON kept for records."""

    content: str
    structured: Any = None
    resource_refs: tuple[str, ...] = ()


@dataclass(slots=True)
class ToolContext:
    """What a builtin handler may use. `state` lives as long as the invocation."""

    workspace: Path
    profile: Profile
    rng: random.Random
    invocation_id: str
    round: int
    call_id: str
    call_names: MutableMapping[str, str] = field(default_factory=dict)  # ToolId text -> call name
    state: MutableMapping[str, Any] = field(default_factory=dict)
    agents: Any = None  # the bench's sub-agent service (`toolbench.tools.agents.AgentsPort`)
    # Set by `inv.cancel()`: an event of the bench loop (where async handlers run). A handler
    # that can stop early watches it and ends with its own cancelled error; others run to the end.
    cancel: asyncio.Event | None = None

    def call_name_of(self, tool_id: str) -> str | None:
        """The call name the model sees for a tool, if the snapshot offers it (for hints)."""
        return self.call_names.get(tool_id)


Handler = Callable[[ToolContext, dict[str, Any]], "ToolOutput | Awaitable[ToolOutput]"]


@dataclass(frozen=True, slots=True)
class BuiltinTool:
    descriptor: ToolDescriptor
    handler: Handler
