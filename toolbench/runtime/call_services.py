"""What the parts of a bench use of it, given to each explicitly: none of them holds the kernel.

`CallServices` is what an invocation and its call path (`CallPipeline`) use; `ServiceHost` is
what the services that make invocations of their own (sub-agents, cron) use. The kernel makes
one of each at its start; a test or another runtime can make its own. The members are values
and narrow callables: the sub-agent service is made on its first use, `mcp.manage`'s port
depends on the snapshot, and the profile is the bench's at the time of the call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ..core.descriptors import Scene, ToolDescriptor
    from ..core.loop import LoopThread
    from ..core.profile import Profile
    from ..protocols.snapshot import Snapshot
    from ..tools.agents_port import AgentsPort
    from ..tools.mcp_port import McpPort
    from .approval import Approvals
    from .invocation import Invocation
    from .observers import Observer
    from .sources import BuiltinSource, Sources
    from .store import Store


@dataclass(frozen=True, eq=False)
class CallServices:
    """What an invocation and its `CallPipeline` use of their bench."""

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
    closed: Callable[[], bool]  # the bench is closed: nothing new starts


class MakeInvocation(Protocol):
    """`Kernel.new_invocation`: an invocation on `profile` (default: the bench's), `return_mode`
    making a delegated child, `workspace` the folder its tools see instead of the bench's."""

    def __call__(self, scene: Scene, invocation_id: str, *, profile: Profile | None = None,
                 return_mode: ToolDescriptor | None = None, workspace: Path | None = None,
                 kept: bool = True) -> Invocation: ...


@dataclass(frozen=True, eq=False)
class ServiceHost:
    """What sub-agents (`AgentsService`) and cron (`CronScheduler`) use of their bench."""

    workspace: Path  # the bench's folder
    loop: LoopThread  # the services' async work runs here
    profile: Callable[[], Profile]  # the bench's profile now (it may change between calls)
    catalog: Callable[[], list[ToolDescriptor]]  # every tool the sources offer now
    check_profile: Callable[[Profile], Profile]  # raises for a profile the bench cannot run
    new_invocation: MakeInvocation
    invocation_exists: Callable[[str], bool]  # an id already taken in the store
