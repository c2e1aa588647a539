"""toolbench's passes after LiveAgent's four: Unicode punctuation and blank first/last lines.

A naive oracle of the whole cascade (every pass written the slow way, from its description in
edit_match's docstring and the reference §1) is compared with `apply_edit` on generated files:
the same strategy, the same match lines, the same text, the same refusals. Then the peers' own
cases (Codex's unicode-dash test, Aider's blank-line tests) and toolbench's examples.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_edit_match import WS  # this folder is on sys.path (rootdir import mode)
from test_edit_match import _oracle_reindent as oracle_reindent
from test_edit_match import _oracle_shift as oracle_shift

from toolbench.core.errors import ToolError
from toolbench.tools.workspace.edit_match import apply_edit

BOM = "\ufeff"
# Codex's `normalise` (codex-rs/apply-patch/src/seek_sequence.rs), written out again.
FOLD = {
    "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-", "\u2015": "-", "\u2212": "-",
    "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'",
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"',
    "\u00a0": " ", "\u2002": " ", "\u2003": " ", "\u2004": " ", "\u2005": " ", "\u2006": " ", "\u2007": " ",
    "\u2008": " ", "\u2009": " ", "\u200a": " ", "\u202f": " ", "\u205f": " ", "\u3000": " ",
}


# --- the naive oracle ------------------------------------------------------------------------------


def naive_fold(s):
    return "".join(FOLD.get(c, c) for c in s)


def dominant_eol(text):
    crlf = text.count("\r\n")
    return "\r\n" if crlf and crlf >= text.count("\n") - crlf else "\n"


def naive_exact(text, old, new):
    out, i = [], 0
    while (p := text.find(old, i)) != -1:
        out.append((p, p + len(old), new))
        i = p + len(old)
    return out


def naive_line_endings(text, old, rendered):
    """Search the file with its BOM dropped and each CRLF read as one LF, at the file's offsets."""
    bom = 1 if text.startswith(BOM) else 0
    needle = old.removeprefix(BOM).replace("\r\n", "\n")
    view, offsets, i = [], [], bom  # offsets[v]: the file offset of view character v
    while i < len(text):
        step = 2 if text.startswith("\r\n", i) else 1
        view.append("\n" if step == 2 else text[i])
        offsets.append(i)
        i += step
    offsets.append(len(text))
    view = "".join(view)
    hits, pos = [], view.find(needle) if needle else -1
    while pos != -1:
        end = pos + len(needle)
        last = offsets[end - 1]
        hits.append((offsets[pos], last + (2 if text.startswith("\r\n", last) else 1), rendered))
        pos = view.find(needle, end)
    return hits


def naive_lines(text):
    """(content start, content end, end with EOL, content) per line of the file."""
    i, out = (1 if text.startswith(BOM) else 0), []
    while i < len(text):
        j = text.find("\n", i)
        if j == -1:
            out.append((i, len(text), len(text), text[i:]))
            break
        end = j - 1 if j > i and text[j - 1] == "\r" else j
        out.append((i, end, j + 1, text[i:end]))
        i = j + 1
    return out


def naive_reindent(new, add, prefix):
    lines = oracle_reindent(new, add, prefix)  # test_edit_match's oracle of the indentation pass
    return None if lines is None else "\n".join(lines)


def naive_whole_lines(text, old, new, eol):
    lines = naive_lines(text)
    body = old.removeprefix(BOM)
    if not body:
        return None
    pat = body.split("\n")
    ends_with_newline = pat[-1] == ""
    if ends_with_newline:
        pat.pop()
    pat = [p.rstrip(WS) for p in pat]
    m = len(pat)

    def span(i):
        last = lines[i + m - 1]
        return lines[i][0], last[2] if ends_with_newline else last[1]

    rendered = new.replace("\r\n", "\n").replace("\n", eol)
    found, i = [], 0
    while i + m <= len(lines):
        if all(lines[i + j][3].rstrip(WS) == pat[j] for j in range(m)):
            found.append((*span(i), rendered, i + 1))
            i += m
        else:
            i += 1
    if found:
        return "trailing-whitespace", found
    found, i = [], 0
    while i + m <= len(lines):
        window = [lines[i + j][3].rstrip(WS) for j in range(m)]
        shifts = {oracle_shift(f, p) for f, p in zip(window, pat, strict=True)} - {"skip"}
        same = all(f.strip(WS) == p.strip(WS) for f, p in zip(window, pat, strict=True))
        if same and len(shifts) == 1 and None not in shifts:
            shifted = naive_reindent(new, *next(iter(shifts)))
            if shifted is not None:
                found.append((*span(i), shifted.replace("\n", eol), i + 1))
                i += m
                continue
        i += 1
    return ("indentation", found) if found else None


