"""edit_more's passes (line-numbers, whitespace-runs, escapes): the naive oracle of
test_edit_passes on generated cases aimed at them, and examples from the peers' cases."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_edit_passes import agrees_with_the_oracle  # this folder is on sys.path (rootdir import mode)

from toolbench.core.errors import ToolError
from toolbench.tools.workspace.edit_match import apply_edit

LINE = st.tuples(st.sampled_from(["", " ", "  ", "\t", "    "]),
                 st.lists(st.sampled_from(["a", "b", "a  b", "a\tb", "x", "\\n", "'"]), max_size=2).map(" ".join),
                 st.sampled_from(["", " "]), st.sampled_from(["\n", "\n", "\r\n"]))


@st.composite
def drifted(draw):
    lines = draw(st.lists(LINE, min_size=1, max_size=10))
    text = "".join("".join(p) for p in lines)
    a = draw(st.integers(0, len(lines) - 1))
    b = draw(st.integers(a + 1, min(len(lines), a + 4)))
    kind = draw(st.sampled_from(["indent", "runs", "numbers", "pipes", "escapes"]))
    out = []
    for k, (lead, body, trail, _eol) in enumerate(lines[a:b]):
        if kind == "indent":
            lead = draw(st.sampled_from(["", " ", "  ", "\t"]))
        elif kind == "runs":
            body = body.replace(" ", draw(st.sampled_from([" ", "  ", "\t"])))
        elif kind in ("numbers", "pipes"):
            n = a + k + 1
            lead = (f"{n:>6}\t" if kind == "numbers" else f"{n} | ") + lead
        out.append(lead + body + trail)
    old = "\n".join(out) + draw(st.sampled_from(["", "\n"]))
    if kind == "escapes":
        old = old.replace("\\", "\\\\").replace("\n", "\\n")
    new = draw(st.sampled_from(["Z", "Z\n", "  Z\nW\n", "1 | Z\n", "\\tZ", ""]))
    return text, old, new


@settings(max_examples=600, deadline=None)
@given(drifted().filter(lambda case: case[1]), st.booleans())  # an empty old_string is refused first
def test_the_last_passes_do_what_the_naive_oracle_does(case, replace_all):
    agrees_with_the_oracle(*case, replace_all)


@pytest.mark.parametrize(("text", "old", "new", "strategy", "want"), [
    # Roo's `N | ` prefixes; the CRLF file keeps its line endings (the inner line-endings pass)
    ("function test() {\r\n    return true;\r\n}\r\n", "1 | function test() {\n2 |     return true;\n3 | }",
     "function test() {\n    return false;\n}", "line-numbers", "function test() {\r\n    return false;\r\n}\r\n"),
    ("line 1\nline to delete\nline 3", "2 | line to delete\n", "", "line-numbers", "line 1\nline 3"),
    # workspace.read_file's own prefixes, on old and new
    ("a\nb\nc\n", "     2\tb\n     3\tc\n", "     2\tB\n     3\tc\n", "line-numbers", "a\nB\nc\n"),
    ("const   x    =     5;", "const x = 5;", "const x = 10;", "whitespace-runs", "const x = 10;"),
    ("if\t \t( \tcondition\t )\t{", "if ( condition ) {", "if (newCondition) {", "whitespace-runs",
     "if (newCondition) {"),
    ('console.log("Hello\nWorld");', 'console.log("Hello\\nWorld");', 'console.log("Hello\nUniverse");',
     "escapes", 'console.log("Hello\nUniverse");'),
    ("const path = 'C:\\Users\\test';", "const path = 'C:\\\\Users\\\\test';", "const path = 'C:\\Users\\admin';",
     "escapes", "const path = 'C:\\Users\\admin';"),
    ("a = 1\nb = 2\n", "a = 1\\nb = 2", "a = 3\\nb = 4", "escapes", "a = 3\nb = 4\n"),
])
def test_examples(text, old, new, strategy, want):
    result = apply_edit(text, old, new)
    assert (result.strategy, result.text) == (strategy, want)


def test_a_file_whose_lines_begin_with_numbers_and_tabs_is_matched_exactly():
    text = "     1\tfirst\n     2\tsecond\n     3\tthird\n"
    result = apply_edit(text, "     2\tsecond\n", "     2\tSECOND\n")
    assert (result.strategy, result.text) == ("exact", "     1\tfirst\n     2\tSECOND\n     3\tthird\n")


@pytest.mark.parametrize(("text", "old"), [
    ("x  =  1\ny\nx = 1\n", "x\t=\t1"),  # whitespace-runs twice
    ("p\nq\np\nq\n", "1 | p\n2 | q"),  # line-numbers, then exact twice
])
def test_several_matches_are_refused_with_each_line(text, old):
    with pytest.raises(ToolError) as info:
        apply_edit(text, old, "z")
    assert info.value.code == "workspace.edit_ambiguous" and info.value.structured["lines"] == [1, 3]


@pytest.mark.parametrize(("text", "old", "replace_all", "want"), [
    ("line 1\nline to delete\nline 3", "2 | line to delete", False, "line 1\nline 3"),  # Roo's spec, as written
    ("a\r\nb\r\nc\r\n", "2 | b", False, "a\r\nc\r\n"),  # the CRLF goes with the line
    ("a\nb\nc\nd\n", "     2\tb\n     3\tc", False, "a\nd\n"),  # read_file's prefixes, two lines
    ("a\n    b\n    c\nd", "2 | b\n3 | c", False, "a\nd"),  # through the indentation pass
    ("a\nb", "2 | b", False, "a"),  # the last line has no line ending: the one before it goes
    ("x\ny\nx\n", "1 | x", True, "y\n"),
    ("xa\nb\n", "1 | a", False, "x\nb\n"),  # a fragment of a line is not a whole line: only it goes
])
def test_numbered_lines_replaced_by_nothing_go_with_their_line_ending(text, old, replace_all, want):
    result = apply_edit(text, old, "", replace_all=replace_all)
    assert (result.strategy, result.text) == ("line-numbers", want)


def test_numbers_that_are_not_consecutive_are_not_stripped():
    with pytest.raises(ToolError) as info:
        apply_edit("a\nb\n", "1 | a\n3 | b", "z")
    assert info.value.code == "workspace.edit_no_match"


def test_a_dropped_blank_line_does_not_let_old_string_match_inside_a_line():
    with pytest.raises(ToolError) as info:
        apply_edit("xfoo\n", "\nfoo\n", "\nbar\n")
    assert info.value.code == "workspace.edit_no_match"
    assert apply_edit("a\nfoo\n", "\n\nfoo\n", "\n\nbar\n").text == "a\nbar\n"


def test_a_huge_line_number_is_just_no_prefix():
    with pytest.raises(ToolError) as info:
        apply_edit("foo\n", "9" * 5000 + "\tfoo", "x")
    assert info.value.code == "workspace.edit_no_match"
