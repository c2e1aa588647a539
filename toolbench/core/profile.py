"""Profiles: which tools an invocation offers, in what order, with which budgets."""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Self

from pydantic import AliasChoices, Field, field_validator

from .chat_settings import ChatSettings, WorldInfoSettings
from .descriptors import DescriptionOverride
from .errors import ToolbenchError
from .fileio import write_atomic
from .ids import ToolId
from .memory_settings import MemorySettings
from .naming import NamingStyle
from .section import FrozenMap, Section, parse
from .shell_settings import ShellSettings
from .workspace_settings import WorkspaceSettings

PositiveInt = Annotated[int, Field(ge=1)]

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
    makes a changed copy (the bench's profile is replaced, never changed in place)."""

    name: str = "default"
    description: str = ""
    tools: ToolsSettings = Field(default_factory=ToolsSettings)
    workspace: WorkspaceSettings = Field(default_factory=WorkspaceSettings)
    shell: ShellSettings = Field(default_factory=ShellSettings)
    chat: ChatSettings = Field(default_factory=ChatSettings)
    worldinfo: WorldInfoSettings = Field(default_factory=WorldInfoSettings)
    memory: MemorySettings = Field(default_factory=MemorySettings)

    @classmethod
    def default(cls) -> Profile:
        return cls(name="default", description="The upstream default profile (shell on), plus dice.roll.")

    @classmethod
    def parse(cls, data: Any, *, source: str = "profile") -> Profile:
        """Validate a mapping; errors become one `agent.profile_invalid` naming each key."""
        return parse(cls, data, source=source)

    @classmethod
    def load(cls, path: str | Path) -> Profile:
        """Read a JSON or TOML profile file."""
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ToolbenchError("agent.profile_invalid", f"cannot read profile {path}: {exc.strerror}") from exc
        try:
            data = tomllib.loads(text) if path.suffix.lower() == ".toml" else json.loads(text)
        except (ValueError, tomllib.TOMLDecodeError) as exc:
            kind = path.suffix[1:] or "JSON"
            raise ToolbenchError("agent.profile_invalid", f"{path} is not valid {kind}: {exc}") from exc
        return cls.parse(data, source=str(path))

    def save(self, path: str | Path) -> None:
        """Write the profile as JSON (`to_json_text`), replacing the file atomically."""
        write_atomic(Path(path), self.to_json_text())

    def to_json_text(self) -> str:
        return json.dumps(self.model_dump(mode="json", exclude_defaults=False), indent=2, ensure_ascii=False) + "\n"

    def edit(self, **changes: Any) -> Self:
        """A new, validated profile with `changes`; this one is unchanged.

        A key (snake_case or camelCase) names a top-level field (`name=`), a `tools` field
        (`allow=[...]`), or a section: a mapping is merged into that section
        (`shell={"timeout_seconds": 5}`), a section value replaces it. Raises
        `agent.profile_invalid` naming each unknown key (`shell.bogus`) or bad value."""
        top: dict[str, Any] = {}
        into: dict[str, dict[str, Any]] = {}
        for key, value in changes.items():
            name = self.field_name(key)
            if name not in type(self).model_fields and ToolsSettings.field_name(key) in ToolsSettings.model_fields:
                into.setdefault("tools", {})[key] = value
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


def _check_id(text: str) -> None:
    try:
        ToolId.parse(text)
    except ToolbenchError as exc:
        raise ValueError(f"`{text}` is not a ToolId ({exc.code})") from exc