def naive_upstream(text, old, new):
    """LiveAgent's four passes: (strategy, [(start, end, replacement, line)]) or None."""
    hits = naive_exact(text, old, new)
    if hits:
        return "exact", [(*h, text.count("\n", 0, h[0]) + 1) for h in hits]
    eol = dominant_eol(text)
    hits = naive_line_endings(text, old, new.replace("\r\n", "\n").replace("\n", eol))
    if hits:
        return "line-endings", [(*h, text.count("\n", 0, h[0]) + 1) for h in hits]
    return naive_whole_lines(text, old, new, eol)


def naive_trim(old, new):
    """old_string without its blank first / last lines, and new without the same lines."""
    parts = old.split("\n")
    lines = [p + "\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])
    blank = [not line.strip(WS) for line in lines]
    if all(blank):
        return None
    a = blank.index(False)
    b = len(lines) - blank[::-1].index(False)
    if (a, b) == (0, len(lines)):
        return None
    lead, kept, tail = "".join(lines[:a]), "".join(lines[a:b]), "".join(lines[b:])
    if lead and new.startswith(lead):
        new = new[len(lead) :]
    if tail and new.endswith(tail) and (new == tail or new[: -len(tail)].endswith("\n")):
        new = new[: -len(tail)]
    return kept, new


def naive_cascade(text, old, new, more=("line-numbers", "whitespace-runs", "escapes")):
    found = naive_seven(text, old, new)
    if found or not more:
        return found
    return naive_more(text, old, new, more)


def naive_lines_equal(text, old, new, key):
    """Whole-line windows whose lines equal old_string's under `key`; `new` as given (file EOL)."""
    lines = naive_lines(text)
    body = old.removeprefix(BOM)
    pat = body.split("\n")
    ends_with_newline = pat[-1] == ""
    if ends_with_newline:
        pat.pop()
    if not body or not any(p.strip(WS) for p in pat):
        return []
    m = len(pat)
    rendered = new.replace("\r\n", "\n").replace("\n", dominant_eol(text))
    found, i = [], 0
    while i + m <= len(lines):
        if all(key(lines[i + j][3]) == key(pat[j]) for j in range(m)):
            last = lines[i + m - 1]
            found.append((lines[i][0], last[2] if ends_with_newline else last[1], rendered, i + 1))
            i += m
        else:
            i += 1
    return found


INLINE_WS = "[" + re.escape(WS.replace("\n", "")) + "]+"


def runs_key(line):
    """A line as whitespace-runs compares it: its indentation exact, runs inside it one space."""
    kept = line.rstrip(WS)
    core = kept.lstrip(WS)
    return kept[: len(kept) - len(core)] + re.sub(INLINE_WS, " ", core)
NUMBERED = (r" *(\d+)\t", r" *(\d+) +\| ?")
ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "'": "'", "`": "`", "\\": "\\", "$": "$"}


def naive_strip_numbers(old, new):
    lines = old.split("\n")
    for form in NUMBERED:
        numbers, out = [], []
        for k, line in enumerate(lines):
            m = re.match(form, line)
            if not line.strip(WS):
                out.append(line)
            elif m is None:
                break
            else:
                numbers.append(int(m[1]) - k)
                out.append(line[m.end() :])
        else:
            if numbers and len(set(numbers)) == 1 and "\n".join(out).strip(WS):
                new_lines = new.split("\n")
                ms = [re.match(form, line) for line in new_lines]
                if any(ms) and all(m or not line.strip(WS) for m, line in zip(ms, new_lines, strict=True)):
                    new = "\n".join(line[m.end() :] if m else line for m, line in zip(ms, new_lines, strict=True))
                return "\n".join(out), new
            if numbers:
                return None
        if numbers:
            return None
    return None


