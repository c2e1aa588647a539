"""Profile schema versions, and the load-time migration of older and upstream profiles.

`Profile.parse` / `Profile.load` run `migrate(data)` first and keep its notes on
`profile.migrations`; the file itself is not rewritten (save the profile to keep the new form).
Two forms come in:

* toolbench's own: `schema_version` (or `schemaVersion`) 2 is current. A document without one
  is version 1 (before `run` and the version field existed): bare tool names get `builtin:`,
  retired builtins are dropped.
* TauriTavern's exported profile (`kind: "tauritavern.agentProfile"`, schemaVersion 1-4,
  reference §7, and upstream's `profile.rs` for the sections): `id` -> `name`, `tools` kept
  (`maxRounds` moves to `run.max_rounds`, legacy `mcpResultInlineCharLimit` is renamed to
  `externalResultInlineCharLimit`; before version 3 bare names get `builtin:`),
  `run.presentation` and `delegation.canDelegate` / `canHandoff` move to `run` (upstream's
  default `false` where they are absent), `workspace.visibleRoots` / `writableRoots` kept.
  Retired builtins (`skill.*`, `agent.list`) are dropped from allow, deny, maxCallsPerTool and
  toolDescriptions. Versions 1-3 drop `skills.maxReadCharsPerCall` / `PerRun`; a version-4
  document that still has them is refused, as upstream refuses it. The sections toolbench does
  not model (preset, model, context, instructions, plan, output, skills, the other delegation
  and run keys) are dropped, each with a note.

Every change is a `ProfileMigration` note (`code`, `key` in the source document, `message`).
A newer version than these (or one that is not a whole number: `true`, `2.0`, as upstream's
u32 refuses them) raises `agent.profile_schema_unsupported`.

The documents come from files anyone can write, so every value the migration reads the keys of
goes through `_section` (an object, or absent / null for none; anything else is
`agent.profile_invalid` naming its key) and every version through `_version`: no shape makes it
raise anything but those two codes. The values it only moves are left to validation.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from .errors import ToolbenchError

SCHEMA_VERSION: Final = 2
UPSTREAM_KIND: Final = "tauritavern.agentProfile"
UPSTREAM_VERSIONS: Final = range(1, 5)
RETIRED: Final = frozenset({"builtin:skill.read", "builtin:skill.search", "builtin:skill.list",
                            "builtin:skill.run_script", "builtin:agent.list"})
_TOOL_LISTS: Final = ("allow", "deny")
_TOOL_MAPS: Final = ("maxCallsPerTool", "toolDescriptions")
_UNMODELLED: Final = ("preset", "model", "context", "instructions", "plan", "output", "skills")
_SKILL_READ_LIMITS: Final = ("maxReadCharsPerCall", "maxReadCharsPerRun")


@dataclass(frozen=True, slots=True)
class ProfileMigration:
    """One change the migration made: its code, the key in the source document, a readable line."""

    code: str
    key: str
    message: str


def migrate(data: Any) -> tuple[Any, tuple[ProfileMigration, ...]]:
    """`data` in the current toolbench form, and the notes of what changed (none for a current one).

    Anything that is not a mapping comes back as it is, for validation to refuse."""
    if not isinstance(data, Mapping):
        return data, ()
    notes: list[ProfileMigration] = []
    convert = _from_upstream if data.get("kind") == UPSTREAM_KIND else _from_toolbench
    out = convert(dict(data), notes)
    out["schema_version"] = SCHEMA_VERSION
    return out, tuple(notes)


def _from_toolbench(data: dict[str, Any], notes: list[ProfileMigration]) -> dict[str, Any]:
    raw = _pop(data, "schemaVersion", 1)
    version = _version(raw)
    if version == SCHEMA_VERSION:
        return data
    if version != 1:
        raise ToolbenchError("agent.profile_schema_unsupported",
                             f"toolbench profile schemaVersion {_brief(raw)} is unsupported (this version reads 1-"
                             f"{SCHEMA_VERSION})")
    notes.append(ProfileMigration("agent.profile_migrated", "schemaVersion",
                                  f"toolbench profile without a version (1) read as schema_version {SCHEMA_VERSION}"))
    tools = data.get("tools")
    if isinstance(tools, Mapping):
        data["tools"] = _tool_names(dict(tools), notes, prefix_bare=True)
    return data


def _from_upstream(doc: dict[str, Any], notes: list[ProfileMigration]) -> dict[str, Any]:
    raw = doc.pop("schemaVersion", None)
    version = _version(raw)
    if version is None or version not in UPSTREAM_VERSIONS:
        raise ToolbenchError("agent.profile_schema_unsupported",
                             f"TauriTavern profile schemaVersion {_brief(raw)} is unsupported (this version reads "
                             f"{UPSTREAM_VERSIONS.start}-{UPSTREAM_VERSIONS.stop - 1})")
    doc.pop("kind")
    note = _noter(notes)
    note("agent.profile_migrated", "kind",
         f"TauriTavern profile (schemaVersion {version}) converted to toolbench schema_version {SCHEMA_VERSION}")
    out: dict[str, Any] = {}
    if "id" in doc:
        out["name"] = doc.pop("id")
    display = doc.pop("displayName", None)
    description = doc.pop("description", None) or display
    if display is not None and description != display:
        note("agent.profile_key_dropped", "displayName", "dropped: the profile has a description")
    if description is not None:
        out["description"] = description
    run: dict[str, Any] = {}
    tools = _section(doc.pop("tools", None), "tools")
    if "maxRounds" in tools:
        run["max_rounds"] = tools.pop("maxRounds")
        note("agent.profile_key_renamed", "tools.maxRounds", "moved to run.max_rounds")
    if "mcpResultInlineCharLimit" in tools:
        legacy = tools.pop("mcpResultInlineCharLimit")
        if "externalResultInlineCharLimit" in tools:
            note("agent.profile_key_dropped", "tools.mcpResultInlineCharLimit",
                 "dropped: externalResultInlineCharLimit is given too, and wins")
        else:
            tools["externalResultInlineCharLimit"] = legacy
            note("agent.profile_key_renamed", "tools.mcpResultInlineCharLimit",
                 "renamed to externalResultInlineCharLimit")
    out["tools"] = _tool_names(tools, notes, prefix_bare=version < 3)
    upstream_run = _section(doc.pop("run", None), "run")
    if "presentation" in upstream_run:
        run["presentation"] = upstream_run.pop("presentation")
    for key in upstream_run:
        note("agent.profile_key_dropped", f"run.{key}", "not used by toolbench")
    delegation = _section(doc.pop("delegation", None), "delegation")
    for key, field in (("canDelegate", "can_delegate"), ("canHandoff", "can_handoff")):
        run[field] = delegation.pop(key, False)  # upstream's serde default
    for key in delegation:
        note("agent.profile_key_dropped", f"delegation.{key}", "not used by toolbench")
    out["run"] = run
    workspace = doc.pop("workspace", None)
    if workspace is not None:
        out["workspace"] = workspace
    _skill_limits(_section(doc.get("skills"), "skills"), version, note)
    for section in _UNMODELLED:
        if section in doc:
            doc.pop(section)
            note("agent.profile_key_dropped", section, "not used by toolbench")
    out.update(doc)  # anything left is not upstream's either: validation names it
    return out


def _skill_limits(skills: Mapping[str, Any], version: int, note: Callable[[str, str, str], None]) -> None:
    present = [key for key in _SKILL_READ_LIMITS if key in skills]
    if present and version == UPSTREAM_VERSIONS.stop - 1:
        raise ToolbenchError("agent.profile_invalid", f"TauriTavern profile version {version}: `skills.{present[0]}` "
                             "was removed in this version")
    for key in present:
        note("agent.profile_key_dropped", f"skills.{key}", "skill read limits were retired upstream")


def _tool_names(tools: dict[str, Any], notes: list[ProfileMigration], *, prefix_bare: bool) -> dict[str, Any]:
    """Bare names to `builtin:` (when asked), then retired builtins out, in all four maps."""
    note = _noter(notes)

    def rename(key: str, text: Any) -> Any:
        if prefix_bare and isinstance(text, str) and ":" not in text:
            note("agent.profile_tool_prefixed", f"tools.{key}", f"`{text}` read as `builtin:{text}`")
            return f"builtin:{text}"
        return text

    def keep(key: str, text: Any) -> bool:
        if isinstance(text, str) and text in RETIRED:  # anything else is refused by the schema, not here
            note("agent.profile_tool_retired", f"tools.{key}", f"`{text}` was retired upstream and is dropped")
            return False
        return True

    for camel in (*_TOOL_LISTS, *_TOOL_MAPS):
        key = camel if camel in tools else _snake(camel)
        value = tools.get(key)
        if isinstance(value, list | tuple):
            tools[key] = [t for t in (rename(camel, t) for t in value) if keep(camel, t)]
        elif isinstance(value, Mapping):
            renamed = {rename(camel, k): v for k, v in value.items()}
            tools[key] = {k: v for k, v in renamed.items() if keep(camel, k)}
    return tools


def _section(value: Any, key: str) -> dict[str, Any]:
    """The section `value` at `key` as a fresh dict (absent or null: empty); any other shape is
    `agent.profile_invalid` naming the key (the caller prefixes the source)."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ToolbenchError("agent.profile_invalid", f"`{key}` must be an object of settings, not {kind_of(value)}")
    return dict(value)


def kind_of(value: Any) -> str:
    """What a document value is, for a message: "a list", "a string", "nothing" (None)."""
    kinds = {list: "a list", str: "a string", int: "a number", float: "a number", bool: "a boolean"}
    return "nothing" if value is None else kinds.get(type(value), f"a {type(value).__name__}")


def _brief(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:39] + "…"


def _version(value: Any) -> int | None:
    """A schemaVersion as a whole number; None when it is not one (absent, `true`, `2.0`, text)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _noter(notes: list[ProfileMigration]) -> Callable[[str, str, str], None]:
    return lambda code, key, message: notes.append(ProfileMigration(code, key, message))


def _pop(data: dict[str, Any], camel: str, default: Any) -> Any:
    """Remove and return `camel` or its snake_case spelling."""
    value = data.pop(_snake(camel), default)
    return data.pop(camel, value)


def _snake(camel: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in camel)
