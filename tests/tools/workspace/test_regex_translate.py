"""The RE2 form of a Python pattern finds the lines `re` finds; what RE2 cannot run is refused."""

from __future__ import annotations

import _sre  # type: ignore[import-not-found]
import re
from re import _parser as sre  # type: ignore[attr-defined]

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tests.tools.workspace.test_search_plan import reference as search_reference
from toolbench.tools.workspace import charsets
from toolbench.tools.workspace.regex_translate import Marks, Unsupported, mark_text, translate
from toolbench.tools.workspace.search import _scan
from toolbench.tools.workspace.search_plan import make_plan

# Pieces random patterns are made of: classes, shorthands, anchors, word boundaries (Unicode
# and, under `(?a)`, ASCII), repeats, groups, flags; texts mix ASCII, non-ASCII letters, the
# characters that fold onto ASCII letters (İ ı K ſ) and a str-only space (\x1c).
PIECES = ["a", "b", "k", "é", "I", ".", "\\w", "\\W", "\\d", "\\s", "\\S", "\\b", "\\B", "^", "$", "\\A", "\\Z",
          "[ab]", "[^a]", "[\\w-]", "[^\\W\\d]", "[^\\s\\x1c]", "[a-zé]", "*", "+", "?", "{2}", "{0,2}", "*?",
          "(", ")", "(?:", "|", "\\n", " ", "(?i:", "(?-i:", "(?s:"]
FLAGS = ["", "(?a)", "(?s)", "(?-m)", "(?i)", "(?x)"]
TEXT = "ab kI\u0130\u0131\u212a\u017f é界_1\u0663-\n\x1c"


def reference(pattern: str, case_sensitive: bool, data: bytes) -> list[int]:
    """The search as `re` ran it: the whole decoded file, one hit per line (test_search_plan's oracle)."""
    return search_reference(pattern, True, case_sensitive, data)


@settings(max_examples=600, deadline=None)
@given(flag=st.sampled_from(FLAGS), body=st.lists(st.sampled_from(PIECES), min_size=1, max_size=7).map("".join),
       text=st.text(alphabet=TEXT, max_size=14), case_sensitive=st.booleans())
def test_random_patterns_find_the_lines_re_finds(flag: str, body: str, text: str, case_sensitive: bool) -> None:
    pattern = flag + body
    # The one documented difference (regex_translate): a \b/\B before ^ or after $ at one place.
    assume(not re.search(r"\\[bB].*(\^|\\A)|(\$|\\Z).*\\[bB]", body))
    try:
        re.compile(pattern)
    except (re.error, OverflowError):
        assume(False)
    try:
        plan = make_plan(pattern, True, case_sensitive)
    except Unsupported:
        assume(False)  # `$` under (?-m) followed by more pattern, or \b with and without (?a)
    data = text.encode("utf-8")
    matched, more = _scan(plan, data, 1000)
    assert not more
    assert matched == reference(pattern, case_sensitive, data), plan


@pytest.mark.parametrize("pattern", [
    r"(a)\1", r"(?P<x>a)(?P=x)", r"a(?=b)", r"a(?!b)", r"(?<=a)b", r"(?<!a)b", r"(a)?(?(1)b|c)", r"(?>a+)b",
    r"a++", r"a{1001}", r"a{2,1001}", r"(?a:\b)x\b",
    r"(?a)\B",  # RE2 would find one inside `é` (between its UTF-8 bytes), where re finds none
])
def test_what_re2_cannot_run_is_refused(pattern: str) -> None:
    with pytest.raises(Unsupported):
        translate(sre.parse(pattern, re.MULTILINE), sre.parse(pattern, re.MULTILINE).state.flags)


def test_marks_put_one_marker_kind_in_every_gap() -> None:
    marks = Marks(ord("B"), ord("N"), 1)
    assert mark_text("ab cd", marks) == "BaNbB BcNdB"
    assert mark_text("", marks) == "N"
    assert mark_text(" é ", marks) == "N BéB N"  # é is a word character to `re`
    assert mark_text("x", Marks(ord("B"), ord("N"), 2)) == "BBxBB"


def test_tables_are_re_own_meanings() -> None:
    universe = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)
    for name, pattern in (("word", r"\w"), ("digit", r"\d")):
        table = charsets.unicode_table(name)
        found = re.compile(pattern)
        assert all(charsets.contains(table, ord(ch)) == bool(found.match(ch)) for ch in universe)
    assert all(not _sre.unicode_iscased(c) for c in range(charsets._CASED_END, 0x110000))
    space = re.compile(r"\s")
    assert all(charsets.contains(charsets.UNICODE_SPACE, ord(ch)) == bool(space.match(ch)) for ch in universe[:0x3100])


@settings(max_examples=200, deadline=None)
@given(low=st.integers(0, 0x2FF), width=st.integers(0, 40), negate=st.booleans())
def test_case_folding_of_a_class_is_re_ignorecase(low: int, width: int, negate: bool) -> None:
    members = ((low, low + width),)
    folded = charsets.fold(members)
    klass = re.compile(f"[{'^' if negate else ''}\\U{low:08x}-\\U{low + width:08x}]", re.IGNORECASE)
    for code in range(0, 0x600):
        assert (charsets.contains(folded, code) != negate) == bool(klass.match(chr(code))), hex(code)


ODD_PIECES = [*PIECES, "\\", "{", "}", "(?P<x>", "(?#", "\ud800", "\\N{", "\\1", "(?"]


@settings(max_examples=400, deadline=None)
@given(query=st.one_of(st.text(max_size=40), st.lists(st.sampled_from(ODD_PIECES), max_size=10).map("".join)),
       regex=st.booleans(), case_sensitive=st.booleans())
def test_any_query_is_a_plan_or_a_coded_error(query: str, regex: bool, case_sensitive: bool) -> None:
    from toolbench.core.errors import ToolError
    from toolbench.tools.workspace.search import _plan

    try:
        plan = _plan(query, regex, case_sensitive)
    except ToolError as exc:
        assert exc.code in ("tool.invalid_arguments", "workspace.regex_invalid")
    else:
        for data in (b"", b"some text \xc3\xa9 \xff\n", "ıİ kK\n\n".encode()):
            _scan(plan, data, 10)
