"""CallConsole: fire one tool call as a model would, raw text or a schema form."""

from __future__ import annotations

import html
import json
from typing import Any

import ipywidgets as w  # type: ignore[import-untyped]

from .. import MISSING, Invocation, Workbench
from ._arguments_box import ArgumentsBox
from ._base import Panel, bar
from ._form import SchemaForm, example_arguments
from ._state import WorkbenchState


def json_problem(text: str) -> str | None:
    """Where `text` stops being one JSON object, said as a person would; None when it is one."""
    if not text.strip():
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        return f"the JSON breaks at line {exc.lineno}, column {exc.colno}: {exc.msg}"
    except (ValueError, RecursionError) as exc:
        return f"not JSON: {exc}"
    if value is not None and not isinstance(value, dict):
        return f"the arguments are a JSON {type(value).__name__}, not an object"
    return None


class CallConsole(Panel):
    """The call name (pick from the list or type any name: an unknown one is a model mistake
    worth seeing), the arguments (raw text sent verbatim, or a form built from the schema), the
    call button and the budget left.

    In raw mode the text box is sent exactly as typed: malformed JSON included, so the
    runtime's `tool.invalid_arguments` result can be seen (the line under the box says where
    the JSON breaks); an empty box sends no arguments field at all (`MISSING`). Picking
    another tool resets the box to that tool's example, built from its schema, unless the
    person typed in it since the pick (the browser keeps typed text: `ArgumentsBox`). Ctrl+Enter
    in the box calls. `cancel` (`tb-call-cancel`) cancels the call fired from here that runs."""

    css_class = "tb-console"

    def __init__(self, source: Workbench | WorkbenchState, invocation: Invocation | None = None) -> None:
        state = WorkbenchState.of(source, invocation)
        self.call_name = w.Combobox(options=[], placeholder="call name (pick or type)", ensure_option=False,
                                    layout=w.Layout(width="260px"))
        self.call_name.add_class("tb-call-name")
        self.mode = w.ToggleButtons(options=["raw", "form"], value="raw", style={"button_width": "60px"})
        self.mode.add_class("tb-mode")
        self.call_button = w.Button(description="call", button_style="primary", icon="play",
                                    layout=w.Layout(width="90px"))
        self.call_button.add_class("tb-call-button")
        self.budget = w.HTML("")
        self.budget.add_class("tb-budget")
        self.description = w.HTML("")
        self.description.add_class("tb-tool-description")
        self.arguments = ArgumentsBox(placeholder='{"formula": "3d6+4"}  (sent exactly as typed; Ctrl+Enter calls)')
        self.arguments.add_class("tb-arguments")
        self.arguments.add_class("tb-call-args")
        self.cancel = w.Button(description="cancel", icon="stop", disabled=True, layout=w.Layout(width="90px"),
                               tooltip="cancel the running call: the tool may have run in part")
        self.cancel.add_class("tb-call-cancel")
        self.json_hint = w.HTML("")
        self.json_hint.add_class("tb-json-hint")
        self.example = w.Button(description="example", tooltip="reset the box to this tool's example arguments",
                                layout=w.Layout(width="90px"))
        self.example.add_class("tb-example")
        self.form = SchemaForm(None)
        self.form_box = w.VBox([self.form.widget])
        self.to_raw = w.Button(description="form → raw", tooltip="copy the form's JSON into the raw box")
        self.raw_box = w.VBox([self.arguments, self.json_hint, bar([self.example])])
        self.form_area = w.VBox([self.form_box, self.to_raw])
        self._tool: str | None = None  # the call name whose example the raw box was reset to
        self._own_example: dict[str, Any] | None = None  # the picked tool's own example (bench.catalog)
        super().__init__(state, [
            w.HTML("<span class='tb-title'>Call</span>"),
            bar([self.call_name, self.mode, self.call_button, self.cancel, self.budget]),
            self.description, self.raw_box, self.form_area,
        ])
        self._wire()
        self.refresh()

    def _wire(self) -> None:
        self.on_change(self.call_name, lambda _v: self._pick())
        self.on_change(self.mode, lambda _v: self._show_mode())
        self.on_change(self.arguments, lambda _v: self._show_hint())
        self.on_click(self.example, self._reset_example)
        self.on_click(self.to_raw, self._copy_form_to_raw)
        self.on_click(self.call_button, self._call)
        self.on_click(self.cancel, self.state.cancel_call)
        self.arguments.on_call(self.guard(self._call_typed))
        self.on_state("invocation", self.refresh)
        self.on_state("result", self._show_budget)
        self.on_state("busy", self._show_busy)

    # views --------------------------------------------------------------------------------
    def refresh(self) -> None:
        names = list(self.state.invocation.snapshot.call_names)
        self.call_name.options = names
        if self.call_name.value not in names and names:
            self.call_name.value = names[0]  # a typed unknown name stays only within one invocation
        self._pick(force=True)
        self._show_mode()
        self._show_budget()

    def select(self, call_name: str) -> None:
        """Make `call_name` the console's tool (the tool list's click)."""
        self.call_name.value = call_name

    def _pick(self, *, force: bool = False) -> None:
        """A new tool: its form, its description and (for a known tool) its example arguments."""
        name = self.call_name.value or ""
        if name == self._tool and not force:
            return
        binding = self.state.invocation.snapshot.binding_for(name)
        # The tool's own example, looked up once per pick: the form and the raw box start from it.
        self._own_example = None if binding is None else self.state.example(binding.tool_id)
        self.form = (SchemaForm(None) if binding is None else
                     SchemaForm(binding.descriptor.input_schema, initial=self._own_example))
        self.form_box.children = [self.form.widget]
        if binding is not None and name != self._tool:
            self._reset_example()
        # The description goes last, naming the pick (`data-call`): once it shows, the form and
        # the example sent before it have been sent (a browser test waits for it before typing).
        picked = html.escape(name, quote=True)
        if binding is None:
            self.description.value = (f"<span class='tb-muted' data-call='{picked}'>no tool is named "
                                      f"<code>{html.escape(name)}</code> in this snapshot: calling it shows what a "
                                      "model gets for an unknown name</span>" if name else "")
        else:
            text = binding.descriptor.description.strip()
            self.description.value = (f"<div class='tb-muted tb-scroll tb-short' style='max-height:72px' "
                                      f"data-call='{picked}'><code>{html.escape(str(binding.tool_id))}</code> "
                                      f"{html.escape(text)}</div>")
        self._tool = name

    def _reset_example(self) -> None:
        binding = self.state.invocation.snapshot.binding_for(self.call_name.value or "")
        example = None if binding is None else (self._own_example  # its own, when it has one
                                                or example_arguments(binding.descriptor.input_schema))
        self.arguments.set_text(json.dumps(example or {}, ensure_ascii=False))

    def _show_hint(self) -> None:
        problem = json_problem(self.arguments.value)
        self.json_hint.value = ("" if problem is None else
                                f"<span class='tb-error-line'>{html.escape(problem)}; sent as typed, "
                                "the model would get <code>tool.invalid_arguments</code></span>")

    def _show_mode(self) -> None:
        raw = self.mode.value == "raw"
        self.raw_box.layout.display = None if raw else "none"
        self.form_area.layout.display = "none" if raw else None

    def _show_budget(self) -> None:
        budget = self.state.invocation.budget()
        total = self.state.invocation.snapshot.max_calls_per_invocation
        per_tool = ", ".join(f"<code>{html.escape(n)}</code> {left}" for n, left in budget["per_tool"].items())
        self.budget.value = (f"<span class='tb-muted'>calls left: <b>{budget['total']}</b> of {total}"
                             + (f"; per tool: {per_tool}" if per_tool else "") + "</span>")

    def _show_busy(self) -> None:
        if not self.state.closed:
            self.call_button.disabled = self.state.busy
            self.cancel.disabled = self.state.pending is None  # a call fired here (the chat has its stop)

    # actions ------------------------------------------------------------------------------
    def wire_arguments(self) -> Any:
        """What the call button sends: the raw text (or MISSING when empty), or the form's object."""
        if self.mode.value == "form":
            return self.form.value()
        return self.arguments.value if self.arguments.value != "" else MISSING

    def _copy_form_to_raw(self) -> None:
        self.arguments.set_text(json.dumps(self.form.value(), ensure_ascii=False))
        self.mode.value = "raw"

    def _call(self) -> None:
        self.state.submit(self.call_name.value or "", self.wire_arguments(), on_error=self.show_error)

    def _call_typed(self, text: str) -> None:
        """Ctrl+Enter in the box: send the text the browser has (its last edit may be in flight)."""
        if self.call_button.disabled:
            return  # a call runs (or the bench is closed): the button would not take a click either
        self.state.submit(self.call_name.value or "", text if text != "" else MISSING, on_error=self.show_error)
