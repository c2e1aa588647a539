"""The file view's kernel side: rows (with the preview's separator), what it answers when the
browser asks for rows, and where it asks the browser to scroll. The browser side is driven in
tests/browser (the marked line's box inside the scroll box's visible area)."""

from __future__ import annotations

from typing import Any

from toolbench import Workbench
from toolbench.widgets import WorkbenchState
from toolbench.widgets import _file_view as fv
from toolbench.widgets._file_widget import MAX_ROWS_PER_MESSAGE, FileView
from toolbench.widgets.result import ResultViewer

LINES = tuple(f"line {n}" for n in range(1, 11))


def sent(view: FileView) -> list[Any]:
    out: list[Any] = []
    view.send = out.append  # type: ignore[method-assign]  # what would reach the browser
    return out


def test_the_preview_end_is_a_row_of_its_own_and_lines_map_around_it() -> None:
    rows = fv.Rows(LINES, fv.PreviewEnd(4, partial=False))
    assert rows.count == 11
    assert [rows.row_of(n) for n in (1, 4, 5, 10)] == [0, 3, 5, 10]
    assert [rows.line_of(r) for r in (0, 3, 4, 5, 10)] == [1, 4, 4, 5, 10]
    html = rows.html(3, 6)
    assert "line 4" in html[0] and "tb-preview-end" in html[1] and "line 5" in html[2]
    assert fv.Rows(()).count == 0 and fv.Rows((), fv.PreviewEnd(1, False)).count == 0


def test_a_very_long_line_is_drawn_in_part_and_says_how_much_is_left() -> None:
    rows = fv.Rows(("x" * (fv.MAX_ROW_CHARS + 1234),))
    (row,) = rows.html(0, 1)
    assert row.count("x") == fv.MAX_ROW_CHARS and "1,234 more characters" in row


def test_the_browser_gets_the_rows_it_asks_for_and_nothing_for_an_old_version() -> None:
    view = FileView()
    out = sent(view)
    view.show(fv.Rows(tuple(f"l{n}" for n in range(1, 5001))))
    view._on_message(view, {"kind": "want", "version": view.version, "first": 4000, "last": 4003}, [])
    assert out[-1]["first"] == 4000 and [h.split("</span>  ")[1] for h in out[-1]["html"]] == ["l4001", "l4002",
                                                                                             "l4003"]
    view._on_message(view, {"kind": "want", "version": view.version - 1, "first": 0, "last": 3}, [])
    view._on_message(view, {"kind": "want", "version": view.version, "first": "0", "last": None}, [])
    view._on_message(view, "not a dict", [])
    assert len(out) == 1  # stale or malformed asks get no answer (the browser asks again)
    view._on_message(view, {"kind": "want", "version": view.version, "first": -5, "last": 10**9}, [])
    assert out[-1]["first"] == 0 and len(out[-1]["html"]) == MAX_ROWS_PER_MESSAGE  # bounded, whatever is asked


def test_a_new_text_is_a_new_version_and_each_scroll_is_a_new_focus() -> None:
    view = FileView()
    view.show(fv.Rows(LINES))
    before = view.version
    view.show(fv.Rows(LINES, query="line"))
    assert view.version == before + 1 and view.count == 10
    view.scroll_to(7)
    first = view.focus
    view.scroll_to(7)
    assert first["row"] == view.focus["row"] == 6 and view.focus["seq"] > first["seq"]  # scrolls again


def long_viewer(bench: Workbench) -> ResultViewer:
    viewer = ResultViewer(WorkbenchState(bench, bench.invocation("chat", id="inv_fv")))
    viewer.state.call("long_report", {"lines": 3000})
    return viewer


def test_go_to_line_and_a_search_hit_scroll_the_view_to_their_line(bench: Workbench) -> None:
    viewer = long_viewer(bench)
    rows = viewer.file.rows
    viewer.line.value = 2750
    assert viewer.file.focus["row"] == rows.row_of(2750) and viewer.file.focus["align"] == "center"
    assert viewer.page.value == 14 and rows.marked is None  # the old rows; the new ones mark it
    assert viewer.file.rows.marked == 2750
    viewer.search.value = "line 02999"
    assert viewer.file.focus["row"] == viewer.file.rows.row_of(2999) and viewer.file.rows.current == 2999
    viewer.next.click()  # past the last page: stays
    viewer.previous.click()
    assert viewer.file.focus == {"row": viewer.file.rows.row_of(2601), "align": "start",
                                 "seq": viewer.file.focus["seq"]}


def test_scrolling_by_hand_moves_the_page_label_not_the_view(bench: Workbench) -> None:
    viewer = long_viewer(bench)
    focus = viewer.file.focus
    viewer.file.top_row, viewer.file.shown = viewer.file.rows.row_of(1234), 24  # as the browser reports it
    assert viewer.page.value == 7 and viewer.page_label.value.startswith("page 7 of 15")
    assert viewer.file.focus == focus  # the person's scroll is not undone
    viewer.file.top_row = viewer.file.rows.row_of(1250)  # page 7 still in view: the label stays
    assert viewer.page.value == 7


def test_a_big_builtin_result_says_why_it_is_inline_and_pages_like_a_file(bench: Workbench) -> None:
    (bench.workspace / "work").mkdir(exist_ok=True)
    (bench.workspace / "work" / "big.txt").write_text("".join(f"row {n:05}\n" for n in range(1, 8001)))
    viewer = ResultViewer(WorkbenchState(bench, bench.invocation("chat", id="inv_big")))
    viewer.state.call("workspace_read_file", {"path": "work/big.txt", "line_count": 8000})
    record = viewer.state.record
    assert record is not None and not record.result.is_error and not record.externalized
    assert len(record.result.content) > 50_000
    assert "a builtin tool's result is never written to a file" in viewer.file_info.value
    assert "projectBuiltinResults" in viewer.file_info.value
    viewer.search.value = "row 07777"
    assert viewer.hits.value == "1 of 1 hit" and viewer.file.rows.current is not None
