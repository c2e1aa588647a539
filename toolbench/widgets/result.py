"""ResultViewer: what the model reads, the full `tool-results/` file paged and searchable,
the attachments (and what each provider receives of them), and the call on its way."""

from __future__ import annotations

import html
import json
from pathlib import Path, PurePosixPath
from typing import Any

import ipywidgets as w  # type: ignore[import-untyped]

from .. import AttachmentRef, CallRecord, Invocation, ToolbenchError, ToolResult, Workbench
from ..protocols import abridge, decode_result, names, pixel_size
from . import _file_view as fv
from ._base import Panel, bar, pre, pretty, scroll
from ._file_widget import FileView
from ._state import WorkbenchState
from ._style import add_panel_css

__all__ = ["CSS", "PAGE_LINES", "ResultViewer"]

PAGE_LINES = fv.PAGE_LINES
MAX_ATTACHMENT_BYTES = 8 * 1024 * 1024
MAX_STRUCTURED_CHARS = 200_000  # the JSON is for reading, not for a browser to lay out megabytes of
KEEP_B64 = 60

# This panel's own rules; `_style.stylesheet()` gathers them into the one stylesheet.
CSS = """
.tb-result .tb-line-no { color: var(--jp-ui-font-color3); user-select: none; }
.tb-result mark { background: color-mix(in srgb, var(--jp-warn-color1) 35%, transparent); color: inherit; }
.tb-result .tb-hit-current { outline: 2px solid var(--jp-brand-color1); }
.tb-result .tb-line-mark { background: var(--jp-brand-color3); outline: 1px solid var(--jp-brand-color1); }
.tb-result .tb-preview-end { color: var(--jp-brand-color1); font-weight: 600; }
.tb-result .tb-progress-indeterminate .progress-bar { opacity: 0.5; }
.tb-result .tb-stale { opacity: 0.45; }
/* Stacked (a narrow notebook), the text the model reads takes less height: the file's controls
   stay near the result's header. The columns wrap below two 320 px columns. */
.tb-result .tb-result-columns { container-type: inline-size; }
@container (max-width: 660px) { .tb-result .tb-result-reads { max-height: 200px; } }
"""
add_panel_css("result", CSS)


def _muted(text: str) -> str:
    return f"<span class='tb-muted'>{text}</span>"


