"""The Workbench: a workspace, a profile, the tool sources, and invocations over them."""

from __future__ import annotations

import random
import shutil
import tempfile
import uuid
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.descriptors import Scene, ToolDescriptor, check_unique
from ..core.errors import ToolbenchError, ToolError
from ..core.ids import ToolId
from ..core.profile import Profile
from ..core.snapshot import Diagnostic, prepare
from ..tools.base import ToolContext
from ..tools.registry import BUILTINS, planned_diagnostics
from .demo import seed_demo_workspace
from .extensions import ExtensionTool, make_extension_tool
from .invocation import Invocation
from .loop import LoopThread
from .store import Store

if TYPE_CHECKING:
    from ..mcp import McpManager

WORKSPACE_DIRS = ("work", "tmp", "output", "tool-results", "skills")


class Workbench:
    """A workspace folder, a profile and the tools both make available.

    `Workbench()` opens a fresh demo workspace on the embedded default profile."""

    def __init__(self, workspace: str | Path | None = None, profile: Profile | str | Path | None = None,
                 *, seed: int | None = None) -> None:
        # A demo workspace the bench made itself is removed again by close().
        self._owns_workspace = workspace is None
        if workspace is None:
            self.workspace = Path(tempfile.mkdtemp(prefix="toolbench-"))
            seed_demo_workspace(self.workspace)
        else:
            self.workspace = Path(workspace).expanduser().resolve()
        for name in WORKSPACE_DIRS:
            (self.workspace / name).mkdir(parents=True, exist_ok=True)
        self._profile = self._check_profile(_as_profile(profile))
        self._extensions: dict[ToolId, ExtensionTool] = {}
        self._seed = seed
        self._loop = LoopThread()
        self._store = Store(self.workspace)
        self._mcp: McpManager | None = None
        self._invocations: list[Invocation] = []
        self._closed = False

    @classmethod
    def demo(cls, workspace: str | Path | None = None, *, seed: int | None = 7) -> Workbench:
        """The embedded default profile with the demo extension tools registered and allowed."""
        from .demo import register_demo_tools

        bench = cls(workspace, seed=seed)
        register_demo_tools(bench)
        return bench

    # profile ------------------------------------------------------------------------------
    @property
    def profile(self) -> Profile:
        return self._profile

    @profile.setter
    def profile(self, value: Profile | str | Path) -> None:
        new = self._check_profile(_as_profile(value))
        self._check_new_enables(self._profile, new)
        self._profile = new

    def _check_profile(self, profile: Profile) -> Profile:
        known = set(BUILTINS) | set(planned_diagnostics())
        settings = profile.tools
        for key in ("allow", "deny"):
            for text in getattr(settings, key):
                tool_id = ToolId.parse(text)
                if tool_id.kind == "builtin" and tool_id not in known:
                    raise ToolbenchError("agent.profile_unknown_tool",
                                         f"`tools.{key}`: `{text}` is not a builtin tool")
        return profile

    def _check_new_enables(self, old: Profile, new: Profile) -> None:
        """Newly active extension tools must be registered (reference §3.4)."""
        before = set(old.tools.active())
        for tool_id in new.tools.active():
            if tool_id not in before and tool_id.kind == "extension" and tool_id not in self._extensions:
                raise ToolbenchError("extension.tool_unavailable",
                                     f"`{tool_id}` is not registered; register the extension tool before enabling it")

    def enable(self, tool_id: str | ToolId) -> None:
        """Add a tool to the profile's allow list (and take it off the deny list)."""
        text = str(ToolId.parse(str(tool_id)))
        tools = self._profile.tools
        allow = tools.allow if text in tools.allow else [*tools.allow, text]
        self.profile = self._profile.edit(allow=allow, deny=[d for d in tools.deny if d != text])

    def disable(self, tool_id: str | ToolId) -> None:
        text = str(ToolId.parse(str(tool_id)))
        self.profile = self._profile.edit(allow=[a for a in self._profile.tools.allow if a != text])

    @property
    def skills(self) -> list[dict[str, str]]:
        """The skills tools see at `skills/<name>/`: name, description (SKILL.md front matter), path.

        Read from the profile's `workspace.skills_dir` at each access (not copied): the file
        tools resolve `skills/<name>/...` through that folder, read-only."""
        from ..tools.workspace.skills import list_skills

        return list_skills(self.workspace, self._profile.workspace)

    # tool sources -------------------------------------------------------------------------
    def register_tool(self, extension_id: str, fn: Callable[..., Any], *, name: str | None = None,
                      description: str | None = None, input_schema: dict[str, Any] | None = None,
                      scenes: Sequence[Scene] = ("chat", "session")) -> ToolId:
        """Register a Python callable (sync or async) as `extension/<extension_id>:<name>`."""
        tool = make_extension_tool(extension_id, fn, name=name, description=description,
                                   input_schema=input_schema, scenes=scenes)
        self._extensions[tool.descriptor.id] = tool
        return tool.descriptor.id

    def tool(self, extension_id: str, **options: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Decorator form of `register_tool`; returns the function unchanged."""
        def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
            self.register_tool(extension_id, fn, **options)
            return fn
        return decorate

    def unregister_tool(self, tool_id: str | ToolId) -> None:
        self._extensions.pop(ToolId.parse(str(tool_id)), None)

    @property
    def mcp(self) -> McpManager:
        if self._mcp is None:
            from ..mcp import McpManager

            self._mcp = McpManager(self._loop, self.workspace / ".toolbench" / "mcp")
        return self._mcp

    def catalog(self, scene: Scene | None = None) -> list[ToolDescriptor]:
        """Every tool the bench knows, in a stable order: builtins, extensions, MCP."""
        tools = [t.descriptor for t in BUILTINS.values()]
        tools += [t.descriptor for t in self._extensions.values()]
        if self._mcp is not None:
            tools += self._mcp.descriptors()
        check_unique(tools)
        if scene is not None:
            tools = [d for d in tools if scene in d.scenes]
        return tools

    def _unavailable(self) -> dict[ToolId, Diagnostic]:
        diagnostics = planned_diagnostics()
        if self._mcp is not None:
            for tool_id, code, message in self._mcp.diagnostics:
                if isinstance(tool_id, ToolId):
                    diagnostics[tool_id] = Diagnostic(tool_id=str(tool_id), code=code, message=message)
        return diagnostics

    # invocations --------------------------------------------------------------------------
    def invocation(self, scene: Scene = "chat", *, id: str | None = None) -> Invocation:
        """Freeze a snapshot of what the profile offers now, and start an invocation on it."""
        self._check_open()
        if scene not in ("chat", "session"):
            raise ToolbenchError("bench.misuse", f"scene must be 'chat' or 'session', not {scene!r}")
        invocation_id = id or f"inv_{uuid.uuid4().hex[:12]}"
        if self._store.invocation_dir(invocation_id).exists():
            raise ToolbenchError("bench.misuse", f"invocation `{invocation_id}` exists; reopen it with "
                                 "bench.open_invocation()")
        catalog = {d.id: d for d in self.catalog()}
        snapshot = prepare(self._profile, catalog, snapshot_id=invocation_id, scene=scene,
                           unavailable=self._unavailable())
        inv = Invocation(self, snapshot)
        inv._save_snapshot()
        self._invocations.append(inv)
        return inv

    def open_invocation(self, invocation_id: str) -> Invocation:
        """Reopen an invocation from its run log, with its history and budget counters."""
        self._check_open()
        self._store.flush()
        inv = Invocation.reopen(self, invocation_id)
        self._invocations.append(inv)
        return inv

    def _dispatch(self, inv: Invocation, tool_id: ToolId, args: dict[str, Any], round_no: int, call_id: str) -> Any:
        """Run one call on its source: a ToolOutput, or an awaitable of one."""
        kind = tool_id.kind
        if kind == "builtin":
            tool = BUILTINS[tool_id]
            from ..core.schema_check import check_arguments

            check_arguments(tool.descriptor.input_schema, args)
            ctx = ToolContext(workspace=self.workspace, profile=self._profile, rng=self._rng(inv),
                              invocation_id=inv.id, round=round_no, call_id=call_id,
                              call_names=inv._call_names, state=inv.state)
            return tool.handler(ctx, args)
        if kind == "extension":
            ext = self._extensions.get(tool_id)
            if ext is None:
                raise ToolError("extension.tool_unavailable",
                                f"`{tool_id.name}` is no longer registered; use another tool.")
            return ext.invoke(args)
        return self.mcp.call(tool_id, args)

    def _rng(self, inv: Invocation) -> random.Random:
        rng = inv.state.get("rng")
        if rng is None:
            seed = None if self._seed is None else zlib.crc32(f"{self._seed}:{inv.id}".encode())
            rng = inv.state["rng"] = random.Random(seed)
        return rng

    # lifetime -----------------------------------------------------------------------------
    def _check_open(self) -> None:
        if self._closed:
            raise ToolbenchError("bench.closed", "this workbench is closed; open a new one")

    def flush(self) -> None:
        """Wait until every queued record file is written."""
        self._store.flush()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            if self._mcp is not None:
                self._mcp.close()
        finally:
            self._store.close()  # writes the queued log lines before the logs close
            for inv in self._invocations:
                inv.close()
            self._loop.close()
            if self._owns_workspace:
                shutil.rmtree(self.workspace, ignore_errors=True)

    async def aclose(self) -> None:
        import asyncio

        await asyncio.to_thread(self.close)

    def __enter__(self) -> Workbench:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> Workbench:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def _ipython_display_(self) -> None:
        """In a notebook, `display(bench)` shows the whole workbench (`toolbench.widgets`)."""
        from IPython.display import display

        from ..widgets import WorkbenchApp

        display(WorkbenchApp(self))

    def __repr__(self) -> str:
        return f"Workbench(workspace={str(self.workspace)!r}, profile={self._profile.name!r})"


def _as_profile(value: Profile | str | Path | None) -> Profile:
    if value is None:
        return Profile.default()
    if isinstance(value, Profile):
        return value
    return Profile.load(value)
