"""HistoryTable: the calls of an invocation, newest first; a row's `show` selects it, and the
selected call can be re-run, copied as Python or JSON, and the history exported."""

from __future__ import annotations

import html
from dataclasses import dataclass

import ipywidgets as w  # type: ignore[import-untyped]

from .. import CallRecord, Invocation, ToolbenchError, Workbench
from ._base import Panel, bar, breakable, pre, pretty, scroll
from ._calls_text import COLUMNS, TITLES, cells, download_link, json_call, python_call, shorten
from ._copy_button import CopyButton
from ._state import WorkbenchState
from ._style import add_panel_css

EXPORTS = Workbench.EXPORTS
MAX_ROWS = 500  # rows drawn; the export holds them all
MAX_TITLE = 4000  # characters of a tooltip; the detail shows the whole value
MAX_DETAIL = 200_000  # characters of content or JSON in the detail
LINE = "60px minmax(0, 1fr)"  # a row: its show button, then its cells
# One template for the header and every row, so the columns line up.
GRID = ("display: grid; grid-template-columns: 3.5em minmax(5em, 1fr) minmax(8em, 2fr) minmax(7em, 1.5fr) "
        "minmax(8em, 2.5fr) minmax(6em, 1.2fr) 4.5em 4em 2.5em; gap: 0 6px;")
CUT = frozenset({"arguments"})  # shortened to one line with an ellipsis; the others wrap
ERROR_STYLE = "color: var(--jp-error-color1); font-weight: 600;"

CSS = """
.tb-history .tb-scroll.tb-short { max-height: 240px; }
.tb-history .tb-history-head, .tb-history .tb-history-body { scrollbar-gutter: stable; }
.tb-history .tb-history-head { overflow: hidden; background: var(--jp-layout-color2);
  border-bottom: 1px solid var(--jp-border-color1); font-weight: 600; }
.tb-history .tb-history-cells { font-size: var(--jp-ui-font-size0); line-height: 1.35; padding: 4px 0; }
.tb-history .tb-history-cells > div { min-width: 0; overflow-wrap: break-word; word-break: normal; }
.tb-history .tb-history-head .tb-history-cells > div { white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.tb-history .tb-history-cells > .tb-cut { white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.tb-history .tb-history-line { border-bottom: 1px solid var(--jp-border-color3); }
.tb-history .tb-status-error { color: var(--jp-error-color1); font-weight: 600; }
.tb-history .tb-history-detail { display: grid; grid-template-columns: repeat(auto-fit, minmax(280px, 1fr));
  gap: 6px; }
.tb-history .tb-copy-text textarea { font-family: var(--jp-code-font-family); font-size: var(--jp-code-font-size); }
"""
add_panel_css("history", CSS)


def _attr(text: str) -> str:
    return html.escape(text if len(text) <= MAX_TITLE else text[:MAX_TITLE] + "… (the detail shows it all)",
                       quote=True)


def header_html() -> str:
    heads = "".join(f'<div title="{_attr(TITLES.get(c, c))}">{html.escape(c)}</div>' for c in COLUMNS)
    return f'<div class="tb-history-cells" style="{GRID}">{heads}</div>'


def row_html(record: CallRecord) -> str:
    """A record's cells, each with its full value in its tooltip."""
    parts = []
    for column, full in cells(record).items():
        css = "tb-cut" if column in CUT else "tb-wrap"
        style = ""
        if column == "status" and record.result.is_error:
            css, style = css + " tb-status-error", f' style="{ERROR_STYLE}"'
        shown = html.escape(shorten(full)) if column in CUT else breakable(full)
        parts.append(f'<div class="{css}"{style} title="{_attr(full)}">{shown}</div>')
    return f'<div class="tb-history-cells" style="{GRID}">{"".join(parts)}</div>'


def _capped(text: str) -> str:
    return text if len(text) <= MAX_DETAIL else text[:MAX_DETAIL] + f"\n… ({len(text)} characters in all)"


def request_html(record: CallRecord) -> str:
    arguments = record.arguments
    if arguments.is_valid:
        args = "<div class='tb-muted'>arguments (valid JSON)</div>" + pre(_capped(pretty(arguments.value)))
    else:
        args = "<div class='tb-muted'>arguments: not a JSON object, as sent</div>" + pre(_capped(arguments.raw))
    return (f"<div class='tb-title'>request</div><div><code>{html.escape(record.call_name)}</code></div>"
            f"<div class='tb-muted'>round {record.round} · <code>{html.escape(record.call_id)}</code> · "
            f"ToolId <code>{html.escape(record.tool_id or '(none)')}</code></div>{args}")


