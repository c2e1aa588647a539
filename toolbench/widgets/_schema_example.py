"""Reading a tool's JSON input schema for the form: `$ref`s, null alternatives and example values.

`example_arguments(schema)` is the arguments object the raw text box can start from: the required
properties only, each from its `default`, else `const`, else the first `enum` value, else
`examples[0]`, else a placeholder of its type: "" (padded with "x" to `minLength`, so the example
passes the schema), `minimum` or 0 for numbers (kept under `maximum`), false, `minItems` example
items for an array, and for an object its own required properties. A union (`anyOf` / `oneOf`) takes
its first non-null branch; a required value is never null unless null is the only value allowed.

Bounded: `$ref`s are followed only inside the schema (`#`, `#/$defs/...`, `#/definitions/...`) and at
most `_MAX_HOPS` in a row, values nested deeper than `MAX_DEPTH` get an empty placeholder, and at most
`_BUDGET` values are built for one example, so a `$ref` cycle or a huge `minItems` ends quickly.
"""

from __future__ import annotations

import copy
import math
from typing import Any

MAX_DEPTH = 8
_MAX_HOPS = 16
_BUDGET = 2000
_MAX_PAD = 1000
_SHALLOW: dict[str, Any] = {"string": "", "integer": 0, "number": 0, "boolean": False, "array": [], "object": {}}


def resolve(node: Any, root: dict[str, Any]) -> dict[str, Any]:
    """`node` with its local `$ref`s and a one-branch `allOf` merged in (its own keys win); {} if not a schema."""
    for _ in range(_MAX_HOPS):
        if not isinstance(node, dict):
            return {}
        ref, all_of = node.get("$ref"), node.get("allOf")
        if isinstance(ref, str):
            target = _pointer(root, ref)
            rest = {k: v for k, v in node.items() if k != "$ref"}
            node = {**target, **rest} if isinstance(target, dict) else rest
        elif isinstance(all_of, list) and len(all_of) == 1 and isinstance(all_of[0], dict):
            node = {**all_of[0], **{k: v for k, v in node.items() if k != "allOf"}}
        else:
            return node
    # A cycle of references (or a very long chain): what is left cannot be resolved.
    return {k: v for k, v in node.items() if k not in ("$ref", "allOf")} if isinstance(node, dict) else {}


def split_nullable(node: dict[str, Any], root: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """The schema without its null alternative, and whether null is allowed besides the rest."""
    kind = node.get("type")
    if isinstance(kind, list):
        rest = [t for t in kind if t != "null"]
        if not rest or len(rest) == len(kind):
            return node, False
        return {**node, "type": rest[0] if len(rest) == 1 else rest}, True
    for key in ("anyOf", "oneOf"):
        branches = node.get(key)
        if isinstance(branches, list) and branches:
            resolved = [resolve(b, root) for b in branches]
            rest = [b for b in resolved if not is_null(b)]
            if not rest:
                return node, False
            outer = {k: v for k, v in node.items() if k != key}
            merged = {**rest[0], **outer} if len(rest) == 1 else {**outer, key: rest}
            return merged, len(rest) < len(resolved)
    return node, False


def is_null(node: dict[str, Any]) -> bool:
    """Whether null is the only value `node` allows."""
    return node.get("type") == "null" or ("const" in node and node["const"] is None) or node.get("enum") == [None]


def number(value: Any) -> int | float | None:
    """`value` when it is a JSON number (a bool is not), else None."""
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


def example_arguments(schema: Any) -> dict[str, Any]:
    """An example arguments object for `schema` (see the module docstring); {} when it is no object schema."""
    root = schema if isinstance(schema, dict) else {}
    value = example_value(root, root)
    return value if isinstance(value, dict) else {}


def example_value(schema: Any, root: dict[str, Any], *, null_ok: bool = False, depth: int = 0,
                  budget: list[int] | None = None) -> Any:
    """An example value of `schema`; null only when `null_ok` says it may be, or nothing else is allowed."""
    budget = [_BUDGET] if budget is None else budget  # one counter shared by the whole recursion
    budget[0] -= 1
    if depth > MAX_DEPTH or budget[0] < 0:
        return None  # a schema that refers to itself (through $ref or a union) ends here
    node, _nullable = split_nullable(resolve(schema, root), root)
    if is_null(node):
        return None
    if "default" in node and (node["default"] is not None or null_ok):
        return copy.deepcopy(node["default"])
    if "const" in node:
        return copy.deepcopy(node["const"])
    for key in ("enum", "examples"):
        options = node.get(key)
        if isinstance(options, list) and options:
            allowed = [v for v in options if v is not None or null_ok]
            return copy.deepcopy(allowed[0]) if allowed else None
    for key in ("anyOf", "oneOf"):  # only non-null branches are left here
        branches = node.get(key)
        if isinstance(branches, list) and branches:
            return example_value(branches[0], root, depth=depth + 1, budget=budget)  # a hop counts
    kind = node.get("type")
    if isinstance(kind, list):
        kind = next((t for t in kind if t != "null"), "null")
    if kind is None:
        kind = "object" if "properties" in node else "array" if "items" in node else "string"
    if kind in ("array", "object") and (depth >= MAX_DEPTH or budget[0] <= 0):
        return _SHALLOW[kind].copy()
    if kind == "string":
        length = node.get("minLength")
        return "x" * min(length, _MAX_PAD) if isinstance(length, int) and length > 0 else ""
    if kind in ("integer", "number"):
        return _number_example(node, kind == "integer")
    if kind == "array":
        count = node.get("minItems")
        count = count if isinstance(count, int) and count > 0 else 0
        items = node.get("items")
        return [example_value(items if isinstance(items, dict) else {}, root, depth=depth + 1, budget=budget)
                for _ in range(min(count, max(budget[0], 0)))]
    if kind == "object":
        found = node.get("properties")
        properties: dict[str, Any] = found if isinstance(found, dict) else {}
        required = node.get("required")
        names = [n for n in required if n in properties] if isinstance(required, list) else []
        return {n: example_value(properties[n], root, depth=depth + 1, budget=budget) for n in names}
    return _SHALLOW.get(kind)


def _number_example(node: dict[str, Any], integer: bool) -> int | float:
    low, ex_low = number(node.get("minimum")), number(node.get("exclusiveMinimum"))
    high, ex_high = number(node.get("maximum")), number(node.get("exclusiveMaximum"))
    value: int | float = low if low is not None else ex_low + 1 if ex_low is not None else 0
    if high is not None and value > high:
        value = high
    if ex_high is not None and value >= ex_high:
        value = ex_high - 1
    return math.ceil(value) if integer else value


def _pointer(root: dict[str, Any], ref: str) -> Any:
    """The part of `root` a local JSON pointer names, or None (remote references are not fetched)."""
    if ref == "#":
        return root
    if not ref.startswith("#/"):
        return None
    node: Any = root
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node
