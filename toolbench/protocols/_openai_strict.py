"""OpenAI strict mode (Structured Outputs for function parameters): the rewrite and its checks.

Strict mode needs `additionalProperties: false` on every object and every property listed in
`required`; a property that was optional becomes nullable, so the model sends `null` for it.
"""

from __future__ import annotations

from typing import Any, Final

from ._shared import SCHEMA_KEYS, SCHEMA_LIST_KEYS, SCHEMA_MAP_KEYS, is_object_schema, walk
from .types import Problem

UNSUPPORTED: Final = frozenset({"allOf", "not", "if", "then", "else", "dependentRequired", "dependentSchemas"})
MAX_PROPERTIES: Final = 5_000
MAX_DEPTH: Final = 10
MAX_STRING_CHARS: Final = 120_000
MAX_ENUM_VALUES: Final = 1_000
LARGE_ENUM: Final = 250
LARGE_ENUM_CHARS: Final = 15_000


def strict_schema(schema: Any) -> Any:
    """A strict-mode form of `schema`: every object closed, every property required.

    Copied on write: plain values (enums, defaults, descriptions) are shared with the input."""
    if type(schema) is not dict:
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        kind = type(value)
        if key in SCHEMA_MAP_KEYS and kind is dict:
            out[key] = {name: strict_schema(sub) for name, sub in value.items()}
        elif key in SCHEMA_LIST_KEYS and kind is list:
            out[key] = [strict_schema(sub) for sub in value]
        elif key in SCHEMA_KEYS:
            out[key] = [strict_schema(s) for s in value] if kind is list else strict_schema(value)
        else:
            out[key] = value
    if is_object_schema(out):
        out.setdefault("additionalProperties", False)
        props = out.get("properties")
        if type(props) is dict:
            required = schema.get("required")
            before = set(required) if type(required) is list else ()
            for name in props:
                if name not in before:
                    props[name] = _nullable(props[name])
            out["required"] = list(props)
    return out


def _nullable(schema: Any) -> Any:
    if not isinstance(schema, dict):
        return schema
    if "$ref" in schema:
        return {"anyOf": [schema, {"type": "null"}]}
    out = dict(schema)
    kind = out.get("type")
    if isinstance(kind, str) and kind != "null":
        out["type"] = [kind, "null"]
    elif isinstance(kind, list) and "null" not in kind:
        out["type"] = [*kind, "null"]
    elif kind is None and isinstance(out.get("anyOf"), list):
        branches = out["anyOf"]
        if not any(isinstance(b, dict) and b.get("type") == "null" for b in branches):
            out["anyOf"] = [*branches, {"type": "null"}]
    enum = out.get("enum")
    if isinstance(enum, list) and None not in enum:
        out["enum"] = [*enum, None]
    return out


def check_strict(protocol: str, call_name: str, schema: Any) -> list[Problem]:
    """Strict-mode problems of the raw schema (the root type is checked elsewhere)."""
    if not isinstance(schema, dict):
        return []
    out: list[Problem] = []

    def add(rule: str, message: str, path: str, repaired: bool) -> None:
        out.append(Problem(protocol, call_name, rule, message, True, path, repaired))

    for key in ("anyOf", "oneOf"):
        if key in schema:
            add("strict.root", f"strict mode refuses `{key}` at the root; the root must be one object", "", False)
    properties = 0
    enum_values = 0
    chars = 0
    for sub, path in walk(schema):
        for key in sorted(UNSUPPORTED & sub.keys()):
            add("strict.keyword_unsupported", f"strict mode does not support `{key}`", path, False)
        props = sub.get("properties")
        if isinstance(props, dict):
            properties += len(props)
            chars += sum(len(name) for name in props)
        for defs_key in ("$defs", "definitions"):
            defs = sub.get(defs_key)
            if isinstance(defs, dict):
                chars += sum(len(name) for name in defs)
        enum = sub.get("enum")
        if isinstance(enum, list):
            enum_values += len(enum)
            enum_chars = sum(len(v) for v in enum if isinstance(v, str))
            chars += enum_chars
            if len(enum) > LARGE_ENUM and enum_chars > LARGE_ENUM_CHARS:
                add(
                    "strict.limit_enum",
                    f"a string enum of {len(enum)} values has {enum_chars} characters; "
                    f"over {LARGE_ENUM} values strict mode allows {LARGE_ENUM_CHARS}",
                    path,
                    False,
                )
        if isinstance(sub.get("const"), str):
            chars += len(sub["const"])
        if not is_object_schema(sub):
            continue
        extra = sub.get("additionalProperties", None)
        if "additionalProperties" not in sub:
            add(
                "strict.additional_properties",
                "strict mode needs `additionalProperties: false` on every object; "
                "render adds it (the object then takes no other keys)",
                path,
                True,
            )
        elif extra is not False:
            add(
                "strict.additional_properties",
                "strict mode needs `additionalProperties: false`; this object "
                "allows other keys, which strict mode cannot express",
                path,
                False,
            )
        if isinstance(props, dict):
            required = sub.get("required")
            listed = set(required) if isinstance(required, list) else set()
            optional = [name for name in props if name not in listed]
            if optional:
                add(
                    "strict.required",
                    "strict mode needs every property in `required`; render adds "
                    f"{', '.join(f'`{n}`' for n in optional)} and makes them nullable",
                    path,
                    True,
                )
    depth = _depth(schema)
    if properties > MAX_PROPERTIES:
        add(
            "strict.limit_properties", f"{properties} object properties; strict mode allows {MAX_PROPERTIES}", "", False
        )
    if depth > MAX_DEPTH:
        add("strict.limit_depth", f"{depth} levels of nesting; strict mode allows {MAX_DEPTH}", "", False)
    if enum_values > MAX_ENUM_VALUES:
        add("strict.limit_enum", f"{enum_values} enum values; strict mode allows {MAX_ENUM_VALUES}", "", False)
    if chars > MAX_STRING_CHARS:
        add(
            "strict.limit_string_chars",
            f"{chars} characters of property names, enum and const values; strict mode allows {MAX_STRING_CHARS}",
            "",
            False,
        )
    return out


def _depth(schema: Any) -> int:
    """Object nesting levels: an object holding an object is 2."""
    if not isinstance(schema, dict):
        return 0
    children = 0
    for key, value in schema.items():
        if key in SCHEMA_MAP_KEYS and isinstance(value, dict) and key not in ("$defs", "definitions"):
            children = max(children, *(_depth(s) for s in value.values()), 0)
        elif key in SCHEMA_LIST_KEYS and isinstance(value, list):
            children = max(children, *(_depth(s) for s in value), 0)
        elif key in SCHEMA_KEYS:
            subs = value if isinstance(value, list) else [value]
            children = max(children, *(_depth(s) for s in subs), 0)
    return children + (1 if is_object_schema(schema) else 0)
