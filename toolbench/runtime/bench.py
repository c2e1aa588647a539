"""The Workbench: the public facade over one runtime kernel (`runtime/kernel.py`).

A workspace, a profile, the tool sources, and invocations over them; the bench keeps what a
user sets (profile, extension tools, permissions, the approval handler) and hands the rest to
its kernel and the kernel's services.
"""

from __future__ import annotations

import asyncio
import atexit
import re
import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterable, Sequence, Sized
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from ..core.descriptors import Scene, ToolDescriptor
from ..core.errors import ToolbenchError
from ..core.ids import ToolId
from ..core.profile import Profile
from ..progress import Progress
from ..tools.chat_history import ChatHistory, load_chat
from ..tools.workspace.runtime_files import write_runtime_file
from ..tools.workspace.skills import list_skills
from ..tools.worldinfo_book import WorldInfoBook, load_worldinfo
from .approval import Handler as ApprovalHandler
from .demo import register_demo_tools, seed_demo_workspace
from .demo_chat import load_demo_history
from .extensions import make_extension_tool
from .in_flight import check_concurrency, check_executor
from .installed_sources import add_installed
from .invocation import Invocation
from .kernel import Kernel
from .observers import Observer
from .replay import Replay, check_scene, replay, replay_many
from .sources import ToolSource
from .store import make_folders
from .workspace_pack import unpack

EXPORT_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,200}")

if TYPE_CHECKING:
    from ..mcp import McpManager
    from .agents import AgentsService
    from .cron import CronScheduler

WORKSPACE_DIRS = ("work", "tmp", "output", "tool-results", "skills")


