"""Gemini `parameters` (`render("gemini", schema="openapi")`): the OpenAPI subset Gemini
parses, the sanitiser and its checks.

The sanitiser keeps every keyword Gemini's Schema has (`title`, `default`, `anyOf` and
`required` at every level among them, pruned to declared properties) and changes only what
Gemini would refuse: local `$ref`s are inlined, `type` lists and nullable unions collapse to
`nullable: true`, a many-branch `oneOf` is sent as `anyOf`, unsupported `format`s and
non-string `enum`s are dropped, an array without `items` gets string items, a nested object
with no properties is sent as a string (the upstream rule), and any other keyword is dropped.
The upstream rule also removed `title`, `default`, `anyOf` and nested `required`; that told
the model nested fields were optional, so this sanitiser keeps them.
"""

from __future__ import annotations

from typing import Any, Final

from ._shared import compact_json, pointer
from .types import Problem

# The upstream removal list (reference §2.6) and the keywords the field survey saw refused.
UPSTREAM_REMOVED: Final = frozenset(
    [
        "$schema",
        "$id",
        "$defs",
        "definitions",
        "additionalProperties",
        "patternProperties",
        "unevaluatedProperties",
        "dependencies",
        "dependentRequired",
        "dependentSchemas",
        "allOf",
        "anyOf",
        "oneOf",
        "not",
        "if",
        "then",
        "else",
        "const",
        "default",
        "examples",
        "title",
    ]
)
SURVEY_REJECTED: Final = frozenset(
    {"$schema", "exclusiveMinimum", "exclusiveMaximum", "const", "multipleOf", "uniqueItems", "allOf", "oneOf"}
)
# What render keeps: Gemini's Schema fields (google-genai `Schema`, the Gemini API's subset).
KEPT: Final = frozenset(
    {
        "title",
        "default",
        "anyOf",
        "type",
        "format",
        "description",
        "nullable",
        "enum",
        "items",
        "properties",
        "required",
        "minItems",
        "maxItems",
        "minLength",
        "maxLength",
        "pattern",
        "minimum",
        "maximum",
        "minProperties",
        "maxProperties",
        "example",
        "propertyOrdering",
    }
)
ACCEPTED: Final = KEPT
# Where render departs from the upstream removal list, because Gemini's Schema has them.
KEPT_AGAINST_UPSTREAM: Final = frozenset({"title", "default", "anyOf"})
TYPES: Final = frozenset({"string", "number", "integer", "boolean", "array", "object"})
FORMATS: Final = {
    "string": frozenset({"enum", "date-time"}),
    "number": frozenset({"float", "double"}),
    "integer": frozenset({"int32", "int64"}),
}
_MAX_MERGES: Final = 32
_MERGED: Final = frozenset({"$ref", "anyOf", "oneOf", "allOf"})


def sanitise(schema: Any) -> dict[str, Any] | None:
    """The Gemini form of a tool's input schema; `None` when the tool takes no parameters
    (Gemini refuses an object with no properties, so `parameters` is left out)."""
    if not isinstance(schema, dict):
        return None
    defs = _definitions(schema)
    out = _sanitise(schema, defs, nested=False, refs=frozenset())
    if out.get("type") == "object" and not out.get("properties"):
        return None
    return out


def _definitions(schema: dict[str, Any]) -> dict[str, Any]:
    defs: dict[str, Any] = {}
    for key in ("definitions", "$defs"):
        value = schema.get(key)
        if isinstance(value, dict):
            defs.update({f"#/{key}/{name}": sub for name, sub in value.items()})
    return defs


def _merge(schema: dict[str, Any], defs: dict[str, Any], refs: frozenset[str]) -> tuple[dict[str, Any], frozenset[str]]:
    """Inline `$ref` and collapse single-branch `allOf` / nullable `anyOf` / `oneOf` into one schema."""
    if _MERGED.isdisjoint(schema):  # the common case: nothing to merge
        return schema, refs
    for _ in range(_MAX_MERGES):
        ref = schema.get("$ref")
        if isinstance(ref, str):
            rest = {k: v for k, v in schema.items() if k != "$ref"}
            target = defs.get(ref)
            if isinstance(target, dict) and ref not in refs:
                schema, refs = {**target, **rest}, refs | {ref}
            else:  # recursive or unknown: a free-form object, which ends up as a string
                schema = {"type": "object", **rest}
            continue
        for key in ("anyOf", "oneOf", "allOf"):
            branches = schema.get(key)
            if not isinstance(branches, list):
                continue
            real = [b for b in branches if not (isinstance(b, dict) and b.get("type") == "null")]
            if len(real) == 1 and isinstance(real[0], dict):
                rest = {k: v for k, v in schema.items() if k != key}
                schema = {**real[0], **rest}
                if len(real) < len(branches):
                    schema["nullable"] = True
                break
        else:
            return schema, refs
    return schema, refs


