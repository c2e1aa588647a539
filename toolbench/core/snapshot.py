"""Invocation snapshots: the frozen list of tools, call names and budgets one invocation offers.

`prepare()` composes separate steps over a catalog: profile selection (allow order, deny
wins), the scene filter, description overrides, call-name allocation, budgets. Everything left
out is reported in `diagnostics`, never silently dropped.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from typing import Any, Literal, Self, TypeVar

from pydantic import Field, ValidationError, model_validator

from .descriptors import Frozen, Scene, ToolDescriptor, apply_override
from .errors import ToolbenchError, ToolError
from .ids import ToolId
from .naming import allocate, builtin_call_name, mcp_seed
from .profile import Profile

SCHEMA_VERSION: Literal[1] = 1
# Reserved so no external tool takes the name of the return tool a delegated child gets.
RESERVED_CALL_NAMES = frozenset({"task_return"})


class Binding(Frozen):
    descriptor: ToolDescriptor
    call_name: str
    max_calls: int | None = None

    @property
    def tool_id(self) -> ToolId:
        return self.descriptor.id


class Diagnostic(Frozen):
    """Why a tool the profile names is not in the snapshot (or what else went wrong)."""

    tool_id: str
    code: str
    message: str


class Snapshot(Frozen):
    """What one invocation offers. Invariants hold on construction and on load. Data only: what
    needs the providers (render, check, golden, diff) is `protocols.snapshot.Snapshot`'s, the
    class an invocation's snapshot is (core does not import the providers)."""

    schema_version: Literal[1] = SCHEMA_VERSION
    id: str
    scene: Scene = "chat"
    bindings: tuple[Binding, ...]
    max_calls_per_invocation: int
    diagnostics: tuple[Diagnostic, ...] = ()
    strict: bool = Field(default=False, description="render OpenAI-strict schemas")
    anthropic_strict: bool = Field(default=False, description="render Anthropic strict tools")

    @model_validator(mode="before")
    @classmethod
    def _version(cls, data: Any) -> Any:
        if isinstance(data, dict):
            version = data.get("schemaVersion", data.get("schema_version", SCHEMA_VERSION))
            if version != SCHEMA_VERSION:
                raise ValueError(f"tool.snapshot_schema_unsupported: schemaVersion {version} is not {SCHEMA_VERSION}")
        return data

    @model_validator(mode="after")
    def _invariants(self) -> Snapshot:
        problems = snapshot_problems(self.id, self.bindings, self.max_calls_per_invocation)
        if problems:
            code, message = problems[0]
            raise ValueError(f"{code}: {message}")
        return self

    @classmethod
    def build(cls, **fields: Any) -> Self:
        """Construct, raising `ToolbenchError` with the invariant's code."""
        try:
            return cls(**fields)
        except ValidationError as exc:
            raise _as_toolbench_error(exc) from exc

    @classmethod
    def from_json(cls, data: Any) -> Self:
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise _as_toolbench_error(exc) from exc

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)

    # cached_property keeps the maps in the instance __dict__: a plain attribute read. (Private
    # attributes go through pydantic's __getattr__, ~3.6 µs a read, on every call's path.)
    @functools.cached_property
    def by_call_name(self) -> dict[str, Binding]:
        return {b.call_name: b for b in self.bindings}

    @functools.cached_property
    def by_tool_id(self) -> dict[ToolId, Binding]:
        return {b.tool_id: b for b in self.bindings}

    @property
    def call_names(self) -> dict[str, ToolId]:
        return {b.call_name: b.tool_id for b in self.bindings}

    def binding_for(self, call_name: str) -> Binding | None:
        return self.by_call_name.get(call_name)

    @functools.cached_property
    def _by_loose_name(self) -> dict[str, Binding | None]:
        loose: dict[str, Binding | None] = {}
        for b in self.bindings:
            key = b.call_name.strip().lower()
            loose[key] = None if key in loose else b  # shared by two names: ambiguous, so unknown
        return loose

    def binding_loose(self, call_name: str) -> Binding | None:
        """The one binding whose call name equals `call_name` trimmed and lowercased (LiveAgent's
        registry fallback); None when none or several do."""
        return self._by_loose_name.get(call_name.strip().lower()) if isinstance(call_name, str) else None

    def binding_of(self, tool_id: ToolId) -> Binding | None:
        return self.by_tool_id.get(tool_id)

    def strict_for(self, protocol: str) -> bool:
        """Whether the profile asked for that provider's strict tool mode."""
        return self.anthropic_strict if protocol == "anthropic" else self.strict


S = TypeVar("S", bound=Snapshot)


