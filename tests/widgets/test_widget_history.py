"""HistoryTable: newest first, selection and detail, re-run, copy, export, earlier invocations."""

from __future__ import annotations

import base64
import html
import json
import re
from pathlib import Path
from typing import Any

import pandas
import pytest

from toolbench import ToolbenchError, Workbench
from toolbench.core.arguments import ToolArguments
from toolbench.core.results import ToolResult
from toolbench.examples.demo_mcp import build_server
from toolbench.runtime.records import CallRecord
from toolbench.widgets import HistoryTable, WorkbenchState
from toolbench.widgets._calls_text import json_call, python_call

MALFORMED = '{"formula":'


@pytest.fixture
def state(bench: Workbench) -> WorkbenchState:
    return WorkbenchState(bench, bench.invocation("chat", id="inv_x"))


@pytest.fixture
def table(state: WorkbenchState) -> HistoryTable:
    return HistoryTable(state)


def text_of(widget: Any) -> str:
    return html.unescape(widget.value)


def titles(table: HistoryTable, index: int) -> list[str]:
    return [html.unescape(t) for t in re.findall(r'title="([^"]*)"', table.rows[index].cells.value)]


def test_rows_are_newest_first(state: WorkbenchState, table: HistoryTable) -> None:
    for formula in ("d4", "d6", "d8"):
        state.submit("dice_roll", {"formula": formula})
    records = state.invocation.records
    assert [row.record for row in table.rows] == records[::-1]
    assert len(table.row_buttons) == 3
    assert all("tb-history-row" in b._dom_classes for b in table.row_buttons)
    table.row_buttons[0].click()
    assert state.record is records[-1]


def test_the_selected_row_is_highlighted_and_the_detail_shows_the_full_call(
        state: WorkbenchState, table: HistoryTable) -> None:
    state.submit("dice_roll", {"formula": "3d6+4"})
    state.submit("dice_roll", MALFORMED)
    first, _malformed = state.invocation.records
    buttons = list(table.row_buttons)
    table.row_buttons[1].click()
    assert state.record is first
    assert table.row_buttons == buttons  # a selection does not redraw the rows
    assert "tb-selected" in table.rows[1].button._dom_classes and "tb-selected" in table.rows[1].cells._dom_classes
    assert "tb-selected" not in table.rows[0].button._dom_classes
    request, result = text_of(table.request_view), text_of(table.result_view)
    assert "dice_roll" in request and '"formula": "3d6+4"' in request and "valid JSON" in request
    assert first.result.content in result
    table.row_buttons[0].click()
    assert MALFORMED in text_of(table.request_view) and "not a JSON object" in text_of(table.request_view)
    assert "tool.invalid_arguments" in text_of(table.result_view)
    assert "tb-selected" not in table.rows[1].button._dom_classes
    state.select(first)  # chosen elsewhere (the result viewer, a cell): the highlight follows
    assert "tb-selected" in table.rows[1].button._dom_classes
    assert "tb-selected" not in table.rows[0].button._dom_classes


def test_error_statuses_are_in_the_error_colour(state: WorkbenchState, table: HistoryTable) -> None:
    state.submit("dice_roll", MALFORMED)
    assert "tb-status-error" in table.rows[0].cells.value and "var(--jp-error-color1)" in table.rows[0].cells.value
    assert "tool.invalid_arguments" in titles(table, 0)


def test_long_mcp_call_names_keep_their_full_text_in_the_tooltip(bench: Workbench) -> None:
    bench.mcp.add("demo", server=build_server())
    bench.enable("mcp/demo:issue.create")
    state = WorkbenchState(bench, bench.invocation("chat", id="inv_mcp"))
    table = HistoryTable(state)
    long_title = "a title long enough to be shortened in its cell " * 4
    state.submit("mcp__demo__issue_create", {"title": long_title})
    cell_titles = titles(table, 0)
    assert "mcp__demo__issue_create" in cell_titles and "mcp/demo:issue.create" in cell_titles
    [arguments] = [t for t in cell_titles if t.startswith("{")]
    assert json.loads(arguments) == {"title": long_title}  # the whole value, though the cell shows less
    assert "…" in table.rows[0].cells.value


def test_rerun_sends_the_same_call_again_even_a_malformed_one(state: WorkbenchState, table: HistoryTable) -> None:
    state.submit("dice_roll", {"formula": "d20"})
    state.submit("dice_roll", MALFORMED)
    table.row_buttons[0].click()
    table.rerun.click()
    again = state.invocation.records[-1]
    assert len(state.invocation.records) == 3 and again.call_name == "dice_roll"
    assert not again.arguments.is_valid and again.arguments.raw == MALFORMED
    assert again.result.error_code == "tool.invalid_arguments"
    assert table.rows[0].record is again and state.record is again
    table.row_buttons[2].click()
    table.rerun.click()
    assert state.invocation.records[-1].arguments.value == {"formula": "d20"}


def test_actions_without_a_selection_say_so(table: HistoryTable) -> None:
    assert table.rerun.disabled and table.copy.disabled
    table.rerun.click()
    assert table.error_code == "bench.misuse" and "no call is selected" in table.error_view.value


