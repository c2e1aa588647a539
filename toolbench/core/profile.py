"""Profiles: which tools an invocation offers, in what order, with which budgets."""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal, Self

from pydantic import AliasChoices, BaseModel, Field, PrivateAttr, field_validator

from . import front_matter
from .chat_settings import ChatSettings, WorldInfoSettings
from .descriptors import DescriptionOverride
from .errors import ToolbenchError
from .fileio import read_regular_file, write_atomic
from .ids import ToolId
from .memory_settings import MemorySettings
from .naming import NamingStyle
from .profile_migrate import SCHEMA_VERSION, ProfileMigration, kind_of, migrate
from .run_settings import RunSettings
from .section import FrozenMap, Section, parse
from .shell_settings import ShellSettings
from .workspace_settings import WorkspaceSettings

PositiveInt = Annotated[int, Field(ge=1)]
PROFILE_BYTES = 4 << 20  # a profile file is a few KB; one with every tool's description override, a few hundred

# The upstream default profile ("Default Writer", reference §3.5), plus dice.roll.
DEFAULT_ALLOW: tuple[str, ...] = (
    "builtin:agent.delegate",
    "builtin:agent.await",
    "builtin:chat.search",
    "builtin:chat.read_messages",
    "builtin:worldinfo.read_activated",
    "builtin:workspace.list_files",
    "builtin:workspace.search_files",
    "builtin:workspace.read_file",
    "builtin:workspace.write_file",
    "builtin:workspace.apply_patch",
    "builtin:workspace.shell",
    "builtin:workspace.commit",
    "builtin:workspace.finish",
    "builtin:dice.roll",
)


