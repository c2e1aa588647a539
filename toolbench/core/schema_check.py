"""Checking call arguments against a tool's JSON Schema, with messages a model can act on."""

from __future__ import annotations

import json
from typing import Any

from .errors import ToolError


def check_arguments(schema: dict[str, Any], args: dict[str, Any]) -> None:
    """Raise `ToolError(tool.invalid_arguments)` naming every problem, or return."""
    validator = _validator(schema)
    errors = sorted(validator.iter_errors(args), key=lambda e: list(e.absolute_path))
    if not errors:
        return
    problems = [_describe(e) for e in errors[:5]]
    more = f" (and {len(errors) - 5} more)" if len(errors) > 5 else ""
    raise ToolError("tool.invalid_arguments", "; ".join(problems) + more + ". Fix the arguments and call again.",
                    structured={"problems": problems})


# Keyed by identity: descriptors are frozen, and the entry keeps its schema alive so the id
# is not reused by another object.
_VALIDATORS: dict[int, tuple[dict[str, Any], Any]] = {}


def _validator(schema: dict[str, Any]) -> Any:
    entry = _VALIDATORS.get(id(schema))
    if entry is None or entry[0] is not schema:
        from jsonschema import Draft202012Validator

        if len(_VALIDATORS) > 4096:
            _VALIDATORS.clear()
        entry = (schema, Draft202012Validator(schema))
        _VALIDATORS[id(schema)] = entry
    return entry[1]


def _describe(error: Any) -> str:
    where = ".".join(str(p) for p in error.absolute_path)
    if error.validator == "additionalProperties":
        extra = sorted(set(error.instance) - set(error.schema.get("properties", {})))
        names = ", ".join(f"`{'.'.join([where, k]) if where else k}`" for k in extra)
        allowed = ", ".join(error.schema.get("properties", {})) or "none"
        return f"{names} is not supported (accepted: {allowed})"
    if error.validator == "required":
        return error.message.replace("'", "`").replace(" is a required property", " is required")
    if error.validator == "type":
        return f"`{where or 'arguments'}` must be of type {error.validator_value}"
    if error.validator == "enum":
        options = ", ".join(json.dumps(v) for v in error.validator_value)
        return f"`{where}` must be one of {options}"
    return f"`{where or 'arguments'}`: {error.message}"
