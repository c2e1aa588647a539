from __future__ import annotations

import re
import string
from typing import Any

import pytest

from toolbench import Profile, ToolResult, Workbench


def test_read_returns_numbered_lines_and_end_marker(call) -> None:
    (call.bench.workspace / "work" / "a.txt").write_text("one\ntwo\n")
    r = call.ok("read_file", {"path": "work/a.txt"})
    assert "     1\tone\n     2\ttwo\n[end of file]" in r.content
    assert r.structured["fullRead"] is True and r.structured["totalLines"] == 2


def test_paged_read_gives_next_line_and_full_read_when_contiguous(call) -> None:
    (call.bench.workspace / "work" / "a.txt").write_text("".join(f"l{i}\n" for i in range(1, 11)))
    r = call.ok("read_file", {"path": "work/a.txt", "line_count": 4})
    assert r.structured["nextLine"] == 5 and r.structured["fullRead"] is False
    assert "start_line=5" in r.content
    r = call.ok("read_file", {"path": "work/a.txt", "start_line": 5})
    assert r.structured["fullRead"] is True


def test_large_read_stops_at_the_char_budget(tmp_path) -> None:
    profile = Profile.default().edit(workspace={"max_read_chars": 1000})
    with Workbench(tmp_path / "ws", profile) as bench:
        (bench.workspace / "work" / "big.txt").write_text("x" * 99 + "\n" * 1 + ("y" * 99 + "\n") * 50)
        r = bench.invocation().call("workspace_read_file", {"path": "work/big.txt"})
        assert not r.is_error and r.structured["truncated"] and r.structured["nextLine"] == 11


def test_read_errors(call) -> None:
    ws = call.bench.workspace
    (ws / "work" / "bin.dat").write_bytes(b"\x00\x01\x02")
    (ws / "work" / "latin.txt").write_bytes("café".encode("latin-1"))
    call.err("read_file", {"path": "work/bin.dat"}, "workspace.file_not_text")
    call.err("read_file", {"path": "work/latin.txt"}, "workspace.file_not_text")
    call.err("read_file", {"path": "work"}, "workspace.path_is_directory")
    call.err("read_file", {"path": "work/none.txt"}, "workspace.file_not_found")
    call.err("read_file", {"path": "../../etc/passwd"}, "workspace.invalid_path")
    call.err("read_file", {"path": "/etc/passwd"}, "workspace.path_not_visible")
    call.err("read_file", {"path": "tool-args/x.json"}, "workspace.path_not_visible")
    call.err("read_file", {"path": "work/\x00x"}, "workspace.invalid_path")


def test_symlink_to_etc_cannot_be_read(call) -> None:
    (call.bench.workspace / "work" / "pw").symlink_to("/etc/passwd")
    call.err("read_file", {"path": "work/pw"}, "workspace.path_not_visible")


def test_externalised_result_is_read_back_in_full(tmp_path) -> None:
    """Table 9.9: 60,000 × '界' over a 10,000-char limit, then read_file to its end."""
    profile = Profile.default().edit(external_result_inline_char_limit=10_000)
    with Workbench(tmp_path / "ws", profile) as bench:
        bench.register_tool("big", lambda: "界" * 60_000, name="dump")
        bench.enable("extension/big:dump")
        inv = bench.invocation()
        name = next(n for n, t in inv.snapshot.call_names.items() if str(t) == "extension/big:dump")
        long = inv.call(name, {})
        path = long.structured["path"]
        assert long.structured["externalized"] is True and path.startswith("tool-results/")
        r = inv.call("workspace_read_file", {"path": path})
        assert not r.is_error, r.content
        assert r.structured["fullRead"] is True
        assert r.content.count("界") == 60_000 and "[end of file]" in r.content


# Long lines (issue 15): a page holds at most max_read_chars characters, within a line too ---------
SMALL = Profile.default().edit(
    allow=["builtin:workspace.read_file", "builtin:workspace.apply_patch", "builtin:workspace.write_file"],
    workspace={"max_read_chars": 1000})
ROW = re.compile(r"^ *(\d+)\t(.*)$", re.DOTALL)


def _rows(content: str) -> list[tuple[int, str]]:
    """(line number, shown text) of each row of a read result (between the header and the trailer)."""
    body = content.split("\n\n", 1)[1].rsplit("\n", 1)[0]
    rows: list[tuple[int, str]] = []
    for row in body.split("\n"):
        m = ROW.match(row)
        assert m, row[:80]
        rows.append((int(m.group(1)), m.group(2)))
    return rows


