"""Tool sources: where the tools of a bench come from, behind one interface.

A source lists its descriptors (and the tools it knows but cannot offer, as diagnostics) and
runs a call. The kernel composes the builtins, the extension tools and the MCP servers in that
order (`Sources`); a fourth kind (remote HTTP tools, another framework's tools) is one subclass
of `ToolSource` given to `bench.add_source`. Every call of every source takes the same path in
the invocation (gate, argument check, approval, projection, records), so a source only says
what its tools are and how to run one.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from ..core.descriptors import ToolDescriptor, check_unique
from ..core.errors import ToolbenchError
from ..core.ids import KIND, ToolId
from ..core.results import ToolOutput
from ..core.snapshot import Diagnostic
from ..tools.base import RoundEnd, ToolContext, time_limit
from ..tools.registry import BUILTINS, INJECTED, planned_diagnostics

if TYPE_CHECKING:
    from ..core.profile import Profile

PERMISSIONS = ("on", "ask")
T = TypeVar("T")
_NO_TOOLS: Sequence[ToolDescriptor] = ()  # what a failed source offers (typed, for `_ask`)
_NO_HOOKS: tuple[RoundEnd, ...] = ()
_NO_DIAGNOSTICS: Mapping[ToolId, Diagnostic] = {}


class ToolSource:
    """One source of tools. Subclasses give `descriptors` and `call`; the rest has defaults.

    `checks_arguments`: the runtime checks a call's arguments against the tool's input schema
    before `call` (a `tool.invalid_arguments` result otherwise); False leaves it to the source
    (an MCP server checks its own). A descriptor's `completes_round` and `parent_only` hold for
    any source: such a tool must end its round, and delegated children do not get it."""

    checks_arguments: bool = True
    # The ToolId kind of its own tools (`<kind>/<source-id>:<name>`), if it has one: it then
    # answers for the ids of that kind that no source offers (a call of one, and the snapshot's
    # diagnostic, `unavailable`). None: its ids borrow another kind (`extension/<id>`).
    kind: str | None = None

    def descriptors(self) -> Sequence[ToolDescriptor]:
        raise NotImplementedError

    def unavailable(self, tool_id: ToolId) -> Diagnostic:
        """Why a tool of its kind that the profile names is not offered (a snapshot diagnostic)."""
        return Diagnostic(tool_id=str(tool_id), code="tool.source_unavailable",
                          message=f"{type(self).__name__} does not offer this tool now")

    def diagnostics(self) -> Mapping[ToolId, Diagnostic]:
        """Tools this source knows but cannot offer now, with the reason (left out of snapshots)."""
        return {}

    def has(self, tool_id: ToolId) -> bool:
        return any(d.id == tool_id for d in self.descriptors())

    def call(self, tool_id: ToolId, arguments: dict[str, Any], ctx: ToolContext, *,
             blocking: bool) -> ToolOutput | Awaitable[ToolOutput]:
        """Run one call: a `ToolOutput`, or an awaitable of one (awaited on the bench loop).
        Raise `ToolError` for a result the model should read.

        Where the sync part runs: in the caller's thread for a sync `inv.call` / `inv.turn`
        (`blocking=True`: a blocking twin may be used), on the bench loop for `acall` / `aturn`,
        and on a worker thread after an approval (`blocking=False`). Keep it short or return
        an awaitable."""
        raise NotImplementedError

    def permission(self, tool_id: ToolId) -> str:
        """`on` runs a call at once; `ask` waits for the bench's approval handler. A tool the
        source does not have (any more) is `on`: its call fails at once, nobody is asked."""
        asks: dict[ToolId, str] = self.__dict__.get("_permissions", {})
        return asks.get(tool_id, "on") if self.has(tool_id) else "on"

    def set_permission(self, tool_id: ToolId, permission: str) -> ToolId:
        """Make each call of one of this source's tools ask first (`ask`), or run at once (`on`).
        Taking a tool away is the profile's job (its deny list), not a permission."""
        if permission not in PERMISSIONS:
            raise ToolbenchError("bench.misuse", f"`{tool_id}`'s permission is `on` or `ask`, not {permission!r} "
                                 "(to take the tool away, deny it in the profile)")
        if not self.has(tool_id):
            raise ToolbenchError("bench.misuse", f"`{tool_id}` is not a tool of this source")
        self.__dict__.setdefault("_permissions", {})[tool_id] = permission
        return tool_id

    def round_end_hooks(self, tool_ids: Iterable[ToolId]) -> tuple[RoundEnd, ...]:
        """What runs when a round of an invocation offering these tools ends."""
        return ()


