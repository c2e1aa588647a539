"""HistoryTable: the invocation's calls, one row each; a row's button shows its result again."""

from __future__ import annotations

from functools import partial
from typing import Any

import ipywidgets as w  # type: ignore[import-untyped]

from ..runtime.bench import Workbench
from ..runtime.invocation import Invocation
from ._base import Panel
from ._state import WorkbenchState

COLUMNS = ("round", "call_id", "call_name", "tool_id", "arguments", "is_error", "error_code", "elapsed_ms",
           "content_chars", "externalized")
MAX_CELL = 60


def cell(column: str, value: Any) -> str:
    if value is None or (isinstance(value, float) and value != value):  # None or NaN
        return ""
    if column == "elapsed_ms":
        return f"{float(value):.1f}"
    text = str(value)
    return text if len(text) <= MAX_CELL else text[:MAX_CELL - 1] + "…"


class HistoryTable(Panel):
    """The rows of `inv.to_dataframe()`; each row's `show` button (in `row_buttons`) puts
    that call's result back in the result viewer."""

    css_class = "tb-history"

    def __init__(self, source: Workbench | WorkbenchState, invocation: Invocation | None = None) -> None:
        state = WorkbenchState.of(source, invocation)
        self.title = w.HTML("")
        self.grid = w.GridBox(layout=w.Layout(grid_template_columns=f"60px repeat({len(COLUMNS)}, auto)",
                                              grid_gap="0px 8px", overflow="auto", max_height="300px"))
        self.row_buttons: list[w.Button] = []
        self._shown: tuple[str, int] | None = None
        super().__init__(state, [self.title, self.grid])
        self._wire()
        self.refresh()

    def _wire(self) -> None:
        self.on_state("invocation", self.refresh)
        self.on_state("result", self.refresh)

    def refresh(self) -> None:
        frame = self.state.invocation.to_dataframe()
        self.title.value = (f"<b>History</b> <span style='font-size:12px'>invocation "
                            f"<code>{self.state.invocation.id}</code>, {len(frame)} calls</span>")
        shown = (self.state.invocation.id, len(frame))
        if shown == self._shown:
            return  # only the selection changed; the rows are the same
        self._shown = shown
        cells: list[w.Widget] = [w.HTML("")] + [w.HTML(f"<b style='font-size:12px'>{c}</b>") for c in COLUMNS]
        self.row_buttons = []
        for index, row in enumerate(frame.itertuples(index=False)):
            button = w.Button(description="show", layout=w.Layout(width="56px", height="24px"))
            button.add_class("tb-history-row")
            self.on_click(button, partial(self.state.show, index))
            self.row_buttons.append(button)
            cells.append(button)
            values = row._asdict()
            for column in COLUMNS:
                color = "#b00020" if values["is_error"] and column == "error_code" else None
                cells.append(w.Label(cell(column, values[column]), style={"text_color": color}))
        self.grid.children = cells
