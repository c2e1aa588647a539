"""CallConsole: fire one tool call as a model would, raw text or a schema form."""

from __future__ import annotations

import json
from typing import Any

import ipywidgets as w  # type: ignore[import-untyped]

from ..core.arguments import MISSING
from ..runtime.bench import Workbench
from ..runtime.invocation import Invocation
from ._base import Panel
from ._form import SchemaForm
from ._state import WorkbenchState


class CallConsole(Panel):
    """A call-name dropdown, the arguments (raw text sent verbatim, or a form), a call button
    and the budget left.

    In raw mode the text box is sent exactly as typed: malformed JSON included, so the
    runtime's `tool.invalid_arguments` result can be seen; an empty box sends no arguments
    field at all (`MISSING`)."""

    css_class = "tb-console"

    def __init__(self, source: Workbench | WorkbenchState, invocation: Invocation | None = None) -> None:
        state = WorkbenchState.of(source, invocation)
        self.call_name = w.Dropdown(description="call name", options=[])
        self.call_name.add_class("tb-call-name")
        self.mode = w.ToggleButtons(options=["raw", "form"], value="raw", style={"button_width": "70px"})
        self.arguments = w.Textarea(value="", placeholder='{"formula": "3d6+4"}  (sent exactly as typed)',
                                    layout=w.Layout(width="100%", height="90px"))
        self.arguments.add_class("tb-arguments")
        self.form = SchemaForm(None)
        self.form_box = w.VBox([self.form.widget])
        self.to_raw = w.Button(description="form → raw", tooltip="copy the form's JSON into the raw box")
        self.call_button = w.Button(description="call", button_style="primary", icon="play")
        self.call_button.add_class("tb-call-button")
        self.busy = w.HTML("")
        self.budget = w.HTML("")
        self.budget.add_class("tb-budget")
        self.description = w.HTML("")
        self.raw_box = w.VBox([self.arguments])
        self.form_area = w.VBox([self.form_box, self.to_raw])
        super().__init__(state, [
            w.HTML("<b>Call console</b>"),
            self.call_name, self.description, self.mode, self.raw_box, self.form_area,
            w.HBox([self.call_button, self.busy]), self.budget,
        ])
        self._wire()
        self.refresh()

    def _wire(self) -> None:
        self.on_change(self.call_name, lambda _v: self._rebuild_form())
        self.on_change(self.mode, lambda _v: self._show_mode())
        self.on_click(self.to_raw, self._copy_form_to_raw)
        self.on_click(self.call_button, self._call)
        self.on_state("invocation", self.refresh)
        self.on_state("result", self._show_budget)
        self.on_state("busy", self._show_busy)

    # views --------------------------------------------------------------------------------
    def refresh(self) -> None:
        names = list(self.state.invocation.snapshot.call_names)
        keep = self.call_name.value if self.call_name.value in names else (names[0] if names else None)
        self.call_name.options = names
        self.call_name.value = keep
        self._rebuild_form()
        self._show_mode()
        self._show_budget()

    def _rebuild_form(self) -> None:
        binding = self.state.invocation.snapshot.binding_for(self.call_name.value or "")
        self.form = SchemaForm(binding.descriptor.input_schema if binding else None)
        self.form_box.children = [self.form.widget]
        text = binding.descriptor.description if binding else ""
        tool = f"<code>{binding.tool_id}</code> " if binding else ""
        self.description.value = f"<span style='font-size:12px;color:#555'>{tool}{_escape(text)}</span>"

    def _show_mode(self) -> None:
        raw = self.mode.value == "raw"
        self.raw_box.layout.display = None if raw else "none"
        self.form_area.layout.display = "none" if raw else None

    def _show_budget(self) -> None:
        budget = self.state.invocation.budget()
        total = self.state.invocation.snapshot.max_calls_per_invocation
        per_tool = ", ".join(f"<code>{n}</code> {left}" for n, left in budget["per_tool"].items())
        self.budget.value = (f"<span style='font-size:12px'>calls left: <b>{budget['total']}</b> of {total}"
                             + (f"; per tool: {per_tool}" if per_tool else "") + "</span>")

    def _show_busy(self) -> None:
        self.call_button.disabled = self.state.busy
        self.busy.value = "<i>calling…</i>" if self.state.busy else ""

    # actions ------------------------------------------------------------------------------
    def wire_arguments(self) -> Any:
        """What the call button sends: the raw text (or MISSING when empty), or the form's object."""
        if self.mode.value == "form":
            return self.form.value()
        return self.arguments.value if self.arguments.value != "" else MISSING

    def _copy_form_to_raw(self) -> None:
        self.arguments.value = json.dumps(self.form.value(), ensure_ascii=False)
        self.mode.value = "raw"

    def _call(self) -> None:
        self.state.submit(self.call_name.value or "", self.wire_arguments(), on_error=self.show_error)


def _escape(text: str) -> str:
    import html

    return html.escape(text)
