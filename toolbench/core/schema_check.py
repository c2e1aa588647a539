"""Checking call arguments against a tool's JSON Schema, with messages a model can act on."""

from __future__ import annotations

import json
from typing import Any

from .errors import ToolError


class SchemaInvalid(ValueError):
    """A JSON Schema that cannot be compiled; the text says why (after the schema's name)."""


def compile_schema(schema: dict[str, Any]) -> Any:
    """`schema` compiled by jsonschema-rs for its dialect (its meta-schema check comes with it),
    never over the network: a `$ref` to another document does not resolve (`offline=True`,
    as the MCP SDK's empty registry does). Raises `SchemaInvalid`.

    jsonschema-rs imports in ~20 ms and validates in about a microsecond; the pure-Python
    jsonschema pulls in format grammars that take seconds to import."""
    import jsonschema_rs

    try:
        try:
            return jsonschema_rs.validator_for(schema, offline=True)
        except jsonschema_rs.ValidationError as exc:
            # A `$schema` naming no dialect jsonschema-rs knows: checked as draft 2020-12, as the
            # pure-Python jsonschema does (and the SDK does).
            if "$schema" not in schema or not _unresolved(exc):
                raise
            return jsonschema_rs.Draft202012Validator(schema, offline=True)
    except jsonschema_rs.ValidationError as exc:
        if _unresolved(exc):
            raise SchemaInvalid(f"has a $ref that does not resolve: {exc.message}") from None
        where = "/".join(str(p) for p in exc.instance_path) or "(root)"
        raise SchemaInvalid(f"is not a valid JSON Schema at {where}: {exc.message}") from None
    except ValueError as exc:  # nested past the ~255 levels jsonschema-rs converts
        raise SchemaInvalid(f"could not be checked: {exc}") from None


def _unresolved(error: Any) -> bool:
    import jsonschema_rs

    return isinstance(error.kind, jsonschema_rs.ValidationErrorKind.Referencing)


def check_arguments(schema: dict[str, Any], args: dict[str, Any]) -> None:
    """Raise `ToolError(tool.invalid_arguments)` naming every problem, or return;
    `tool.schema_invalid` when the tool's own schema cannot be compiled (not the model's fault)."""
    try:
        validator = _validator(schema)
    except SchemaInvalid as exc:
        raise ToolError("tool.schema_invalid", f"The tool's input schema {exc}, so no arguments can be checked "
                        "and the call was not run. This is the tool's fault, not the arguments': do not "
                        "retry it.") from None
    try:
        if validator.is_valid(args):
            return
        errors = sorted(validator.iter_errors(args), key=lambda e: [str(p) for p in e.instance_path])
    except ValueError as exc:  # jsonschema-rs converts the value first and stops past ~255 levels
        raise ToolError("tool.invalid_arguments", f"The arguments could not be checked ({exc}): they are "
                        "nested too deeply. Send flatter arguments.") from exc
    problems = [_describe(e, schema) for e in errors[:5]]
    more = f" (and {len(errors) - 5} more)" if len(errors) > 5 else ""
    raise ToolError("tool.invalid_arguments", "; ".join(problems) + more + ". Fix the arguments and call again.",
                    structured={"problems": problems})


# Keyed by identity: descriptors are frozen, and the entry keeps its schema alive so the id
# is not reused by another object.
_VALIDATORS: dict[int, tuple[dict[str, Any], Any]] = {}


def _validator(schema: dict[str, Any]) -> Any:
    entry = _VALIDATORS.get(id(schema))
    if entry is None or entry[0] is not schema:
        if len(_VALIDATORS) > 4096:
            _VALIDATORS.clear()
        entry = (schema, compile_schema(schema))
        _VALIDATORS[id(schema)] = entry
    return entry[1]


def _describe(error: Any, schema: dict[str, Any]) -> str:
    where = ".".join(str(p) for p in error.instance_path)
    kind = error.kind
    name = type(kind).__name__
    if name == "AdditionalProperties":
        names = ", ".join(f"`{'.'.join([where, k]) if where else k}`" for k in kind.unexpected)
        verb = "is" if len(kind.unexpected) == 1 else "are"
        accepted = "" if where else f" (accepted: {', '.join(schema.get('properties', {})) or 'none'})"
        return f"{names} {verb} not supported{accepted}"
    if name == "Required":
        key = kind.property
        return f"`{'.'.join([where, key]) if where else key}` is required"
    if name == "Type":
        types = " or ".join(str(t).split(".")[-1].lower() for t in kind.types)
        return f"`{where or 'arguments'}` must be of type {types}"
    if name == "Enum":
        options = ", ".join(json.dumps(v) for v in kind.options)
        return f"`{where}` must be one of {options}"
    return f"`{where or 'arguments'}`: {error.message}"
