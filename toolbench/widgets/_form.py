"""A form generated from a tool's JSON input schema, giving the arguments object it describes.

Each property becomes one field, by the first rule that fits its schema (once `$ref`s are followed
and a null alternative is split off, see `_schema_example`):

- `const`: a read-only label, always sent; `enum`: a Dropdown of its values (non-strings labelled as JSON);
- boolean: a Checkbox; integer / number: an IntText / FloatText, its bounds shown as a hint and checked
  by `value()`;
- string: a Textarea when it is multi-line, else a Text. Multi-line means: the name, or its last word
  (snake_case or camelCase), is one of `_MULTILINE_NAMES` (`old_string`, `content`, `oldText`...), or
  the schema has a `contentMediaType`, a `format` in `_MULTILINE_FORMATS`, or a `maxLength` over 200;
- object with `properties`: an indented sub-form, with its own required marks;
- array whose items fit one of these rules: a list of item editors with "+ add" and "−" (remove)
  buttons, `minItems` of them to start with;
- anything else (a union of several types, an `additionalProperties` map, no type, nesting deeper than
  `MAX_DEPTH`, more than `_MAX_SHOWN_ITEMS` items to start with, objects and arrays past the `_MAX_BUILT`
  fields opening a form may build): a JSON Textarea, parsed by `value()`.

A nullable field (`type: [..., "null"]`, or a null branch in `anyOf` / `oneOf`) gets a "null" box.
Every field starts from `example_value` (its default, const, first enum value...), so an untouched form
gives `example_arguments(schema)`. Required fields are marked `*` and always sent; an optional one is
sent only once its `send` box is ticked, which happens by itself when it, or anything inside it, is
edited. A form builds the widgets of its first `_PAGE` fields; the rest are built on "show more" (or
when first used), so a schema with hundreds of properties opens quickly.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable
from typing import Any

import ipywidgets as w  # type: ignore[import-untyped]

from .. import ToolbenchError
from ._schema_example import MAX_DEPTH, example_arguments, example_value, number, resolve, split_nullable

__all__ = ["Field", "SchemaForm", "example_arguments"]

_MISSING: Any = object()
_PAGE = 40
_MAX_SHOWN_ITEMS = 10
_MAX_BUILT = 60  # fields one form builds before its remaining objects and arrays become JSON boxes
_MULTILINE_NAMES = frozenset({"old_string", "new_string", "content", "patch", "diff", "text", "code", "script",
                              "command", "body", "description", "prompt", "message"})
_MULTILINE_FORMATS = frozenset({"textarea", "multiline", "markdown", "code", "html"})
# Theme colours come from JupyterLab's variables, so the dark theme reads too.
_GREY = "color:var(--jp-ui-font-color2);font-size:11px;line-height:1.35"
_RED = "color:var(--jp-error-color1)"
_WRAP = "white-space:normal;word-break:normal;overflow-wrap:anywhere;line-height:1.35"
_INDENT = {"margin": "2px 0 2px 12px", "padding": "0 0 0 8px", "border_left": "2px solid var(--jp-border-color2)"}

OnEdit = Callable[[], None]


class SchemaForm:
    """The fields of one object schema; `widget` shows them, `value()` gives the object."""

    def __init__(self, schema: dict[str, Any] | None, *, root: dict[str, Any] | None = None, depth: int = 0,
                 initial: dict[str, Any] | None = None, on_edit: OnEdit | None = None,
                 budget: list[int] | None = None) -> None:
        schema = schema if isinstance(schema, dict) else {}
        budget = [_MAX_BUILT] if budget is None else budget  # one count for the whole form, sub-forms included
        root = schema if root is None else root
        node = resolve(schema, root)
        found = node.get("properties")
        properties: dict[str, Any] = found if isinstance(found, dict) else {}
        listed = node.get("required")
        required = {n for n in listed if isinstance(n, str)} if isinstance(listed, list) else set()
        if initial is None:  # the top form: nested ones are given their part of the parent's value
            found = example_value(schema, root)
            initial = found if isinstance(found, dict) else {}
        self.fields: dict[str, Field] = {
            name: Field(name, prop, root, required=name in required, depth=depth,
                        initial=initial.get(name, _MISSING), on_edit=on_edit, budget=budget)
            for name, prop in properties.items()}
        self.widget = w.VBox([])
        self.widget.add_class("tb-form")
        self._more: w.Button | None = None
        self._shown, self._budget = 0, budget
        if len(self.fields) > _PAGE:
            self._more = w.Button(layout=w.Layout(width="auto", align_self="flex-start"))
            self._more.on_click(lambda _b: self._show_more(asked=True))
        if self.fields:
            self._show_more()
        else:
            self.widget.children = [w.HTML("<i>This tool takes no arguments.</i>")]

    def value(self) -> dict[str, Any]:
        """The arguments object; invalid fields are marked, then raised as `tool.invalid_arguments`."""
        errors: list[str] = []
        value = self.read("", errors)
        if errors:
            raise ToolbenchError("tool.invalid_arguments", "; ".join(errors))
        return value

    def read(self, prefix: str, errors: list[str]) -> dict[str, Any]:
        """The sent fields' values, with paths under `prefix`; problems go to `errors`."""
        return {name: f.read(f"{prefix}.{name}" if prefix else name, errors)
                for name, f in self.fields.items() if f.sent}

    def _show_more(self, *, asked: bool = False) -> None:
        if asked:  # the budget bounds what opening the form builds, not what is asked for later
            self._budget[0] = max(self._budget[0], _MAX_BUILT)
        fields = list(self.fields.values())
        end = min(self._shown + _PAGE, len(fields))
        rows = [f.row for f in fields[self._shown:end]]
        self._shown = end
        left = len(fields) - end
        kept = [c for c in self.widget.children if c is not self._more]
        if self._more is not None and left:
            self._more.description = f"show {min(left, _PAGE)} more fields (of {left} not shown)"
            rows.append(self._more)
        self.widget.children = [*kept, *rows]