def result_html(record: CallRecord) -> str:
    result = record.result
    if result.is_error:
        head = f"<div class='tb-error-line'><b><code>{html.escape(result.error_code or 'error')}</code></b></div>"
    else:
        head = "<div class='tb-ok-line'>ok</div>"
    out = [f"<div class='tb-title'>result</div>{head}",
           f"<div class='tb-muted'>{len(result.content)} characters, {record.elapsed_ms:.1f} ms"
           f"{', externalized' if record.externalized else ''}</div>", pre(_capped(result.content))]
    if result.structured is not None:
        out.append("<div class='tb-muted'>structured</div>" + pre(_capped(pretty(result.structured))))
    for ref in result.attachments:
        out.append(f"<div class='tb-muted'>attachment {html.escape(ref.kind)} {html.escape(ref.mime_type)}, "
                   f"{ref.size} bytes: <code>{html.escape(ref.path)}</code></div>")
    return "".join(out)


def invocation_label(inv: Invocation, current: bool) -> str:
    count = len(inv.records)
    return (f"{inv.id} · {inv.snapshot.scene} · {count} call{'s' if count != 1 else ''}"
            f"{' (current)' if current else ''}")


@dataclass(slots=True, eq=False)  # rows compare by identity
class Row:
    """One drawn row: its record and its widgets. A row's widgets are never closed, only given
    another record: the front end may still be applying an earlier `children` list that names
    them, and a closed one there ("widget model not found") wedges that box's updates for good."""

    record: CallRecord
    button: w.Button
    cells: w.HTML

    def show(self, record: CallRecord, *, disabled: bool) -> None:
        self.record = record
        self.cells.value = row_html(record)
        self.button.tooltip = f"show {record.call_id}"
        self.button.disabled = disabled
        self.mark(False)

    def mark(self, selected: bool) -> None:
        for widget in (self.button, self.cells):
            (widget.add_class if selected else widget.remove_class)("tb-selected")