def naive_line_ends(text, matches):
    """Numbered lines deleted take their line ending: the one after, else (a last line) the one before."""
    out, prev = [], 0
    for start, end, rep, line in matches:
        at_start = start == 0 or text[start - 1] == "\n" or (start == 1 and text[0] == BOM)
        whole = at_start and not text[start:end].endswith("\n")
        if whole and text[end:end + 2] == "\r\n":
            end += 2
        elif whole and text[end:end + 1] == "\n":
            end += 1
        elif whole and end == len(text) and text[start - 1:start] == "\n" and start - 1 >= prev:
            start -= 2 if text[start - 2:start] == "\r\n" and start - 2 >= prev else 1
        out.append((start, end, rep, line))
        prev = end
    return out


def naive_unescape(s):
    out, i = [], 0
    while i < len(s):
        if s[i] == "\\" and i + 1 < len(s) and s[i + 1] in ESCAPES:
            out.append(ESCAPES[s[i + 1]])
            i += 2
        else:
            out.append(s[i])
            i += 1
    return "".join(out)


def naive_well_escaped(s):
    """Every backslash of `s` starts one of the escapes."""
    i = 0
    while i < len(s):
        if s[i] == "\\":
            if s[i + 1 : i + 2] not in ESCAPES or not s[i + 1 : i + 2]:
                return False
            i += 2
        else:
            i += 1
    return True


def naive_more(text, old, new, more):
    if "line-numbers" in more:
        stripped = naive_strip_numbers(old, new)
        if stripped:
            found = naive_cascade(text, *stripped, more=tuple(p for p in more if p != "line-numbers"))
            if found:
                return "line-numbers", naive_line_ends(text, found[1]) if stripped[1] == "" else found[1]
    if "whitespace-runs" in more:
        found = naive_lines_equal(text, old, new, runs_key)
        if found:
            return "whitespace-runs", found
    if "escapes" in more and "\n" not in old and naive_unescape(old) != old:
        if "\n" not in new and naive_unescape(new) != new and naive_well_escaped(new):
            new = naive_unescape(new)
        rest = tuple(p for p in more if p not in ("escapes", "line-numbers"))
        found = naive_cascade(text, naive_unescape(old), new, more=rest)
        if found:
            return "escapes", found[1]
    return None


def naive_seven(text, old, new):
    found = naive_upstream(text, old, new)
    if found:
        return found
    foldable = any(c in FOLD for c in text)
    if foldable or any(c in FOLD for c in old):
        found = naive_upstream(naive_fold(text), naive_fold(old), new)
        if found:
            return "unicode-punctuation", found[1]
    trimmed = naive_trim(old, new)
    if trimmed is None:
        return None
    found = naive_on_line_bounds(text, naive_upstream(text, *trimmed))
    if found:
        return "blank-lines", found[1]
    if foldable or any(c in FOLD for c in trimmed[0]):
        found = naive_on_line_bounds(text, naive_upstream(naive_fold(text), naive_fold(trimmed[0]), trimmed[1]))
        if found:
            return "blank-lines+unicode-punctuation", found[1]
    return None


def naive_on_line_bounds(text, found):
    """Only the matches that start at a line start and end at a line end (old_string was lines)."""
    if not found:
        return None
    kept = [m for m in found[1] if (m[0] == 0 or text[m[0] - 1] == "\n" or (m[0] == 1 and text[0] == BOM))
            and (m[1] == len(text) or text[m[1] - 1] == "\n" or text[m[1]] in "\r\n")]
    return (found[0], kept) if kept else None


def naive_splice(text, matches):
    out, prev = [], 0
    for start, end, rep, _ in matches:
        out += (text[prev:start], rep)
        prev = end
    return "".join([*out, text[prev:]])


def agrees_with_the_oracle(text, old, new, replace_all):
    """`apply_edit` does what the naive cascade says, refusals included; returns the strategy."""
    found = naive_cascade(text, old, new)
    try:
        edit = apply_edit(text, old, new, replace_all=replace_all)
    except ToolError as exc:
        if found is None:
            assert exc.code == "workspace.edit_no_match"
        else:
            assert (exc.code, exc.structured["count"]) == ("workspace.edit_ambiguous", len(found[1]))
            assert exc.structured["lines"] == [m[3] for m in found[1]][:20] and not replace_all
            assert exc.structured["strategy"] == found[0]
        return None
    assert found is not None and (replace_all or len(found[1]) == 1)
    strategy, matches = found
    assert (edit.strategy, list(edit.lines), edit.replacements) == (strategy, [m[3] for m in matches], len(matches))
    assert edit.text == naive_splice(text, matches)
    # Every byte outside the windows is the file's own, in order.
    prev = 0
    for start, end, _, _ in matches:
        assert text[prev:start] in edit.text
        prev = end
    assert edit.text.endswith(text[prev:]) and edit.text.startswith(text[: matches[0][0]])
    return strategy


