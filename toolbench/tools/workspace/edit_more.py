"""The last passes of the edit matcher: what a model's old_string carries that the file lacks.

Tried by `edit_match._find` only when every earlier pass (LiveAgent's four, unicode-punctuation,
blank-lines, blank-lines+unicode-punctuation) found nothing, in this order; the first with a
match wins. Like the others, each refuses on ambiguity (more than one match without replace_all
is `workspace.edit_ambiguous`, with each match's line) and never touches a byte outside its
windows:

    line-numbers     every non-blank line of old_string starts with a line-number prefix, the
                     numbers consecutive: `workspace.read_file`'s `   12\\tline`, or Roo's / Cline's
                     `12 | line` (one form throughout). The prefixes are stripped, and from
                     new_string too when each of its non-blank lines carries one; then the whole
                     cascade runs again on the stripped text (every pass but this one), and its
                     replacement rule applies. A file whose lines really begin so matched exact.
                     Numbered lines are whole lines: replaced by an empty new_string, each match
                     that is whole lines goes with its line ending (`take_line_ends`; Roo's
                     multi-search-replace spec), where the other passes would leave a blank line.
    whitespace-runs  whole-line windows whose lines equal old_string's with every run of
                     whitespace inside a line (after its first non-blank character) read as
                     one space and trailing whitespace ignored; the indentation must be the
                     file's exactly (a different indentation is the indentation pass's, and
                     one no uniform shift explains is refused, as LiveAgent refuses it);
                     new_string goes in as given, in the file's dominant line ending. Tried only
                     if that reading changes old_string or the file.
    escapes          old_string holds no newline but written-out escapes (\\n \\t \\r \\" \\' \\`
                     \\\\ \\$: a model's JSON escaped twice): they are read as the characters they
                     stand for, in new_string too when it holds no newline, holds such an
                     escape and every backslash in it starts one; then the cascade runs again
                     (every pass but this one and line-numbers).

Only line-numbers widens a deletion: elsewhere old_string is text, not lines, so an empty
new_string removes that text and no more (LiveAgent's whole-line windows end before the last
line's line ending unless old_string ends with a newline, reference §1.6; whitespace-runs keeps
that span, blank-lines keeps old_string's final newline as written).

The passes reached after a prefix strip or an unescape report that first step as the strategy.
None of them runs with the unicode-punctuation or blank-lines variants of its own (line-numbers
and escapes do, through the cascade they rerun): whitespace-runs is the loosest pass already,
and a fold on top of it would widen what one old_string can match. Cline's line-trimmed
fallback (lines equal after a full trim, new_string written as given) is left out on purpose:
it takes windows whose indentation no uniform shift explains, which LiveAgent's reference
refuses (non-uniform, partial and opposite shifts, tabs against spaces).

Why they are safe: the strict passes already tried the text as the model wrote it, so a literal
prefix or escape in the file would have matched there; nothing is guessed by similarity (each
pass finds old_string's text, transformed as named, line for line in the file's); a window is
whole lines, so the bytes around it stay the file's; and only a unique match is taken.

Cost, each linear in len(file) + len(old_string): line-numbers and escapes are one regex pass
over old_string (and new_string) that usually fails on its first line, then the cascade once
more; whitespace-runs first checks that old_string's longest words occur in the file (a few substring
searches), then one regex substitution over the joined lines and one `str.find` loop.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from . import edit_text
from .edit_fold import BOM, WS

if TYPE_CHECKING:
    from .edit_text import Strategy, _Match, _Text

__all__ = ["MORE", "drop_blank_lines", "find_more", "strip_line_numbers", "take_line_ends", "unescape"]

MORE: frozenset[str] = frozenset({"line-numbers", "whitespace-runs", "escapes"})

Find = Callable[..., "tuple[Strategy, list[_Match]] | None"]

_INLINE_WS = WS.replace("\n", "")
# A run of whitespace inside a line: after a character that is not whitespace (nor the LF that
# separates joined lines), so a line's indentation is never read as a run.
_RUN = re.compile(f"(?<=[^{re.escape(WS)}])"
                  f"(?:[{re.escape(_INLINE_WS)}]{{2,}}|[{re.escape(_INLINE_WS.replace(' ', ''))}])")
_NUMBER = {"read": re.compile(r" *([0-9]{1,9})\t"), "pipe": re.compile(r" *([0-9]{1,9}) +\| ?")}  # int() stays cheap
_ESCAPE = re.compile(r"\\([ntr\"'`\\$])")
_ESCAPED = re.compile(r"(?:[^\\]|\\[ntr\"'`\\$])*", re.DOTALL)  # every backslash starts an escape
_UNESCAPED = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "'": "'", "`": "`", "\\": "\\", "$": "$"}
_FEW_WORDS = 8  # old_string's longest words searched in the file before the whitespace-runs pass


def find_more(
    t: _Text, old: str, new: str, every: bool, passes: frozenset[str], find: Find
) -> tuple[Strategy, list[_Match]] | None:
    """The first of `passes` (in the order above) with a match; `find` is the whole cascade,
    called as find(text, old, new, every=..., more=...)."""
    if "line-numbers" in passes:
        stripped = strip_line_numbers(old, new)
        if stripped is not None:
            found = find(t, *stripped, every=every, more=passes - {"line-numbers"})
            if found:
                return "line-numbers", take_line_ends(t.text, found[1]) if stripped[1] == "" else found[1]
    pattern = edit_text._Pattern.parse(old)
    if pattern is not None and t.lines.count:
        new_lf = new.replace("\r\n", "\n")
        rendered = new_lf.replace("\n", t.eol) if t.eol != "\n" else new_lf
        if "whitespace-runs" in passes:
            matches = _whitespace_runs(t, pattern, rendered)
            if matches:
                return "whitespace-runs", matches
    if "escapes" in passes:
        unescaped = unescape(old, new)
        if unescaped is not None:
            found = find(t, *unescaped, every=every, more=passes - {"escapes", "line-numbers"})
            if found:
                return "escapes", found[1]
    return None


# --- line-numbers -------------------------------------------------------------------------------


def strip_line_numbers(old: str, new: str) -> tuple[str, str] | None:
    """(old, new) without their line-number prefixes, or None unless every non-blank line of
    old carries one (one form, numbers consecutive: line k of old has the first's number + k)
    and some text is left."""
    pieces = old.split("\n")
    first = next((k for k, p in enumerate(pieces) if p.strip(WS)), None)
    if first is None:
        return None
    form = next((f for f, rx in _NUMBER.items() if rx.match(pieces[first])), None)
    if form is None:
        return None
    rx = _NUMBER[form]
    base: int | None = None
    out: list[str] = []
    for k, piece in enumerate(pieces):
        if not piece.strip(WS):
            out.append(piece)
            continue
        m = rx.match(piece)
        if m is None:
            return None
        number = int(m[1]) - k
        if base is None:
            base = number
        elif number != base:
            return None
        out.append(piece[m.end() :])
    stripped = "\n".join(out)
    if not stripped.strip(WS):
        return None  # prefixes and nothing else: no text to find
    return stripped, _strip_all(new, rx)


def take_line_ends(text: str, matches: list[_Match]) -> list[_Match]:
    """`matches` deleting whole lines, each widened over its line ending (the one after it, or for
    a last line without one the one before it, unless the match before took that one), so no
    blank line is left; a match that is not whole lines, or already ends with its LF, is kept."""
    out: list[_Match] = []
    taken = 0  # where the previous match ends
    for m in matches:
        start, end = m.start, m.end
        starts_line = start == 0 or text[start - 1] == "\n" or (start == 1 and text[0] == BOM)
        if starts_line and end > start and text[end - 1] != "\n":
            if text.startswith("\r\n", end):
                end += 2
            elif text.startswith("\n", end):
                end += 1
            elif end == len(text) and start > taken and text[start - 1] == "\n":
                start -= 2 if start - 2 >= taken and text[start - 2] == "\r" else 1
        out.append(m._replace(start=start, end=end))
        taken = end
    return out


def _strip_all(new: str, rx: re.Pattern[str]) -> str:
    """`new` without its prefixes if each of its non-blank lines has one, else as given."""
    pieces = new.split("\n")
    matched = [rx.match(p) for p in pieces]
    if not any(matched) or any(m is None and p.strip(WS) for m, p in zip(matched, pieces, strict=True)):
        return new
    return "\n".join(p if m is None else p[m.end() :] for m, p in zip(matched, pieces, strict=True))


# --- whitespace-runs ------------------------------------------------------------


def _whitespace_runs(t: _Text, pattern: edit_text._Pattern, rendered: str) -> list[_Match]:
    cores = [key.lstrip(WS) for key in pattern.rkeys]
    if not any(cores) or t.lines.count < len(cores):
        return []
    words = sorted({w for core in cores for w in core.split()}, key=len, reverse=True)[:_FEW_WORDS]
    if not all(w in t.text for w in words):
        return []  # a word of old_string the file lacks: no line can match
    plain = edit_text._joined(pattern.rkeys)
    needle = _RUN.sub(" ", plain)
    hay, changed = _RUN.subn(" ", edit_text._joined(t.lines.rkeys))
    if not changed and needle == plain:
        return []  # the reading changes neither side: the trailing-whitespace pass tried this
    starts = edit_text.window_starts(hay, needle)
    return t.lines.matches([(i, rendered) for i in starts], pattern)


# --- escapes -------------------------------------------------------------------------------------


def unescape(old: str, new: str) -> tuple[str, str] | None:
    """(old, new) with written-out escapes read, or None unless old has no newline and one."""
    if "\n" in old or not _ESCAPE.search(old):
        return None
    if "\n" not in new and _ESCAPE.search(new) and _ESCAPED.fullmatch(new):
        new = _ESCAPE.sub(lambda m: _UNESCAPED[m[1]], new)
    return _ESCAPE.sub(lambda m: _UNESCAPED[m[1]], old), new


# --- blank-lines (used by edit_match's cascade) ---------------------------------------------------


def drop_blank_lines(old: str, new: str) -> tuple[str, str] | None:
    """(old, new) without old_string's whitespace-only first and last lines, or None if it has
    none or nothing else. The last real line keeps the newline it has in old_string; `new` loses
    the same leading / trailing lines only if it has them as whole lines too."""
    pieces = old.split("\n")  # all but the last piece are lines ended by "\n"
    blank = [not p.strip(WS) for p in pieces]
    n = len(pieces)
    a = 0
    while a < n - 1 and blank[a]:
        a += 1
    b = n - 1 if blank[-1] else n  # a blank unterminated rest goes ("" when old ends with "\n")
    while b > a and blank[b - 1]:
        b -= 1
    if a >= b:
        return None  # only blank lines
    start = sum(map(len, pieces[:a])) + a
    kept = "\n".join(pieces[a:b]) + ("\n" if b < n else "")
    if kept == old:
        return None
    lead, tail = old[:start], old[start + len(kept) :]
    if lead and new.startswith(lead):
        new = new[len(lead) :]
    if tail and new.endswith(tail) and (len(new) == len(tail) or new[-len(tail) - 1] == "\n"):
        new = new[: len(new) - len(tail)]
    return kept, new
