"""Gemini `parametersJsonSchema`: the tool's JSON Schema as it is, with what is known to go wrong.

The field takes JSON Schema (google-genai `FunctionDeclaration.parameters_json_schema`; the
SDK models it as `JSONSchema`, "compatible with 2020-12 JSON Schema draft"). Neither the SDK nor
the API reference lists which keywords Gemini refuses there, so the checks are of two kinds:

- keywords outside the SDK's `JSONSchema` model (and outside `propertyOrdering`, which the
  field's own documentation shows): a warning, since the docs do not say whether Gemini ignores
  or refuses them (pydantic-ai strips `exclusiveMinimum`/`exclusiveMaximum` as unsupported);
- `title` below the root: accepted, but Gemini 2.5 Flash has been seen answering
  MALFORMED_FUNCTION_CALL when nested schemas carry titles (googleapis/python-genai#1732).

Render changes only what it can change without a loss: `$schema` and `$id` are dropped (the
SDK's model has neither) and a `const` becomes the one-value `enum` it means.
"""

from __future__ import annotations

from typing import Any, Final

from ._shared import SCHEMA_KEYS, SCHEMA_LIST_KEYS, SCHEMA_MAP_KEYS, pointer, rebuild, walk
from .types import Problem

# google-genai's `JSONSchema` fields, by their JSON names, plus the documented `propertyOrdering`.
LISTED: Final = frozenset(
    {
        "type", "format", "title", "description", "default", "enum", "items", "properties", "required",
        "additionalProperties", "anyOf", "oneOf", "$ref", "$defs", "minItems", "maxItems", "uniqueItems",
        "minLength", "maxLength", "pattern", "minimum", "maximum", "minProperties", "maxProperties",
        "propertyOrdering",
    }
)
DROPPED: Final = frozenset({"$schema", "$id"})


def prepare(schema: Any) -> Any:
    """The `parametersJsonSchema` of a tool; `None` when it takes no parameters (then the
    field is left out, as the API documents for a function without parameters)."""
    if not isinstance(schema, dict):
        return schema
    if _takes_nothing(schema):
        return None
    return _consts(rebuild(schema, DROPPED))


def _takes_nothing(schema: dict[str, Any]) -> bool:
    if schema.get("type") != "object" or schema.get("properties"):
        return False
    extra = schema.get("additionalProperties")
    return not (isinstance(extra, dict) or extra is True) and not any(
        key in schema for key in ("$ref", "anyOf", "oneOf", "allOf", "patternProperties", "if")
    )


def _consts(schema: Any) -> Any:
    """`const: x` as `enum: [x]`, copied on write (the common schema has none and is shared)."""
    return _rewrite(schema) if _has_const(schema) else schema


def _has_const(schema: Any) -> bool:
    if type(schema) is not dict:
        return False
    if "const" in schema:
        return True
    for key, value in schema.items():
        if key in SCHEMA_MAP_KEYS and type(value) is dict:
            subs: Any = value.values()
        elif key in SCHEMA_LIST_KEYS and type(value) is list:
            subs = value
        elif key in SCHEMA_KEYS:
            subs = value if type(value) is list else (value,)
        else:
            continue
        if any(_has_const(sub) for sub in subs):
            return True
    return False


def _rewrite(schema: Any) -> Any:
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "const" and "enum" not in schema:
            continue
        if key in SCHEMA_MAP_KEYS and isinstance(value, dict):  # names -> schemas: names stay
            out[key] = {name: _rewrite(sub) for name, sub in value.items()}
        elif key in SCHEMA_LIST_KEYS and isinstance(value, list):
            out[key] = [_rewrite(sub) for sub in value]
        elif key in SCHEMA_KEYS:
            out[key] = [_rewrite(s) for s in value] if isinstance(value, list) else _rewrite(value)
        else:
            out[key] = value  # plain values (enum, default, ...) are never walked into
    if "const" in schema and "enum" not in schema:
        out["enum"] = [schema["const"]]
    return out


def check_json_schema(call_name: str, schema: dict[str, Any]) -> list[Problem]:
    """What the raw schema holds that Gemini may not take in `parametersJsonSchema`."""
    out: list[Problem] = []
    for sub, path in walk(schema):
        for key in sub:
            if key in LISTED or key in DROPPED:
                continue
            if key == "definitions" and path == "":
                message = "Gemini's JSON Schema lists `$defs`, not `definitions`; `$ref`s into it may not resolve"
            elif key == "const" and "enum" not in sub:
                out.append(Problem("gemini", call_name, "schema.keyword_unlisted",
                                   "Gemini's JSON Schema does not list `const`; render sends the one-value `enum` "
                                   "it means", False, pointer(path, key), True))
                continue
            else:
                message = (f"Gemini's JSON Schema does not list `{key}`; the docs do not say whether it is "
                           "ignored or refused")
            out.append(Problem("gemini", call_name, "schema.keyword_unlisted", message, False, pointer(path, key)))
        if path and isinstance(sub.get("title"), str):
            out.append(Problem("gemini", call_name, "schema.title_nested",
                               "a `title` below the root has made Gemini 2.5 Flash answer MALFORMED_FUNCTION_CALL "
                               "(googleapis/python-genai#1732); consider leaving it out", False,
                               pointer(path, "title")))
    return out
