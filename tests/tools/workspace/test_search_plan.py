from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from toolbench.tools.workspace.search import _scan
from toolbench.tools.workspace.search_plan import make_plan

# Letters that fold onto ASCII under IGNORECASE (İ ı K ſ), a str-only space (\x1c), non-ASCII
# letters and digits, newlines and the punctuation the patterns below use.
ALPHABET = "abkisKSI fo_-/.()\n\r\t\x1c0129é界\u0130\u0131\u212a\u017f\u0663"
REGEXES = [
    r"^(alpha|delta)$", r"def \w+_handler\(", r"(TODO|FIXME)\(\w+\)", r"\b\d{2}[-/]\d\b", r"\d+", r"k\s+s",
    r"foo\sbar", r"(?s)a.b", r"a.b", r"[^x]k", r"ks$", r"^\s*$", r"(?i:K)s", r"(?-i:k)s", r"\Ask",
    r"sk\Z", r"[-/]{2}", r"\u212a", r"café", r"é\w", r"i+s", r"\bis\b", r"[a-c]s",
    r"a\nb", r"k|s", r"x*k", r"(?x) k  s", r"\W+k",
]


def reference(query: str, regex: bool, case_sensitive: bool, data: bytes) -> list[int]:
    """The search as first written: the str regex over the whole decoded file, one hit per line
    (an empty match after the final newline is on no line)."""
    flags = re.MULTILINE | (0 if case_sensitive else re.IGNORECASE)
    pattern = re.compile(query if regex else re.escape(query), flags)
    text = data.decode("utf-8", "replace")
    out, pos, line_no, counted_to = [], 0, 0, 0
    while pos <= len(text):
        m = pattern.search(text, pos)
        if m is None or (m.start() == len(text) and (not text or text.endswith("\n"))):
            break
        line_no += text.count("\n", counted_to, m.start())
        counted_to = m.start()
        out.append(line_no)
        nl = text.find("\n", m.start())
        if nl < 0:
            break
        line_no += text.count("\n", counted_to, nl + 1)
        pos = counted_to = nl + 1
    return out


def lines(query: str, regex: bool, case_sensitive: bool, data: bytes) -> list[int]:
    matched, more = _scan(make_plan(query, regex, case_sensitive), data, 10_000)
    assert not more
    return matched


ASCII = "".join(ch for ch in ALPHABET if ch.isascii())  # pure-ASCII files take the bytes-regex path
texts = st.one_of(st.text(alphabet=ALPHABET, max_size=200), st.text(alphabet=ASCII, max_size=200)).map(
    lambda t: t.encode("utf-8"))


@settings(max_examples=300, deadline=None)
@given(data=texts, pattern=st.sampled_from(REGEXES), case_sensitive=st.booleans())
def test_regex_scan_finds_the_lines_the_whole_text_regex_finds(data: bytes, pattern: str, case_sensitive: bool) -> None:
    assert lines(pattern, True, case_sensitive, data) == reference(pattern, True, case_sensitive, data)


@settings(max_examples=300, deadline=None)
@given(data=texts, query=st.text(alphabet=ALPHABET, min_size=1, max_size=4), case_sensitive=st.booleans())
def test_plain_scan_finds_the_lines_the_whole_text_regex_finds(data: bytes, query: str, case_sensitive: bool) -> None:
    assert lines(query, False, case_sensitive, data) == reference(query, False, case_sensitive, data)


def test_invalid_utf8_and_folding_letters_match_as_before() -> None:
    data = b"\xff\xfeks\n\xe2\x84\xaa\xc5\xbf\nplain\n"  # line 2 is Kelvin sign + long s: "ks" folded
    assert lines("ks", False, False, data) == [0, 1]
    assert lines("KS", False, True, data) == []
    assert lines(r"k\w", True, False, data) == [0, 1]


def test_str_only_whitespace_keeps_the_str_regex() -> None:
    for pattern, data in ((r"^\s*$", b"a\n\x1c\nb"), (r"a\sb", b"xx\na\x1cb\n")):
        assert lines(pattern, True, False, data) == reference(pattern, True, False, data) == [1]


def test_plan_picks_required_literals_and_line_local_matching() -> None:
    plan = make_plan(r"def \w+_handler\(", True, False)
    assert plan.needles == (b"_handler(",) and plan.fold and plan.line_local and not plan.literal_only
    assert make_plan(r"(TODO|FIXME)\(", True, True).needles == (b"TODO", b"FIXME")
    assert make_plan(r"\d{4}[-/]\d{2}", True, False).needles == (b"-", b"/")
    assert make_plan(r"\d+", True, False).needles == ()  # no literal: the whole-file regex runs
    assert not make_plan(r"a\sb", True, False).line_local  # \s matches a newline
    assert make_plan("Gamma ray", False, False).literal_only


def test_ignorecase_is_dropped_only_where_case_cannot_matter() -> None:
    assert not make_plan(r"\d{4}-\d{2}", True, False).fold
    assert make_plan(r"\d{4}x", True, False).fold
    assert make_plan(r"[\x00-\uffff]+", True, False).fold  # a wide range has case somewhere


def test_unicode_query_case_insensitive(call) -> None:
    ws = call.bench.workspace
    (ws / "work" / "u.md").write_text("Café au lait\nCAFÉ\nnothing\n", encoding="utf-8")
    r = call.ok("search_files", {"query": "café", "path": "work"})
    assert [m["line"] for m in r.structured["matches"]] == [1, 2]
    r = call.ok("search_files", {"query": r"caf[ée]\b", "regex": True, "path": "work"})
    assert [m["line"] for m in r.structured["matches"]] == [1, 2]


def test_regex_without_literal_and_limit(call) -> None:
    ws = call.bench.workspace
    (ws / "work" / "d.txt").write_text("".join(f"row {i}\n" for i in range(30)), encoding="utf-8")
    r = call.ok("search_files", {"query": r"\d\d$", "regex": True, "path": "work", "limit": 5})
    assert [m["line"] for m in r.structured["matches"]] == [11, 12, 13, 14, 15] and r.structured["hasMore"]
