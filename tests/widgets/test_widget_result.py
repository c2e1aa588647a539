from __future__ import annotations

import asyncio
import html
import json
import re
import struct
import zlib
from pathlib import Path

import anyio
import ipywidgets as w
import pytest
from mcp.server.mcpserver import Context, MCPServer

from toolbench import Attachment, ToolOutput, Workbench
from toolbench.protocols import abridge, names, pixel_size
from toolbench.widgets import WorkbenchState
from toolbench.widgets import _file_view as fv
from toolbench.widgets._state import Pending, Progress
from toolbench.widgets.result import PAGE_LINES, ResultViewer


def viewer_of(bench: Workbench) -> ResultViewer:
    return ResultViewer(WorkbenchState(bench, bench.invocation("chat", id="inv_x")))


def long_viewer(bench: Workbench) -> ResultViewer:
    viewer = viewer_of(bench)
    viewer.state.call("long_report", {"lines": 2000})
    return viewer


def shown_lines(viewer: ResultViewer) -> list[int]:
    return [int(n) for n in re.findall(r"<span class='tb-line-no'>\s*(\d+)</span>", viewer.file_html)]


def png(size: int = 16) -> bytes:
    """A small valid RGB PNG whose base64 is long enough to be shortened for display."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\0" + bytes((x * 37 + y * 11 + c * 5) % 256 for x in range(size) for c in range(3))
                    for y in range(size))
    header = struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


# the file pager ---------------------------------------------------------------------------
def test_a_long_result_pages_forward_and_back(bench: Workbench) -> None:
    viewer = long_viewer(bench)
    result = viewer.state.result
    assert result is not None and result.structured["externalized"] is True
    assert "too large to include in full" in viewer.content.value
    assert result.structured["path"] in viewer.file_info.value
    assert viewer.file_box.layout.display == ""
    assert shown_lines(viewer) == list(range(1, PAGE_LINES + 1))
    assert viewer.page_label.value == "page 1 of 10 · lines 1–200 of 2,000"
    assert viewer.previous.disabled and not viewer.next.disabled
    viewer.next.click()
    assert viewer.page.value == 2 and shown_lines(viewer)[0] == 201
    assert "line 00201: the quick brown fox jumps" in viewer.file_html
    assert "line 00001:" not in viewer.file_html
    assert not viewer.previous.disabled
    viewer.previous.click()
    assert viewer.page.value == 1 and viewer.previous.disabled
    viewer.page.value = 10  # the page box: what its arrow keys step
    assert shown_lines(viewer)[-1] == 2000 and viewer.next.disabled
    viewer.next.click()
    assert viewer.page.value == 10
    assert not viewer.error_view.value


def test_go_to_line_shows_its_page_and_marks_it(bench: Workbench) -> None:
    viewer = long_viewer(bench)
    viewer.line.value = 1500
    assert viewer.page.value == 8 and viewer.page_label.value.startswith("page 8 of 10 · lines 1,401–1,600")
    assert re.search(r"<span class='tb-line-mark tb-file-mark'>line 01500: ", viewer.file_html)
    assert viewer.file_html.count("tb-line-mark") == 1
    viewer.line.value = 99_999  # past the end: the last line
    assert viewer.page.value == 10 and "<span class='tb-line-mark tb-file-mark'>line 02000: " in viewer.file_html


def test_search_counts_hits_and_moves_between_their_pages(bench: Workbench) -> None:
    viewer = long_viewer(bench)
    viewer.next.click()
    viewer.search.value = "0100"  # lines 100 and 1000–1009
    assert viewer.hits.value == "1 of 11 hits" and viewer.page.value == 1
    assert "<span class='tb-hit-current'>line 0<mark>0100</mark>: " in viewer.file_html
    viewer.hit_next.click()
    assert viewer.hits.value == "2 of 11 hits" and viewer.page.value == 5
    assert "<span class='tb-hit-current'>line <mark>0100</mark>0: " in viewer.file_html
    assert viewer.file_html.count("<mark>") == 1  # only line 1000 of the hits is on page 5
    viewer.hit_prev.click()
    assert viewer.hits.value == "1 of 11 hits" and viewer.page.value == 1
    viewer.hit_prev.click()  # round to the last hit, line 1009
    assert viewer.hits.value == "11 of 11 hits" and viewer.page.value == 6
    viewer.search.value = "LINE 01999: THE"  # case-insensitive
    assert viewer.hits.value == "1 of 1 hit" and viewer.page.value == 10
    viewer.search.value = "no such text"
    assert viewer.hits.value == "no hits" and viewer.hit_next.disabled and viewer.hit_prev.disabled
    viewer.search.value = ""
    assert viewer.hits.value == "" and "<mark>" not in viewer.file_html


def test_the_preview_end_is_marked_on_its_page(bench: Workbench) -> None:
    viewer = long_viewer(bench)
    result = viewer.state.result
    assert result is not None
    last = result.content.rsplit("\n", 1)[-1]  # the preview ends inside line 79
    assert last.startswith("line 00079: ") and not last.endswith("jumps")
    assert "lines 1–79 of the file's 2,000 lines (line 79 only in part)" in viewer.preview_note.value
    marker = re.search(r"line 00079: [^\n]*\n<span class='tb-preview-end'>([^<]*)</span>\n[^\n]*line 00080",
                       viewer.file_html)
    assert marker and "preview ends here" in marker.group(1) and "partway through line 79" in marker.group(1)
    viewer.next.click()
    assert "tb-preview-end" not in viewer.file_html
    viewer.line.value = 79
    assert viewer.page.value == 1 and "tb-preview-end" in viewer.file_html


def test_an_inline_result_says_why_it_has_no_file_and_its_text_pages(bench: Workbench) -> None:
    viewer = long_viewer(bench)
    viewer.state.call("weather", {"city": "Oslo"})
    assert "inline result, no <code>tool-results/</code> file" in viewer.file_info.value
    assert "within the inline limit of 50,000" in viewer.file_info.value
    assert viewer.file_box.layout.display == "" and "Oslo" in viewer.file_html  # the text, to page and search
    viewer.search.value = "oslo"
    assert viewer.hits.value == "1 of 1 hit"
    assert viewer.preview_note.value == ""
    assert "Oslo" in viewer.content.value and "Oslo" in viewer.structured.value
    assert viewer.attachment_box.layout.display == "none"


def test_a_missing_file_is_a_line_not_an_error(bench: Workbench) -> None:
    viewer = long_viewer(bench)
    record = viewer.state.record
    assert record is not None
    (bench.workspace / record.result.structured["path"]).unlink()
    viewer.state.select(record)
    assert "is missing" in viewer.file_info.value and record.result.structured["path"] in viewer.file_info.value
    assert viewer.file_box.layout.display == "none" and viewer.file_html == ""
    assert not viewer.error_view.value
    viewer.line.value = 5  # controls of a file that is not there do nothing
    assert not viewer.error_view.value


def test_a_huge_file_pages_and_searches(bench: Workbench) -> None:
    def huge(rows: int = 200_000) -> str:
        """Many short rows."""
        return "\n".join(f"row {i}" for i in range(1, rows + 1))

    bench.enable(bench.register_tool("big", huge))
    viewer = viewer_of(bench)
    viewer.state.call("huge", {})
    assert viewer.page.max == 1000 and viewer.page_label.value == "page 1 of 1,000 · lines 1–200 of 200,000"
    viewer.page.value = 1000
    assert shown_lines(viewer) == list(range(199_801, 200_001))
    viewer.search.value = "row 12345"  # rows 12345 and 123450–123459
    assert viewer.hits.value == "1 of 11 hits" and viewer.page.value == fv.page_of_line(12_345)
    viewer.hit_next.click()
    assert viewer.page.value == fv.page_of_line(123_450)
    viewer.search.value = "ROW"
    assert viewer.hits.value == f"1 of {fv.MAX_HITS:,}+ hits"


# the header, error and structured JSON ----------------------------------------------------
def test_an_error_shows_its_code_in_a_banner(bench: Workbench) -> None:
    viewer = viewer_of(bench)
    viewer.state.call("fail", {})
    record = viewer.state.record
    assert record is not None and record.result.error_code
    code = re.escape(record.result.error_code)
    assert re.search(rf"class='tb-result-error'>error <b><code>{code}</code>", viewer.header.value)
    assert record.call_id in viewer.header.value and "extension/demo:fail" in viewer.header.value
    assert "fail" in viewer.header.value and " ms" in viewer.header.value
    # the structured JSON is collapsed, in a box that scrolls
    assert viewer.structured_box.selected_index is None
    [box] = viewer.structured_box.children
    assert "tb-scroll" in box._dom_classes and viewer.structured in box.children
    assert record.result.error_code in viewer.structured.value


# attachments ------------------------------------------------------------------------------
def test_an_image_result_shows_the_image_and_what_each_provider_gets(bench: Workbench) -> None:
    data = png()

    def snapshot() -> ToolOutput:
        """A picture."""
        return ToolOutput("a picture", attachments=[Attachment(kind="image", mime_type="image/png", data=data)])

    bench.enable(bench.register_tool("pics", snapshot))
    viewer = viewer_of(bench)
    inv = viewer.state.invocation
    result = viewer.state.call("snapshot", {})
    assert viewer.attachment_box.layout.display == ""
    [item] = viewer.attachments.children
    assert "tb-result-attachment" in item._dom_classes
    [image] = [c for c in item.children if isinstance(c, w.Image)]
    assert image.value == data and image.format == "png"
    assert image.layout.max_width == "100%" and image.layout.max_height == "320px"
    assert result.attachments[0].path in item.children[0].value
    assert pixel_size("image/png", data) == (16, 16) and pixel_size("image/jpeg", data) is None
    assert "16×16 px" in item.children[0].value  # its pixel size, read from its header
    assert image.layout.width == "auto" and image.layout.align_self == "flex-start"  # never blown up
    for protocol in names():
        viewer.protocol.value = protocol
        expected = json.dumps(abridge(inv.render_result(result, protocol), 60), indent=2, ensure_ascii=False)
        shown = html.unescape(re.sub(r"<[^>]+>", "", viewer.provider_json.value))
        assert json.loads(shown) == json.loads(expected)
        if protocol != "openai":  # Chat Completions takes no image in a tool result: it says so instead
            assert re.search(r"[A-Za-z0-9+/]{60}…<\d+ chars>", shown)  # the base64, shortened for display
        else:
            assert "left out" in shown
        # What the model reads is the provider's text: the content and its `## Attachments` list.
        read = html.unescape(re.sub(r"<[^>]+>", "", viewer.content.value))
        assert "a picture" in read and "## Attachments" in read and protocol in read
        assert ("left out" in read) == (protocol == "openai")
    # a record of an earlier invocation renders through the invocation that made it
    viewer.state.new_invocation()
    viewer.state.select(inv.records[-1])
    viewer.protocol.value = "anthropic"
    assert "tool_result" in viewer.provider_json.value and not viewer.error_view.value


def test_an_audio_and_a_blob_attachment(bench: Workbench) -> None:
    def sounds() -> ToolOutput:
        """Sound and a PDF."""
        return ToolOutput("two files", attachments=[Attachment(kind="audio", mime_type="audio/wav", data=b"RIFF0000"),
                                                    Attachment(kind="blob", mime_type="application/pdf",
                                                               data=b"%PDF-1.4")])

    bench.enable(bench.register_tool("media", sounds))
    viewer = viewer_of(bench)
    viewer.state.call("sounds", {})
    audio_item, blob_item = viewer.attachments.children
    [audio] = [c for c in audio_item.children if isinstance(c, w.Audio)]
    assert audio.value == b"RIFF0000" and audio.format == "wav" and not audio.autoplay
    assert len(blob_item.children) == 1 and "application/pdf · 8 bytes" in blob_item.children[0].value


# pending and progress ---------------------------------------------------------------------
def test_a_pending_call_shows_its_elapsed_time_then_hides(bench: Workbench) -> None:
    async def slow(seconds: float = 0.6) -> str:
        """Wait a while."""
        await asyncio.sleep(seconds)
        return "done"

    bench.enable(bench.register_tool("slow", slow))
    viewer = viewer_of(bench)
    assert viewer.pending.layout.visibility == "hidden"
    seen: list[float] = []

    async def run() -> None:
        viewer.state.submit("slow", {})
        for _ in range(200):
            await asyncio.sleep(0.01)
            if viewer.state.pending is None:
                break
            assert viewer.pending.layout.visibility == "visible"
            match = re.search(r"calling <code>slow</code> … (\d+\.\d) s", viewer.pending_label.value)
            assert match
            seen.append(float(match.group(1)))

    asyncio.run(run())
    assert seen and max(seen) >= 0.2  # redrawn on the `busy` ticks while it ran
    assert viewer.pending.layout.visibility == "hidden"
    assert "done" in viewer.content.value


def test_an_mcp_call_shows_its_progress(bench: Workbench) -> None:
    server = MCPServer("prog", log_level="WARNING")

    @server.tool(description="Count to n, reporting progress.")
    async def steps(n: int = 3, ctx: Context | None = None) -> str:
        for i in range(1, n + 1):
            assert ctx is not None
            await ctx.report_progress(i, n, f"step {i}")
            await anyio.sleep(0.1)
        return "counted"

    bench.mcp.add("prog", server=server)
    bench.enable("mcp/prog:steps")
    viewer = viewer_of(bench)
    seen: set[tuple[float, str]] = set()

    async def run() -> None:
        viewer.state.submit("mcp__prog__steps", {"n": 3})
        for _ in range(300):
            await asyncio.sleep(0.01)
            if viewer.state.pending is None:
                break
            if viewer.state.progress is not None:
                assert viewer.progress.layout.display == ""
                seen.add((round(viewer.progress.value, 2), viewer.progress_label.value))

    asyncio.run(run())
    assert (0.33, "step 1 · 1 of 3") in seen and (1.0, "step 3 · 3 of 3") in seen
    assert viewer.pending.layout.visibility == "hidden" and "counted" in viewer.content.value


def test_progress_without_a_total_looks_indeterminate(bench: Workbench) -> None:
    viewer = viewer_of(bench)
    state = viewer.state
    state.pending = Pending("sleep", state.invocation.id)
    state._emit("busy")
    assert viewer.pending.layout.visibility == "visible" and viewer.progress.layout.display == "none"
    state.progress = Progress(7, None, "working")
    state._emit("progress")
    assert viewer.progress.value == 1.0 and "tb-progress-indeterminate" in viewer.progress._dom_classes
    assert viewer.progress_label.value == "working · 7 (no total)"
    state.progress = Progress(2, 8, None)
    state._emit("progress")
    assert viewer.progress.value == 0.25 and "tb-progress-indeterminate" not in viewer.progress._dom_classes
    state.pending = state.progress = None
    state._emit("busy")
    assert viewer.pending.layout.visibility == "hidden"


def test_a_closed_bench_keeps_the_pager_disabled(bench: Workbench) -> None:
    viewer = long_viewer(bench)
    record = viewer.state.record
    bench.close()
    assert viewer.next.disabled and viewer.search.disabled
    assert record is not None
    viewer.state.select(record)  # the file went with the demo workspace: a line, and still disabled
    assert viewer.next.disabled and viewer.previous.disabled and viewer.error_code != "unexpected"


# the pure file logic ----------------------------------------------------------------------
def test_pages_and_lines() -> None:
    assert fv.page_count(0) == 1 and fv.page_count(200) == 1 and fv.page_count(201) == 2
    assert (fv.page_of_line(1), fv.page_of_line(200), fv.page_of_line(201), fv.page_of_line(0)) == (1, 1, 2, 1)
    assert fv.page_of(5, 2, size=2) == fv.Page(2, 3, 3, 4, 5)
    assert fv.page_of(5, 99, size=2) == fv.Page(3, 3, 5, 5, 5)  # clamped to the last page
    assert fv.page_of(0, 1) == fv.Page(1, 1, 0, 0, 0)
    assert fv.page_label(fv.page_of(2000, 2)) == "page 2 of 10 · lines 201–400 of 2,000"


def test_search_is_case_insensitive_once_per_line_and_capped() -> None:
    lines = ("Alpha beta", "gamma", "ALPHA alpha", "", "straße")
    folded = fv.fold(lines)
    assert fv.search_in(folded, "alpha") == fv.Hits((1, 3))
    assert fv.search_in(folded, "STRASSE") == fv.Hits((5,))  # casefold: ß ~ ss
    assert fv.search_in(folded, "") == fv.Hits()
    assert fv.search_in(folded, "a", limit=2) == fv.Hits((1, 2), capped=True)
    assert fv.search_in(folded, "a", limit=4) == fv.Hits((1, 2, 3, 5))
    assert fv.hits_label(fv.Hits((1, 2), capped=True), 0) == "1 of 2+ hits"
    page = fv.page_of(len(lines), 1)
    text = fv.Rows(lines, query="straße".upper(), hits=frozenset({5})).page_html(page)
    assert "<mark>straße</mark>" in text  # a casefold-only match marks the whole line


def test_the_preview_end_allows_for_wrapped_lines() -> None:
    lines = fv.split_lines("a" * 3000 + "\n" + "a" * 500 + "\nshort\nlast\n")
    assert lines == ("a" * 3000, "a" * 500, "short", "last")
    wrapped = ("a" * 3000, "a" * 3000, "b" * 10, "tail")  # one 6,010-char line, broken by the runtime
    assert fv.preview_end("notice\n\n" + "a" * 3000, wrapped) == fv.PreviewEnd(1, False)
    assert fv.preview_end("notice\n\n" + "a" * 6000 + "bbbbb", wrapped) == fv.PreviewEnd(3, True)
    assert fv.preview_end("notice\n\n" + "a" * 3000 + "\n" + "a" * 500 + "\nsh", lines) == fv.PreviewEnd(3, True)
    assert fv.preview_end("notice\n\nunrelated", lines) is None
    assert fv.preview_end("x", ()) is None


def test_load_file_is_bounded_and_replaces_bad_bytes(tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    path.write_bytes(b"one\ntwo \xff\nthree\n")
    assert fv.load_file(tmp_path, path.name) == fv.FileText(("one", "two \ufffd", "three"), 16, cut=False)
    cut = fv.load_file(tmp_path, path.name, limit=6)
    assert cut.cut and cut.size == 16 and cut.lines == ("one", "tw")
    with pytest.raises(OSError):
        fv.load_file(tmp_path, "absent.txt")


def test_a_tool_cannot_make_the_viewer_read_files_outside_the_workspace(bench, tmp_path):
    # A tool's own structured data may claim to be externalised and name any path.
    secret = tmp_path / "secret.txt"
    secret.write_text("do not show")
    bench.enable(bench.register_tool("leak", lambda data: data, name="echo_data",
                                     input_schema={"type": "object", "properties": {"data": {"type": "object"}}}))
    state = WorkbenchState(bench, bench.invocation("chat", id="inv_leak"))
    viewer = ResultViewer(state)
    for path in (str(secret), "../" * 12 + str(secret).lstrip("/"), "tool-results/../../" + secret.name):
        state.call("echo_data", {"data": {"externalized": True, "path": path}})
        assert "do not show" not in viewer.file_html
        assert "do not show" not in viewer.file_info.value


def test_a_fifo_or_a_symlink_out_is_not_read(tmp_path):
    import os

    (tmp_path / "ws").mkdir()
    os.mkfifo(tmp_path / "ws" / "pipe")
    (tmp_path / "out.txt").write_text("outside")
    (tmp_path / "ws" / "link").symlink_to(tmp_path / "out.txt")
    for name in ("pipe", "link"):
        with pytest.raises(OSError):
            fv.read_in_workspace(tmp_path / "ws", name, 100)



def test_a_preview_that_stops_matching_on_an_empty_line_is_no_preview():
    # Each step of the walk moves on: an empty file line must be a newline of the preview.
    assert fv.preview_end("\n\n\n\nthe tail", ("",) * 50) is None
    assert fv.preview_end("\n\n\n", ("",) * 50) == fv.PreviewEnd(3, False)
