"""Which listed tools become descriptors, and why the others do not.

A listed tool is left out, with a diagnostic, when:

- the SDK's wire check refuses it (`inputSchema` missing or not `type: object`, `properties`
  not an object, a name that is not a string, ...): `mcp.tool_schema_invalid`,
  `mcp.tool_name_invalid` or `mcp.tool_invalid`, recorded by the transport monitor;
- its name is empty, has leading or trailing whitespace, or holds a character that is not
  printable (newline, tab, other controls): `mcp.tool_name_invalid`. Spaces, slashes, dots,
  colons and non-ASCII letters are accepted: call names are sanitised (and cut to 64 bytes) when
  a snapshot is made, and the ToolId keeps the native name verbatim;
- its `inputSchema` is not a valid JSON Schema for its declared dialect (draft 2020-12 when
  `$schema` is absent or names no dialect), or has a `$ref` that does not resolve within it
  (arguments could not be checked against it): `mcp.tool_schema_invalid`;
- an earlier tool in the same listing has the same name: `mcp.tool_duplicate`.

A kept tool may carry warnings (`ToolRecord.warnings`, the tool is offered all the same):

- `mcp.tool_name_long`: the name is over the MCP spec's 128 characters (upstream offers such a
  tool, under a call name cut like any other);
- `mcp.output_schema_invalid`: its `outputSchema` is not a valid JSON Schema, has a `$ref` that
  does not resolve within it, or broke the wire check and was taken out by the transport
  monitor, so its results are not checked.

`OutputCheck` checks a result's `structuredContent` against the tool's `outputSchema` (compiled
once per listing), as the MCP Inspector does: a mismatch is a note on the result, not a failure.

Schemas are compiled by jsonschema-rs, as call arguments are (`core.schema_check`): it imports
in milliseconds, where the pure-Python jsonschema pulls in format grammars that took seconds
(`rfc3987_syntax`) before `toolbench check` could list a tool. A `$ref` resolves within the
schema, never over the network (`offline=True`, as the SDK's empty registry does).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..core.descriptors import ToolDescriptor
from ..core.errors import ToolbenchError
from ..core.ids import ToolId
from ..core.schema_check import SchemaInvalid, compile_schema
from ._config import ServerSpec
from ._wire import RejectedTool

SPEC_NAME_CHARS = 128  # the MCP spec's SHOULD for tool names (2025-11-25, "Tool names")
STRUCTURED_INVALID = "mcp.structured_content_invalid"


@dataclass(frozen=True, slots=True)
class OutputCheck:
    """A tool's compiled `outputSchema`; `problem(result)` says how a result breaks it."""

    validator: Any = field(repr=False)

    def problem(self, result: Mapping[str, Any]) -> str | None:
        """Why a `CallToolResult` (wire JSON) does not match the schema, or None (isError results pass)."""
        if result.get("isError") is True:
            return None
        if "structuredContent" not in result:
            return "the tool declares an outputSchema but returned no structuredContent"
        try:
            errors = list(self.validator.iter_errors(result["structuredContent"]))
        except ValueError as exc:  # jsonschema-rs converts the value first and stops past ~255 levels
            return f"structuredContent could not be checked: {exc}"
        if not errors:
            return None
        # The shallowest error, as jsonschema's best_match prefers: the one nearest what the tool got wrong.
        error = min(errors, key=lambda e: len(e.instance_path))
        where = "/".join(str(p) for p in error.instance_path) or "(root)"
        return f"structuredContent does not match the outputSchema at {where}: {error.message}"


@dataclass(frozen=True, slots=True)
class ToolRecord:
    """One listed tool: its descriptor, or the reason it has none; warnings as `(code, message)`."""

    name: str | None
    tool_id: ToolId | None
    descriptor: ToolDescriptor | None
    code: str | None = None
    message: str | None = None
    warnings: tuple[tuple[str, str], ...] = ()
    output_check: OutputCheck | None = field(default=None, compare=False)

    @property
    def valid(self) -> bool:
        return self.descriptor is not None


def name_problem(name: Any) -> str | None:
    """Why a native tool name is unusable, or None (a long name is a warning, not a problem)."""
    if not isinstance(name, str) or not name:
        return "the name is empty"
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
    return _compile(schema, "inputSchema")[1]


def output_check(schema: Any) -> tuple[OutputCheck | None, str | None]:
    """The compiled check of an `outputSchema`, or why it cannot be one."""
    if schema is None:
        return None, None
    if not isinstance(schema, dict):
        return None, "outputSchema is not an object"
    validator, problem = _compile(schema, "outputSchema")
    return (None if validator is None else OutputCheck(validator)), problem


def _compile(schema: dict[str, Any], field: str) -> tuple[Any, str | None]:
    """`schema` compiled (`core.schema_check.compile_schema`), or why `field` cannot be one."""
    try:
        return compile_schema(schema), None
    except SchemaInvalid as exc:
        return None, f"{field} {exc}"


def build_records(
    spec: ServerSpec,
    tools: list[dict[str, Any]],
    rejected: tuple[RejectedTool, ...] = (),
    stripped: Mapping[str, str] | None = None,
) -> tuple[ToolRecord, ...]:
    """Records for the listed tools (in listing order), then for those the transport refused.

    `stripped` names the tools whose outputSchema the transport took out (and why)."""
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
        warnings: list[tuple[str, str]] = []
        if len(name) > SPEC_NAME_CHARS:
            warnings.append(("mcp.tool_name_long", f"the name has {len(name)} characters, more than the "
                             f"{SPEC_NAME_CHARS} the MCP spec allows; it is offered under a shortened call name"))
        check, problem = output_check(tool.get("outputSchema"))
        if stripped and name in stripped:
            problem = stripped[name]
        if problem is not None:
            warnings.append(("mcp.output_schema_invalid", f"{problem}; its results are not checked"))
        records.append(ToolRecord(name, tool_id, _descriptor(spec, tool_id, tool), warnings=tuple(warnings),
                                  output_check=check))
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
    annotations = tool.get("annotations")
    annotations = copy.deepcopy(annotations) if isinstance(annotations, dict) and annotations else None
    title = tool.get("title") or (annotations or {}).get("title")
    output_schema = tool.get("outputSchema")
    return ToolDescriptor(
        id=tool_id,
        description=tool.get("description") or "",
        input_schema=copy.deepcopy(tool["inputSchema"]),
        title=title if isinstance(title, str) else None,
        server=spec.name,
        annotations=annotations,
        output_schema=copy.deepcopy(output_schema) if isinstance(output_schema, dict) else None,
    )
