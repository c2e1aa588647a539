"""Golden tool lists and the difference between two of them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..core.errors import ToolbenchError
from ._shared import clone_json, pointer
from .types import RenderableTool

ToolLike = RenderableTool | Mapping[str, Any]


def golden(tools: Iterable[ToolLike]) -> list[dict[str, Any]]:
    """A JSON-serialisable form of a tool list, to keep as a golden file and `diff` against.

    Each entry is `{call_name, tool_id?, description, input_schema}`; `tool_id` is present
    when the tool has one. Golden entries are accepted too, so `golden(golden(x)) == golden(x)`."""
    return [_entry(tool) for tool in tools]


def _entry(tool: ToolLike) -> dict[str, Any]:
    if isinstance(tool, Mapping):
        try:
            call_name, description, schema = tool["call_name"], tool.get("description", ""), tool["input_schema"]
        except KeyError as exc:
            raise ToolbenchError(
                "protocol.golden_invalid", f"a golden entry needs `call_name` and `input_schema`; missing {exc}"
            ) from exc
        tool_id = tool.get("tool_id")
    else:
        call_name = tool.call_name
        description, schema = tool.descriptor.description, tool.descriptor.input_schema
        tool_id = getattr(tool, "tool_id", None)
    out: dict[str, Any] = {"call_name": call_name}
    if tool_id is not None:
        out["tool_id"] = str(tool_id)
    out["description"] = description
    out["input_schema"] = clone_json(schema)
    return out


@dataclass(frozen=True, slots=True)
class ToolListDiff:
    """What changed between two tool lists. Call names are the ones of `after` where both exist."""

    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    renamed: tuple[tuple[str, str], ...] = ()  # (before, after)
    description_changed: tuple[str, ...] = ()
    schema_changed: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (call name, JSON pointers)
    order_before: tuple[str, ...] = ()  # the order of the tools both lists hold, when it changed
    order_after: tuple[str, ...] = ()

    @property
    def is_empty(self) -> bool:
        return not (
            self.added
            or self.removed
            or self.renamed
            or self.description_changed
            or self.schema_changed
            or self.order_before
        )

    @property
    def order_changed(self) -> bool:
        return bool(self.order_before)

    def __str__(self) -> str:
        if self.is_empty:
            return "no changes"
        lines = [f"+ added `{n}`" for n in self.added]
        lines += [f"- removed `{n}`" for n in self.removed]
        lines += [f"~ renamed `{a}` -> `{b}`" for a, b in self.renamed]
        lines += [f"~ description of `{n}` changed" for n in self.description_changed]
        lines += [
            f"~ schema of `{n}` changed at {', '.join(p or '/' for p in paths)}" for n, paths in self.schema_changed
        ]
        if self.order_before:
            lines.append(f"~ order changed: {', '.join(self.order_before)} -> {', '.join(self.order_after)}")
        return "\n".join(lines)


def diff(before: Sequence[ToolLike], after: Sequence[ToolLike]) -> ToolListDiff:
    """Compare two tool lists (tools, golden entries, or a mix).

    Tools are matched by `tool_id` where both sides have one, then by call name; a matched pair
    with different call names is a rename."""
    old, new = golden(before), golden(after)
    pairs: list[tuple[int, int]] = []
    used_old: set[int] = set()
    used_new: set[int] = set()
    by_id = {e["tool_id"]: i for i, e in enumerate(old) if "tool_id" in e}
    for j, entry in enumerate(new):
        i = by_id.get(entry.get("tool_id")) if "tool_id" in entry else None
        if i is not None and i not in used_old:
            pairs.append((i, j))
            used_old.add(i)
            used_new.add(j)
    by_name = {e["call_name"]: i for i, e in enumerate(old) if i not in used_old}
    for j, entry in enumerate(new):
        if j in used_new:
            continue
        i = by_name.get(entry["call_name"])
        if i is not None and i not in used_old and not ("tool_id" in entry and "tool_id" in old[i]):
            pairs.append((i, j))
            used_old.add(i)
            used_new.add(j)
    pairs.sort(key=lambda p: p[1])
    renamed, described, schemas = [], [], []
    for i, j in pairs:
        a, b = old[i], new[j]
        if a["call_name"] != b["call_name"]:
            renamed.append((a["call_name"], b["call_name"]))
        if a["description"] != b["description"]:
            described.append(b["call_name"])
        paths = _changed(a["input_schema"], b["input_schema"], "")
        if paths:
            schemas.append((b["call_name"], tuple(paths)))
    order_before = [new[j]["call_name"] for _, j in sorted(pairs)]
    order_after = [new[j]["call_name"] for _, j in pairs]
    moved = order_before != order_after
    return ToolListDiff(
        added=tuple(e["call_name"] for j, e in enumerate(new) if j not in used_new),
        removed=tuple(e["call_name"] for i, e in enumerate(old) if i not in used_old),
        renamed=tuple(renamed),
        description_changed=tuple(described),
        schema_changed=tuple(schemas),
        order_before=tuple(order_before) if moved else (),
        order_after=tuple(order_after) if moved else (),
    )


def _changed(a: Any, b: Any, path: str) -> list[str]:
    """JSON pointers where two JSON values differ (objects compared key by key)."""
    if isinstance(a, dict) and isinstance(b, dict):
        out: list[str] = []
        for key in a.keys() | b.keys():
            if key not in a or key not in b:
                out.append(pointer(path, key))
            else:
                out += _changed(a[key], b[key], pointer(path, key))
        return sorted(out)
    if type(a) is not type(b) or a != b:
        return [path]
    return []