class ToolsSettings(Section):
    """Which tools are offered (`allow` in order, `deny` wins), their budgets and rendering; frozen."""

    allow: tuple[str, ...] = DEFAULT_ALLOW
    deny: tuple[str, ...] = ()
    max_calls_per_run: PositiveInt = 80
    max_calls_per_tool: FrozenMap[str, PositiveInt] = Field(default_factory=FrozenMap)
    tool_descriptions: FrozenMap[str, DescriptionOverride] = Field(default_factory=FrozenMap)
    # Upstream's legacy name `mcpResultInlineCharLimit` is read as this field (reference §7).
    external_result_inline_char_limit: PositiveInt = Field(
        default=50_000,
        validation_alias=AliasChoices(
            "external_result_inline_char_limit", "externalResultInlineCharLimit", "mcpResultInlineCharLimit"),
    )
    project_builtin_results: bool = False  # beyond upstream: long builtin results go to tool-results/ too
    naming: NamingStyle = "tauritavern"
    openai_strict: bool = False  # render OpenAI schemas in strict mode
    anthropic_strict: bool = False  # render Anthropic tools with `strict: true` (and the schema it takes)
    # How long an async extension tool may run before its call ends with `extension.tool_timeout`
    # (a per-tool `register_tool(..., timeout=)` wins; sync tools are bounded only by that option).
    extension_timeout_seconds: float = Field(default=60.0, gt=0, allow_inf_nan=False)
    # How long a builtin's own work may run before its call ends with `tool.timeout`: checked
    # between the steps of its long loops (files walked, edit passes), so it stops cleanly.
    # Builtins that wait (shell, agent.await) keep their own limits.
    builtin_timeout_seconds: float = Field(default=30.0, gt=0, allow_inf_nan=False)

    @field_validator("allow", "deny")
    @classmethod
    def _ids(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for text in value:
            _check_id(text)
        return value

    @field_validator("max_calls_per_tool", "tool_descriptions")
    @classmethod
    def _id_keys(cls, value: Mapping[str, Any]) -> Mapping[str, Any]:
        for text in value:
            _check_id(text)
        return value

    def active(self) -> list[ToolId]:
        """allow minus deny, in allow order, without repeats."""
        denied = set(self.deny)
        seen: set[str] = set()
        out = []
        for text in self.allow:
            if text not in denied and text not in seen:
                seen.add(text)
                out.append(ToolId.parse(text))
        return out


class Profile(Section):
    """A tool profile: a frozen value. `Profile.default()` is the embedded default; `edit(...)`
    makes a changed copy (the bench's profile is replaced, never changed in place).

    `schema_version` is the form it is saved in (`core/profile_migrate.py`: older and upstream
    forms are migrated on `parse` / `load`, and `migrations` says what changed)."""

    schema_version: Literal[2] = SCHEMA_VERSION
    name: str = "default"
    description: str = ""
    tools: ToolsSettings = Field(default_factory=ToolsSettings)
    run: RunSettings = Field(default_factory=RunSettings)
    workspace: WorkspaceSettings = Field(default_factory=WorkspaceSettings)
    shell: ShellSettings = Field(default_factory=ShellSettings)
    chat: ChatSettings = Field(default_factory=ChatSettings)
    worldinfo: WorldInfoSettings = Field(default_factory=WorldInfoSettings)
    memory: MemorySettings = Field(default_factory=MemorySettings)
    # What the load-time migration changed; not saved, not compared (an edit starts afresh).
    _migrations: tuple[ProfileMigration, ...] = PrivateAttr(default=())

    def __eq__(self, other: object) -> bool:
        # The fields only: the migration notes are not part of the value (pydantic's own
        # equality compares private attributes too).
        return type(other) is type(self) and self.__dict__ == other.__dict__

    __hash__ = Section.__hash__

    @property
    def migrations(self) -> tuple[ProfileMigration, ...]:
        """The migration's notes when this profile was parsed from an older or upstream form
        (each: `code`, `key` in the source, `message`); empty for a current one."""
        return self._migrations

    @classmethod
    def default(cls) -> Profile:
        return cls(name="default", description="The upstream default profile (shell on), plus dice.roll.")

    @classmethod
    def parse(cls, data: Any, *, source: str = "profile") -> Profile:
        """Migrate (older and upstream forms) and validate a mapping; errors become one
        `agent.profile_invalid` naming each key, an unknown version `agent.profile_schema_unsupported`."""
        try:
            current, notes = migrate(data)
        except ToolbenchError as exc:  # name the file, as validation's errors do
            raise ToolbenchError(exc.code, f"{source}: {exc.message}") from exc
        profile = parse(cls, current, source=source)
        if notes:
            BaseModel.__setattr__(profile, "_migrations", notes)  # set once, before anyone holds it
        return profile

    @classmethod
    def load(cls, path: str | Path) -> Profile:
        """Read a JSON, TOML or YAML (`.yaml`, `.yml`) profile file (toolbench's, or one exported
        from TauriTavern), migrated as `parse` does; the file is left as it is. Any other suffix
        is read as JSON."""
        path = Path(path)
        try:  # a regular file of at most PROFILE_BYTES: a FIFO or /dev/zero never blocks or fills memory
            text = read_regular_file(path, PROFILE_BYTES).decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
            raise ToolbenchError("agent.profile_invalid", f"cannot read profile {path}: {reason}") from exc
        return cls.from_text(text, path)

    @classmethod
    def from_text(cls, text: str, path: str | Path) -> Profile:
        """A profile file's text, read as `load` reads the file `path` (its suffix picks the
        format; messages name it): for a caller that read the file its own way."""
        path = Path(path)
        data = _decode(text, path)
        if not isinstance(data, Mapping):  # an empty YAML file is None; a list, a bare value
            found = kind_of(data)
            raise ToolbenchError("agent.profile_invalid", f"{path} holds {found}, not a profile: a profile is a "
                                 "mapping of its sections, e.g. {\"name\": ..., \"tools\": {\"allow\": [...]}}")
        return cls.parse(data, source=str(path))

    def save(self, path: str | Path) -> None:
        """Write the profile as JSON (`to_json_text`), replacing the file atomically."""
        write_atomic(Path(path), self.to_json_text())

    def to_json_text(self) -> str:
        return json.dumps(self.model_dump(mode="json", exclude_defaults=False), indent=2, ensure_ascii=False) + "\n"

    def edit(self, **changes: Any) -> Self:
        """A new, validated profile with `changes`; this one is unchanged.

        A key (snake_case or camelCase) names a top-level field (`name=`), a `tools` or `run`
        field (`allow=[...]`, `max_rounds=5`), or a section: a mapping is merged into that section
        (`shell={"timeout_seconds": 5}`), a section value replaces it. Raises
        `agent.profile_invalid` naming each unknown key (`shell.bogus`) or bad value."""
        top: dict[str, Any] = {}
        into: dict[str, dict[str, Any]] = {}
        for key, value in changes.items():
            name = self.field_name(key)
            shorthand = next((section for section, kind in _SHORTHAND if kind.field_name(key) in kind.model_fields),
                             None) if name not in type(self).model_fields else None
            if shorthand is not None:
                into.setdefault(shorthand, {})[key] = value
            elif name in type(self).model_fields and isinstance(getattr(self, name), Section) \
                    and isinstance(value, Mapping):
                into.setdefault(name, {}).update(value)
            else:
                top[name] = value
        data = self.merged(top)
        for name, section_changes in into.items():
            base = data[name] if isinstance(data[name], Section) else getattr(self, name)
            data[name] = base.merged(section_changes)
        return parse(type(self), data, source="profile")


def _decode(text: str, path: Path) -> Any:
    """The document of a profile file, by its suffix; `agent.profile_invalid` names the format."""
    suffix = path.suffix.lower()
    if suffix in (".yaml", ".yml"):
        # The front-matter reader's YAML: plain values only, no aliases (a "billion laughs" profile),
        # bounded size, depth and numbers; a profile file may come from a workspace one was handed.
        try:
            return front_matter.load(text, max_chars=PROFILE_BYTES)  # the file's own cap, not front matter's
        except front_matter.FrontMatterError as exc:
            raise ToolbenchError("agent.profile_invalid", f"{path} is not a YAML profile toolbench reads: "
                                 f"{exc.reason}") from exc
    kind = "TOML" if suffix == ".toml" else "JSON"
    try:
        return tomllib.loads(text) if kind == "TOML" else json.loads(text)
    except (ValueError, RecursionError) as exc:  # TOMLDecodeError and JSONDecodeError are ValueErrors
        raise ToolbenchError("agent.profile_invalid", f"{path} is not valid {kind}: {exc}") from exc


# The sections whose fields `Profile.edit` takes bare (their field names do not overlap).
_SHORTHAND: tuple[tuple[str, type[Section]], ...] = (("tools", ToolsSettings), ("run", RunSettings))


def _check_id(text: str) -> None:
    try:
        ToolId.parse(text)
    except ToolbenchError as exc:
        raise ValueError(f"`{text}` is not a ToolId ({exc.code})") from exc