def test_an_earlier_invocation_can_be_shown_and_rerun_in_the_current_one(
        state: WorkbenchState, table: HistoryTable) -> None:
    state.submit("dice_roll", {"formula": "2d6"})
    state.submit("weather", {"city": "Oslo"})
    old = state.invocation
    state.new_invocation("chat", why="profile `strict` applied")
    current = state.invocation
    assert "profile `strict` applied" in text_of(table.notice) and old.id in text_of(table.notice)
    assert [value for _label, value in table.chooser.options] == [current.id, old.id]
    assert "2 calls" in table.chooser.options[1][0] and "(current)" in table.chooser.options[0][0]
    assert table.chooser.value == current.id and table.row_buttons == []
    table.chooser.value = old.id
    assert [row.record for row in table.rows] == old.records[::-1]
    assert "an earlier invocation" in table.count.value
    table.row_buttons[1].click()
    assert state.record is old.records[0]
    table.rerun.click()
    assert len(old.records) == 2  # the earlier one is read-only
    [again] = current.records
    assert (again.call_name, again.arguments.value) == ("dice_roll", {"formula": "2d6"})
    assert table.chooser.value == old.id and len(table.rows) == 2  # the view stays where the user put it
    assert "1 call (current)" in table.chooser.options[0][0]
    table.chooser.value = current.id
    assert [row.record for row in table.rows] == [again]


