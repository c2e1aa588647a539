"""The no-match error of an Edit: the closest region of the file and what differs there, in words.

Found in time linear in the file plus old_string, and never a guess applied: the error only
shows the model where to look and what to copy.

    closest region   each file line whose trimmed text (punctuation folded) equals some trimmed
                     line of old_string is marked (a set lookup); the window of old_string's
                     height with the most marked lines (a sliding sum, the first on ties) is the
                     region, aligned so that its first marked line faces the old_string line it
                     equals; no marked line, no region
    escapes          old_string holding literal \\n, \\t, \\" (a model's JSON escaped twice): if
                     old_string unescaped would match, that match is the region (nothing is applied)
    differences      the region's lines against old_string's, pair by pair: indentation (equal
                     after trimming), tabs vs spaces, Unicode punctuation (equal once folded; only
                     reported when folding makes the line equal), and the first line that differs
                     otherwise (with a line the file has and old_string lacks, or the reverse)

`structured`: `firstLineFoundAt` (where old_string's first non-blank line occurs in the file),
`closest` ({startLine, endLine, matchingLines, totalLines}: the region's 1-based lines, how many
of them are marked, and old_string's line count; None without a region) and `differences`
(short codes: indentation, tabs_vs_spaces, unicode_punctuation, escaped_newlines, escaped_tabs,
escaped_quotes, line_differs, old_longer_than_file). The message stays under `MAX_MESSAGE`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from itertools import accumulate
from operator import sub
from typing import Any

from ...core.errors import ToolError
from .edit_fold import BOM, WS, fold

__all__ = ["MAX_MESSAGE", "no_match_error"]

MAX_MESSAGE = 2_500  # characters of the whole message
MAX_SHOWN_LINES = 12  # region lines quoted
MAX_LINE = 200  # characters of a quoted line
_PAIR_LINE = 160  # characters of each line of a differing pair (shown with escapes)

_INTRO = (
    "old_string was not found; nothing was changed. Allowed for: CRLF/LF line endings, trailing whitespace,\n"
    "a uniform indentation shift, Unicode punctuation, blank first/last lines, line-number prefixes,\n"
    "runs of spaces inside lines and written-out escapes."
)
_ADVICE = (
    "Copy old_string verbatim from the file (same indentation, tabs vs spaces, blank lines), with a few "
    "unchanged lines around it; re-read the file if unsure, or locate the text with Grep first."
)
_ESCAPE = re.compile(r"\\([\\ntr\"'])")
_UNESCAPED = {"\\": "\\", "n": "\n", "t": "\t", "r": "\r", '"': '"', "'": "'"}
_ESCAPE_CODES = {"n": "escaped_newlines", "r": "escaped_newlines", "t": "escaped_tabs", '"': "escaped_quotes",
                 "'": "escaped_quotes"}
_ESCAPE_WORDS = {"escaped_newlines": "\\n for line breaks", "escaped_tabs": "\\t for tabs",
                 "escaped_quotes": '\\" or \\\' for quotes'}

# (first 1-based line of the match, number of matches, strategy) if this old_string would match
Locate = Callable[[str], "tuple[int, int, str] | None"]


def no_match_error(text: str, file_lines: list[str], file_keys: list[str], old: str, locate: Locate) -> ToolError:
    """The `workspace.edit_no_match` error for `old` in `text`.

    `file_lines`: each file line without its EOL and trailing whitespace (the matcher's line
    model); `file_keys`: each fully trimmed, with punctuation folded; `locate`: the matcher run on
    another old_string (for the escape check)."""
    first = next((s.strip(WS) for s in old.split("\n") if s.strip(WS)), "")
    pos = text.find(first) if first else -1
    first_found = text.count("\n", 0, pos) + 1 if pos != -1 else None
    old_lines = _pattern_lines(old)
    closest: dict[str, int] | None = None
    codes: list[str] = []
    words: list[str] = []
    region: tuple[int, int, int] | None = None  # 0-based first line, height, line to show first
    summary = ""
    escaped = _escape_codes(old)
    if escaped:
        unescaped = _ESCAPE.sub(lambda m: _UNESCAPED[m[1]], old)
        hit = locate(unescaped)
        if hit is not None:
            line, count, strategy = hit
            total = len(_pattern_lines(unescaped))
            height = max(1, min(total, len(file_lines) - line + 1))
            region = (line - 1, height, line - 1)
            closest = {"startLine": line, "endLine": line + height - 1, "matchingLines": height, "totalLines": total}
            codes += escaped
            where = f"line {line}" if count == 1 else f"{count} places (the first at line {line})"
            summary = f"With its escape sequences unescaped, old_string would match at {where} ({strategy})."
            words.append("old_string holds literal escape sequences (" + ", ".join(_ESCAPE_WORDS[c] for c in escaped)
                         + ") where the file has the real characters. Send old_string and new_string with real "
                         "line breaks, tabs and quotes.")
    if region is None and old_lines and file_lines:
        found = _closest(file_keys, old_lines)
        if found is not None:
            start, height, marked = found
            closest = {"startLine": start + 1, "endLine": start + height, "matchingLines": marked,
                       "totalLines": len(old_lines)}
            diff_codes, diff_words, focus = _differences(file_lines, start, height, old_lines)
            codes += diff_codes
            words += diff_words
            region = (start, height, start if focus is None else focus)
            lines = f"lines {start + 1}-{start + height}" if height > 1 else f"line {start + 1}"
            summary = (f"The closest region of the file is {lines} ({marked} of old_string's "
                       f"{_count(len(old_lines), 'line')} found there, compared trimmed).")
    if not summary:
        summary = (f"Its first non-blank line appears at line {first_found}: the difference is after it."
                   if first_found is not None else "No line of old_string appears in the file, even trimmed.")
    head = _INTRO + "\n" + summary + ("\nWhat differs:\n" + "\n".join(f"- {w}" for w in words) if words else "")
    head = head[: MAX_MESSAGE - len(_ADVICE) - 2]
    budget = MAX_MESSAGE - len(head) - len(_ADVICE) - 2
    if region is not None and budget > 80:
        head += "\n" + _quote(file_lines, *region, budget)
    structured: dict[str, Any] = {"firstLineFoundAt": first_found, "closest": closest, "differences": codes}
    return ToolError("workspace.edit_no_match", head + "\n" + _ADVICE, structured=structured)


def _pattern_lines(old: str) -> list[str]:
    """old_string's lines as the whole-line passes read them: no BOM, no final empty line, no
    trailing whitespace."""
    pieces = old.removeprefix(BOM).split("\n")
    if pieces[-1] == "":
        pieces.pop()
    return [p.rstrip(WS) for p in pieces]


def _escape_codes(old: str) -> list[str]:
    codes: list[str] = []
    for m in _ESCAPE.finditer(old):
        code = _ESCAPE_CODES.get(m[1])
        if code is not None and code not in codes:
            codes.append(code)
    return codes


def _closest(file_keys: list[str], old_lines: list[str]) -> tuple[int, int, int] | None:
    """(first line, height, marked lines) of the closest region, or None if no line is marked."""
    old_keys = [fold(line.lstrip(WS)) for line in old_lines]
    wanted = set(old_keys) - {""}
    marks = [key in wanted for key in file_keys]
    n, height = len(file_keys), min(len(old_lines), len(file_keys))
    cum = [0, *accumulate(marks)]
    sums = list(map(sub, cum[height:], cum[: n - height + 1]))
    best = max(sums)
    if best == 0:
        return None
    window = sums.index(best)
    # Align: the window's first marked line faces the first old_string line it equals.
    marked = marks.index(True, window)
    start = max(0, min(marked - old_keys.index(file_keys[marked]), n - height))
    return start, height, cum[start + height] - cum[start]


def _differences(file_lines: list[str], start: int, height: int, old_lines: list[str]
                 ) -> tuple[list[str], list[str], int | None]:
    """The difference codes, their descriptions and the 0-based file line of the first one."""
    codes: list[str] = []
    words: list[str] = []
    focus: int | None = None

    def note(code: str, line: int, text: str) -> None:
        nonlocal focus
        if code not in codes:
            codes.append(code)
            words.append(text)
        if focus is None:
            focus = line

    deeper: set[str | None] = set()  # per non-blank pair equal once trimmed: what old_string adds, if it does
    for j in range(height):
        x = start + j
        f, o = file_lines[x], old_lines[j]
        fc, oc = f.lstrip(WS), o.lstrip(WS)
        if fc and fc == oc:
            lf, lo = f[: len(f) - len(fc)], o[: len(o) - len(oc)]
            deeper.add(lo[: len(lo) - len(lf)] if len(lo) > len(lf) and lo.endswith(lf) else None)
        if f == o:
            continue
        if fc == oc:
            if ("\t" in lf) != ("\t" in lo):
                note("tabs_vs_spaces", x, f"tabs vs spaces: line {x + 1} of the file is indented with "
                     f"{_indent(lf)} where old_string's line {j + 1} has {_indent(lo)}.")
            else:
                note("indentation", x, f"indentation: line {x + 1} of the file is indented with {_indent(lf)} "
                     f"where old_string's line {j + 1} has {_indent(lo)} (the lines equal after trimming; "
                     "only one uniform shift of the whole block is tolerated).")
            continue
        if fc and fold(fc) == fold(oc):
            pairs = dict.fromkeys(f"{_char(a)} where old_string has {_char(b)}"
                                  for a, b in zip(fc, oc, strict=True) if a != b)
            note("unicode_punctuation", x, f"Unicode punctuation: line {x + 1} of the file has "
                 + "; ".join(list(pairs)[:3]) + f" (old_string's line {j + 1}); copy the file's characters.")
            continue
        extra = ""
        if j + 1 < len(old_lines) and _same(f, old_lines[j + 1]):
            extra = f" old_string's line {j + 1} is not in the file here."
        elif x + 1 < len(file_lines) and _same(file_lines[x + 1], o):
            extra = f" The file has line {x + 1} here, which old_string lacks."
        note("line_differs", x, f"line {x + 1} of the file differs from old_string's line {j + 1}:{extra}\n"
             f"  file:       {_cut(f, _PAIR_LINE)!r}\n  old_string: {_cut(o, _PAIR_LINE)!r}")
        break
    if codes == ["indentation"] and len(deeper) == 1 and None not in deeper:
        words[0] = (f"indentation: old_string is indented {_indent(next(iter(deeper)) or '')} deeper than the file "
                    "on every line; that shift is taken off new_string too, so each non-blank line of new_string "
                    "must start with it.")
    if height < len(old_lines):
        note("old_longer_than_file", start + height - 1,
             f"old_string has {len(old_lines)} lines; the file has only {len(file_lines)}.")
    if not codes:
        words.append("the region's lines equal old_string's line by line once trailing whitespace is ignored; "
                     "look for line-ending or invisible-character differences.")
    return codes, words, focus


def _same(a: str, b: str) -> bool:
    return fold(a.strip(WS)) == fold(b.strip(WS))


def _count(n: int, what: str) -> str:
    return f"{n} {what}" + ("s" if n != 1 else "")


def _indent(lead: str) -> str:
    if not lead:
        return "no indentation"
    if lead == " " * len(lead):
        return _count(len(lead), "space")
    if lead == "\t" * len(lead):
        return _count(len(lead), "tab")
    return repr(lead)


def _char(c: str) -> str:
    return repr(c) if c.isascii() else f"{c} (U+{ord(c):04X})"


def _cut(line: str, limit: int) -> str:
    return line if len(line) <= limit else line[:limit] + "…"


def _quote(file_lines: list[str], start: int, height: int, focus: int, budget: int) -> str:
    """The region's lines with their numbers: at most MAX_SHOWN_LINES around `focus`, each cut at
    MAX_LINE characters, within `budget` characters."""
    first = max(start, min(focus - 2, start + height - MAX_SHOWN_LINES))
    last = min(start + height, first + MAX_SHOWN_LINES)
    head = f"File lines {first + 1}-{last}" if last > first + 1 else f"File line {last}"
    head += " (part of the region)" if (first, last) != (start, start + height) else ""
    out = [head + ":"]
    used = len(out[0]) + 1
    width = len(str(last))
    for x in range(first, last):
        row = f"{x + 1:>{width}} | {_cut(file_lines[x], MAX_LINE)}"
        if used + len(row) + 1 > budget:
            out.append("…")
            break
        out.append(row)
        used += len(row) + 1
    return "\n".join(out)
