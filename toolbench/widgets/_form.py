"""A form generated from a tool's input schema, giving the arguments object it describes.

Each property becomes one field: an enum a Dropdown, a boolean a Checkbox, an integer an
IntText, a number a FloatText, a string a Text, anything else (objects, arrays, unions) a JSON
text box. Required fields are always sent and marked `*`; an optional field is sent only when
its `send` box is ticked, which happens by itself as soon as its value is edited.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import ipywidgets as w  # type: ignore[import-untyped]

from ..core.errors import ToolbenchError

_MISSING = object()


@dataclass
class Field:
    name: str
    kind: str  # "enum" | "boolean" | "integer" | "number" | "string" | "json"
    required: bool
    input: w.Widget
    send: w.Checkbox | None
    enum: list[Any] | None = None

    def value(self) -> Any:
        raw = self.input.value
        if self.kind == "enum":
            return self.enum[raw] if self.enum is not None else raw
        if self.kind == "json":
            try:
                return json.loads(raw)
            except ValueError as exc:
                raise ToolbenchError("tool.invalid_arguments", f"`{self.name}` is not valid JSON: {exc}") from exc
        return raw

    @property
    def sent(self) -> bool:
        return self.required or (self.send is not None and self.send.value)


class SchemaForm:
    """The fields of one input schema; `widget` shows them, `value()` gives the object."""

    def __init__(self, schema: dict[str, Any] | None) -> None:
        schema = schema if isinstance(schema, dict) else {}
        found = schema.get("properties")
        properties: dict[str, Any] = found if isinstance(found, dict) else {}
        required = set(schema.get("required") or ())
        self.fields: dict[str, Field] = {name: _field(name, prop if isinstance(prop, dict) else {}, name in required)
                                         for name, prop in properties.items()}
        rows = [_row(f, (properties[f.name] or {}).get("description")) for f in self.fields.values()]
        if not rows:
            rows = [w.HTML("<i>This tool takes no arguments.</i>")]
        self.widget = w.VBox(rows)
        self.widget.add_class("tb-form")

    def value(self) -> dict[str, Any]:
        return {name: f.value() for name, f in self.fields.items() if f.sent}


def _field(name: str, prop: dict[str, Any], required: bool) -> Field:
    kind = _kind(prop)
    default = prop.get("default", _MISSING)
    enum = list(prop["enum"]) if kind == "enum" else None
    widget: w.Widget
    if kind == "enum":
        assert enum is not None
        labels = [e if isinstance(e, str) else json.dumps(e) for e in enum]
        index = enum.index(default) if default is not _MISSING and default in enum else 0
        widget = w.Dropdown(options=[(label, i) for i, label in enumerate(labels)], value=index)
    elif kind == "boolean":
        widget = w.Checkbox(value=bool(default) if default is not _MISSING else False, indent=False)
    elif kind == "integer":
        widget = w.IntText(value=int(default) if isinstance(default, int) else 0)
    elif kind == "number":
        widget = w.FloatText(value=float(default) if isinstance(default, int | float) else 0.0)
    elif kind == "string":
        widget = w.Text(value=default if isinstance(default, str) else "")
    else:
        text = json.dumps(default) if default is not _MISSING else ("{}" if prop.get("type") == "object" else "null")
        widget = w.Textarea(value=text, layout=w.Layout(width="100%"))
    send = None
    if not required:
        send = w.Checkbox(value=False, description="send", indent=False, layout=w.Layout(width="70px"))
        widget.observe(lambda _change, box=send: setattr(box, "value", True), names="value")
    return Field(name=name, kind=kind, required=required, input=widget, send=send, enum=enum)


def _kind(prop: dict[str, Any]) -> str:
    if isinstance(prop.get("enum"), list) and prop["enum"]:
        return "enum"
    kind = prop.get("type")
    if kind in ("boolean", "integer", "number", "string"):
        return str(kind)
    return "json"


def _row(field: Field, description: Any) -> w.Widget:
    label = w.HTML(f"<code>{field.name}</code>{' *' if field.required else ''}",
                   layout=w.Layout(width="140px"))
    parts: list[w.Widget] = [label, field.input]
    if field.send is not None:
        parts.append(field.send)
    if isinstance(description, str) and description:
        parts.append(w.HTML(f"<span style='color:#666;font-size:12px'>{_escape(description)}</span>"))
    return w.HBox(parts)


def _escape(text: str) -> str:
    import html

    return html.escape(text)