def _type_of(schema: dict[str, Any]) -> tuple[str | None, bool]:
    """Gemini's single type and whether null is allowed."""
    kind = schema.get("type")
    nullable = schema.get("nullable") is True
    if isinstance(kind, list):
        nullable = nullable or "null" in kind
        real = [t for t in kind if t != "null"]
        kind = real[0] if len(real) == 1 else None
    if kind == "null":
        kind, nullable = None, True
    if kind not in TYPES:
        kind = None
    if kind is None:
        if "properties" in schema:
            kind = "object"
        elif "items" in schema:
            kind = "array"
    return kind, nullable


def _sanitise(schema: Any, defs: dict[str, Any], nested: bool, refs: frozenset[str]) -> dict[str, Any]:
    if not isinstance(schema, dict):
        schema = {}
    schema, refs = _merge(schema, defs, refs)
    kind, nullable = _type_of(schema)
    enum = schema.get("enum")
    const = schema.get("const")
    if enum is None and isinstance(const, str):
        enum = [const]
    string_enum = isinstance(enum, list) and bool(enum) and all(isinstance(v, str) for v in enum)
    if kind is None and string_enum:
        kind = "string"
    out: dict[str, Any] = {"type": kind} if kind else {}
    for key, value in schema.items():
        if key not in KEPT or key in ("type", "nullable", "required", "enum", "anyOf"):
            continue
        if key == "properties":
            if isinstance(value, dict):
                out[key] = {n: _sanitise(s, defs, True, refs) for n, s in value.items()}
        elif key == "items":
            if isinstance(value, dict):
                out[key] = _sanitise(value, defs, True, refs)
        elif key == "format":
            if kind in FORMATS and value in FORMATS[kind]:
                out[key] = value
        elif key == "propertyOrdering":
            if isinstance(value, list) and isinstance(schema.get("properties"), dict):
                out[key] = [n for n in value if n in schema["properties"]]
        elif key == "title":
            if isinstance(value, str):
                out[key] = value
        elif key == "default":
            if value is not None:  # a null default cannot be sent (the SDK drops it too)
                out[key] = value
        else:
            out[key] = value
    branches = next((schema[k] for k in ("anyOf", "oneOf") if isinstance(schema.get(k), list)), None)
    if branches is not None:  # many branches (one is merged above): oneOf is sent as anyOf
        real = [b for b in branches if not (isinstance(b, dict) and b.get("type") == "null")]
        nullable = nullable or len(real) < len(branches)
        out["anyOf"] = [_sanitise(b, defs, True, refs) for b in real]
    props = out.get("properties")
    required = schema.get("required")
    if isinstance(required, list) and isinstance(props, dict):
        kept = list(dict.fromkeys(r for r in required if isinstance(r, str) and r in props))
        if kept:
            out["required"] = kept
    if string_enum and kind == "string":
        out["enum"] = list(enum)
    if kind == "array" and "items" not in out:
        out["items"] = {"type": "string"}
    if nested and kind == "object" and not out.get("properties"):
        out = {"type": "string", **{k: out[k] for k in ("title", "description") if k in out}}
    if nullable:
        out["nullable"] = True
    return out