class ResultViewer(Panel):
    """The result on show (`state.record`): header (ok / error banner `tb-result-error`, call id,
    call name, ToolId, elapsed), what the model reads (`content`, `tb-result-content`, with where
    its preview ends in the file), the `tool-results/` file of an externalized result (`file`,
    `tb-result-file`), the attachments (`attachments`) beside what each provider receives
    (`protocol`, `provider_json`), the structured JSON (`structured`, in an Accordion) and,
    while a call runs, `pending` (`tb-pending`) with its `progress` bar (`tb-progress`).

    The file view (`file`, `tb-file-view`) scrolls through the whole file in the browser; an
    inline result's text is shown in it the same way, with why it has no file. Its controls, in
    bars above it: `previous` / `next` (`tb-file-prev` / `tb-file-next`) and `page` (a
    BoundedIntText, `tb-file-page-input`; arrow keys step it) move by pages of `PAGE_LINES`;
    `page_label` (`tb-file-page`) follows what is in view; `line` (go to line, `tb-file-line`)
    scrolls to a line and marks it (`tb-file-mark`); `search` (`tb-file-search`) with `hits` (the
    count) and `hit_prev` / `hit_next` (`tb-file-hit-prev` / `tb-file-hit-next`) scroll to each
    hit. `file_box` holds them; it is hidden when there is no result or its file cannot be read."""

    css_class = "tb-result"

    def __init__(self, source: Workbench | WorkbenchState, invocation: Invocation | None = None) -> None:
        state = WorkbenchState.of(source, invocation)
        self.header = w.HTML("")
        self.pending_label = w.HTML("")
        self.pending_label.add_class("tb-pending")
        self.progress = w.FloatProgress(value=0.0, min=0.0, max=1.0, layout=w.Layout(width="260px"))
        self.progress.add_class("tb-progress")
        self.progress_label = w.HTML("")
        self.pending = bar([self.pending_label, self.progress, self.progress_label])
        self.preview_note = w.HTML("")
        self.content = _classed(w.HTML(""), "tb-result-content")
        self.file_info = w.HTML("")
        self.previous = _classed(w.Button(description="◀", tooltip="previous page", layout=_px(40)), "tb-file-prev")
        self.next = _classed(w.Button(description="▶", tooltip="next page", layout=_px(40)), "tb-file-next")
        self.page = _classed(w.BoundedIntText(value=1, min=1, max=1, description="page", layout=_px(150)),
                             "tb-file-page-input")
        # Widths held whether they are filled or not: the bars keep their rows as the labels change.
        self.page_label = _classed(w.HTML("", layout=w.Layout(min_width="250px")), "tb-file-page")
        self.line = _classed(w.IntText(value=0, description="go to line", layout=_px(190)), "tb-file-line")
        self.search = _classed(w.Text(placeholder="search the file", continuous_update=False, layout=_px(220)),
                               "tb-file-search")
        self.hits = w.HTML("", layout=w.Layout(min_width="120px"))
        self.hit_prev = _classed(w.Button(description="▲ hit", tooltip="previous hit", layout=_px(64)),
                                 "tb-file-hit-prev")
        self.hit_next = _classed(w.Button(description="▼ hit", tooltip="next hit", layout=_px(64)),
                                 "tb-file-hit-next")
        self.file = _classed(_classed(FileView(), "tb-result-file"), "tb-file-view")
        self.file_box = w.VBox([bar([self.previous, self.page, self.next, self.page_label, self.line]),
                                bar([self.search, self.hit_prev, self.hit_next, self.hits]), self.file])
        self.attachments = w.VBox([])
        self.protocol = w.Dropdown(options=names(), value=names()[0], description="provider",
                                   layout=_px(260))
        self.provider_json = w.HTML("")
        self.attachment_box = w.HBox(
            [_column([w.HTML("<b>Attachments</b>"), self.attachments]),
             _column([w.HTML("<b>What each provider would receive</b>"), bar([self.protocol]),
                      scroll([self.provider_json], size="tb-short")])], layout=w.Layout(flex_flow="row wrap"))
        self.structured = _classed(w.HTML(""), "tb-result-structured")
        self.structured_box = w.Accordion(children=[scroll([self.structured])],
                                          titles=("structured (kept for records, never sent to the model)",))
        reads = _classed(scroll([self.content]), "tb-result-reads")
        columns = _classed(w.HBox([_column([w.HTML("<b>What the model reads</b>"), self.preview_note, reads]),
                                   _column([w.HTML("<b>The <code>tool-results/</code> file</b>"), self.file_info,
                                            self.file_box])], layout=w.Layout(flex_flow="row wrap")),
                           "tb-result-columns")
        self._text: fv.FileText | None = None  # the file's lines, or an inline result's
        self._loaded: tuple[Path, int, int] | None = None  # (file, size, mtime) of `_text`
        self._folded: str | None = None
        self._preview: fv.PreviewEnd | None = None
        self._found = fv.Hits()
        self._hit: int | None = None
        self._marked: int | None = None
        self._syncing = False
        self.shown = w.VBox([self.header, columns, self.attachment_box, self.structured_box])
        super().__init__(state, [self.pending, self.shown])
        self._wire()
        self.refresh()
        self.show_pending()

    def _wire(self) -> None:
        self.on_state("result", self.refresh)
        self.on_state("busy", self.show_pending)
        self.on_state("progress", self.show_pending)
        self.on_click(self.previous, lambda: self.go_to_page(self.page.value - 1))
        self.on_click(self.next, lambda: self.go_to_page(self.page.value + 1))
        self.on_change(self.page, lambda _v: None if self._syncing else self._draw_file(self._page_start()))
        self.on_change(self.file, lambda _v: self._follow_scroll(), name="top_row")
        self.on_change(self.line, self.go_to_line)
        self.on_change(self.search, self.find)
        self.on_click(self.hit_next, lambda: self.step_hit(1))
        self.on_click(self.hit_prev, lambda: self.step_hit(-1))
        self.on_change(self.protocol, lambda _v: self._draw_provider())

    # acting -------------------------------------------------------------------------------
    def go_to_page(self, number: int) -> None:
        self.page.value = min(max(number, self.page.min), self.page.max)

    def go_to_line(self, line: int) -> None:
        """Show the page holding `line` and mark it (0 clears the mark)."""
        if self._syncing or self._text is None:
            return
        total = len(self._text.lines)
        self._marked = min(max(line, 1), total) if line > 0 and total else None
        self._show(self._marked)

    def find(self, query: str) -> None:
        if self._syncing or self._text is None:
            return
        if query and self._folded is None:
            self._folded = fv.fold(self._text.lines)  # once per file: later searches reuse it
        self._found = fv.search_in(self._folded or "", query)
        self._hit = 0 if self._found.lines else None
        self._show(self._found.lines[0] if self._found.lines else None)

    def step_hit(self, step: int) -> None:
        if self._hit is None:
            return
        self._hit = (self._hit + step) % len(self._found.lines)
        self._show(self._found.lines[self._hit])

    # views --------------------------------------------------------------------------------
    def refresh(self) -> None:
        record = self.state.record
        result = record.result if record is not None else None
        self.header.value = _header(record)
        self.content.value = pre(result.content) if result is not None else ""
        self.structured.value = pre(_structured_text(result)) if result is not None else ""
        self._load_file(result)
        self._syncing = True
        try:  # reset the controls without each redrawing the page
            self.search.value, self.line.value = "", 0
            self.page.max = fv.page_count(len(self._text.lines)) if self._text else 1
            self.page.value = 1
        finally:
            self._syncing = False
        self._found, self._hit, self._marked = fv.Hits(), None, None
        self._draw_file(1)
        self._draw_attachments(result)

    def show_pending(self) -> None:
        pending, progress = self.state.pending, self.state.progress
        # Hidden, not removed: its row keeps its height, so the result does not jump at each call.
        self.pending.layout.visibility = "visible" if pending is not None else "hidden"
        # The result below is the previous call's while one runs: dimmed, so nobody reads it as the new one.
        (self.shown.add_class if pending is not None else self.shown.remove_class)("tb-stale")
        if pending is None:
            return
        self.pending_label.value = (f"calling <code>{html.escape(pending.call_name)}</code> … "
                                    f"{pending.elapsed:.1f} s")
        self.progress.layout.display = "" if progress is not None else "none"
        if progress is None:
            self.progress_label.value = ""
            return
        fraction = progress.fraction
        self.progress.value = 1.0 if fraction is None else fraction
        self.progress.bar_style = "info" if fraction is None else ""
        if fraction is None:
            self.progress.add_class("tb-progress-indeterminate")
        else:
            self.progress.remove_class("tb-progress-indeterminate")
        amount = f"{progress.progress:g}" + (f" of {progress.total:g}" if progress.total else " (no total)")
        self.progress_label.value = html.escape(" · ".join(p for p in (progress.message or "", amount) if p))

    def _load_file(self, result: ToolResult | None) -> None:
        """Read the result's file once (again only when it changed on disk); an inline result's
        text is shown in the file view instead, with why it has no file."""
        path = _file_path(self.state.record)
        self._preview = None
        if path is None:
            self._loaded, self._folded = None, None
            self._text = fv.FileText(fv.split_lines(result.content), len(result.content)) if result else None
            self.file_info.value = _inline_note(self.state.record, self.state.bench.profile)
            return
        root = self.state.bench.workspace
        full = root / path
        try:
            stat = full.stat()
            key = (full, stat.st_size, stat.st_mtime_ns)
            if key != self._loaded:
                self._text, self._loaded, self._folded = fv.load_file(root, path), key, None
        except OSError as exc:
            self._text, self._loaded, self._folded = None, None, None
            why = "is missing" if isinstance(exc, FileNotFoundError) else f"cannot be read ({exc.strerror or exc})"
            self.file_info.value = (f"<div class='tb-error-line'>the file <code>{html.escape(path)}</code> "
                                    f"{why}</div>")
            return
        text = self._text
        assert text is not None
        cut = (f" · only its first {fv.MAX_FILE_BYTES // 2**20} MiB are shown" if text.cut else "")
        self.file_info.value = (f"<code>{html.escape(path)}</code> "
                                + _muted(f"{text.size:,} bytes · {len(text.lines):,} lines{cut}"))
        self._preview = fv.preview_end(result.content, text.lines) if result is not None else None

    def _page_start(self) -> tuple[int, str]:
        return fv.page_of(len(self._text.lines) if self._text else 0, self.page.value).first, "start"

    def _show(self, line: int | None) -> None:
        """Scroll to `line` (mark or hit) on its page; None redraws where the view is."""
        if line is None:
            self._draw_file()
            return
        self._syncing = True
        try:  # the page follows the line; the line, not the page's top, is scrolled to
            self.page.value = min(max(fv.page_of_line(line), 1), self.page.max)
        finally:
            self._syncing = False
        self._draw_file((line, "center"))

    def _follow_scroll(self) -> None:
        """The person scrolled: the page label follows the rows in view (the view stays put)."""
        if self._text is None or not self._text.lines:
            return
        top = self.file.rows.line_of(self.file.top_row)
        bottom = top + max(self.file.shown, 1) - 1
        page = fv.page_of(len(self._text.lines), self.page.value)
        if page.last < top or page.first > bottom:  # the page on show is out of view: show where the person is
            self._syncing = True
            try:
                self.page.value = fv.page_of_line(top)
            finally:
                self._syncing = False
            self._draw_labels(fv.page_of(len(self._text.lines), self.page.value))

    @property
    def file_html(self) -> str:
        """The rows of the page on show, as the file view draws them (for reading in Python)."""
        text = self.file.rows.lines
        return self.file.rows.page_html(fv.page_of(len(text), self.page.value)) if text else ""

    def _draw_file(self, scroll_to: tuple[int, str] | int | None = None) -> None:
        text = self._text
        self.file_box.layout.display = "" if text is not None else "none"
        self.preview_note.value = _preview_note(self._preview, text) if self._loaded and text is not None else ""
        if text is None:
            self.file.show(fv.Rows())
            return
        current = self._found.lines[self._hit] if self._hit is not None else None
        self.file.show(fv.Rows(text.lines, self._preview, self.search.value, frozenset(self._found.lines), current,
                               self._marked))
        if isinstance(scroll_to, int):
            self.file.scroll_to(scroll_to, align="start")
        elif scroll_to is not None:
            self.file.scroll_to(scroll_to[0], align=scroll_to[1])
        self._draw_labels(fv.page_of(len(text.lines), self.page.value))

    def _draw_labels(self, page: fv.Page) -> None:
        self.page_label.value = fv.page_label(page)
        self.hits.value = fv.hits_label(self._found, self._hit) if self.search.value else ""
        closed = self.state.closed
        self.previous.disabled = closed or page.number <= 1
        self.next.disabled = closed or page.number >= page.pages
        self.hit_prev.disabled = self.hit_next.disabled = closed or self._hit is None

    def _draw_attachments(self, result: ToolResult | None) -> None:
        refs = result.attachments if result is not None else ()
        self.attachment_box.layout.display = "" if refs else "none"
        self.attachments.children = [self._attachment(ref) for ref in refs]
        self._draw_provider()

    def _attachment(self, ref: AttachmentRef) -> w.Widget:
        data, why = self._read(ref) if ref.kind in ("image", "audio") else (None, "")
        size = pixel_size(ref.mime_type, data) if data is not None and ref.kind == "image" else None
        pixels = f"{size[0]:,}×{size[1]:,} px · " if size else ""
        caption = w.HTML(_muted(f"{html.escape(ref.kind)} · {html.escape(ref.mime_type)} · {pixels}{ref.size:,} "
                                f"bytes · <code>{html.escape(ref.path)}</code>"))
        shown: list[w.Widget] = [caption]
        if ref.kind in ("image", "audio"):
            if data is None:
                shown.append(w.HTML(f"<div class='tb-error-line'>{html.escape(why)}</div>"))
            elif ref.kind == "image":
                # At its own size, never blown up (a 1x1 stays one pixel); a big one shrinks to fit.
                shown.append(w.Image(value=data, format=ref.mime_type.split("/", 1)[1].split(";")[0],
                                     layout=w.Layout(max_width="100%", max_height="320px", object_fit="contain",
                                                     align_self="flex-start", width="auto", height="auto")))
            else:
                shown.append(w.Audio(value=data, format=ref.mime_type.split("/", 1)[1].split(";")[0],
                                     autoplay=False, controls=True))
        return _classed(w.VBox(shown), "tb-result-attachment")

    def _read(self, ref: AttachmentRef) -> tuple[bytes | None, str]:
        try:
            data = fv.read_in_workspace(self.state.bench.workspace, ref.path, MAX_ATTACHMENT_BYTES)
        except OSError as exc:
            return None, f"the file {ref.path} cannot be shown ({exc.strerror or exc})"
        if len(data) > MAX_ATTACHMENT_BYTES:
            return None, f"too large to show here (over {MAX_ATTACHMENT_BYTES // 2**20} MiB)"
        return data, ""

    def _draw_provider(self) -> None:
        record = self.state.record
        if record is None or not record.result.attachments:
            self.provider_json.value = ""
            return
        protocol = self.protocol.value
        try:
            element = self._owner(record).render_result(record.result, protocol)
        except ToolbenchError as exc:  # a record the invocation cannot render: say so here
            self.provider_json.value = f"<div class='tb-error-line'><code>{exc.code}</code> {html.escape(exc.message)}"
            return
        self.provider_json.value = pre(json.dumps(abridge(element, KEEP_B64), indent=2, ensure_ascii=False))
        # With attachments the text a model reads is the provider's: the content and its `## Attachments` list.
        text = decode_result(protocol, element).content
        self.content.value = (_muted(f"as <code>{html.escape(protocol)}</code> sends it (pick the provider "
                                     "below); the attachments it takes are beside") + pre(text))

    def _owner(self, record: CallRecord) -> Invocation:
        """The invocation that made `record` (the current one when none of this app's did)."""
        for inv in self.state.invocations:
            if any(r is record for r in inv.records):
                return inv
        return self.state.invocation