def _walk(call: Any, path: str) -> tuple[list[ToolResult], dict[int, str]]:
    """Every page of `path`, following nextLine/nextChar; and each line put back together."""
    pages: list[ToolResult] = []
    lines: dict[int, str] = {}
    args: dict[str, Any] = {"path": path}
    while True:
        r = call.ok("read_file", args)
        pages.append(r)
        s = r.structured
        for number, text in _rows(r.content):
            lines[number] = lines.get(number, "") + text
        if s["nextLine"] is None:
            return pages, lines
        assert len(pages) < 10_000
        args = {"path": path, "start_line": s["nextLine"]}
        if s["nextChar"]:
            args["char_offset"] = s["nextChar"]


def test_a_5_mb_line_reads_as_pages_of_the_budget(call) -> None:
    text = (string.ascii_letters * 100_000)[:5_000_000]
    (call.bench.workspace / "work" / "big.txt").write_text(text)
    budget = call.bench.profile.workspace.max_read_chars
    r = call.ok("read_file", {"path": "work/big.txt"})
    assert r.content.startswith(f"Read: work/big.txt\nlines=1-1 / 1; line 1: characters 1-{budget:,} of 5,000,000\n\n")
    assert _rows(r.content) == [(1, text[:budget])]
    assert r.content.endswith(
        f"\n[partial view: line 1 is 5,000,000 characters long and this page ends at character {budget:,} of it; "
        f"continue with `workspace_read_file` path `work/big.txt` start_line=1 char_offset={budget}]")
    assert len(r.content) < budget + 400
    s = r.structured
    assert (s["startLine"], s["startChar"], s["endLine"], s["endChar"]) == (1, 0, 1, budget)
    assert s["endLineChars"] == 5_000_000
    assert (s["nextLine"], s["nextChar"], s["truncated"], s["fullRead"]) == (1, budget, True, False)
    call.err("apply_patch", {"path": "work/big.txt", "old_string": "abc", "new_string": "x", "replace_all": True},
             "workspace.stale_file")

    r = call.ok("read_file", {"path": "work/big.txt", "start_line": 1, "char_offset": budget})
    assert "lines=1-1 / 1; line 1: characters 100,001-200,000 of 5,000,000" in r.content
    assert _rows(r.content) == [(1, text[budget:2 * budget])]
    assert r.structured["nextChar"] == 2 * budget and r.structured["fullRead"] is False

    last = 5_000_000 - 1234
    r = call.ok("read_file", {"path": "work/big.txt", "start_line": 1, "char_offset": last})
    assert _rows(r.content) == [(1, text[last:])] and r.content.endswith("\n[end of file]")
    assert r.structured["nextLine"] is None and r.structured["endChar"] == 5_000_000
    assert r.structured["fullRead"] is False  # characters before `last` were never shown

    pages, lines = _walk(call, "work/big.txt")
    assert len(pages) == 50 and lines == {1: text}
    assert pages[-1].structured["fullRead"] is True and pages[-1].content.endswith(f"{text[-20:]}\n[end of file]")
    call.ok("apply_patch", {"path": "work/big.txt", "old_string": "abc", "new_string": "x", "replace_all": True})


@pytest.mark.parametrize("profile", [SMALL])
def test_short_lines_around_long_lines_page_with_right_line_numbers(call) -> None:
    lines = ["alpha", "beta", "x" * 995, "gamma", "L" * 2_345 + "\r", "delta", "M" * 1_000, "", "N" * 1_001, "end"]
    (call.bench.workspace / "work" / "mix.txt").write_text("\n".join(lines) + "\n")
    pages, shown = _walk(call, "work/mix.txt")
    assert shown == {i + 1: line for i, line in enumerate(lines)}
    spans = [(p.structured["startLine"], p.structured["startChar"], p.structured["endLine"], p.structured["endChar"])
             for p in pages]
    assert spans == [
        (1, 0, 2, 4),          # 11 used; line 3 (995) would fit a page of its own: it starts the next one
        (3, 0, 3, 995),        # and line 4 does not fit after it
        (4, 0, 5, 994),        # line 5 (2,346 with its \r) is longer than a page: it fills the rest of this one
        (5, 994, 5, 1994),
        (5, 1994, 6, 5),       # the rest of line 5, then line 6; line 7 (1,000) waits for a page of its own
        (7, 0, 7, 1000),       # a whole page; even the empty line 8 is left for the next
        (8, 0, 9, 999),
        (9, 999, 10, 3),
    ]
    assert "\nlines=4-5 / 10; line 5 to character 994 of 2,346\n" in pages[2].content
    assert pages[2].content.endswith("[partial view: line 5 is 2,346 characters long and this page ends at character "
                                     "994 of it; continue with `workspace_read_file` path `work/mix.txt` start_line=5 "
                                     "char_offset=994]")
    assert "\nlines=5-5 / 10; line 5: characters 995-1,994 of 2,346\n" in pages[3].content
    assert "\nlines=5-6 / 10; line 5 from character 1,995 of 2,346\n" in pages[4].content
    assert pages[4].content.endswith("start_line=7]") and "\n     6\tdelta\n" in pages[4].content
    assert "\nlines=8-9 / 10; line 9 to character 999 of 1,001\n" in pages[6].content
    assert (pages[6].structured["nextLine"], pages[6].structured["nextChar"]) == (9, 999)
    assert [p.structured["fullRead"] for p in pages] == [False] * 7 + [True]
    assert pages[-1].content.endswith("    10\tend\n[end of file]")