class FakeInv:
    """What a pasted `inv.call(...)` line reaches: it keeps the call."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def call(self, call_name: str, arguments: Any) -> None:
        self.calls.append((call_name, arguments))


def record_of(call_name: str, wire: Any) -> CallRecord:
    return CallRecord(round=1, call_id="call_0001", call_name=call_name, tool_id=None,
                      arguments=ToolArguments.decode(wire), result=ToolResult(call_id="call_0001", content="x"),
                      elapsed_ms=1.0, externalized=False)


CASES = [
    ("dice_roll", {"formula": "3d6+4"}),
    ("dice_roll", MALFORMED),
    ("weather", {"city": "Zürich ☃ 😀 東京", "note": "\u2028 line\nbreak\ttab"}),
    ("weather", {"q": "it's \"quoted\"", "path": "C:\\temp\\new", "both": "'\"\\"}),
    ("mcp__demo__issue_create", '{"title": "it\'s \\"broken', ),
    ("we\"ird'name\\", "not json at all: \\ ' \" 😀"),
    ("dice_roll", "[1, 2]"),
]


@pytest.mark.parametrize(("call_name", "wire"), CASES)
def test_the_copied_python_line_makes_the_same_call(call_name: str, wire: Any) -> None:
    record = record_of(call_name, wire)
    line = python_call(record)
    inv = FakeInv()
    exec(line, {"inv": inv})
    [(name, arguments)] = inv.calls
    assert name == call_name and isinstance(arguments, str)
    assert ToolArguments.decode(arguments) == record.arguments
    if not record.arguments.is_valid:
        assert arguments == record.arguments.raw  # verbatim


@pytest.mark.parametrize(("call_name", "wire"), CASES)
def test_the_copied_json_names_the_call(call_name: str, wire: Any) -> None:
    record = record_of(call_name, wire)
    data = json.loads(json_call(record))
    assert data == {"call_name": call_name, "arguments": record.arguments.to_json(), "call_id": "call_0001"}


def test_copy_buttons_show_the_text_and_keep_it(state: WorkbenchState, table: HistoryTable) -> None:
    state.submit("dice_roll", MALFORMED)
    [record] = state.invocation.records
    table.row_buttons[0].click()
    table.copy.click()
    assert table.copied == python_call(record) == "inv.call(\"dice_roll\", '{\"formula\":')"
    assert table.copy_text.value == table.copied and "tb-copy-text" in table.copy_text._dom_classes
    assert "Ctrl+C" in table.copy_hint.value
    table.copy_text.value = "edited"  # read-only: the copied text comes back
    assert table.copy_text.value == table.copied
    table.copy_json.click()
    assert json.loads(table.copied) == {"call_name": "dice_roll", "arguments": MALFORMED,
                                        "call_id": record.call_id}


def test_a_copy_in_the_page_goes_to_the_clipboard_and_a_refusal_says_why(state: WorkbenchState,
                                                                          table: HistoryTable) -> None:
    assert table.copy.text == "" and table.copy.disabled  # nothing selected: nothing to copy
    state.submit("dice_roll", {"formula": "d4"})
    [record] = state.invocation.records
    table.row_buttons[0].click()
    assert table.copy.text == python_call(record) and json.loads(table.copy_json.text)["call_id"] == record.call_id
    table.copy._from_page(table.copy, {"kind": "copied"}, [])  # what the page sends after writeText
    assert "copied to your clipboard" in table.copy_hint.value and table.copied == python_call(record)
    table.copy_json._from_page(table.copy_json, {"kind": "refused", "why": "Document is not focused."}, [])
    assert "refused the clipboard (Document is not focused.)" in table.copy_hint.value
    assert table.copy_text.value == json_call(record)  # the way to copy it by hand
    assert table.error_code is None


def test_export_writes_csv_and_json_with_every_row(bench: Workbench, state: WorkbenchState,
                                                   table: HistoryTable) -> None:
    state.submit("dice_roll", {"formula": "d4"})
    state.submit("dice_roll", MALFORMED)
    state.submit("weather", {"city": "Zürich, \"CH\""})
    table.export_csv.click()
    csv_path = bench.workspace / ".toolbench" / "exports" / "history-inv_x.csv"
    frame = pandas.read_csv(csv_path)
    assert len(frame) == 3 and list(frame["call_name"]) == ["dice_roll", "dice_roll", "weather"]
    assert ".toolbench/exports/history-inv_x.csv" in table.exported_view.value
    [encoded] = re.findall(r"data:text/csv;base64,([A-Za-z0-9+/=]+)", table.exported_view.value)
    assert base64.b64decode(encoded) == csv_path.read_bytes()
    table.export_json.click()
    json_path = bench.workspace / ".toolbench" / "exports" / "history-inv_x.json"
    assert len(pandas.read_json(json_path)) == 3
    assert json.loads(json_path.read_text(encoding="utf-8"))[1]["arguments"] == MALFORMED
    assert 'download="history-inv_x.json"' in table.exported_view.value
    assert table.exported == [".toolbench/exports/history-inv_x.csv", ".toolbench/exports/history-inv_x.json"]
    # Not where the model looks: its search over the whole workspace does not find the export.
    found = state.invocation.call("workspace_search_files", {"query": "call_name"})
    assert "exports" not in found.content and "history-inv_x" not in found.content, found.content


def test_a_long_history_draws_the_newest_500_rows(state: WorkbenchState, table: HistoryTable) -> None:
    inv = state.invocation
    for _ in range(599):
        inv.call("dice_roll", {"formula": "d4"})  # from a cell: no event, no redraw
    state.submit("dice_roll", {"formula": "d6"})
    records = inv.records
    assert len(table.row_buttons) == 500
    assert table.rows[0].record is records[-1] and table.rows[-1].record is records[100]
    assert "500 of 600 shown; export for all" in table.count.value
    kept = table.row_buttons[0]
    state.submit("dice_roll", {"formula": "d8"})
    assert len(table.row_buttons) == 500 and table.row_buttons[1] is kept  # new rows go on top
    assert table.rows[0].record is inv.records[-1]
    assert "500 of 601 shown" in table.count.value


def test_an_export_is_written_whole_and_never_through_a_planted_link(bench: Workbench, tmp_path: Path) -> None:
    outside = tmp_path / "outside.csv"
    outside.write_text("the person's own file\n")
    folder = bench.workspace / ".toolbench" / "exports"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "history-x.csv").symlink_to(outside)  # a hostile workspace
    assert bench.export_file("history-x.csv", b"a,b\n") == ".toolbench/exports/history-x.csv"
    assert outside.read_text() == "the person's own file\n"  # replaced the link, not followed it
    assert (folder / "history-x.csv").read_bytes() == b"a,b\n" and not (folder / "history-x.csv").is_symlink()
    for bad in ("../out.csv", "a/b.csv", "", ".hidden"):
        with pytest.raises(ToolbenchError) as refused:
            bench.export_file(bad, b"x")
        assert refused.value.code == "bench.misuse"


def test_a_redraw_gives_the_row_widgets_new_records_and_closes_none(
        state: WorkbenchState, table: HistoryTable, monkeypatch: pytest.MonkeyPatch) -> None:
    """The front end applies a box's `children` updates one after another; one naming a widget
    closed meanwhile fails ("widget model not found") and every later update of that box is
    dropped: the rows never show again. So a redraw reuses the row widgets it drew, never
    closes them, and the widgets stay bounded by the rows shown."""
    import ipywidgets as w

    closed: list[str] = []
    real_close = w.Widget.close

    def close(widget: w.Widget) -> None:
        if widget.comm is not None:  # not closed already (a collected widget closes itself too)
            closed.append(widget.model_id)
        real_close(widget)

    monkeypatch.setattr(w.Widget, "close", close)
    for formula in ("d4", "d6", "d8"):
        state.submit("dice_roll", {"formula": formula})
    drawn = {b.model_id for b in table.row_buttons}
    old = state.invocation
    for _ in range(5):  # back and forth between two invocations: a full redraw each time
        state.new_invocation("chat", why="again")
        state.submit("dice_roll", {"formula": "d12"})
        table.chooser.value = old.id
        assert [row.record for row in table.rows] == old.records[::-1]
        table.chooser.value = state.invocation.id
    assert not closed, f"{len(closed)} widgets closed, {len(set(closed) & drawn)} of them drawn rows"
    table.chooser.value = old.id
    assert {b.model_id for b in table.row_buttons} == drawn  # the same three widgets, given the old records again
    assert len(table.rows) + len(table._spare) == 3
    table.row_buttons[2].click()
    assert state.record is old.records[0]  # a reused button selects the record it shows now
    assert "d4" in table.rows[2].cells.value and table.rows[2].button.tooltip == f"show {old.records[0].call_id}"