class HistoryTable(Panel):
    """The calls of the chosen invocation (`chooser`), newest first; each row's `show` button
    (`row_buttons`, in display order) selects it; `rerun`, `copy`, `copy_json` act on the
    selected call, `export_csv` / `export_json` write the invocation's DataFrame."""

    css_class = "tb-history"

    def __init__(self, source: Workbench | WorkbenchState, invocation: Invocation | None = None) -> None:
        state = WorkbenchState.of(source, invocation)
        self.title = w.HTML("<span class='tb-title'>History</span>")
        self.chooser = w.Dropdown(description="invocation", layout=w.Layout(width="auto", min_width="320px"))
        self.chooser.add_class("tb-history-invocation")
        self.notice = w.HTML("")
        self.notice.add_class("tb-history-notice")
        self.head = w.GridBox([w.HTML(""), w.HTML(header_html())], layout=w.Layout(grid_template_columns=LINE))
        self.head.add_class("tb-history-head")
        self.body = w.GridBox([], layout=w.Layout(grid_template_columns=LINE, grid_gap="0px"))
        self.rows_view = scroll([self.body], size="tb-short")
        self.rows_view.add_class("tb-history-body")
        self.count = w.HTML("")
        self.count.add_class("tb-history-count")
        self.request_view, self.result_view = w.HTML(""), w.HTML("")
        self.detail = w.GridBox([scroll([self.request_view], size="tb-short"),
                                 scroll([self.result_view], size="tb-short")])
        self.detail.add_class("tb-history-detail")
        self.rerun = self._button("re-run", "tb-history-rerun", "fire this call again in the current invocation")
        self.copy = self._copy_button("copy Python", "tb-history-copy", 'inv.call("name", \'<arguments>\')')
        self.copy_json = self._copy_button("copy JSON", "tb-history-copy-json", "call name, arguments and call id")
        self.export_csv = self._button("export CSV", "tb-history-export-csv", f"write {EXPORTS}/history-<id>.csv")
        self.export_json = self._button("export JSON", "tb-history-export-json", f"write {EXPORTS}/history-<id>.json")
        self.copy_hint = w.HTML("")
        self.copy_text = w.Textarea(rows=3, layout=w.Layout(width="100%", display="none"))
        self.copy_text.add_class("tb-copy-text")
        self.exported_view = w.HTML("")
        self.exported_view.add_class("tb-history-exported")
        self.row_buttons: list[w.Button] = []
        self.rows: list[Row] = []
        self._spare: list[Row] = []  # rows off the table, their widgets kept for the next records
        self.copied = ""
        self.exported: list[str] = []  # the files written, relative to the workspace
        self._key: tuple[str, int] | None = None
        self._marked: Row | None = None
        self._shown_record: CallRecord | None = None
        self._follow = True  # show the current invocation, and the next one when it starts
        self._quiet = False
        super().__init__(state, [bar([self.title, self.chooser]), self.notice, self.head, self.rows_view,
                                 self.count, self.detail,
                                 bar([self.rerun, self.copy, self.copy_json, self.export_csv, self.export_json]),
                                 self.copy_hint, self.copy_text, self.exported_view])
        self._wire()
        self.refresh()

    @staticmethod
    def _button(description: str, css: str, tooltip: str) -> w.Button:
        button = w.Button(description=description, tooltip=tooltip, layout=w.Layout(width="auto"))
        button.add_class(css)
        return button

    @staticmethod
    def _copy_button(description: str, css: str, tooltip: str) -> CopyButton:
        button = CopyButton(description=description, tooltip=tooltip, layout=w.Layout(width="auto"))
        button.add_class(css)
        return button

    def _wire(self) -> None:
        self.on_state("invocation", self.refresh)
        self.on_state("result", self.refresh)
        self.on_state("busy", lambda: setattr(self.rerun, "disabled", self.state.closed or self.state.busy
                                              or self.state.record is None))
        self.on_change(self.chooser, self._chosen)
        self.on_change(self.copy_text, self._keep_copied)  # read-only: an edit is put back
        self.on_click(self.rerun, lambda: self.state.rerun(self._selected(), on_error=self.show_error))
        for button in (self.copy, self.copy_json):
            button.on_click(self.guard(self._copy))
        self.on_click(self.export_csv, lambda: self._export("csv"))
        self.on_click(self.export_json, lambda: self._export("json"))

    # reading ------------------------------------------------------------------------------
    @property
    def shown(self) -> Invocation:
        """The invocation whose calls are on show."""
        return next((i for i in self.state.invocations if i.id == self.chooser.value), self.state.invocation)

    def _selected(self) -> CallRecord:
        record = self.state.record
        if record is None:
            raise ToolbenchError("bench.misuse", "no call is selected: click a row's show first")
        return record

    # drawing ------------------------------------------------------------------------------
    def refresh(self) -> None:
        self._sync_chooser()
        self.notice.value = f"<div class='tb-muted'>{html.escape(self.state.notice)}</div>" if self.state.notice else ""
        self._sync_rows()
        self._sync_selection()

    def _sync_chooser(self) -> None:
        invocations = self.state.invocations
        options = tuple((invocation_label(inv, i == 0), inv.id) for i, inv in enumerate(invocations))
        ids = [inv.id for inv in invocations]
        want = ids[0] if self._follow or self.chooser.value not in ids else self.chooser.value
        if options != tuple(self.chooser.options) or self.chooser.value != want:
            self._quiet = True  # setting options moves the value; that is not the user's choice
            try:
                self.chooser.options = options
                self.chooser.value = want
            finally:
                self._quiet = False

    def _chosen(self, value: str | None) -> None:
        if self._quiet:
            return
        self._follow = value == self.state.invocation.id
        self.refresh()

    def _sync_rows(self) -> None:
        """Draw new records on top; redraw all only when another invocation is on show."""
        inv = self.shown
        records = inv.records
        key = (inv.id, len(records))
        if key == self._key:
            return  # only the selection changed
        grows = self._key is not None and self._key[0] == inv.id and self._key[1] < len(records)
        start = max(self._key[1] if grows and self._key else 0, len(records) - MAX_ROWS)
        if not grows:
            self._drop(self.rows)
            self.rows, self._marked = [], None
        fresh = [self._row(r) for r in reversed(records[start:])]
        rows = fresh + self.rows
        self._drop(rows[MAX_ROWS:])
        self.rows = rows[:MAX_ROWS]
        if self._marked is not None and self._marked not in self.rows:
            self._marked = None
        self._key = key
        self.body.children = [widget for row in self.rows for widget in (row.button, row.cells)]
        self.row_buttons = [row.button for row in self.rows]
        total, current = len(records), inv is self.state.invocation
        parts = [f"{len(self.rows)} of {total} shown; export for all" if total > len(self.rows)
                 else f"{total} call{'s' if total != 1 else ''}"]
        if not current:
            parts.append(f"an earlier invocation: re-run fires in the current one, "
                         f"<code>{html.escape(self.state.invocation.id)}</code>")
        self.count.value = f"<div class='tb-muted'>{' · '.join(parts)}</div>"

    def _row(self, record: CallRecord) -> Row:
        if self._spare:
            row = self._spare.pop()
            row.show(record, disabled=self.state.closed)
            return row
        button = w.Button(description="show", tooltip=f"show {record.call_id}",
                          layout=w.Layout(width="56px", height="24px", padding="0 4px"), disabled=self.state.closed)
        button.add_class("tb-history-row")
        row = Row(record, button, w.HTML(row_html(record)))
        self.on_click(button, lambda: self.state.select(row.record))
        for widget in (button, row.cells):
            widget.add_class("tb-history-line")
        return row

    def _drop(self, rows: list[Row]) -> None:
        self._spare.extend(rows)

    def _sync_selection(self) -> None:
        record = self.state.record
        marked = next((row for row in self.rows if row.record is record), None) if record is not None else None
        if marked is not self._marked:
            if self._marked is not None:
                self._marked.mark(False)
            if marked is not None:
                marked.mark(True)
            self._marked = marked
        for button in (self.rerun, self.copy, self.copy_json):
            button.disabled = self.state.closed or record is None
        self.rerun.disabled = self.rerun.disabled or self.state.busy
        if record is self._shown_record:
            return
        self._shown_record = record
        # The page copies in the click itself: the texts are there before it.
        self.copy.text = "" if record is None else python_call(record)
        self.copy_json.text = "" if record is None else json_call(record)
        if record is None:
            self.request_view.value = "<div class='tb-muted'>click a row's <b>show</b> to see its call here</div>"
            self.result_view.value = ""
        else:
            self.request_view.value = request_html(record)
            self.result_view.value = result_html(record)

    # acting -------------------------------------------------------------------------------
    def _copy(self, button: CopyButton) -> None:
        """After a copy: the text is also shown in the copy box, the way to copy it when the
        clipboard did not get it (a click from Python, a browser that refused)."""
        self._selected()  # a call must be selected
        text = self.copied = button.text
        self.copy_text.value = text
        self.copy_text.rows = min(12, text.count("\n") + 2)
        self.copy_text.layout.display = ""
        by_hand = "click in it, press Ctrl+A, then Ctrl+C (⌘ on a Mac)"
        if button.outcome == "clipboard":
            hint = f"copied to your clipboard ({len(text):,} characters), shown below"
        elif button.outcome == "kernel":
            hint = f"copied into the box below (a click from Python cannot reach a clipboard): {by_hand}"
        else:
            why = html.escape(button.outcome.removeprefix("refused: ")) or "no reason given"
            hint = f"your browser refused the clipboard ({why}); the text is in the box below: {by_hand}"
        self.copy_hint.value = f"<div class='tb-muted tb-copy-hint'>{hint}</div>"

    def _keep_copied(self, value: str) -> None:
        if value != self.copied:
            self.copy_text.value = self.copied

    def _export(self, kind: str) -> None:
        """Write the shown invocation's DataFrame under `EXPORTS`, and offer it as a download."""
        inv = self.shown
        frame = inv.to_dataframe()
        text = frame.to_csv(index=False) if kind == "csv" else frame.to_json(orient="records", indent=2)
        name = f"history-{inv.id}.{kind}"
        relative = self.state.bench.export_file(name, text.encode("utf-8"))
        self.exported.append(relative)
        mime = "text/csv" if kind == "csv" else "application/json"
        link = download_link(text.encode("utf-8"), name, mime, "download")
        offer = link or "over 5 MB: open the file from the workspace"
        self.exported_view.value = (f"<div class='tb-muted'>wrote <code>{html.escape(relative)}</code> "
                                    f"({len(frame)} rows) · {offer}</div>")
