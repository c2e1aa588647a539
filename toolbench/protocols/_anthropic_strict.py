"""Claude's strict tool use (`strict: true`): the schema rewrite and its checks.

The rules are the ones Anthropic's own SDK applies to a schema for its structured outputs
(`anthropic.transform_schema`), which strict tools share: every object closed
(`additionalProperties: false`), string `format`s from a short list, `minItems` only 0 or 1, and
every other constraint (bounds, lengths, patterns, ...) moved into the description, where the
model reads it but the API does not enforce it.
"""

from __future__ import annotations

from typing import Any, Final

from ._shared import compact_json, pointer
from .types import Problem

PROTOCOL: Final = "anthropic"
STRING_FORMATS: Final = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"}
)
# Kept as they are; `type`-specific keys are handled one by one below.
KEPT: Final = frozenset({"description", "title", "enum", "const", "$ref", "$defs", "anyOf", "oneOf", "allOf", "type"})


def strict_schema(schema: Any) -> Any:
    """The strict form of one (sub)schema; a copy, the input is not changed."""
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    defs = schema.get("$defs")
    if isinstance(defs, dict):
        out["$defs"] = {name: strict_schema(sub) for name, sub in defs.items()}
    if "$ref" in schema:  # what the SDK does: a reference stands alone
        out["$ref"] = schema["$ref"]
        return out
    kind = schema.get("type")
    enum = schema.get("enum")
    literal = False
    if isinstance(enum, list) and enum and all(_primitive(v) for v in enum):
        out["enum"] = list(enum)
        literal = True
    if "const" in schema and _primitive(schema["const"]):
        out["const"] = schema["const"]
        literal = True
    for key in ("anyOf", "oneOf", "allOf"):
        branches = schema.get(key)
        if isinstance(branches, list):
            out["allOf" if key == "allOf" else "anyOf"] = [strict_schema(b) for b in branches]
            break
    else:
        if not literal and kind is not None:
            out["type"] = kind
    for key in ("description", "title"):
        if key in schema:
            out[key] = schema[key]
    leftover = {k: v for k, v in schema.items() if k not in KEPT and k not in _handled(kind)}
    if kind == "object":
        props = schema.get("properties")
        out["properties"] = {n: strict_schema(s) for n, s in props.items()} if isinstance(props, dict) else {}
        out["additionalProperties"] = False
        if "required" in schema:
            out["required"] = schema["required"]
    elif kind == "string" and "format" in schema:
        if schema["format"] in STRING_FORMATS:
            out["format"] = schema["format"]
        else:
            leftover["format"] = schema["format"]
    elif kind == "array":
        if "items" in schema:
            out["items"] = strict_schema(schema["items"])
        if schema.get("minItems") in (0, 1):
            out["minItems"] = schema["minItems"]
        elif "minItems" in schema:
            leftover["minItems"] = schema["minItems"]
    if leftover:  # the model reads it; the API does not enforce it
        note = "{" + ", ".join(f"{k}: {compact_json(v)}" for k, v in leftover.items()) + "}"
        out["description"] = f"{out['description']}\n\n{note}" if out.get("description") else note
    return out


def _handled(kind: Any) -> frozenset[str]:
    return {
        "object": frozenset({"properties", "additionalProperties", "required"}),
        "string": frozenset({"format"}),
        "array": frozenset({"items", "minItems"}),
    }.get(kind if isinstance(kind, str) else "", frozenset())


def _primitive(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def check_strict(call_name: str, schema: Any) -> list[Problem]:
    """What strict mode refuses in the raw schema, and what the rewrite loses."""
    out: list[Problem] = []

    def add(rule: str, message: str, path: str, repaired: bool) -> None:
        out.append(Problem(PROTOCOL, call_name, rule, message, True, path, repaired))

    def visit(sub: Any, path: str) -> None:
        if not isinstance(sub, dict):
            return
        for name, definition in (sub.get("$defs") or {}).items() if isinstance(sub.get("$defs"), dict) else ():
            visit(definition, pointer(path, "$defs", name))
        if "$ref" in sub:
            return
        kind = sub.get("type")
        branches = next((sub[k] for k in ("anyOf", "oneOf", "allOf") if isinstance(sub.get(k), list)), None)
        literal = (isinstance(sub.get("enum"), list) and bool(sub["enum"])) or "const" in sub
        if kind is None and branches is None and not literal:
            add("strict.type_missing", "strict mode needs a `type`, a union or a literal here; "
                "a schema that takes any value cannot be expressed", path, False)
        if isinstance(kind, list):
            add("strict.type_list", f"strict mode takes one `type`, not {compact_json(kind)}; "
                "use anyOf", pointer(path, "type"), False)
        leftover = [k for k in sub if k not in KEPT and k not in _handled(kind)]
        if kind == "string" and "format" in sub and sub["format"] not in STRING_FORMATS:
            leftover.append("format")
        if kind == "array" and "minItems" in sub and sub["minItems"] not in (0, 1):
            leftover.append("minItems")
        for key in leftover:
            add("strict.keyword_unsupported", f"strict mode refuses `{key}` here; render moves it into the "
                "description, where it is not enforced", pointer(path, key), True)
        if kind == "object":
            extra = sub.get("additionalProperties")
            if "additionalProperties" not in sub:
                add("strict.additional_properties", "strict mode needs `additionalProperties: false`; render adds "
                    "it (the object then takes no other keys)", path, True)
            elif extra is not False:
                add("strict.additional_properties", "this object allows other keys, which strict mode cannot "
                    "express; render closes it, so those keys can no longer be sent", path, False)
            for name, prop in (sub.get("properties") or {}).items() if isinstance(sub.get("properties"), dict) else ():
                visit(prop, pointer(path, "properties", name))
        if kind == "array":
            visit(sub.get("items"), pointer(path, "items"))
        for key in ("anyOf", "oneOf", "allOf"):
            if isinstance(sub.get(key), list):
                for i, branch in enumerate(sub[key]):
                    visit(branch, pointer(path, key, i))
                break

    visit(schema, "")
    return out