class Workbench:
    """A workspace folder, a profile and the tools both make available.

    `Workbench()` opens a fresh demo workspace on the embedded default profile (removed again
    by `close()`); `Workbench(path)` works in that folder. `bench.workspace` is its path."""

    # A person's exports: beside the runtime's own files, never where a model's tools list or
    # search (a model reading one would take its own past calls for workspace content).
    EXPORTS: ClassVar[str] = ".toolbench/exports"
    _kernel: Kernel

    def __init__(self, workspace: str | Path | None = None, profile: Profile | str | Path | None = None,
                 *, seed: int | None = None, _files: bytes | None = None, _beside: Workbench | None = None) -> None:
        # A workspace the bench made itself is removed again by close(): the demo, or a copy
        # unpacked from a recipe's files (`_files`, runtime/recipe.py), on the loop of the bench
        # it was built `_beside` when one is given.
        self._owns_workspace = workspace is None
        if workspace is None:
            self.workspace = Path(tempfile.mkdtemp(prefix="toolbench-"))
            _OWNED_WORKSPACES.add(self.workspace)  # removed at exit if the bench is left open
        else:
            self.workspace = _workspace_folder(workspace)
        if _files is not None:
            unpack(_files, self.workspace)
        elif workspace is None:
            seed_demo_workspace(self.workspace)
        make_folders(self.workspace, WORKSPACE_DIRS)
        self._kernel = Kernel(self.workspace, _as_profile(profile), seed=seed,
                              loop=None if _beside is None else _beside._kernel.loop)
        self._close_listeners: list[Callable[[], None]] = []
        self._registrations: dict[ToolId, dict[str, Any]] = {}  # as asked: what a recipe registers again
        self._added_sources: list[ToolSource] = []
        self._installed: set[str] = set()  # the installed sources added (entry points as `name = value`)

    @classmethod
    def demo(cls, workspace: str | Path | None = None, *, seed: int | None = 7) -> Workbench:
        """The embedded default profile with the demo extension tools registered and allowed, and
        the sample chat and lorebook loaded (`runtime/demo_chat.py`)."""
        bench = cls(workspace, seed=seed)
        register_demo_tools(bench)
        load_demo_history(bench._kernel)
        return bench

    # profile ------------------------------------------------------------------------------
    @property
    def profile(self) -> Profile:
        """The profile new invocations freeze (assign a Profile or a file path to change it;
        invocations already made keep theirs)."""
        return self._kernel.profile

    @profile.setter
    def profile(self, value: Profile | str | Path) -> None:
        self._kernel.set_profile(_as_profile(value))

    def enable(self, tool_id: str | ToolId) -> None:
        """Add a tool to the profile's allow list (and take it off the deny list)."""
        text = str(ToolId.parse(str(tool_id)))
        tools = self.profile.tools
        allow = tools.allow if text in tools.allow else (*tools.allow, text)
        self.profile = self.profile.edit(allow=allow, deny=[d for d in tools.deny if d != text])

    def disable(self, tool_id: str | ToolId) -> None:
        """Take a tool off the profile's allow list (the deny list is left as it is)."""
        text = str(ToolId.parse(str(tool_id)))
        self.profile = self.profile.edit(allow=[a for a in self.profile.tools.allow if a != text])

    @property
    def skills(self) -> list[dict[str, str]]:
        """The skills tools see at `skills/<name>/`: name, description (SKILL.md front matter), path.

        Read from the profile's `workspace.skills_dir` at each access (not copied): the file
        tools resolve `skills/<name>/...` through that folder, read-only."""
        return list_skills(self.workspace, self.profile.workspace)

    # the run's chat and world info --------------------------------------------------------
    def load_chat(self, path: str | Path) -> ChatHistory:
        """Load the chat history the chat tools read: SillyTavern chat JSONL, or JSONL of
        `{role, name, content}`. Replaces the loaded chat; invocations created from now on see it."""
        return self._kernel.set_chat(load_chat(path))

    def load_worldinfo(self, path: str | Path, *, name: str | None = None) -> WorldInfoBook:
        """Load a SillyTavern world-info JSON file as a book named `name` (default: the file's
        stem; refs are `<name>:<uid>`). A book of the same name is replaced; invocations created
        from now on see it."""
        return self._kernel.add_worldinfo(load_worldinfo(path, name=name))

    @property
    def chat(self) -> ChatHistory | None:
        """The chat history the chat tools read (`load_chat`), or None."""
        return self._kernel.chat

    @property
    def worldinfo(self) -> tuple[WorldInfoBook, ...]:
        """The world-info books the lorebook tools read (`load_worldinfo`)."""
        return self._kernel.worldinfo

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
        asked: dict[str, Any] = {"extension_id": extension_id, "fn": fn, "name": name, "description": description,
                 "input_schema": input_schema, "scenes": tuple(scenes), "timeout": timeout}
        tool_id = self._kernel.extensions.register(make_extension_tool(**asked))
        self._registrations[tool_id] = asked
        return tool_id

    def tool(self, extension_id: str, **options: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Decorator form of `register_tool`; returns the function unchanged."""
        def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
            self.register_tool(extension_id, fn, **options)
            return fn
        return decorate

    def unregister_tool(self, tool_id: str | ToolId) -> None:
        parsed = ToolId.parse(str(tool_id))
        self._kernel.extensions.unregister(parsed)
        self._registrations.pop(parsed, None)

    def add_installed_sources(self) -> list[str]:
        """Add the tool sources installed packages declare in the entry-point group
        `toolbench.sources` (runtime/installed_sources.py); the notices of those skipped. Called
        again, it adds only the ones not added yet (the app calls it for the bench it shows). They
        do not travel pickled with a recipe: a worker adds the same ones from its own packages."""
        return add_installed(self._kernel.add_source, self._installed)

    def add_source(self, source: ToolSource) -> None:
        """Add a tool source after the builtins, the extension tools and the MCP servers: a
        `toolbench.ToolSource` subclass (its `descriptors()` and `call()`; see runtime/sources.py).
        Its tools join the catalog and go through the same gate, checks and records."""
        self._kernel.add_source(source)
        self._added_sources.append(source)

    # approval -----------------------------------------------------------------------------
    def set_permission(self, tool: str | ToolId, permission: str) -> ToolId:
        """`ask` makes each call of a tool (builtin, extension, MCP or an added source's) wait for
        the approval handler (`on_approval`); `on` runs it at once. MCP tools also take `off`
        (bench.mcp.set_permission). Whatever the permission, `mcp.manage` asks before it starts a
        server the model configured (`ApprovalRequest.action == "mcp.start"`)."""
        tool_id = ToolId.parse(str(tool))
        return self._kernel.sources.owner(tool_id).set_permission(tool_id, permission)

    def permission(self, tool: str | ToolId) -> str:
        """The tool's permission now: `on`, `ask`, or (MCP tools) `off`."""
        tool_id = ToolId.parse(str(tool))
        return self._kernel.sources.owner(tool_id).permission(tool_id)

    def on_approval(self, handler: ApprovalHandler | None, *, timeout: float | None = None) -> ApprovalHandler | None:
        """`handler(request) -> bool` (or an awaitable: a person deciding) decides each call of
        an `ask` tool; `request` has `call_name`, `tool_id`, `arguments`, `call_id`, `round`,
        `invocation_id`. A sync handler runs on the bench loop: it should answer at once. No
        answer in `timeout` seconds (default 600; None keeps the current one) ends the call with
        `tool.approval_timeout`; None removes the handler. Returns the handler it replaces, so a
        new one can pass on what it does not decide (the widgets do)."""
        approvals = self._kernel.approvals
        previous = approvals.handler
        approvals.set(handler, approvals.timeout if timeout is None else timeout)
        return previous

    # services -----------------------------------------------------------------------------
    @property
    def agents(self) -> AgentsService:
        """Sub-agents: the agent directory, `model` (what drives children), their tasks."""
        return self._kernel.agents

    @property
    def cron(self) -> CronScheduler:
        """The workspace's cron tasks; `bench.cron.run_due(now)` runs those due at `now`."""
        return self._kernel.cron

    @property
    def mcp(self) -> McpManager:
        """MCP servers as tool sources: `add`, `load_config` (an mcp.json), `refresh`, `servers`,
        `set_permission`, sampling and elicitation handlers (`toolbench.mcp.McpManager`)."""
        return self._kernel.mcp.get()

    def catalog(self, scene: Scene | None = None) -> list[ToolDescriptor]:
        """Every tool the bench knows, in a stable order: builtins, extensions, MCP, added sources."""
        return self._kernel.catalog(scene)

    # invocations --------------------------------------------------------------------------
    def invocation(self, scene: Scene = "chat", *, id: str | None = None) -> Invocation:
        """Freeze a snapshot of what the profile offers now, and start an invocation on it."""
        check_scene(scene)
        return self._kernel.new_invocation(scene, id or f"inv_{uuid.uuid4().hex[:12]}")

    def open_invocation(self, invocation_id: str) -> Invocation:
        """Reopen an invocation from its run log, with its history and budget counters."""
        return self._kernel.reopen(invocation_id)

    def replay(self, source: Any, *, protocol: str | None = None, scene: Scene = "chat") -> Replay:
        """Run a recorded conversation's calls again in a fresh invocation and compare each result
        with the recorded one (`Replay.ok`, `.diffs`, `.to_dataframe()`). `source` is a `Run`, an
        `Invocation` or its id, a list of `{"request": body, "response": body}` pairs (`protocol`
        names their provider, else their shape does), or a JSON/JSONL file of pairs; see
        `toolbench/runtime/replay.py` for the statuses and what is normalised."""
        return replay(self._kernel, source, protocol=protocol, scene=scene)

    def replay_many(self, sources: Iterable[Any], *, protocol: str | None = None, scene: Scene = "chat",
                    concurrency: int = 1, executor: Literal["ray"] | None = None,
                    progress: bool = False) -> list[Replay]:
        """`replay` of each source (any iterable, read as it goes: a corpus is never all in
        memory), `concurrency` in flight on the bench loop; the replays in the sources' order,
        each naming its invocation (`invocation_id`; `open_invocation` reopens it) and holding
        none, so memory stays flat in the corpus size. `executor="ray"` sends shards of read
        recordings to a Ray cluster's workers, each with a bench built from this one
        (runtime/on_ray.py), `concurrency` in flight on each. `progress=True` shows a bar
        (recordings done, the running rate of those all `same`, the others, in flight)."""
        check_executor(executor)
        check_concurrency(concurrency)
        total = len(sources) if isinstance(sources, Sized) else None
        bar = Progress(total, progress, desc="replays", unit="run", good="same", bad="changed")
        try:
            if executor is None:
                return replay_many(self._kernel, sources, protocol=protocol, scene=scene, concurrency=concurrency,
                                   bar=bar)
            from . import on_ray  # Ray loads only when asked for

            return on_ray.replay_many(self, sources, protocol=protocol, scene=scene, concurrency=concurrency,
                                      bar=bar)
        finally:
            bar.close()

    # lifetime -----------------------------------------------------------------------------
    @property
    def closed(self) -> bool:
        return self._kernel.closed

    def on_close(self, listener: Callable[[], None]) -> None:
        """`listener()` runs when the bench closes (a widget greys itself out)."""
        self._close_listeners.append(listener)

    def add_observer(self, observer: Observer) -> Callable[[], None]:
        """Tell `observer` of every model round and answered call from now on (the seam
        `toolbench.otel.instrument` uses; see runtime/observers.py). Returns its remover."""
        self._kernel.observers.append(observer)
        return lambda: self._kernel.observers.remove(observer) if observer in self._kernel.observers else None

    def export_file(self, name: str, data: bytes) -> str:
        """Write a person's export (a history CSV, a report) as `.toolbench/exports/<name>`:
        beside the runtime's files, never where a model's tools list or search. Replaced whole
        (a temp file renamed over it: a link or FIFO planted there is not followed). Returns the
        path relative to the workspace."""
        if not EXPORT_NAME.fullmatch(name):
            raise ToolbenchError("bench.misuse", f"`{name}` is not a plain file name (letters, digits, "
                                 "`.`, `_`, `-`): name the export without a folder")
        relative = f"{self.EXPORTS}/{name}"
        write_runtime_file(self.workspace, relative, data, durable=False)
        return relative

    def flush(self) -> None:
        """Wait until every queued record file is written."""
        self._kernel.store.flush()

    def close(self) -> None:
        """Stop MCP servers and children, write what is queued, release the loop and the files.

        Everything is released even when a step fails; the first failure is raised after."""
        if self._kernel.closed:
            return
        # Listeners first, while the loop runs: a widget greys out and denies the approvals it holds.
        steps = [*self._close_listeners, *self._kernel.close_steps()]
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
        """In a notebook, `display(bench)` shows what the `toolbench.display` entry point gives
        (the widgets' whole app, `toolbench/widgets/_display.py`), else the repr."""
        from importlib.metadata import entry_points

        if self.closed:  # the app would need a live bench; the display hook must not raise
            print(f"{self!r}\n(this bench is closed: open a new Workbench to show the app)")
            return
        for entry in entry_points(group="toolbench.display", name="workbench"):
            try:
                show = entry.load()
            except ImportError as exc:  # ipywidgets missing, or a stale install
                print(f"{self!r}\n(the widgets could not load: {exc})")
                return
            show(self)
            return
        print(f"{self!r}\n(no widgets registered: reinstall toolbench, e.g. `pip install -e .`, to show the app)")

    def __repr__(self) -> str:
        state = ", closed" if self.closed else ""
        return f"Workbench(workspace={str(self.workspace)!r}, profile={self.profile.name!r}{state})"


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


def _workspace_folder(workspace: str | Path) -> Path:
    """The workspace path, resolved; `storage.workspace_not_directory` when it or a folder it
    would be made in is a file (mkdir would fail with a less telling "not writable")."""
    path = Path(workspace).expanduser().resolve()
    for candidate in (path, *path.parents):
        if candidate.exists():
            if not candidate.is_dir():
                raise ToolbenchError("storage.workspace_not_directory",
                                     f"the workspace {path} is not a folder: {candidate} is a file")
            break
    return path


def _as_profile(value: Profile | str | Path | None) -> Profile:
    if value is None:
        return Profile.default()
    if isinstance(value, Profile):
        return value
    return Profile.load(value)
