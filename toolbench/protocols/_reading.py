"""Small readers of reply bodies, robust to any shape: a reply is data, so a missing or
mistyped field reads as nothing rather than raising."""

from __future__ import annotations

from typing import Any


def texts(parts: Any, kind_key: str, kind: str, text_key: str = "text") -> str:
    """The concatenated text of the parts of one kind (all parts when `kind_key` is empty)."""
    if not isinstance(parts, list):
        return ""
    return "".join(str(p.get(text_key) or "") for p in parts
                   if isinstance(p, dict) and (p.get(kind_key) == kind if kind_key else True))


def first(value: Any, *keys: Any) -> Any:
    """value[k1][k2]..., or None where a step is missing or of the wrong type."""
    for key in keys:
        if isinstance(key, int):
            value = value[key] if isinstance(value, list) and len(value) > key else None
        else:
            value = value.get(key) if isinstance(value, dict) else None
    return value


def usage_of(value: Any) -> dict[str, Any]:
    return dict(value) if isinstance(value, dict) else {}


def name_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None