# --- generated files ---------------------------------------------------------------------------------

ASCII_TWIN = {"-": "\u2013\u2014\u2011\u2212", "'": "\u2019\u2018", '"': "\u201c\u201d", " ": "\u00a0\u2009\u3000"}
WORD = st.sampled_from(["a", "b", "a-b", "'a'", '"b"', "a b", "x", "a–b", "“b”", "a\u00a0b", "’a’"])
PLINE = st.tuples(st.sampled_from(["", "", " ", "  ", "\t"]), st.lists(WORD, max_size=2).map(" ".join),
                  st.sampled_from(["", "", " "]), st.sampled_from(["\n", "\n", "\n", "\r\n"]))


def render(lines):
    return "".join("".join(parts) for parts in lines)


@st.composite
def edits(draw):
    """(text, old, new): old is usually a stretch of the file's lines, then perturbed."""
    file_lines = draw(st.lists(PLINE, max_size=12))
    text = render(file_lines)
    if file_lines and draw(st.booleans()):
        a = draw(st.integers(0, len(file_lines) - 1))
        b = draw(st.integers(a + 1, min(len(file_lines), a + 4)))
        old = render(file_lines[a:b])
        if draw(st.booleans()):  # swap some characters for their ASCII / Unicode twins
            chars = []
            for c in old:
                twins = ASCII_TWIN.get(c, "") + FOLD.get(c, "")
                chars.append(draw(st.sampled_from(c + twins)) if twins else c)
            old = "".join(chars)
        shift = draw(st.sampled_from(["", "", " ", "  ", "\t", "-1"]))  # indent every line, or dedent by one
        if shift == "-1":
            old = "".join(line[1:] if line[:1] in " \t" else line for line in old.splitlines(keepends=True))
        elif shift:
            old = "".join(shift + line for line in old.splitlines(keepends=True))
        if draw(st.booleans()):
            old = old.removesuffix("\n")
    else:
        old = render(draw(st.lists(PLINE, min_size=1, max_size=4)))
    lead = draw(st.sampled_from(["", "", "\n", "  \n", "\n\n", "\r\n"]))
    tail = draw(st.sampled_from(["", "", "\n", " \n", "\n\n", "  "]))
    old = lead + old + tail
    new = render(draw(st.lists(PLINE, max_size=3)))
    if draw(st.booleans()):
        new = lead + new + tail  # the model copied the blank lines into both
    if draw(st.integers(0, 9)) == 0:
        text = BOM + text
    return text, old or "a", new


@settings(max_examples=1500)
@given(edits(), st.booleans())
def test_the_cascade_does_what_the_naive_oracle_does(edit, replace_all):
    agrees_with_the_oracle(*edit, replace_all)


@settings(max_examples=600)
@given(edits())
def test_a_new_pass_changes_only_its_window_and_refuses_ambiguity(edit):
    text, old, new = edit
    found = naive_cascade(text, old, new)
    if found is None or found[0] not in NEW_PASSES:
        return
    for replace_all in (False, True):
        assert agrees_with_the_oracle(text, old, new, replace_all) in (None, found[0])


NEW_PASSES = ("unicode-punctuation", "blank-lines", "blank-lines+unicode-punctuation")


@settings(max_examples=400)
@given(st.lists(PLINE, min_size=1, max_size=4), st.integers(2, 4), st.lists(PLINE, max_size=2))
def test_a_folded_block_that_repeats_is_refused(block, times, new_lines):
    text = render(block) * times
    old = naive_fold(render(block))
    new = render(new_lines)
    found = naive_cascade(text, old, new)
    if found is not None and len(found[1]) > 1:
        with pytest.raises(ToolError) as info:
            apply_edit(text, old, new)
        assert info.value.code == "workspace.edit_ambiguous"
        assert info.value.structured["lines"] == [m[3] for m in found[1]]
    agrees_with_the_oracle(text, old, new, True)


# --- the peers' cases and examples ---------------------------------------------------------------------