class Field:
    """One property: its `kind`, whether it is sent, and its value; widgets are built on first use."""

    # Built by `_build` on first access (see `__getattr__`): a long form costs only what it shows.
    row: w.Widget
    input: w.Widget
    error: w.HTML
    send: w.Checkbox | None
    null: w.Checkbox | None
    form: SchemaForm | None
    items: list[Field]
    add_button: w.Button | None
    remove_buttons: list[w.Button]

    def __init__(self, name: str, schema: Any, root: dict[str, Any], *, required: bool, depth: int,
                 initial: Any = _MISSING, on_edit: OnEdit | None = None, label: bool = True,
                 budget: list[int] | None = None) -> None:
        self.name, self.required, self.depth, self.root = name, required, depth, root
        self.budget = [_MAX_BUILT] if budget is None else budget
        self.node, self.nullable = split_nullable(resolve(schema, root), root)
        self.description = self.node.get("description") if isinstance(self.node.get("description"), str) else ""
        self.presend = not required and initial is not _MISSING  # an optional part of a given value
        # Field depth d holds a value at depth d + 1 of the arguments: the same cut-off as example_arguments.
        self.initial = (initial if initial is not _MISSING
                        else example_value(schema, root, null_ok=not required, depth=depth + 1))
        self.kind = _kind(name, self.node, root, depth)
        if self.kind == "array" and not (isinstance(self.initial, list) and len(self.initial) <= _MAX_SHOWN_ITEMS):
            self.kind = "json" if self.initial is not None else self.kind
        values = self.node.get("enum")
        self.enum: list[Any] | None = list(values) if self.kind == "enum" and isinstance(values, list) else None
        self._on_edit, self._label, self._built = on_edit, label, False

    def __getattr__(self, attr: str) -> Any:
        if attr in Field.__annotations__ and not self.__dict__.get("_built", True):
            self._build()
            return getattr(self, attr)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {attr!r}")

    @property
    def sent(self) -> bool:
        if self.required or self.kind == "const":
            return True
        return bool(self.send.value) if self._built and self.send is not None else self.presend

    def value(self) -> Any:
        """This field's value, raised as `tool.invalid_arguments` when it is invalid."""
        errors: list[str] = []
        value = self.read(self.name, errors)
        if errors:
            raise ToolbenchError("tool.invalid_arguments", "; ".join(errors))
        return value

    def read(self, path: str, errors: list[str]) -> Any:
        """The value; a problem is shown next to the field and added to `errors`, naming `path`."""
        self.error.value = ""
        if self.null is not None and self.null.value:
            return None
        problem = ""
        value: Any = self.input.value if self.kind not in ("object", "array", "const") else None
        if self.kind == "const":
            value = self.node.get("const")
        elif self.kind == "enum" and self.enum is not None:
            value = self.enum[value]
        elif self.kind == "object" and self.form is not None:
            value = self.form.read(path, errors)
        elif self.kind == "array":
            value = [item.read(f"{path}[{i}]", errors) for i, item in enumerate(self.items)]
        elif self.kind == "json":
            try:
                value = json.loads(value)
            except ValueError as exc:
                problem = f"`{path}` is not valid JSON: {exc}"
        elif self.kind in ("integer", "number") and not _in_bounds(self.node, value):
            problem = f"`{path}` is {value}: it must be {_bounds(self.node)}"
        if problem:
            self.error.value = f"<span style='{_RED};font-size:12px'>{html.escape(problem)}</span>"
            errors.append(problem)
        return value

    # building ---------------------------------------------------------------------------------
    def _build(self) -> None:
        self._built = True
        self.budget[0] -= 1
        if self.kind in ("object", "array") and self.budget[0] <= 0:
            self.kind = "json"  # nested lists of lists multiply: past the budget, a JSON box stands for them
        self.error = w.HTML("")
        self.error.add_class("tb-field-error")
        self.form, self.items, self.add_button, self.remove_buttons = None, [], None, []
        optional = not self.required and self.kind != "const"
        self.send = _checkbox("send", self.presend) if optional else None
        self.null = _checkbox("null", self.initial is None) if self.nullable else None
        start = self.initial
        if start is None and (self.nullable or self.kind not in ("enum", "json", "const")):
            # What the inner field shows while null is ticked.
            start = example_value(self.node, self.root, depth=self.depth + 1)
        self.input = self._make_input(start)
        if self.kind not in ("const", "object", "array"):
            self.input.observe(lambda _c: self._edited(), names="value")
        if self.null is not None:
            self.null.observe(lambda _c: self._touched(), names="value")
        controls = [c for c in (self.null, self.send) if c is not None]
        label = [self._label_widget()] if self._label else []
        if self.kind in ("object", "array"):
            parts: list[w.Widget] = [w.HBox([*label, *controls])] if label or controls else []
            parts += [self.input, *([self.add_button] if self.add_button else [])]
        else:
            parts = [w.HBox([*label, self.input, *controls], layout=w.Layout(align_items="flex-start"))]
        self.row = w.VBox([*parts, self.error], layout=w.Layout(margin="2px 0"))
        self.row.add_class("tb-field")  # and `tb-field-<name>`: a nested field is found under its parent's
        self.row.add_class("tb-field-" + re.sub(r"[^A-Za-z0-9_-]", "_", self.name))

    def _make_input(self, start: Any) -> w.Widget:
        grow = {"flex": "1 1 auto", "width": "auto", "min_width": "120px"}
        if self.kind == "const":
            return w.HTML(f"<code>{html.escape(json.dumps(self.node.get('const')))}</code>")
        if self.kind == "enum" and self.enum is not None:
            labels = [v if isinstance(v, str) else json.dumps(v) for v in self.enum]
            same = [i for i, v in enumerate(self.enum) if json.dumps(v) == json.dumps(start)]
            return w.Dropdown(options=[(text, i) for i, text in enumerate(labels)], value=same[0] if same else 0,
                              layout=w.Layout(min_height="28px", **grow))
        if self.kind == "boolean":
            return w.Checkbox(value=start is True, indent=False,
                              layout=w.Layout(min_height="28px", width="auto", margin="0 24px 0 0"))
        if self.kind == "integer":
            start = start if isinstance(start, int) and not isinstance(start, bool) else 0
            return w.IntText(value=start, layout=w.Layout(min_height="28px", **grow))
        if self.kind == "number":
            return w.FloatText(value=float(number(start) or 0), layout=w.Layout(min_height="28px", **grow))
        if self.kind == "text":
            return w.Text(value=start if isinstance(start, str) else "", layout=w.Layout(min_height="28px", **grow))
        if self.kind == "textarea":
            return w.Textarea(value=start if isinstance(start, str) else "", rows=4,
                              layout=w.Layout(min_height="64px", **grow))
        if self.kind == "object":
            self.form = SchemaForm(self.node, root=self.root, depth=self.depth + 1, budget=self.budget,
                                   initial=start if isinstance(start, dict) else {}, on_edit=self._edited)
            self.form.widget.layout = w.Layout(**_INDENT)
            return self.form.widget
        if self.kind == "array":
            box = w.VBox([], layout=w.Layout(**_INDENT))
            self.add_button = w.Button(description="+ add", layout=w.Layout(width="auto", align_self="flex-start",
                                                                             margin="0 0 0 12px"))
            self.add_button.add_class("tb-add-item")
            self.add_button.on_click(lambda _b: self.add_item())
            self.input = box  # `add_item` adds to it
            for item in start if isinstance(start, list) else []:
                self.add_item(item, edit=False)
            return box
        text = json.dumps(start, ensure_ascii=False)
        return w.Textarea(value=text, rows=3, placeholder="JSON", layout=w.Layout(min_height="52px", **grow))

    def _label_widget(self) -> w.HTML:
        star = f" <span style='{_RED}'>*</span>" if self.required else ""
        notes = [n for n in (self.description, _hint(self.node) if self.kind in ("integer", "number") else "") if n]
        under = "".join(f"<div style='{_GREY}'>{html.escape(n)}</div>" for n in notes)
        return w.HTML(f"<div style='{_WRAP}'><code>{html.escape(self.name)}</code>{star}{under}</div>",
                      layout=w.Layout(flex="0 1 190px", min_width="140px", margin="0 8px 0 0"))

    # arrays -----------------------------------------------------------------------------------
    def add_item(self, value: Any = _MISSING, *, edit: bool = True) -> Field:
        """Append an item editor (starting from `value`, else the items' example)."""
        item = Field(self.name, self.node.get("items"), self.root, required=True, depth=self.depth + 1,
                     initial=value, on_edit=self._edited, label=False, budget=[_MAX_BUILT] if edit else self.budget)
        remove = w.Button(description="−", tooltip="remove this item", layout=w.Layout(width="32px", min_width="32px"))
        remove.on_click(lambda _b: self.remove_item(self.items.index(item)))
        item.row.layout.flex = "1 1 auto"  # the item takes the width its remove button leaves
        self.items.append(item)
        self.remove_buttons.append(remove)
        self.input.children = [*self.input.children, w.HBox([item.row, remove])]
        self._limit()
        if edit:
            self._edited()
        return item

    def remove_item(self, index: int) -> None:
        """Remove the item editor at `index`."""
        del self.items[index], self.remove_buttons[index]
        self.input.children = [c for i, c in enumerate(self.input.children) if i != index]
        self._limit()
        self._edited()

    def _limit(self) -> None:
        most = self.node.get("maxItems")
        if self.add_button is not None and isinstance(most, int):
            self.add_button.disabled = len(self.items) >= most

    # edits ------------------------------------------------------------------------------------
    def _edited(self) -> None:
        """The value was edited: it is no longer null, and it (with every parent) is sent."""
        if self.null is not None and self.null.value:
            self.null.value = False  # its observer calls `_touched`
        else:
            self._touched()

    def _touched(self) -> None:
        if self.send is not None:
            self.send.value = True
        if self._on_edit is not None:
            self._on_edit()


