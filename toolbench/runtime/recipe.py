"""What another bench needs to be this one: the recipe a cluster worker, or an attempt that
gets its own workspace copy, builds its bench from.

A recipe holds the workspace's files (a gzipped tar, without `.toolbench/`, which holds the
runtime's records and the MCP sign-in tokens, and without `tool-results/`), the profile, the
seed, the extension tools as they were registered (their functions pickled by cloudpickle: an
importable function by its import path, a notebook's by value), the MCP registrations, the
added tool sources (the installed ones by name, added again from the packages where it is built),
the chat and world info, and the permissions that are not `on` (with the approval handler when
one of them is `ask`). `parts()` are what must be pickled to reach another process
(runtime/on_ray.py checks them first and names the one that cannot: a tool holding an open
client, an in-process MCP server, a handler holding widgets).

The files are packed and unpacked by `workspace_pack.py`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.errors import ToolbenchError
from ..core.profile import Profile
from ..tools.chat_history import ChatHistory
from ..tools.worldinfo_book import WorldInfoBook
from .bench import Workbench
from .workspace_pack import pack

if TYPE_CHECKING:
    from ..mcp._config import ServerOptions
    from .sources import ToolSource


@dataclass(frozen=True)
class BenchRecipe:
    files: bytes
    profile: Profile
    seed: int | None
    tools: tuple[dict[str, Any], ...]  # `register_tool` keyword arguments
    servers: tuple[ServerOptions, ...]
    sources: tuple[ToolSource, ...]  # added by hand (the installed ones are re-added: `installed`)
    installed: tuple[str, ...]  # the installed sources' entry points (`name = value`)
    chat: ChatHistory | None
    worldinfo: tuple[WorldInfoBook, ...]
    permissions: tuple[tuple[str, str], ...]
    approval: Callable[..., Any] | None

    @classmethod
    def of(cls, bench: Workbench) -> BenchRecipe:
        """The recipe of `bench` as it is now (whether its `parts()` can travel is checked by
        whoever sends it: runtime/on_ray.py)."""
        kernel = bench._kernel
        manager = kernel.mcp.manager
        servers = tuple(_portable(o) for o in manager.registrations()) if manager is not None else ()
        permissions = tuple((str(d.id), p) for d in bench.catalog() if (p := bench.permission(d.id)) != "on")
        asks = any(p == "ask" for _, p in permissions)
        return cls(pack(bench.workspace), bench.profile, kernel.seed, tuple(bench._registrations.values()),
                     servers, tuple(bench._added_sources), tuple(sorted(bench._installed)), kernel.chat,
                     kernel.worldinfo, permissions, kernel.approvals.handler if asks else None)

    def parts(self) -> list[tuple[str, Any, str]]:
        """What must be pickled to reach another process: (what it is, the value, what to do
        when it cannot be pickled). The profile, files, chat and books are plain data."""
        return [
            *((f"extension tool `{t['extension_id']}:{t['name'] or t['fn'].__name__}`", t["fn"],
               "register a module-level function, or one that holds no open client") for t in self.tools),
            *((f"MCP server `{o.name}`", o, "an in-process server cannot leave this process: run it as a "
               "stdio or HTTP server") for o in self.servers),
            *((f"tool source {type(s).__name__}", s, "make it open what it holds lazily") for s in self.sources),
            ("the approval handler", self.approval, "give a plain function (a person's widget cannot travel)"),
        ]

    def build(self, folder: str | Path | None = None, *, beside: Workbench | None = None) -> Workbench:
        """A bench with all of the recipe registered and the MCP servers connected, in `folder`
        (made if missing, the files unpacked there) or else in a temp folder its close removes;
        on the event loop of `beside`, told to its observers, when given (in the same process:
        an attempt's copy); closed again when a step fails. A cluster worker's bench has no
        observer: a tracer provider does not travel (give the worker its own exporter)."""
        bench = Workbench(folder, self.profile, seed=self.seed, _files=self.files, _beside=beside)
        try:
            for tool in self.tools:
                bench.register_tool(**tool)
            if self.servers:
                bench.mcp.restore(self.servers)
            for source in self.sources:
                bench.add_source(source)
            if self.installed:
                bench.add_installed_sources()
                missing = sorted(set(self.installed) - bench._installed)
                if missing:
                    raise ToolbenchError("bench.misuse", f"the installed tool source(s) {', '.join(missing)} cannot "
                                         "be added here: install the same packages where the bench is rebuilt")
            if self.chat is not None:
                bench._kernel.set_chat(self.chat)
            for book in self.worldinfo:
                bench._kernel.add_worldinfo(book)
            for tool_id, permission in self.permissions:
                bench.set_permission(tool_id, permission)
            if self.approval is not None:
                bench.on_approval(self.approval)
            for observer in beside._kernel.observers if beside is not None else ():
                bench.add_observer(observer)  # an attempt's copy is traced as the bench is
        except BaseException:
            bench.close()
            raise
        return bench


def _portable(options: ServerOptions) -> ServerOptions:
    """A stdio server without a working folder gets this process's: a worker starts elsewhere."""
    from ..mcp import StdioTransport  # the SDK loads with the first MCP use, not at import

    t = options.transport
    if isinstance(t, StdioTransport) and t.cwd is None:
        return replace(options, transport=StdioTransport(t.command, t.args, t.env, os.getcwd()))
    return options