def edit_case(name, file, old, new, strategy, result):
    return pytest.param(file, old, new, strategy, result, id=name)


# fmt: off
PEER_CASES = [
    # codex-rs/apply-patch/src/lib.rs, test_update_line_with_unicode_dash: the file has an EN DASH and a
    # NON-BREAKING HYPHEN, the patch plain ASCII.
    edit_case("codex unicode dash", "import asyncio  # local import \u2013 avoids top\u2011level dep\n",
              "import asyncio  # local import - avoids top-level dep\n", "import asyncio  # HELLO\n",
              "unicode-punctuation", "import asyncio  # HELLO\n"),
    # aider tests/basic/test_editblock.py, test_replace_part_with_missing_leading_whitespace_including_blank_line
    edit_case("aider blank line + missing leading whitespace", "    line1\n    line2\n    line3\n",
              "\n  line1\n  line2\n", "  new_line1\n  new_line2\n",
              "blank-lines", "    new_line1\n    new_line2\n    line3\n"),
    # ... test_replace_part_with_missing_leading_whitespace (an upstream pass already does it)
    edit_case("aider missing leading whitespace", "    line1\n    line2\n    line3\n", "line1\nline2\n",
              "new_line1\nnew_line2\n", "indentation", "    new_line1\n    new_line2\n    line3\n"),
    # ... test_replace_part_with_just_some_missing_leading_whitespace
    edit_case("aider some missing leading whitespace", "    line1\n    line2\n    line3\n", " line1\n line2\n",
              " new_line1\n     new_line2\n", "indentation", "    new_line1\n        new_line2\n    line3\n"),
    # ... test_replace_part_with_missing_varied_leading_whitespace
    edit_case("aider varied leading whitespace", "\n    line1\n    line2\n        line3\n    line4\n",
              "line2\n    line3\n", "new_line2\n    new_line3\n", "indentation",
              "\n    line1\n    new_line2\n        new_line3\n    line4\n"),
]

EXAMPLES = [
    edit_case("smart quotes in the file", 'msg = “hello”\nother\n', 'msg = "hello"\n', 'msg = "bye"\n',
              "unicode-punctuation", 'msg = "bye"\nother\n'),
    edit_case("smart quotes in old_string", "msg = 'hi'\n", "msg = ‘hi’", "msg = 'yo'",
              "unicode-punctuation", "msg = 'yo'\n"),
    edit_case("NBSP in the file, mid-line", "a\u00a0=\u00a01\nb = 2\n", "a = 1", "a = 3",
              "unicode-punctuation", "a = 3\nb = 2\n"),
    edit_case("the file's other dashes stay", "x – 1\ny – 2\nz – 3\n", "y - 2\n", "y - 9\n",
              "unicode-punctuation", "x – 1\ny - 9\nz – 3\n"),
    edit_case("folded, then re-indented", "    s = “a”\n    t = 1\n", 's = "a"\nt = 1\n', 's = "b"\nt = 1\n',
              "unicode-punctuation", '    s = "b"\n    t = 1\n'),
    edit_case("folded, CRLF file", "a – b\r\nc\r\n", "a - b\nc\n", "A\nC\n", "unicode-punctuation", "A\r\nC\r\n"),
    edit_case("exact beats folding", "a - b\na – b\n", "a - b", "X", "exact", "X\na – b\n"),
    edit_case("blank last line", "def f():\n    return 1\nx = 2\n", "def f():\n    return 1\n\n",
              "def f():\n    return 2\n\n", "blank-lines", "def f():\n    return 2\nx = 2\n"),
    edit_case("blank first lines, new without them", "a\nb\nc\n", "\n\nb\n", "B\n", "blank-lines", "a\nB\nc\n"),
    edit_case("blank first line kept in new", "a\nb\nc\n", "\n\nb\n", "\nB\n", "blank-lines", "a\n\nB\nc\n"),
    edit_case("whitespace-only last line", "a\nb\nc", "a\nb\n   ", "x\ny\n   ", "blank-lines", "x\ny\nc"),
    edit_case("blank lines both ends", "a\nb\nc\n", "\n  \nb\n\n", "\n  \nB\n\n", "blank-lines", "a\nB\nc\n"),
    edit_case("blank lines then trailing ws", "a  \nb\n", "\na\nb\n", "\nA\nB\n", "blank-lines", "A\nB\n"),
    edit_case("blank lines then folding", "a – b\nc\n", "\na - b\n", "x\n", "blank-lines+unicode-punctuation",
              "x\nc\n"),
    edit_case("CRLF blank lines", "a\r\nb\r\n", "\r\na\r\nb\r\n\r\n", "\r\nx\r\n\r\n", "blank-lines", "x\r\n"),
]
# fmt: on