@pytest.mark.parametrize("profile", [SMALL])
def test_multibyte_characters_and_clusters_are_never_split(call) -> None:
    family = "\U0001F468\u200d\U0001F469\u200d\U0001F467"  # one grapheme, five code points
    line = "界" * 997 + family + "😀" * 1500 + "e\u0301" * 600 + "\U0001F1EF\U0001F1F5" * 700
    (call.bench.workspace / "work" / "u.txt").write_text(line + "\n")
    pages, shown = _walk(call, "work/u.txt")
    assert shown == {1: line}
    # 997: the family would not fit whole, so it starts the next page; 2996: not between "e" and its accent
    assert [p.structured["endChar"] for p in pages] == [997, 1997, 2996, 3996, 4996, len(line)]
    for p in pages:
        p.content.encode("utf-8")  # whole code points only (no lone surrogates)
        if p.structured["nextLine"] is not None:
            cut = p.structured["endChar"]
            assert line[cut] not in "\u200d\u0301" and line[cut - 1] != "\u200d"
            assert not ("\U0001F1E6" <= line[cut] <= "\U0001F1FF" and cut % 2 == 1), cut  # flags start at even offsets
    assert pages[-1].structured["fullRead"] is True


@pytest.mark.parametrize("profile", [SMALL])
def test_char_offset_is_checked(call) -> None:
    (call.bench.workspace / "work" / "a.txt").write_text("abc\n\nxyz\n")
    path = "work/a.txt"
    for bad in (-1, 1.5, "2", True, None, [1]):
        call.err("read_file", {"path": path, "start_line": 1, "char_offset": bad}, "tool.invalid_arguments")
    r = call.err("read_file", {"path": path, "char_offset": 1}, "tool.invalid_arguments")
    assert "start_line" in r.content
    r = call.err("read_file", {"path": path, "start_line": 1, "char_offset": 3}, "tool.invalid_arguments")
    assert "Line 1 of `work/a.txt` has 3 characters; `char_offset` 3 is past its end. Use a char_offset from 0 to 2, " \
           "or start_line=2 for the next line." in r.content
    r = call.err("read_file", {"path": path, "start_line": 2, "char_offset": 1}, "tool.invalid_arguments")
    assert "Line 2 of `work/a.txt` is empty" in r.content
    call.err("read_file", {"path": path, "start_line": 4, "char_offset": 0}, "workspace.line_out_of_range")
    r = call.ok("read_file", {"path": path, "start_line": 1, "char_offset": 2.0})
    assert _rows(r.content) == [(1, "c"), (2, ""), (3, "xyz")]
    assert "lines=1-3 / 3; line 1 from character 3 of 3" in r.content
    assert r.structured["fullRead"] is False  # "ab" was never shown
    r = call.ok("read_file", {"path": path, "start_line": 2, "char_offset": 0})
    assert "from character" not in r.content and r.structured["startChar"] == 0


@pytest.mark.parametrize("profile", [SMALL])
def test_a_partly_shown_line_is_not_read(call) -> None:
    text = "head\n" + "z" * 3000 + "\ntail\n"
    (call.bench.workspace / "work" / "p.txt").write_text(text)
    edit = {"path": "work/p.txt", "old_string": "tail", "new_string": "TAIL"}
    call.ok("read_file", {"path": "work/p.txt"})  # line 1, then line 2 up to 995
    call.ok("read_file", {"path": "work/p.txt", "start_line": 2, "char_offset": 2500})  # a gap: 995-2500 unseen
    call.err("apply_patch", edit, "workspace.stale_file")
    r = call.ok("read_file", {"path": "work/p.txt", "start_line": 2, "char_offset": 900})  # overlaps: 900-1900
    assert r.structured["fullRead"] is False
    r = call.ok("read_file", {"path": "work/p.txt", "start_line": 2, "char_offset": 1900})  # 1900-2900
    assert r.structured["fullRead"] is False
    r = call.ok("read_file", {"path": "work/p.txt", "start_line": 2, "char_offset": 2900})
    assert r.structured["fullRead"] is True and _rows(r.content) == [(2, "z" * 100), (3, "tail")]
    call.ok("apply_patch", edit)
