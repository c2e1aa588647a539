"""Checking call arguments against a tool's JSON Schema, with messages a model can act on."""

from __future__ import annotations

import json
from typing import Any

from .errors import ToolError


def check_arguments(schema: dict[str, Any], args: dict[str, Any]) -> None:
    """Raise `ToolError(tool.invalid_arguments)` naming every problem, or return."""
    validator = _validator(schema)
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
        # jsonschema-rs: imports in ~20 ms and validates in about a microsecond; the pure-Python
        # jsonschema pulls in format grammars that take seconds to import on a first call.
        import jsonschema_rs

        if len(_VALIDATORS) > 4096:
            _VALIDATORS.clear()
        entry = (schema, jsonschema_rs.validator_for(schema))
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