@pytest.mark.parametrize(("file", "old", "new", "strategy", "result"), PEER_CASES + EXAMPLES)
def test_edit_case(file, old, new, strategy, result):
    edit = apply_edit(file, old, new)
    assert (edit.strategy, edit.text) == (strategy, result)
    assert agrees_with_the_oracle(file, old, new, False) == strategy


@pytest.mark.parametrize(("file", "old", "new", "strategy"), [
    ("a – b\nx\na — b\n", "a - b", "c", "unicode-punctuation"),  # two dashes fold to the same
    ("b\nc\nb\n", "\n\nb\n", "B\n", "blank-lines"),  # the trimmed old_string is found twice
    ("x = “1”\nx = '1'\nx = \"1\"\n", "x = ”1”\n", "y\n", "unicode-punctuation"),
])
def test_a_new_pass_refuses_several_matches(file, old, new, strategy):
    with pytest.raises(ToolError) as info:
        apply_edit(file, old, new)
    assert (info.value.code, info.value.structured["strategy"]) == ("workspace.edit_ambiguous", strategy)
    assert apply_edit(file, old, new, replace_all=True).strategy == strategy


@pytest.mark.parametrize(("file", "old"), [
    ("a\nb\n", "\n\n"),  # only blank lines: nothing to anchor on
    ("foo\n", "\n\n  \n"),
    ("a\nb\n", "b\nc\n\n"),  # dropping the blank line leaves a mismatch
])
def test_nothing_is_guessed(file, old):
    with pytest.raises(ToolError) as info:
        apply_edit(file, old, "zzz")
    assert info.value.code == "workspace.edit_no_match"


def test_aider_multiple_matches_are_refused_not_replaced_at_the_first():
    # aider's test_replace_multiple_matches replaces the first "line1"; toolbench refuses.
    with pytest.raises(ToolError) as info:
        apply_edit("line1\nline2\nline1\nline3\n", "line1\n", "new_line\n")
    assert (info.value.code, info.value.structured["lines"]) == ("workspace.edit_ambiguous", [1, 3])
    with pytest.raises(ToolError) as info:
        apply_edit("    line1\n    line2\n    line1\n    line3\n", "line1\n", "new_line\n")
    assert info.value.code == "workspace.edit_ambiguous"


def test_the_fold_is_codexs_set():
    from toolbench.tools.workspace.edit_fold import FOLDED, fold

    assert FOLDED == FOLD
    sample = "".join(FOLD)
    assert fold(sample) == naive_fold(sample) and len(fold(sample)) == len(sample)
    assert fold("\u2032\u2033\u2000\u200b") == "\u2032\u2033\u2000\u200b"  # primes, EN QUAD, ZWSP: not Codex's


def test_the_passes_stop_at_the_builtin_time_limit():
    from toolbench.tools.base import time_limit

    text, old = "\tvalue = 1\n" * 5_000, "  value = 1\n" * 50  # every window's shift is checked
    with time_limit(-1.0), pytest.raises(ToolError) as info:
        apply_edit(text, old, "x")
    assert info.value.code == "tool.timeout"


SLOW_BEFORE = ("dense lines, trailing ws, 4,000-line old: near miss", "CRLF, 4,000-line near-miss LF old",
               "indentation: every window rejected (tabs)", "precheck: 5,000-line old, all lines in the file")


@pytest.mark.parametrize("name", SLOW_BEFORE)
def test_the_inputs_that_were_quadratic_take_milliseconds(name):
    # Before issue 15 each took seconds at this size (benchmarks/bench_edit.py times them); the
    # bound is two orders of magnitude above today's figure, so a loaded machine does not fail it.
    import contextlib
    import time

    from benchmarks.bench_edit import PATHOLOGICAL

    text, old, new = PATHOLOGICAL[name](400_000, 1.0)
    started = time.perf_counter()
    with contextlib.suppress(ToolError):
        apply_edit(text, old, new)
    assert time.perf_counter() - started < 3.0
