"""Stable tool identity: `builtin:<name>`, `mcp/<registration-id>:<name>`, `extension/<id>:<name>`,
or a tool source's own kind, `<kind>/<source-id>:<name>` (`ToolSource.kind`)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from pydantic_core import core_schema

from .errors import ToolbenchError

ToolKind = str  # "builtin", "mcp", "extension", or a tool source's own
KIND = re.compile(r"[a-z][a-z0-9-]{0,30}")


@dataclass(frozen=True, order=True, slots=True)
class ToolId:
    """A tool's stable identity. `str()` gives back the text it was parsed from."""

    provider: str
    name: str
    _kind: ToolKind = field(init=False, repr=False, compare=False, hash=False, default="builtin")

    def __post_init__(self) -> None:
        if not self.provider:
            raise ToolbenchError("tool.provider_id_empty", "the provider part before `:` is empty")
        kind = _kind_of(self.provider)
        if ":" in self.provider or kind is None:
            raise ToolbenchError(
                "tool.provider_id_invalid",
                f"provider `{self.provider}` must be `builtin`, `mcp/<registration-id>`, "
                "`extension/<extension-id>` or a tool source's `<kind>/<source-id>`",
            )
        if not self.name:
            raise ToolbenchError("tool.native_name_empty", "the native name after `:` is empty")
        object.__setattr__(self, "_kind", kind)  # cached: read on every call

    @classmethod
    def parse(cls, text: str) -> ToolId:
        if not isinstance(text, str):
            raise ToolbenchError("tool.id_invalid", f"a ToolId is text, not {type(text).__name__}")
        provider, sep, name = text.partition(":")
        if not sep:
            raise ToolbenchError(
                "tool.id_invalid", f"`{text}` has no `:`; write `<provider>:<name>`, e.g. `builtin:dice.roll`"
            )
        return cls(provider, name)

    @classmethod
    def builtin(cls, name: str) -> ToolId:
        return cls("builtin", name)

    @classmethod
    def extension(cls, extension_id: str, name: str) -> ToolId:
        if not extension_id.strip() or not name.strip():
            raise ToolbenchError(
                "extension.tool_identity_required", "an extension tool needs a non-blank extension id and name"
            )
        return cls(f"extension/{extension_id}", name)

    @classmethod
    def mcp(cls, registration_id: str, name: str) -> ToolId:
        return cls(f"mcp/{registration_id}", name)

    @property
    def kind(self) -> ToolKind:
        return self._kind

    @property
    def source_id(self) -> str | None:
        """The registration id of an MCP tool, the extension id of an extension tool, the source
        id of a source's own kind."""
        _, _, rest = self.provider.partition("/")
        return rest or None

    def __str__(self) -> str:
        return f"{self.provider}:{self.name}"

    def __repr__(self) -> str:
        return f"ToolId({str(self)!r})"

    @classmethod
    def __get_pydantic_core_schema__(cls, _source: Any, _handler: Any) -> core_schema.CoreSchema:
        # Accept "provider:name" text or a ToolId; serialise as text.
        def validate(value: Any) -> ToolId:
            if isinstance(value, ToolId):
                return value
            try:
                return cls.parse(value)
            except ToolbenchError as exc:
                raise ValueError(str(exc)) from exc

        return core_schema.no_info_plain_validator_function(
            validate, serialization=core_schema.to_string_ser_schema()
        )


def _kind_of(provider: str) -> ToolKind | None:
    if provider == "builtin":
        return "builtin"
    kind, slash, rest = provider.partition("/")
    return kind if slash and rest and kind != "builtin" and KIND.fullmatch(kind) else None