def check_schema(call_name: str, schema: dict[str, Any]) -> list[Problem]:
    """Every place in the raw schema where Gemini would refuse or render changes meaning."""
    out: list[Problem] = []

    def add(rule: str, message: str, path: str, fatal: bool = True, repaired: bool = True) -> None:
        out.append(Problem("gemini", call_name, rule, message, fatal, path, repaired))

    def visit(sub: Any, path: str, nested: bool) -> None:
        if not isinstance(sub, dict):
            return
        for key in sub:
            if key in ACCEPTED:
                continue
            if key in ("$defs", "definitions") and path == "":
                continue  # reported through the `$ref`s that use them
            if key == "$ref":
                add(
                    "schema.ref",
                    f"Gemini does not resolve `$ref` ({sub[key]}); render inlines the definition "
                    "(a recursive one becomes a string)",
                    path,
                )
            elif key in ("oneOf", "allOf") and _collapsible(sub[key]):
                add(
                    "schema.keyword_unsupported",
                    f"Gemini refuses `{key}`; render merges its one branch (a null branch becomes `nullable: true`)",
                    pointer(path, key),
                )
            elif key == "oneOf" and isinstance(sub[key], list):
                add(
                    "schema.keyword_unsupported",
                    "Gemini refuses `oneOf`; render sends its branches as `anyOf` (any of them, not exactly one)",
                    pointer(path, key),
                )
            elif key == "additionalProperties":
                add(
                    "schema.keyword_unsupported",
                    "older Gemini models refuse `additionalProperties`; render drops it",
                    pointer(path, key),
                    fatal=False,
                )
            elif key == "const":
                add(
                    "schema.keyword_unsupported",
                    'Gemini refuses `const` ("Unknown name"); render sends a one-value `enum` for a string, '
                    "and drops any other",
                    pointer(path, key),
                )
            else:
                add(
                    "schema.keyword_unsupported",
                    f'Gemini refuses `{key}` ("Unknown name"); render drops it',
                    pointer(path, key),
                )
        kind = sub.get("type")
        if isinstance(kind, list):
            real = [t for t in kind if t != "null"]
            add(
                "schema.type_list",
                f"Gemini takes one type, not {compact_json(kind)}; render sends "
                + (f"`{real[0]}` with `nullable: true`" if len(real) == 1 else "no type"),
                pointer(path, "type"),
            )
        elif isinstance(kind, str) and kind not in TYPES and kind != "null":
            add("schema.type_unknown", f"`{kind}` is not a Gemini type; render drops it", pointer(path, "type"))
        for key in ("anyOf", "oneOf"):
            branches = sub.get(key)
            if isinstance(branches, list):
                for i, branch in enumerate(branches):
                    visit(branch, pointer(path, key, i), nested)
        gemini_kind, _ = _type_of(sub)
        fmt = sub.get("format")
        if fmt is not None and not (gemini_kind in FORMATS and fmt in FORMATS[gemini_kind]):
            add(
                "schema.format_unsupported",
                f"Gemini takes no `format: {fmt}` on {gemini_kind or 'this'} values; render drops it",
                pointer(path, "format"),
            )
        enum = sub.get("enum")
        if isinstance(enum, list) and not all(isinstance(v, str) for v in enum):
            add(
                "schema.enum_not_string",
                "Gemini enums hold strings only; render drops this enum",
                pointer(path, "enum"),
            )
        if gemini_kind == "array" and not isinstance(sub.get("items"), dict):
            add("schema.array_items_missing", "Gemini needs `items` on an array; render uses string items", path)
        props = sub.get("properties")
        if nested and gemini_kind == "object" and not props and "$ref" not in sub:
            # Not repaired: the request is accepted, but a call that fills this value sends a JSON
            # string, which the tool's own schema (an object) refuses.
            add(
                "schema.empty_object",
                "Gemini refuses an object with no properties; render declares it a string, so calls that "
                "fill it send text the tool's schema refuses. Declare its properties to use it with Gemini",
                path,
                repaired=False,
            )
        required = sub.get("required")
        if isinstance(required, list):
            missing = [r for r in required if not (isinstance(props, dict) and r in props)]
            if missing:
                add(
                    "schema.required_undeclared",
                    f"`required` names undeclared {', '.join(map(str, missing))}; render drops them",
                    pointer(path, "required"),
                )
        if isinstance(props, dict):
            for name, prop in props.items():
                visit(prop, pointer(path, "properties", name), True)
        items = sub.get("items")
        if isinstance(items, dict):
            visit(items, pointer(path, "items"), True)
        if path == "":
            for defs_key in ("$defs", "definitions"):
                defs = sub.get(defs_key)
                if isinstance(defs, dict):
                    for name, definition in defs.items():
                        visit(definition, pointer(path, defs_key, name), True)

    visit(schema, "", False)
    return out


def _collapsible(branches: Any) -> bool:
    if not isinstance(branches, list):
        return False
    real = [b for b in branches if not (isinstance(b, dict) and b.get("type") == "null")]
    return len(real) == 1 and isinstance(real[0], dict)
