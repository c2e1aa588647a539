"""What the call path (`CallPipeline`) uses of its bench, given to it explicitly: no kernel.

The kernel makes one `CallServices` at its start and every invocation's pipeline gets it; a
test or another runtime can make its own. `agents` and `mcp_port` are narrow callables: the
sub-agent service is made on its first use, and `mcp.manage`'s port depends on the snapshot.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..core.loop import LoopThread
    from ..protocols.snapshot import Snapshot
    from ..tools.agents_port import AgentsPort
    from ..tools.mcp_port import McpPort
    from .approval import Approvals
    from .observers import Observer
    from .sources import BuiltinSource, Sources
    from .store import Store


@dataclass(frozen=True, eq=False)
class CallServices:
    workspace: Path  # the bench's folder (a worktree child's tools see their own: its state's root)
    loop: LoopThread  # async handlers and awaited outputs run here
    store: Store  # record files, attachments
    sources: Sources  # which source runs a tool id
    builtins: BuiltinSource  # its handlers may block: they get a deadline
    approvals: Approvals  # the rule and the person's handler for `ask`
    observers: list[Observer]  # the bench's own list: an observer added later is told too
    seed: int | None  # a seeded bench's dice (with the invocation's place)
    agents: Callable[[], AgentsPort]  # the sub-agent service, made on first use
    mcp_port: Callable[[Snapshot], McpPort]  # mcp.manage's view of the bench's servers
