"""Tool descriptors (what a model is told about a tool) and description overrides."""

from __future__ import annotations

import copy
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_serializer
from pydantic.alias_generators import to_camel

from .errors import ToolbenchError, ToolError
from .ids import ToolId, ToolKind
from .section import FrozenMap

Scene = Literal["chat", "session"]
SCENES: tuple[Scene, ...] = ("chat", "session")

EMPTY_OBJECT_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}


class Frozen(BaseModel):
    """Base for frozen value models with camelCase aliases on the wire."""

    model_config = ConfigDict(
        frozen=True, extra="forbid", alias_generator=to_camel, populate_by_name=True, arbitrary_types_allowed=True
    )


class ToolDescriptor(Frozen):
    """What a model is told about one tool, plus the runtime facts the snapshot needs."""

    id: ToolId
    description: str = ""
    input_schema: dict[str, Any] = Field(default_factory=lambda: copy.deepcopy(EMPTY_OBJECT_SCHEMA))
    title: str | None = None
    scenes: frozenset[Scene] = frozenset(SCENES)
    completes_round: bool = False  # a completion tool must be the last call of its round
    read_only: bool = False
    # A delegated child does not get it (commit, delegate, await, handoff: the parent's job).
    # A rule for preparing snapshots, not a fact a snapshot records: left out of its JSON.
    parent_only: bool = Field(default=False, exclude=True)
    server: str | None = None  # an MCP tool's server display name: the seed of its call name
    # What an MCP server declared besides the schema, verbatim: records for the user, never
    # rendered for a provider. `annotations` holds the hints (readOnlyHint, destructiveHint,
    # idempotentHint, openWorldHint, ...), which are not trusted: `read_only` stays the runtime's.
    annotations: dict[str, Any] | None = None
    output_schema: dict[str, Any] | None = None
    # Arguments a person can fire as they are (the app's console starts from them): for people
    # only, in `bench.catalog()`; a snapshot's descriptors drop it (never rendered or recorded).
    # None: the app builds one from the schema.
    example: dict[str, Any] | None = Field(default=None, exclude=True)

    @property
    def kind(self) -> ToolKind:
        return self.id.kind

    @field_serializer("scenes", when_used="json")
    def _scenes_in_order(self, scenes: frozenset[Scene]) -> list[str]:
        # A set iterates in hash order, which changes between processes: sort, so a stored
        # snapshot reads back to the same JSON and golden files compare equal.
        return sorted(scenes)


class DescriptionOverride(Frozen):
    """A profile's replacement text for a tool's description and parameter descriptions."""

    description: str | None = None
    properties: FrozenMap[str, str] = Field(default_factory=FrozenMap)  # read-only: a profile holds it


def apply_override(descriptor: ToolDescriptor, override: DescriptionOverride | None) -> ToolDescriptor:
    """The descriptor with the override's texts set verbatim (whitespace kept).

    Raises ToolError with a `tool.description_override_*` code when the override does not fit."""
    if override is None:
        return descriptor
    update: dict[str, Any] = {}
    if override.description is not None:
        update["description"] = override.description
    if override.properties:
        schema = copy.deepcopy(descriptor.input_schema)
        props = schema.get("properties")
        if not isinstance(props, dict):
            raise ToolError(
                "tool.description_override_properties_invalid",
                f"`{descriptor.id}` has no parameter properties to describe",
            )
        for name, text in override.properties.items():
            if name not in props:
                raise ToolError(
                    "tool.description_override_unknown_property",
                    f"`{descriptor.id}` has no parameter `{name}`; known: {', '.join(props) or 'none'}",
                )
            if not isinstance(props[name], dict):
                raise ToolError(
                    "tool.description_override_property_schema_invalid",
                    f"the schema of `{descriptor.id}` parameter `{name}` is not an object",
                )
            props[name] = {**props[name], "description": text}
        update["input_schema"] = schema
    return descriptor.model_copy(update=update)


def check_unique(descriptors: list[ToolDescriptor]) -> None:
    seen: set[ToolId] = set()
    for d in descriptors:
        if d.id in seen:
            raise ToolbenchError("tool.catalog_duplicate_id", f"duplicate tool id `{d.id}`")
        seen.add(d.id)