class BuiltinSource(ToolSource):
    """The builtins of `tools/registry.py`, and those it injects into delegated children."""

    def descriptors(self) -> Sequence[ToolDescriptor]:
        return [t.descriptor for t in BUILTINS.values()]

    def diagnostics(self) -> Mapping[ToolId, Diagnostic]:
        return planned_diagnostics()

    def has(self, tool_id: ToolId) -> bool:
        return tool_id in BUILTINS or tool_id in INJECTED

    def call(self, tool_id: ToolId, arguments: dict[str, Any], ctx: ToolContext, *,
             blocking: bool) -> ToolOutput | Awaitable[ToolOutput]:
        tool = BUILTINS.get(tool_id) or INJECTED[tool_id]
        if blocking and tool.blocking is not None:
            return tool.blocking(ctx, arguments)  # it keeps its own limits (shell, agent.await)
        with time_limit(ctx.profile.tools.builtin_timeout_seconds):
            return tool.handler(ctx, arguments)

    def round_end_hooks(self, tool_ids: Iterable[ToolId]) -> tuple[RoundEnd, ...]:
        hooks: dict[RoundEnd, None] = {}
        for tool_id in tool_ids:
            tool = BUILTINS.get(tool_id) or INJECTED.get(tool_id)
            if tool is not None and tool.end_round is not None:
                hooks[tool.end_round] = None
        return tuple(hooks)

    @staticmethod
    def check_profile(profile: Profile) -> None:
        """A profile may select the builtins toolbench knows, not the injected ones."""
        known = set(BUILTINS) | set(planned_diagnostics())
        for key in ("allow", "deny"):
            for text in getattr(profile.tools, key):
                tool_id = ToolId.parse(text)
                if tool_id in INJECTED:
                    raise ToolbenchError("agent.profile_unknown_tool", f"`tools.{key}`: `{text}` cannot be "
                                         "selected; the runtime gives it to delegated children only")
                if tool_id.kind == "builtin" and tool_id not in known:
                    raise ToolbenchError("agent.profile_unknown_tool",
                                         f"`tools.{key}`: `{text}` is not a builtin tool")


class Sources:
    """The bench's sources in order; the first that has a tool runs it."""

    def __init__(self, sources: Sequence[ToolSource]) -> None:
        self._sources = list(sources)
        # Each kind of ToolId has a source that answers for ids no source has now (an
        # unregistered extension tool, a tool its MCP server no longer lists).
        self._fallback: dict[str, ToolSource] = {}
        self._kinds: dict[str, ToolSource] = {}  # the sources that declared a kind of their own
        self._own = {id(s) for s in sources}  # the bench's own three: their errors are bugs, not guarded
        self._failed: dict[int, str] = {}  # by id(): an added source whose last answer was an exception

    def add(self, source: ToolSource) -> None:
        """Add `source` after the others, once its tools are read: one whose `descriptors()`
        raises, gives no descriptors or repeats a tool id already offered is refused here, not at
        the next invocation (which every later one would fail too)."""
        if not isinstance(source, ToolSource):
            raise ToolbenchError("bench.misuse", f"a tool source is a ToolSource, not {type(source).__name__}")
        kind = source.kind
        if kind is not None:
            taken = self._fallback.get(kind)
            if not (isinstance(kind, str) and KIND.fullmatch(kind)) or kind == "builtin" or taken is not None:
                whose = "" if taken is None else f" (it is {type(taken).__name__}'s)"
                raise ToolbenchError("bench.misuse", f"a tool source's kind is a free lowercase name "
                                     f"([a-z][a-z0-9-]*), not {kind!r}{whose}")
        try:
            offered = list(source.descriptors())
        except Exception as exc:  # the source's own failure (a remote one offline): refused, not kept
            raise ToolbenchError("bench.misuse", f"{type(source).__name__}.descriptors() raised "
                                 f"{type(exc).__name__}: {exc}") from exc
        if not all(isinstance(d, ToolDescriptor) for d in offered):
            raise ToolbenchError("bench.misuse", f"{type(source).__name__}.descriptors() gives ToolDescriptors only")
        check_unique(self.catalog() + offered)
        if kind is not None:
            self._fallback[kind] = source
            self._kinds[kind] = source
        self._sources.append(source)

    def add_fallback(self, kind: str, source: ToolSource) -> None:
        """`source` answers the calls of ids of `kind` that no source has."""
        self._fallback[kind] = source

    def catalog(self) -> list[ToolDescriptor]:
        tools = [d for s in self._sources for d in self._ask(s, s.descriptors, _NO_TOOLS)]
        check_unique(tools)
        return tools

    def _ask(self, source: ToolSource, question: Callable[..., T], default: T, *args: Any) -> T:
        """An added source's answer, or `default` when it raises (a remote source gone offline):
        its tools leave the next snapshots, named in their diagnostics, and the bench goes on."""
        if id(source) in self._own:
            return question(*args)
        try:
            answer = question(*args)
        except Exception as exc:
            self._failed[id(source)] = f"{type(source).__name__} failed: {type(exc).__name__}: {exc}"
            return default
        self._failed.pop(id(source), None)
        return answer

    def diagnostics(self, wanted: Iterable[ToolId] = ()) -> dict[ToolId, Diagnostic]:
        """What the sources cannot offer, and of `wanted` (the profile's tools) those of a
        source's own kind that it does not offer now, in its words."""
        out: dict[ToolId, Diagnostic] = {}
        for source in self._sources:
            out.update(self._ask(source, source.diagnostics, _NO_DIAGNOSTICS))
        for tool_id in wanted:
            own = self._kinds.get(tool_id.kind)
            if own is None or tool_id in out or self._ask(own, own.has, False, tool_id):
                continue
            said = None if id(own) in self._failed else self._ask(own, own.unavailable, None, tool_id)
            out[tool_id] = said or Diagnostic(tool_id=str(tool_id), code="tool.source_unavailable",
                                              message=self._failed.get(id(own), "its source does not offer it"))
        return out

    def owner(self, tool_id: ToolId) -> ToolSource:
        for source in self._sources:
            if self._ask(source, source.has, False, tool_id):
                return source
        fallback = self._fallback.get(tool_id.kind)
        if fallback is None:
            raise ToolbenchError("bench.misuse", f"no tool source has `{tool_id}`")
        return fallback

    def round_end_hooks(self, tool_ids: Sequence[ToolId]) -> tuple[RoundEnd, ...]:
        return tuple(hook for source in self._sources
                     for hook in self._ask(source, source.round_end_hooks, _NO_HOOKS, tool_ids))
