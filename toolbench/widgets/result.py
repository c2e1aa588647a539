"""ResultViewer: what the model reads, next to the full `tool-results/` file."""

from __future__ import annotations

import html
from dataclasses import dataclass
from pathlib import Path

import ipywidgets as w  # type: ignore[import-untyped]

from ..core.results import ToolResult
from ..runtime.bench import Workbench
from ..runtime.invocation import Invocation
from ._base import Panel, pre, pretty
from ._state import WorkbenchState

PAGE_LINES = 200
MAX_MATCHES = 500


@dataclass(frozen=True, slots=True)
class FileView:
    """A page of a text file's lines (1-based numbers), or the lines matching a search."""

    text: str
    first: int
    last: int
    total: int
    matches: int | None = None


def page_of(lines: list[str], page: int, size: int = PAGE_LINES) -> FileView:
    pages = max(1, -(-len(lines) // size))
    page = min(max(page, 1), pages)
    start = (page - 1) * size
    chunk = lines[start:start + size]
    text = "\n".join(f"{start + i + 1:>6}  {line}" for i, line in enumerate(chunk))
    return FileView(text=text, first=start + 1 if chunk else 0, last=start + len(chunk), total=len(lines))


def search_in(lines: list[str], query: str, limit: int = MAX_MATCHES) -> FileView:
    """The lines containing `query` (case-insensitive), numbered, at most `limit` shown."""
    needle = query.casefold()
    hits = [(i, line) for i, line in enumerate(lines, 1) if needle in line.casefold()]
    text = "\n".join(f"{i:>6}  {line}" for i, line in hits[:limit])
    return FileView(text=text, first=0, last=0, total=len(lines), matches=len(hits))


class ResultViewer(Panel):
    """The result on show: its content (what the model reads, `tb-result-content`), the full
    `tool-results/` file paged by lines with a search box (`tb-result-file`), and the
    structured JSON kept for records. An error result shows its code in a banner."""

    css_class = "tb-result"

    def __init__(self, source: Workbench | WorkbenchState, invocation: Invocation | None = None) -> None:
        state = WorkbenchState.of(source, invocation)
        self.header = w.HTML("")
        self.content = w.HTML("")
        self.content.add_class("tb-result-content")
        self.file = w.HTML("")
        self.file.add_class("tb-result-file")
        self.file_info = w.HTML("")
        self.page = w.BoundedIntText(value=1, min=1, max=1, description="page", layout=w.Layout(width="150px"))
        self.previous = w.Button(description="◀", layout=w.Layout(width="40px"))
        self.next = w.Button(description="▶", layout=w.Layout(width="40px"))
        self.search = w.Text(placeholder="search the file", continuous_update=False, layout=w.Layout(width="220px"))
        self.structured = w.HTML("")
        self.structured.add_class("tb-result-structured")
        box = {"border": "1px solid #ddd", "padding": "4px", "max_height": "420px", "overflow": "auto"}
        left = w.VBox([w.HTML("<b>What the model reads</b>"), self.content], layout=w.Layout(width="50%", **box))
        right = w.VBox([w.HTML("<b>The <code>tool-results/</code> file</b>"), self.file_info,
                        w.HBox([self.previous, self.page, self.next, self.search]), self.file],
                       layout=w.Layout(width="50%", **box))
        self.structured_box = w.Accordion(children=[self.structured], titles=("structured (kept for records)",))
        self._lines: list[str] = []
        super().__init__(state, [self.header, w.HBox([left, right]), self.structured_box])
        self._wire()
        self.refresh()

    def _wire(self) -> None:
        self.on_state("result", self.refresh)
        self.on_change(self.page, lambda _v: self._show_file())
        self.on_change(self.search, lambda _v: self._show_file())
        self.on_click(self.previous, lambda: setattr(self.page, "value", max(1, self.page.value - 1)))
        self.on_click(self.next, lambda: setattr(self.page, "value", min(self.page.max, self.page.value + 1)))

    # views --------------------------------------------------------------------------------
    def refresh(self) -> None:
        result = self.state.result
        self._lines = self._file_lines(result)
        self.page.max = max(1, -(-len(self._lines) // PAGE_LINES))
        self.page.value = 1
        self.search.value = ""
        if result is None:
            self.header.value = "<b>Result</b> <i>(no call yet)</i>"
            self.content.value = ""
            self.structured.value = ""
        else:
            self.header.value = _header(result)
            color = "#b00020" if result.is_error else "inherit"
            self.content.value = pre(result.content, css=f"color:{color}")
            self.structured.value = pre(pretty(result.structured))
        self._show_file()

    def _file_lines(self, result: ToolResult | None) -> list[str]:
        path = _file_path(result)
        if path is None:
            return []
        full = self.state.bench.workspace / path
        if not full.is_file():
            return [f"(missing: {path})"]
        return full.read_text(encoding="utf-8").split("\n")

    def _show_file(self) -> None:
        path = _file_path(self.state.result)
        if path is None:
            self.file_info.value = "<i>inline result: no <code>tool-results/</code> file</i>"
            self.file.value = ""
            return
        if self.search.value:
            view = search_in(self._lines, self.search.value)
            shown = f"{min(view.matches or 0, MAX_MATCHES)} shown" if (view.matches or 0) > MAX_MATCHES else ""
            info = f"{view.matches} matching lines of {view.total} {shown}"
        else:
            view = page_of(self._lines, self.page.value)
            info = f"lines {view.first}–{view.last} of {view.total}"
        self.file_info.value = f"<code>{html.escape(path)}</code> <span style='font-size:12px'>{info}</span>"
        self.file.value = pre(view.text)


def _file_path(result: ToolResult | None) -> str | None:
    structured = result.structured if result is not None else None
    if isinstance(structured, dict) and structured.get("externalized") and isinstance(structured.get("path"), str):
        return str(Path(structured["path"]).as_posix())
    return None


def _header(result: ToolResult) -> str:
    who = f"<code>{html.escape(result.call_id)}</code> → <code>{html.escape(result.tool_id or '(no tool)')}</code>"
    if result.is_error:
        return (f"<div class='tb-result-error' style='background:#fde7e9;color:#b00020;padding:4px 8px;"
                f"font-size:15px'>error <b><code>{html.escape(result.error_code or '')}</code></b> · {who}</div>")
    return f"<div style='padding:4px 8px'>ok · {who}</div>"