def _classed(widget: w.Widget, css: str) -> w.Widget:
    widget.add_class(css)
    return widget


def _px(width: int) -> w.Layout:
    return w.Layout(width=f"{width}px")


def _column(children: list[w.Widget]) -> w.VBox:
    # Two columns side by side that wrap to one under ~640 px; min_width 0 lets long text wrap.
    return w.VBox(children, layout=w.Layout(flex="1 1 320px", min_width="0", padding="0 4px"))


def _file_path(record: CallRecord | None) -> str | None:
    """The `tool-results/` file of an externalised record; None for any other (a tool's own
    structured data may say `externalized` and name any path: only the runtime's flag counts)."""
    structured = record.result.structured if record is not None and record.externalized else None
    path = structured.get("path") if isinstance(structured, dict) else None
    if not isinstance(path, str):
        return None
    parts = PurePosixPath(path).parts
    return path if parts[:1] == ("tool-results",) and ".." not in parts else None


def _inline_note(record: CallRecord | None, profile: Any) -> str:
    """Why a result has no `tool-results/` file, said where the file would be shown."""
    if record is None:
        return ""
    size, settings = len(record.result.content), profile.tools
    limit = settings.external_result_inline_char_limit
    if (record.result.tool_id or "").startswith("builtin:") and not settings.project_builtin_results:
        why = (f"a builtin tool's result is never written to a file, as upstream: the model reads all {size:,} "
               f"characters (the inline limit of {limit:,} is for MCP and extension tools; the profile's "
               "<code>projectBuiltinResults</code> moves long builtin results to files too)")
    elif size <= limit:
        why = f"{size:,} characters, within the inline limit of {limit:,}: the model reads all of it"
    else:
        why = f"{size:,} characters, kept inline: the call was refused before it ran, or the bench was closed"
    return _muted(f"inline result, no <code>tool-results/</code> file: {why}. Its text is shown here to page "
                  "and search.")