def snapshot_problems(
    snapshot_id: str, bindings: Iterable[Binding], max_total: int
) -> list[tuple[str, str]]:
    problems: list[tuple[str, str]] = []
    if not snapshot_id:
        problems.append(("tool.snapshot_id_empty", "the snapshot id is empty"))
    if max_total < 1:
        problems.append(("tool.snapshot_budget_invalid", "maxCallsPerInvocation must be at least 1"))
    ids: set[ToolId] = set()
    names: set[str] = set()
    for b in bindings:
        if b.tool_id in ids:
            problems.append(("tool.snapshot_duplicate_id", f"`{b.tool_id}` is bound twice"))
        if not b.call_name:
            problems.append(("tool.snapshot_alias_empty", f"`{b.tool_id}` has an empty call name"))
        elif b.call_name in names:
            problems.append(("tool.snapshot_duplicate_alias", f"call name `{b.call_name}` is used twice"))
        if b.max_calls is not None and b.max_calls < 1:
            problems.append(("tool.snapshot_tool_budget_invalid", f"`{b.tool_id}` has a per-tool budget of 0"))
        ids.add(b.tool_id)
        names.add(b.call_name)
    return problems


def _as_toolbench_error(exc: Any) -> ToolbenchError:
    for err in exc.errors(include_url=False):
        message = str(err.get("msg", ""))
        head = message.removeprefix("Value error, ")
        code, sep, rest = head.partition(": ")
        if sep and "." in code and " " not in code:
            return ToolbenchError(code, rest)
    return ToolbenchError("tool.snapshot_invalid", str(exc))


def prepare(
    profile: Profile,
    catalog: Mapping[ToolId, ToolDescriptor],
    *,
    snapshot_id: str,
    scene: Scene = "chat",
    unavailable: Mapping[ToolId, Diagnostic] | None = None,
    return_mode: ToolDescriptor | None = None,
    snapshot_type: type[S] = Snapshot,  # type: ignore[assignment]
) -> S:
    """Freeze the tools `profile` offers from `catalog` in `scene`.

    `unavailable` explains external tools the profile names that no source offers now.
    `return_mode`, when given, is the `task.return` descriptor of a delegated child: the
    completion and delegation tools go, and it is appended."""
    settings = profile.tools
    diagnostics: list[Diagnostic] = []
    chosen: list[ToolDescriptor] = []
    for tool_id in settings.active():
        descriptor = catalog.get(tool_id)
        if descriptor is None:
            known = (unavailable or {}).get(tool_id)
            if known is None and tool_id.kind == "builtin":
                raise ToolbenchError("agent.profile_unknown_tool", f"`{tool_id}` is not a builtin tool")
            diagnostics.append(known or _unavailable(tool_id))
            continue
        if scene not in descriptor.scenes:
            diagnostics.append(Diagnostic(tool_id=str(tool_id), code="tool.scene_excluded",
                                          message=f"not offered in the {scene} scene"))
            continue
        if return_mode is not None and (descriptor.completes_round or descriptor.parent_only):
            diagnostics.append(Diagnostic(tool_id=str(tool_id), code="agent.return_mode_excluded",
                                          message="a delegated child returns with task_return instead"))
            continue
        try:
            descriptor = apply_override(descriptor, settings.tool_descriptions.get(str(tool_id)))
        except ToolError as exc:
            if tool_id.kind == "builtin":
                raise ToolbenchError(exc.code, exc.message) from exc
            diagnostics.append(Diagnostic(tool_id=str(tool_id), code="agent.tool_override_invalid",
                                          message=f"{exc.code}: {exc.message}"))
            continue
        if descriptor.example is not None:  # people's, not the model's: a snapshot never holds it
            descriptor = descriptor.model_copy(update={"example": None})
        chosen.append(descriptor)
    if return_mode is not None:
        chosen.append(return_mode)

    used = set(RESERVED_CALL_NAMES)
    used.update(builtin_call_name(d.id.name) for d in chosen if d.kind == "builtin")
    bindings = []
    for d in chosen:
        if d.kind == "builtin":
            name = builtin_call_name(d.id.name)
        else:
            seed = d.id.name
            if d.kind == "mcp":
                seed = mcp_seed(settings.naming, d.server or d.id.source_id or "", d.id.name)
            name = allocate(seed, used)
            used.add(name)
        bindings.append(Binding(descriptor=d, call_name=name, max_calls=settings.max_calls_per_tool.get(str(d.id))))
    return snapshot_type.build(
        id=snapshot_id,
        scene=scene,
        bindings=tuple(bindings),
        max_calls_per_invocation=settings.max_calls_per_run,
        diagnostics=tuple(diagnostics),
        strict=settings.openai_strict,
        anthropic_strict=settings.anthropic_strict,
    )


def _unavailable(tool_id: ToolId) -> Diagnostic:
    if tool_id.kind == "extension":
        return Diagnostic(tool_id=str(tool_id), code="extension.tool_unavailable",
                          message="no extension tool with this id is registered; register it on the bench")
    if tool_id.kind == "mcp":
        return Diagnostic(tool_id=str(tool_id), code="mcp.tool_unavailable", message="no active MCP server "
                          "offers this tool (server missing, failed, disabled, or tool off)")
    # a source's own kind: its source, when added, says why (`ToolSource.unavailable`)
    return Diagnostic(tool_id=str(tool_id), code="tool.source_unavailable",
                      message=f"no tool source of kind `{tool_id.kind}` offers this tool; add the source to the bench")
