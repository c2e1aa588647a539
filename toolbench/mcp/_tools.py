"""Which listed tools become descriptors, and why the others do not.

A listed tool is left out, with a diagnostic, when:

- the SDK's wire check refuses it (`inputSchema` missing or not `type: object`, `properties`
  not an object, a name that is not a string, ...): `mcp.tool_schema_invalid`,
  `mcp.tool_name_invalid` or `mcp.tool_invalid`, recorded by the transport monitor;
- its name is empty, longer than 128 characters, has leading or trailing whitespace, or holds a
  character that is not printable (newline, tab, other controls): `mcp.tool_name_invalid`.
  Spaces, slashes, dots, colons and non-ASCII letters are accepted: call names are sanitised
  when a snapshot is made, and the ToolId keeps the native name verbatim;
- its `inputSchema` is not a valid JSON Schema for its declared dialect (draft 2020-12 when
  `$schema` is absent): `mcp.tool_schema_invalid`;
- an earlier tool in the same listing has the same name: `mcp.tool_duplicate`.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from jsonschema import Draft202012Validator, SchemaError  # type: ignore[import-untyped]
from jsonschema.validators import validator_for  # type: ignore[import-untyped]

from ..core.descriptors import ToolDescriptor
from ..core.errors import ToolbenchError
from ..core.ids import ToolId
from ._config import ServerSpec
from ._transport import RejectedTool

MAX_NAME_CHARS = 128


@dataclass(frozen=True, slots=True)
class ToolRecord:
    """One listed tool: its descriptor, or the reason it has none."""

    name: str | None
    tool_id: ToolId | None
    descriptor: ToolDescriptor | None
    code: str | None = None
    message: str | None = None

    @property
    def valid(self) -> bool:
        return self.descriptor is not None


def name_problem(name: Any) -> str | None:
    """Why a native tool name is unusable, or None."""
    if not isinstance(name, str) or not name:
        return "the name is empty"
    if len(name) > MAX_NAME_CHARS:
        return f"the name has {len(name)} characters, more than {MAX_NAME_CHARS}"
    if name != name.strip():
        return "the name has leading or trailing whitespace"
    bad = next((ch for ch in name if not ch.isprintable()), None)
    if bad is not None:
        return f"the name holds the non-printable character {bad!r}"
    return None


def schema_problem(schema: Any) -> str | None:
    """Why an input schema is unusable, or None."""
    if not isinstance(schema, dict):
        return "inputSchema is not an object"
    if schema.get("type") != "object":
        return "inputSchema's type is not `object`"
    try:
        validator_for(schema, default=Draft202012Validator).check_schema(schema)
    except SchemaError as exc:
        where = "/".join(str(p) for p in exc.absolute_path) or "(root)"
        return f"inputSchema is not a valid JSON Schema at {where}: {exc.message}"
    return None


def build_records(
    spec: ServerSpec, tools: list[dict[str, Any]], rejected: tuple[RejectedTool, ...] = ()
) -> tuple[ToolRecord, ...]:
    """Records for the listed tools (in listing order), then for those the transport refused."""
    records: list[ToolRecord] = []
    seen: set[str] = set()
    for tool in tools:
        name = tool.get("name")
        problem = name_problem(name)
        if problem is not None or not isinstance(name, str):
            records.append(ToolRecord(name if isinstance(name, str) else None, _tool_id(spec, name), None,
                                      "mcp.tool_name_invalid", problem or "the name is not text"))
            continue
        tool_id = ToolId.mcp(spec.id, name)
        if name in seen:
            records.append(ToolRecord(name, tool_id, None, "mcp.tool_duplicate", "an earlier tool has this name"))
            continue
        seen.add(name)
        problem = schema_problem(tool.get("inputSchema"))
        if problem is not None:
            records.append(ToolRecord(name, tool_id, None, "mcp.tool_schema_invalid", problem))
            continue
        records.append(ToolRecord(name, tool_id, _descriptor(spec, tool_id, tool)))
    for item in rejected:
        records.append(ToolRecord(item.name, _tool_id(spec, item.name), None, item.code, item.message))
    return tuple(records)


def _tool_id(spec: ServerSpec, name: Any) -> ToolId | None:
    if not isinstance(name, str) or not name:
        return None
    try:
        return ToolId.mcp(spec.id, name)
    except ToolbenchError:
        return None


def _descriptor(spec: ServerSpec, tool_id: ToolId, tool: dict[str, Any]) -> ToolDescriptor:
    annotations = tool.get("annotations") or {}
    title = tool.get("title") or annotations.get("title")
    return ToolDescriptor(
        id=tool_id,
        description=tool.get("description") or "",
        input_schema=copy.deepcopy(tool["inputSchema"]),
        title=title if isinstance(title, str) else None,
        server=spec.name,
    )
