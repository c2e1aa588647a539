from __future__ import annotations

from widget_support import call

from toolbench.widgets.result import PAGE_LINES, page_of, search_in


def test_a_long_result_shows_the_notice_and_the_full_file(app):
    call(app, "long_report", '{"lines": 2000}')
    result = app.state.invocation.records[-1].result
    path = result.structured["path"]
    assert result.structured["externalized"] is True
    assert "too large to include in full" in app.result.content.value
    assert path in app.result.content.value
    assert path in app.result.file_info.value
    assert "line 00001: the quick brown fox jumps" in app.result.file.value
    assert f"lines 1–{PAGE_LINES} of 2000" in app.result.file_info.value


def test_the_file_view_pages_and_searches(app):
    call(app, "long_report", '{"lines": 2000}')
    viewer = app.result
    viewer.next.click()
    assert "line 00201:" in viewer.file.value and "line 00001:" not in viewer.file.value
    viewer.page.value = viewer.page.max
    assert "line 02000:" in viewer.file.value
    viewer.search.value = "01999"
    assert "line 01999:" in viewer.file.value and "line 00201:" not in viewer.file.value
    assert "1 matching lines of 2000" in viewer.file_info.value


def test_an_inline_result_has_no_file(app):
    call(app, "weather", '{"city": "Oslo"}')
    assert "inline result" in app.result.file_info.value
    assert app.result.file.value == ""
    assert "Oslo" in app.result.structured.value


def test_an_extension_failure_shows_its_code(app):
    call(app, "fail", "{}")
    code = app.state.invocation.records[-1].result.error_code
    assert code and code.startswith("extension.")
    assert code in app.result.header.value


def test_paging_helpers_number_lines_from_one():
    lines = [f"l{i}" for i in range(1, 6)]
    view = page_of(lines, 2, size=2)
    assert (view.first, view.last, view.total) == (3, 4, 5)
    assert view.text.split("\n")[0].split() == ["3", "l3"]
    assert page_of(lines, 99, size=2).first == 5  # clamped to the last page
    assert search_in(lines, "L5").matches == 1