def _preview_note(preview: fv.PreviewEnd | None, text: fv.FileText) -> str:
    if preview is None:
        return _muted("the content holds no preview of the file")
    part = f" (line {preview.line:,} only in part)" if preview.partial else ""
    return _muted(f"the preview is lines 1–{preview.line:,} of the file's {len(text.lines):,} lines{part}; "
                  "the rest reaches the model only if it reads the file")


def _structured_text(result: ToolResult) -> str:
    text = pretty(result.structured)
    if len(text) > MAX_STRUCTURED_CHARS:
        return text[:MAX_STRUCTURED_CHARS] + f"\n… ({len(text) - MAX_STRUCTURED_CHARS:,} more characters)"
    return text


def _header(record: CallRecord | None) -> str:
    if record is None:
        return "<b>Result</b> " + _muted("(no call yet)")
    result = record.result
    who = (f"<code>{html.escape(result.call_id)}</code> · <b>{html.escape(record.call_name)}</b> · "
           f"<code>{html.escape(result.tool_id or '(no tool)')}</code> · {record.elapsed_ms:,.1f} ms")
    if result.is_error:
        return (f"<div class='tb-result-error'>error <b><code>{html.escape(result.error_code or '')}</code></b>"
                f" · {who}</div>")
    return f"<div><span class='tb-ok-line'><b>ok</b></span> · {who}</div>"