def _kind(name: str, node: dict[str, Any], root: dict[str, Any], depth: int) -> str:
    if "const" in node or node.get("type") == "null":
        return "const"
    if isinstance(node.get("enum"), list) and node["enum"]:
        return "enum"
    kind = node.get("type") or ("object" if "properties" in node else "array" if "items" in node else None)
    if kind == "string":
        return "textarea" if _multiline(name, node) else "text"
    if kind in ("boolean", "integer", "number"):
        return str(kind)
    if depth + 1 >= MAX_DEPTH:
        return "json"
    if kind == "object" and isinstance(node.get("properties"), dict) and node["properties"]:
        return "object"
    if kind == "array" and isinstance(node.get("items"), dict):
        item, _ = split_nullable(resolve(node["items"], root), root)
        if _kind(name, item, root, depth + 1) != "json":
            return "array"
    return "json"


def _multiline(name: str, node: dict[str, Any]) -> bool:
    words = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).lower().replace("-", "_").split("_")
    longest = node.get("maxLength")
    return (name.lower() in _MULTILINE_NAMES or words[-1] in _MULTILINE_NAMES or "contentMediaType" in node
            or node.get("format") in _MULTILINE_FORMATS or (isinstance(longest, int) and longest > 200))


def _limits(node: dict[str, Any]) -> list[tuple[str, int | float]]:
    keys = (("≥", "minimum"), (">", "exclusiveMinimum"), ("≤", "maximum"), ("<", "exclusiveMaximum"))
    return [(sign, found) for sign, key in keys if (found := number(node.get(key))) is not None]


def _in_bounds(node: dict[str, Any], value: int | float) -> bool:
    tests: dict[str, Callable[[float, float], bool]] = {
        "≥": lambda v, b: v >= b, ">": lambda v, b: v > b, "≤": lambda v, b: v <= b, "<": lambda v, b: v < b}
    return all(tests[sign](value, bound) for sign, bound in _limits(node))


def _bounds(node: dict[str, Any]) -> str:
    return " and ".join(f"{sign} {bound}" for sign, bound in _limits(node))


def _hint(node: dict[str, Any]) -> str:
    return f"must be {_bounds(node)}" if _limits(node) else ""


def _checkbox(description: str, value: bool) -> w.Checkbox:
    return w.Checkbox(value=value, description=description, indent=False,
                      layout=w.Layout(width="auto", min_width="64px", min_height="28px"))
