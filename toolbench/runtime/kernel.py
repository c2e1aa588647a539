"""The runtime kernel: what a bench's parts share, and the one place invocations are made.

A kernel owns the event-loop thread, the record store, the tool sources, the approval rule,
the run's inputs (the loaded chat and world info) and the current profile; it makes and
reopens invocations and builds the services (sub-agents, cron, MCP), each once.
`Workbench` is the public facade over one kernel. No part holds the kernel: an invocation and
its call path get `call_services`, sub-agents and cron get `service_host`, `mcp.manage`'s port
the manager's getter (runtime/call_services.py), so each can be built and tested without one.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.descriptors import Scene, ToolDescriptor
from ..core.errors import ToolbenchError
from ..core.loop import LoopThread
from ..core.profile import Profile
from ..core.snapshot import prepare
from ..protocols.snapshot import Snapshot
from ..tools.state import InvocationState
from ..tools.workspace.runtime_files import make_runtime_folder
from .agents import AgentsService
from .approval import Approvals
from .call_services import CallServices, ServiceHost
from .cron import CronScheduler
from .extensions import ExtensionSource
from .invocation import Invocation
from .mcp_port import McpManagePort
from .mcp_source import McpSource
from .observers import Observer
from .sources import BuiltinSource, Sources, ToolSource
from .store import Store

if TYPE_CHECKING:
    from ..mcp import McpManager
    from ..tools.chat_history import ChatHistory
    from ..tools.worldinfo_book import WorldInfoBook


class Kernel:
    """The shared runtime of one workspace. Make one through `Workbench`."""

    def __init__(self, workspace: Path, profile: Profile, *, seed: int | None = None,
                 loop: LoopThread | None = None) -> None:
        self.workspace = workspace
        self.seed = seed
        # A bench built beside another (an eval attempt's workspace copy) runs on that one's loop:
        # its models' async clients and the run's gates are bound to one loop; it leaves it open.
        self.loop = loop or LoopThread()
        self._owns_loop = loop is None
        self.store = Store(workspace)
        self.approvals = Approvals()
        self.builtins = BuiltinSource()
        self.extensions = ExtensionSource()
        self.mcp = McpSource(self._make_mcp)
        self.sources = Sources([self.builtins, self.extensions, self.mcp])
        for kind, source in (("builtin", self.builtins), ("extension", self.extensions), ("mcp", self.mcp)):
            self.sources.add_fallback(kind, source)
        self.chat: ChatHistory | None = None
        self._worldinfo: dict[str, WorldInfoBook] = {}
        self._profile = self.check_profile(profile)
        self.invocations: list[Invocation] = []  # the ones it keeps (and closes at its close)
        self._places: dict[str, int] = {}  # each invocation id's first place: its dice stream
        self._made = 0
        self._agents: AgentsService | None = None
        self._cron: CronScheduler | None = None
        self._services = threading.Lock()  # first uses may race: a sync call and the loop
        self._closed = False
        self.observers: list[Observer] = []  # tracers (runtime/observers.py); empty: nothing is told
        # What the call path uses of the bench, explicitly (runtime/call_services.py).
        self.call_services = CallServices(workspace, self.loop, self.store, self.sources, self.builtins,
                                          self.approvals, self.observers, seed, lambda: self.agents,
                                          lambda snapshot: McpManagePort(self.mcp.get, workspace, self.loop, snapshot),
                                          lambda: self._closed)
        # What sub-agents and cron use of it, explicitly too.
        self.service_host = ServiceHost(workspace, self.loop, lambda: self._profile, self.catalog, self.check_profile,
                                        self.new_invocation, lambda i: self.store.invocation_dir(i).exists())

    # the profile --------------------------------------------------------------------------
    @property
    def profile(self) -> Profile:
        return self._profile

    def set_profile(self, new: Profile) -> None:
        """Make `new` the profile of the invocations made from now on (checked first)."""
        self.check_profile(new)
        self._check_new_enables(self._profile, new)
        old, self._profile = self._profile, new
        if self.mcp.manager is not None and new.workspace.visible_roots != old.workspace.visible_roots:
            self.mcp.manager.roots_changed()

    def check_profile(self, profile: Profile) -> Profile:
        self.builtins.check_profile(profile)
        return profile

    def _check_new_enables(self, old: Profile, new: Profile) -> None:
        """Newly active extension-kind tools must be offered by a source now (reference §3.4)."""
        before = set(old.tools.active())
        added = [t for t in new.tools.active() if t not in before and t.kind == "extension"]
        if not added:
            return
        known = {d.id for d in self.catalog()}
        for tool_id in added:
            if tool_id not in known:
                raise ToolbenchError("extension.tool_unavailable", f"`{tool_id}` is not registered; register the "
                                     "extension tool before enabling it")

    # the run's inputs ---------------------------------------------------------------------
    def set_chat(self, chat: ChatHistory) -> ChatHistory:
        self.chat = chat
        return chat

    def add_worldinfo(self, book: WorldInfoBook) -> WorldInfoBook:
        self._worldinfo[book.name] = book
        return book

    @property
    def worldinfo(self) -> tuple[WorldInfoBook, ...]:
        return tuple(self._worldinfo.values())

    # tools --------------------------------------------------------------------------------
    def add_source(self, source: ToolSource) -> None:
        self.sources.add(source)

    def catalog(self, scene: Scene | None = None) -> list[ToolDescriptor]:
        tools = self.sources.catalog()
        return tools if scene is None else [d for d in tools if scene in d.scenes]

    # invocations --------------------------------------------------------------------------
    def new_invocation(self, scene: Scene, invocation_id: str, *, profile: Profile | None = None,
                       return_mode: ToolDescriptor | None = None, workspace: Path | None = None,
                       kept: bool = True) -> Invocation:
        """An invocation on `profile` (default: the current one); `return_mode` makes a delegated child;
        `workspace` is the folder its tools see instead of the bench's (a worktree child's), while
        its records stay in the bench's store. `kept=False`: the caller closes it and the kernel
        holds nothing of it but its place (a corpus replay: memory flat in the corpus size)."""
        self.check_open()
        if self.store.invocation_dir(invocation_id).exists():
            raise ToolbenchError("bench.misuse", f"invocation `{invocation_id}` exists; reopen it with "
                                 "bench.open_invocation()")
        profile = profile or self._profile
        catalog = {d.id: d for d in self.catalog()}
        snapshot = prepare(profile, catalog, snapshot_id=invocation_id, scene=scene,
                           unavailable=self.sources.diagnostics(profile.tools.active()), return_mode=return_mode,
                           snapshot_type=Snapshot)
        make_runtime_folder(self.workspace, self.store.invocation_folder(invocation_id))
        inv = Invocation.create(self.call_services, snapshot, profile, self._inputs())
        inv.state.root = workspace
        return self._placed(inv, kept)

    def reopen(self, invocation_id: str) -> Invocation:
        """Reopen an invocation from its run log, with its history and budget counters."""
        self.check_open()
        self.store.flush()
        # the chat and world info as loaded now; the bench's profile where the record has none
        inv = Invocation.reopen(self.call_services, invocation_id, self._inputs(), profile=self._profile)
        return self._placed(inv, True)

    def _placed(self, inv: Invocation, kept: bool) -> Invocation:
        """Give `inv` the next place among those this kernel made or reopened (it seeds the dice)."""
        inv.place = self._made
        self._made += 1
        self._places.setdefault(inv.id, inv.place)
        if kept:
            self.invocations.append(inv)
        return inv

    def place_of(self, invocation_id: str | None) -> int | None:
        """The place of the invocation this kernel first made or reopened with that id."""
        return None if invocation_id is None else self._places.get(invocation_id)

    def _inputs(self) -> InvocationState:
        """What the chat tools read, frozen into a new invocation's state (the values are
        frozen; a later load does not change a running invocation)."""
        return InvocationState(chat=self.chat, worldinfo=self.worldinfo)

    # services -----------------------------------------------------------------------------
    @property
    def agents(self) -> AgentsService:
        if self._agents is None:
            with self._services:
                if self._agents is None:
                    self._agents = AgentsService(self.service_host)
        return self._agents

    @property
    def cron(self) -> CronScheduler:
        if self._cron is None:
            with self._services:
                if self._cron is None:
                    self._cron = CronScheduler(self.service_host)
        return self._cron

    def _make_mcp(self) -> McpManager:
        from ..mcp import McpManager, workspace_roots

        # Servers are told the workspace folders the profile makes visible (the roots
        # capability), read afresh at each roots/list.
        return McpManager(self.loop, self.workspace / ".toolbench" / "mcp", root=self.workspace,
                          roots=lambda: workspace_roots(self.workspace, self._profile.workspace.visible_roots))

    # lifetime -----------------------------------------------------------------------------
    @property
    def closed(self) -> bool:
        return self._closed

    def check_open(self) -> None:
        if self._closed:
            raise ToolbenchError("bench.closed", "this workbench is closed; open a new one")

    def close_steps(self) -> list[Callable[[], None]]:
        """Mark the kernel closed (nothing new starts) and give what closing releases, in order.
        Children are cancelled and servers stopped while the loop still runs; then the loop,
        then the invocations, then the files: a call the loop cancels still gets its result,
        and one that ends after this writes nothing more."""
        self._closed = True
        steps: list[Callable[[], None]] = []
        if self._agents is not None:
            steps.append(self._agents.close)
        steps.append(self.mcp.close)
        steps += [*([self.loop.close] if self._owns_loop else []), *(inv.close for inv in self.invocations),
                  self.store.close]
        return steps
