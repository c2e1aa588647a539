"""The Workbench: a workspace, a profile, the tool sources, and invocations over them."""

from __future__ import annotations

import asyncio
import atexit
import inspect
import random
import shutil
import tempfile
import uuid
import zlib
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.descriptors import Scene, ToolDescriptor, check_unique
from ..core.errors import ToolbenchError, ToolError
from ..core.ids import ToolId
from ..core.loop import LoopThread
from ..core.profile import Profile
from ..core.snapshot import Diagnostic, prepare
from ..tools.base import ToolContext, time_limit
from ..tools.chat_history import STATE_KEY as CHAT_STATE_KEY
from ..tools.chat_history import ChatHistory, load_chat
from ..tools.registry import BUILTINS, INJECTED, planned_diagnostics
from ..tools.worldinfo_book import STATE_KEY as WORLDINFO_STATE_KEY
from ..tools.worldinfo_book import WorldInfoBook, load_worldinfo
from .approval import ApprovalRequest, Approvals
from .approval import Handler as ApprovalHandler
from .demo import seed_demo_workspace
from .extensions import ExtensionTool, make_extension_tool
from .invocation import Invocation
from .store import Store, make_folders

if TYPE_CHECKING:
    from ..mcp import McpManager
    from ..tools.cron import CronScheduler
    from .agents import AgentsService

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
            _OWNED_WORKSPACES.add(self.workspace)  # removed at exit if the bench is left open
            seed_demo_workspace(self.workspace)
        else:
            self.workspace = Path(workspace).expanduser().resolve()
        make_folders(self.workspace, WORKSPACE_DIRS)
        self._profile = self._check_profile(_as_profile(profile))
        self._extensions: dict[ToolId, ExtensionTool] = {}
        self._seed = seed
        self._loop = LoopThread()
        self._store = Store(self.workspace)
        self._mcp: McpManager | None = None
        self._invocations: list[Invocation] = []
        self._agents: AgentsService | None = None
        self._chat: ChatHistory | None = None
        self._worldinfo: dict[str, WorldInfoBook] = {}
        self._approvals = Approvals()
        self._permissions: dict[ToolId, str] = {}  # extension tools' `ask`; MCP tools' are the manager's
        self._close_listeners: list[Callable[[], None]] = []
        self._closed = False

    @classmethod
    def demo(cls, workspace: str | Path | None = None, *, seed: int | None = 7) -> Workbench:
        """The embedded default profile with the demo extension tools registered and allowed, and
        the sample chat and lorebook loaded (`runtime/demo_chat.py`)."""
        from .demo import register_demo_tools
        from .demo_chat import load_demo_history

        bench = cls(workspace, seed=seed)
        register_demo_tools(bench)
        load_demo_history(bench)
        return bench

    # profile ------------------------------------------------------------------------------
    @property
    def profile(self) -> Profile:
        return self._profile

    @profile.setter
    def profile(self, value: Profile | str | Path) -> None:
        new = self._check_profile(_as_profile(value))
        self._check_new_enables(self._profile, new)
        old, self._profile = self._profile, new
        if self._mcp is not None and new.workspace.visible_roots != old.workspace.visible_roots:
            self._mcp.roots_changed()

    def _check_profile(self, profile: Profile) -> Profile:
        known = set(BUILTINS) | set(planned_diagnostics())
        settings = profile.tools
        for key in ("allow", "deny"):
            for text in getattr(settings, key):
                tool_id = ToolId.parse(text)
                if tool_id in INJECTED:
                    raise ToolbenchError("agent.profile_unknown_tool", f"`tools.{key}`: `{text}` cannot be "
                                         "selected; the runtime gives it to delegated children only")
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

    # the run's chat and world info --------------------------------------------------------
    def load_chat(self, path: str | Path) -> ChatHistory:
        """Load the chat history the chat tools read: SillyTavern chat JSONL, or JSONL of
        `{role, name, content}`. Replaces the loaded chat; invocations created from now on see it."""
        return self._set_chat(load_chat(path))

    def load_worldinfo(self, path: str | Path, *, name: str | None = None) -> WorldInfoBook:
        """Load a SillyTavern world-info JSON file as a book named `name` (default: the file's
        stem; refs are `<name>:<uid>`). A book of the same name is replaced; invocations created
        from now on see it."""
        return self._add_worldinfo(load_worldinfo(path, name=name))

    @property
    def chat(self) -> ChatHistory | None:
        return self._chat

    @property
    def worldinfo(self) -> tuple[WorldInfoBook, ...]:
        return tuple(self._worldinfo.values())

    def _set_chat(self, chat: ChatHistory) -> ChatHistory:
        self._chat = chat
        return chat

    def _add_worldinfo(self, book: WorldInfoBook) -> WorldInfoBook:
        self._worldinfo[book.name] = book
        return book

    def _run_inputs(self) -> dict[str, Any]:
        """What the chat tools read, frozen into an invocation's state when it is created
        (the values are frozen; a later load does not change a running invocation)."""
        return {CHAT_STATE_KEY: self._chat, WORLDINFO_STATE_KEY: self.worldinfo}

    # tool sources -------------------------------------------------------------------------
    def register_tool(self, extension_id: str, fn: Callable[..., Any], *, name: str | None = None,
                      description: str | None = None, input_schema: dict[str, Any] | None = None,
                      scenes: Sequence[Scene] = ("chat", "session"), timeout: float | None = None) -> ToolId:
        """Register a Python callable (sync or async) as `extension/<extension_id>:<name>`.

        An async function's call ends with `extension.tool_timeout` after `timeout` seconds, or
        else the profile's `tools.extension_timeout_seconds` (default 60). A sync function runs
        inline and unbounded, unless `timeout` is given: it then runs on a worker thread and the
        call ends with `extension.tool_timeout` when the time is up; the thread cannot be killed,
        so the function keeps running (and may still have effects) after that result."""
        tool = make_extension_tool(extension_id, fn, name=name, description=description,
                                   input_schema=input_schema, scenes=scenes, timeout=timeout)
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

    # approval -----------------------------------------------------------------------------
    def set_permission(self, tool: str | ToolId, permission: str) -> ToolId:
        """`ask` makes each call of an extension or MCP tool wait for the approval handler
        (`on_approval`); `on` runs it at once. MCP tools also take `off` (bench.mcp.set_permission);
        builtins follow the profile only."""
        tool_id = ToolId.parse(str(tool))
        if tool_id.kind == "mcp":
            return self.mcp.set_permission(tool_id, permission)  # type: ignore[arg-type]
        if tool_id.kind != "extension":
            raise ToolbenchError("bench.misuse", f"`{tool_id}` is a builtin: its use is set by the profile")
        if permission not in ("on", "ask"):
            raise ToolbenchError("bench.misuse", f"an extension tool's permission is `on` or `ask`, not "
                                 f"{permission!r} (to take it away, disable it in the profile)")
        if tool_id not in self._extensions:
            raise ToolbenchError("extension.tool_unavailable", f"`{tool_id}` is not registered")
        self._permissions[tool_id] = permission
        return tool_id

    def permission(self, tool: str | ToolId) -> str:
        tool_id = ToolId.parse(str(tool))
        if tool_id.kind == "mcp":
            return self.mcp.permission(tool_id)
        return self._permissions.get(tool_id, "on")

    def on_approval(self, handler: ApprovalHandler | None, *, timeout: float | None = None) -> ApprovalHandler | None:
        """`handler(request) -> bool` (or an awaitable: a person deciding) decides each call of
        an `ask` tool; `request` has `call_name`, `tool_id`, `arguments`, `call_id`, `round`,
        `invocation_id`. A sync handler runs on the bench loop: it should answer at once. No
        answer in `timeout` seconds (default 600; None keeps the current one) ends the call with
        `tool.approval_timeout`; None removes the handler. Returns the handler it replaces, so a
        new one can pass on what it does not decide (the widgets do)."""
        previous = self._approvals.handler
        self._approvals.set(handler, self._approvals.timeout if timeout is None else timeout)
        return previous

    @property
    def agents(self) -> AgentsService:
        """Sub-agents: the agent directory, `model` (what drives children), their tasks."""
        if self._agents is None:
            from .agents import AgentsService

            self._agents = AgentsService(self)
        return self._agents

    @property
    def cron(self) -> CronScheduler:
        """The workspace's cron tasks; `bench.cron.run_due(now)` runs those due at `now`."""
        from ..tools.cron import CronScheduler

        return CronScheduler(self)

    @property
    def mcp(self) -> McpManager:
        if self._mcp is None:
            from ..mcp import McpManager, workspace_roots

            # Servers are told the workspace folders the profile makes visible (the roots
            # capability), read afresh at each roots/list.
            self._mcp = McpManager(self._loop, self.workspace / ".toolbench" / "mcp", roots=lambda: workspace_roots(
                self.workspace, self._profile.workspace.visible_roots))
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
        return self._new_invocation(scene, id or f"inv_{uuid.uuid4().hex[:12]}")

    def _new_invocation(self, scene: Scene, invocation_id: str, *, profile: Profile | None = None,
                        return_mode: ToolDescriptor | None = None) -> Invocation:
        """An invocation on `profile` (default: the bench's); `return_mode` makes a delegated child."""
        if self._store.invocation_dir(invocation_id).exists():
            raise ToolbenchError("bench.misuse", f"invocation `{invocation_id}` exists; reopen it with "
                                 "bench.open_invocation()")
        catalog = {d.id: d for d in self.catalog()}
        snapshot = prepare(profile or self._profile, catalog, snapshot_id=invocation_id, scene=scene,
                           unavailable=self._unavailable(), return_mode=return_mode)
        make_folders(self._store.invocation_dir(invocation_id))
        inv = Invocation(self, snapshot, profile=profile or self._profile)
        inv.state.update(self._run_inputs())
        inv._save_snapshot()
        self._invocations.append(inv)
        return inv

    def open_invocation(self, invocation_id: str) -> Invocation:
        """Reopen an invocation from its run log, with its history and budget counters."""
        self._check_open()
        self._store.flush()
        inv = Invocation.reopen(self, invocation_id)
        inv.state.update(self._run_inputs())  # the chat and world info loaded now
        self._invocations.append(inv)
        return inv

    def _dispatch(self, inv: Invocation, tool_id: ToolId, args: dict[str, Any], round_no: int, call_id: str,
                  *, blocking: bool = False) -> Any:
        """Run one call on its source: a ToolOutput, or an awaitable of one. `blocking` (a sync
        caller off the loop) picks a builtin's blocking twin when it has one (tools/base.py)."""
        kind = tool_id.kind
        if kind == "builtin":
            tool = BUILTINS.get(tool_id) or INJECTED[tool_id]
            from ..core.schema_check import check_arguments

            check_arguments(tool.descriptor.input_schema, args)
            ctx = ToolContext(workspace=self.workspace, profile=inv.profile, rng=self._rng(inv),
                              invocation_id=inv.id, round=round_no, call_id=call_id,
                              call_names=inv._call_names, state=inv.state, agents=self.agents,
                              cancel=inv._cancel, stop=inv._stop)
            if blocking and tool.blocking is not None:
                return tool.blocking(ctx, args)
            with time_limit(inv.profile.tools.builtin_timeout_seconds):
                return tool.handler(ctx, args)
        if kind == "extension":
            ext = self._extensions.get(tool_id)
            if ext is None:
                raise ToolError("extension.tool_unavailable",
                                f"`{tool_id.name}` is no longer registered; use another tool.")
            timeout = inv.profile.tools.extension_timeout_seconds
            start = partial(ext.invoke, args, timeout=timeout)
        else:
            start = partial(self.mcp.call, tool_id, args, call_id=call_id)
        if self.permission(tool_id) == "ask":
            call_name = inv._call_names.get(str(tool_id), tool_id.name)
            binding = inv.snapshot.binding_for(call_name)
            if binding is not None:  # nobody is asked to approve a call that would be refused anyway
                from ..core.schema_check import check_arguments

                check_arguments(binding.descriptor.input_schema, args)
            return self._approved(inv, ApprovalRequest(inv.id, round_no, call_id, call_name, tool_id, args), start)
        return start()

    async def _approved(self, inv: Invocation, request: ApprovalRequest, start: Callable[[], Any]) -> Any:
        """Run `start` once the approval handler has said yes; the decision is logged first."""
        try:
            decision = await self._approvals.decide(request)
        except ToolError as exc:
            inv._note_approval(request, exc.code)
            raise
        inv._note_approval(request, decision)
        # Off the loop: a sync tool must not stall the bench loop (nor call the bench's sync face from it).
        output = await asyncio.to_thread(start)
        return await output if inspect.isawaitable(output) else output

    def _rng(self, inv: Invocation) -> random.Random:
        rng = inv.state.get("rng")
        if rng is None:
            seed = None if self._seed is None else zlib.crc32(f"{self._seed}:{inv.id}".encode())
            rng = inv.state["rng"] = random.Random(seed)
        return rng

    # lifetime -----------------------------------------------------------------------------
    @property
    def closed(self) -> bool:
        return self._closed

    def on_close(self, listener: Callable[[], None]) -> None:
        """`listener()` runs when the bench closes (a widget greys itself out)."""
        self._close_listeners.append(listener)

    def _check_open(self) -> None:
        if self._closed:
            raise ToolbenchError("bench.closed", "this workbench is closed; open a new one")

    def flush(self) -> None:
        """Wait until every queued record file is written."""
        self._store.flush()

    def close(self) -> None:
        """Stop MCP servers and children, write what is queued, release the loop and the files.

        Everything is released even when a step fails; the first failure is raised after."""
        if self._closed:
            return
        self._closed = True
        # Listeners first, while the loop runs: a widget greys out and denies the approvals it holds.
        steps: list[Callable[[], None]] = list(self._close_listeners)
        if self._agents is not None:
            steps.append(self._agents.close)  # cancels unfinished children while the loop still runs
        if self._mcp is not None:
            steps.append(self._mcp.close)
        # The loop, then the invocations, then the files: a call the loop cancels still gets its
        # result, and one that ends after this writes nothing more (its invocation is closed).
        steps += [self._loop.close, *(inv.close for inv in self._invocations), self._store.close]
        if self._owns_workspace:
            steps.append(lambda: _remove_owned(self.workspace))
        failure: BaseException | None = None
        for step in steps:
            try:
                step()
            except Exception as exc:
                failure = failure or exc
        if failure is not None:
            raise failure

    async def aclose(self) -> None:
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


# Demo workspaces of benches still open when the process ends (a notebook keeps its bench open
# for a widget): removed at exit, so workshops and test runs leave no /tmp/toolbench-* behind.
_OWNED_WORKSPACES: set[Path] = set()


def _remove_owned(workspace: Path) -> None:
    _OWNED_WORKSPACES.discard(workspace)
    shutil.rmtree(workspace, ignore_errors=True)


@atexit.register
def _remove_owned_at_exit() -> None:
    for workspace in list(_OWNED_WORKSPACES):
        _remove_owned(workspace)


def _as_profile(value: Profile | str | Path | None) -> Profile:
    if value is None:
        return Profile.default()
    if isinstance(value, Profile):
        return value
    return Profile.load(value)
