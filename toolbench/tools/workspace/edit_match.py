"""Where an Edit's `old_string` sits in a file, and the file text after the edit.

LiveAgent's matcher (`edit_match.rs`): four passes, strictest first, and the first pass with at
least one match wins; ambiguity and counts are judged within that pass only.

    exact                plain substring, non-overlapping; `new` goes in verbatim
    line_endings         CRLF -> LF on both sides, a leading BOM ignored; mid-line fragments allowed
    trailing_whitespace  whole-line windows, each line compared without trailing whitespace
    indentation          whole-line windows equal after a full trim that differ by one uniform
                         leading-whitespace shift; `new` is re-indented by that shift

The fuzzy passes write `new` in the file's dominant line ending. Upstream spells the strategies
with hyphens (`line-endings`); toolbench uses underscores. One deliberate difference: upstream
picks indentation windows before checking their shift, so a rejected window can hide a valid
overlapping one; here only valid windows take part in the leftmost, non-overlapping choice.

Every pass is linear in the size of the file: searches run as `str.find` over the text or over
one joined string of per-line keys, never as a loop over windows. The whole-line passes build
those keys only for the stretches around the lines that hold old_string's longest trimmed line
(`_candidate_views`), so a large file costs little more than that one search. Pure: no I/O.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from itertools import accumulate
from operator import eq
from typing import Literal, NamedTuple

from ...core.errors import ToolError
from ..base import check_deadline

__all__ = ["EditResult", "Strategy", "apply_edit", "dry_run", "unified_diff"]

Strategy = Literal["exact", "line_endings", "trailing_whitespace", "indentation"]

_BOM = "\ufeff"
# Rust's `char::is_whitespace` (Unicode White_Space); Python's str.isspace also takes \x1c-\x1f.
_WS = "\t\n\x0b\x0c\r \x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000" + "".join(map(chr, range(0x2000, 0x200B)))
_CORE = "\x00"  # separates a line's indentation relation from its trimmed text (never whitespace)
_TAIL = "\x01"  # separates the two tails of a relation
_MAX_LISTED = 20  # match lines quoted in an ambiguity message
_HUNK = re.compile(r"@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@")


@dataclass(frozen=True, slots=True)
class EditResult:
    """A successful edit: the new text, the pass that matched, and where."""

    text: str
    strategy: Strategy
    replacements: int
    lines: tuple[int, ...]  # 1-based line of the start of each replaced match


class _Match(NamedTuple):
    start: int
    end: int
    replacement: str
    line: int  # 1-based


def apply_edit(
    text: str,
    old: str,
    new: str,
    *,
    replace_all: bool = False,
    expected_replacements: int | None = None,
) -> EditResult:
    """Replace `old` with `new` in `text`, tolerating line-ending, whitespace and indent drift.

    Raises `ToolError` with `workspace.edit_no_match`, `workspace.edit_ambiguous` (several
    matches without `replace_all`), `workspace.edit_count_mismatch` (`expected_replacements`
    differs from the count applied) or `tool.invalid_arguments`. `old == new` is allowed, as
    upstream: a fuzzy match still rewrites the window in the file's own line endings.
    """
    if not old:
        # Upstream's TS layer and backend both refuse an empty old_string before matching.
        raise ToolError("tool.invalid_arguments", "old_string must not be empty.")
    if expected_replacements is not None and (
        isinstance(expected_replacements, bool)
        or not isinstance(expected_replacements, int)
        or expected_replacements < 1
    ):
        raise ToolError("tool.invalid_arguments", "expected_replacements must be an integer of at least 1.")
    strategy, matches = _find(text, old, new)
    if not matches:
        raise _no_match(text, old)  # upstream: edit_no_match
    lines = [m.line for m in matches]
    if len(matches) > 1 and not replace_all:
        listed = ", ".join(map(str, lines[:_MAX_LISTED])) + (", ..." if len(lines) > _MAX_LISTED else "")
        raise ToolError(  # upstream: edit_ambiguous
            "workspace.edit_ambiguous",
            f"old_string matched {len(matches)} locations (lines {listed}); nothing was changed. "
            "Add surrounding lines to old_string so it matches exactly one place, "
            "or set replace_all=true to replace every match.",
            structured={"count": len(matches), "lines": lines[:_MAX_LISTED], "strategy": strategy},
        )
    applied = matches if replace_all else matches[:1]
    if expected_replacements is not None and expected_replacements != len(applied):
        raise ToolError(  # upstream: edit_count_mismatch
            "workspace.edit_count_mismatch",
            f"expected {expected_replacements} replacement(s) but found {len(applied)}; nothing was changed.",
            structured={"expected": expected_replacements, "actual": len(applied), "lines": lines[:_MAX_LISTED]},
        )
    return EditResult(_splice(text, applied), strategy, len(applied), tuple(m.line for m in applied))


def unified_diff(path: str, before: str, after: str) -> str:
    """A unified diff from `before` to `after` with `a/<path>` and `b/<path>` headers; "" if equal.

    Lines split at `\\n` only, so a CR that changes shows up; a last line without a newline gets
    git's `\\ No newline at end of file` marker."""
    a, b = _split_lines(before), _split_lines(after)
    # difflib sees only the changed middle and its 3 context lines; the hunk headers are then
    # shifted by the lines left out at the top.
    head = max([*map(eq, a, b), False].index(False) - 3, 0)
    tail = max([*map(eq, reversed(a[head:]), reversed(b[head:])), False].index(False) - 3, 0)
    out: list[str] = []
    for line in difflib.unified_diff(a[head : len(a) - tail], b[head : len(b) - tail], f"a/{path}", f"b/{path}"):
        if line.startswith("@@"):
            line = _HUNK.sub(lambda m: f"@@ -{int(m[1]) + head}{m[2] or ''} +{int(m[3]) + head}{m[4] or ''} @@", line)
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def dry_run(
    path: str,
    text: str,
    old: str,
    new: str,
    *,
    replace_all: bool = False,
    expected_replacements: int | None = None,
) -> str:
    """The unified diff `apply_edit` would make to `text` (the content of `path`); writes nothing.

    Raises the same `ToolError`s as `apply_edit`."""
    result = apply_edit(text, old, new, replace_all=replace_all, expected_replacements=expected_replacements)
    return unified_diff(path, text, result.text)


# --- the cascade --------------------------------------------------------------------------------


def _find(text: str, old: str, new: str) -> tuple[Strategy, list[_Match]]:
    matches = _exact(text, old, new)
    if matches:
        return "exact", matches
    eol = "\r\n" if _crlf_dominant(text) else "\n"
    new_lf = new.replace("\r\n", "\n")
    rendered = new_lf.replace("\n", eol) if eol != "\n" else new_lf
    matches = _line_endings(text, old, rendered)
    if matches:
        return "line_endings", matches
    pattern = _Pattern.parse(old)
    if pattern is None or any(core not in text for core in pattern.cores()):
        return "exact", []  # a whole-line window needs every trimmed line of old_string in the file
    views = _candidate_views(text, pattern)
    if views is None:
        views = [_Lines(text)]
    matches = [m for view in views for m in _trailing_whitespace(view, pattern, rendered)]
    if matches:
        return "trailing_whitespace", matches
    return "indentation", [m for view in views for m in _indentation(view, pattern, new_lf, eol)]


def _candidate_views(text: str, pattern: _Pattern) -> list[_Lines] | None:
    """The only stretches of `text` where a whole-line window can match, or None for all of it.

    A window's line at old_string's anchor row (the one with the longest trimmed text) holds
    that text, so every window is the one placed by an occurrence of it; windows that overlap
    are merged into one stretch. Matching within the stretches finds what matching the whole
    file finds: no window crosses from one stretch into another. Past `_MAX_CANDIDATE_LINES`
    candidate lines the whole file is cheaper, and is used."""
    cores = [key.lstrip(_WS) for key in pattern.rkeys]
    anchor = max(range(len(cores)), key=lambda j: len(cores[j]))
    core, height = cores[anchor], len(cores)
    if not core:
        return None
    spans: list[list[int]] = []  # [first line, start offset, end offset] of each merged stretch
    line, counted = 0, 0
    pos = text.find(core)
    while pos != -1:
        check_deadline()
        line += text.count("\n", counted, pos)
        line_start = text.rfind("\n", 0, pos) + 1
        counted = pos = line_start
        first, start = line - anchor, line_start
        for _ in range(min(anchor, line)):  # back to the window's first line
            start = text.rfind("\n", 0, start - 1) + 1
        end = line_start
        for _ in range(height - anchor):  # on past the window's last line, its newline included
            end = text.find("\n", end) + 1
            if end == 0:
                end = len(text)
                break
        if first >= 0:
            if spans and start <= spans[-1][2]:
                spans[-1][2] = end
            else:
                spans.append([first, start, end])
        if len(spans) * height > _MAX_CANDIDATE_LINES:
            return None
        next_line = text.find("\n", pos)
        if next_line == -1:
            break
        pos = text.find(core, next_line + 1)
    return [_Lines(text, start, end, first) for first, start, end in spans]


_MAX_CANDIDATE_LINES = 20_000


def _crlf_dominant(text: str) -> bool:
    crlf = text.count("\r\n")
    return crlf > 0 and crlf >= text.count("\n") - crlf  # a tie goes to CRLF


def _exact(text: str, old: str, new: str) -> list[_Match]:
    out: list[_Match] = []
    line, counted = 1, 0
    pos = text.find(old)
    while pos != -1:
        line += text.count("\n", counted, pos)
        counted = pos
        out.append(_Match(pos, pos + len(old), new, line))
        pos = text.find(old, pos + len(old))
    return out


def _line_endings(text: str, old: str, rendered: str) -> list[_Match]:
    bom = 1 if text.startswith(_BOM) else 0
    needle = old.removeprefix(_BOM).replace("\r\n", "\n")
    if not needle or (not bom and needle == old and "\r\n" not in text):
        return []  # empty, or the same search as the exact pass
    out: list[_Match] = []
    line, counted = 1, 0
    for hit in _crlf_blind(needle).finditer(text, bom):
        check_deadline()
        line += text.count("\n", counted, hit.start())
        counted = hit.start()
        out.append(_Match(hit.start(), hit.end(), rendered, line))
    return out


def _crlf_blind(needle: str) -> re.Pattern[str]:
    """`needle` (CRLF-free) as a regex over the file as it is, read as if each CRLF were an LF:
    an LF matches an LF or a CRLF, a lone CR only a CR that no LF follows. So the matches are
    those of a search in the file with its CRLFs collapsed, at the file's own offsets."""
    lone_cr = r"\r(?!\n)"
    return re.compile(r"\r?\n".join(lone_cr.join(map(re.escape, part.split("\r"))) for part in needle.split("\n")))


# --- the line model of the whole-line passes -----------------------------------------------------


class _Pattern(NamedTuple):
    rkeys: list[str]  # each old_string line without trailing whitespace
    ends_with_newline: bool

    @classmethod
    def parse(cls, old: str) -> _Pattern | None:
        body = old.removeprefix(_BOM)
        if not body:
            return None
        pieces = body.split("\n")
        ends_with_newline = pieces[-1] == ""
        if ends_with_newline:
            pieces.pop()
        return cls([p.rstrip(_WS) for p in pieces], ends_with_newline)

    def cores(self) -> set[str]:
        return {key.lstrip(_WS) for key in self.rkeys} - {""}


class _Lines:
    """The file's lines, or those of `text[start:end]` (whole lines, from line `first_line`,
    0-based): split at LF; a line's content drops its EOL (and the CR of a CRLF), the file's
    first line starts after a BOM, and a final unterminated line counts only if non-empty."""

    def __init__(self, text: str, start: int = 0, end: int | None = None, first_line: int = 0) -> None:
        bom = 1 if start == 0 and text.startswith(_BOM) else 0
        self.start = start + bom  # the offset of the first line's content in the file
        self.first_line = first_line
        self.pieces = text[self.start : end].split("\n")
        self.count = len(self.pieces) - (self.pieces[-1] == "")
        self.rkeys = [p.rstrip(_WS) for p in self.pieces[: self.count]]
        self._cum: list[int] | None = None

    def span(self, first: int, height: int, ends_with_newline: bool) -> tuple[int, int]:
        """The text a window replaces: from its first line's content to its last line's end,
        EOL included only when old_string ends with a newline."""
        last = first + height - 1
        piece = self.pieces[last]
        end = self._offset(last) + len(piece)
        terminated = last < len(self.pieces) - 1
        if ends_with_newline and terminated:
            end += 1
        elif not ends_with_newline and terminated and piece.endswith("\r"):
            end -= 1
        return self._offset(first), end

    def _offset(self, k: int) -> int:
        if self._cum is None:
            self._cum = list(accumulate(map(len, self.pieces)))
        return self.start + (self._cum[k - 1] + k if k else 0)

    def matches(self, windows: list[tuple[int, str]], pattern: _Pattern) -> list[_Match]:
        height = len(pattern.rkeys)
        return [_Match(*self.span(i, height, pattern.ends_with_newline), rep, self.first_line + i + 1)
                for i, rep in windows]


def _joined(keys: list[str]) -> str:
    """One string holding every key between LFs, so a window search is one `str.find`."""
    return "\n" + "\n".join(keys) + "\n"


def _trailing_whitespace(lines: _Lines, pattern: _Pattern, rendered: str) -> list[_Match]:
    if lines.count == 0:
        return []  # _joined([]) would read as one blank line
    hay, needle = _joined(lines.rkeys), _joined(pattern.rkeys)
    windows: list[tuple[int, str]] = []
    line, counted = 0, 0
    pos = hay.find(needle)
    while pos != -1:  # each hit starts at the LF before its window's first line
        check_deadline()
        line += hay.count("\n", counted, pos)
        counted = pos
        windows.append((line, rendered))
        pos = hay.find(needle, pos + len(needle) - 1)  # resume at the LF ending the window
    return lines.matches(windows, pattern)


# --- pass 4: a uniform indentation shift ---------------------------------------------------------
#
# Upstream accepts a window when, after a full trim, its lines equal old_string's, and every
# non-blank line pair gives the same shift: Add(p) when the file's indent is p + the pattern's,
# Remove(p) when the pattern's is p + the file's. Checking that per window costs the window's
# height, so here the rule is split in two, each checkable in O(1) per line:
#   - between consecutive non-blank lines, the indents relate the same way in file and pattern:
#     with c their common prefix, (a, b) = (a', b') where a = c + a', b = c + b' (adding or
#     removing one prefix on both keeps those tails); this goes into a per-line key, so one
#     `str.find` over the joined keys finds every window where it holds;
#   - the first non-blank pair gives a shift (Add or Remove); that one is checked per hit.
# By induction the two together are exactly upstream's rule.


def _relation(a: str, b: str) -> str:
    if b.startswith(a):
        return _TAIL + b[len(a) :]
    if a.startswith(b):
        return a[len(b) :] + _TAIL
    n = 0
    while a[n] == b[n]:  # neither is a prefix of the other, so they differ before either ends
        n += 1
    return a[n:] + _TAIL + b[n:]


def _indent_keys(rkeys: list[str]) -> list[str]:
    """Per line: "" if blank, else (relation to the previous non-blank line's indent, core)."""
    out: list[str] = []
    append = out.append
    same = _TAIL + _CORE  # the usual case: the same indent as the line before
    prev: str | None = None
    for r in rkeys:
        core = r.lstrip(_WS)
        if not core:
            append("")
            continue
        lead = r[: len(r) - len(core)]
        if lead == prev:
            append(same + core)
            continue
        append(("" if prev is None else _relation(prev, lead)) + _CORE + core)
        prev = lead
    return out


def _shift(file_lead: str, pattern_lead: str) -> tuple[bool, str] | None:
    """(add, prefix) turning the pattern's indent into the file's, or None for a mismatch."""
    if file_lead.endswith(pattern_lead):
        return True, file_lead[: len(file_lead) - len(pattern_lead)]
    if pattern_lead.endswith(file_lead):
        return False, pattern_lead[: len(pattern_lead) - len(file_lead)]
    return None


def _reindent(new_lf: str, add: bool, prefix: str) -> str | None:
    """`new` shifted like the window; blank lines stay verbatim; None if Remove cannot apply."""
    out: list[str] = []
    for line in new_lf.split("\n"):
        if not line.strip(_WS):
            out.append(line)
        elif add:
            out.append(prefix + line)
        elif line.startswith(prefix):
            out.append(line[len(prefix) :])
        else:
            return None
    return "\n".join(out)


def _indentation(lines: _Lines, pattern: _Pattern, new_lf: str, eol: str) -> list[_Match]:
    keys = _indent_keys(pattern.rkeys)
    first = next((j for j, key in enumerate(keys) if key), None)
    if first is None or lines.count == 0:
        return []  # an all-blank old_string is the trailing-whitespace pass's business
    pattern_core = pattern.rkeys[first].lstrip(_WS)
    pattern_lead = pattern.rkeys[first][: len(pattern.rkeys[first]) - len(pattern_core)]
    hay = _joined(_indent_keys(lines.rkeys))
    needle = _CORE + pattern_core + "\n" + "".join(key + "\n" for key in keys[first + 1 :])
    height = len(keys)
    replacements: dict[tuple[bool, str], str | None] = {}
    windows: list[tuple[int, str]] = []
    free, tokens, counted = 0, 0, 0
    pos = hay.find(needle)
    while pos != -1:
        check_deadline()
        start = hay.rfind("\n", 0, pos) + 1
        if hay.find(_CORE, start, pos) == -1:  # the hit starts at its line's separator
            tokens += hay.count("\n", counted, start)
            counted = start
            i = tokens - 1 - first  # the window's first line
            if i >= free and hay[start - first - 1 : start] == "\n" * (first + 1):  # leading blanks
                rkey = lines.rkeys[i + first]
                shift = _shift(rkey[: len(rkey) - len(pattern_core)], pattern_lead)
                if shift is not None:
                    if shift not in replacements:
                        shifted = _reindent(new_lf, *shift)
                        replacements[shift] = None if shifted is None else shifted.replace("\n", eol)
                    replacement = replacements[shift]
                    if replacement is not None:
                        windows.append((i, replacement))
                        free = i + height
        pos = hay.find(needle, pos + 1)
    return lines.matches(windows, pattern)


# --- helpers -------------------------------------------------------------------------------------


def _splice(text: str, matches: list[_Match]) -> str:
    """Replace each (sorted, non-overlapping) range of `text` by its replacement."""
    out: list[str] = []
    prev = 0
    for m in matches:
        out += (text[prev : m.start], m.replacement)
        prev = m.end
    out.append(text[prev:])
    return "".join(out)


def _split_lines(text: str) -> list[str]:
    pieces = text.split("\n")
    return [p + "\n" for p in pieces[:-1]] + ([pieces[-1]] if pieces[-1] else [])


def _no_match(text: str, old: str) -> ToolError:
    message = (
        "old_string was not found, even allowing for CRLF/LF line endings, trailing whitespace "
        "and a uniform indentation shift. Re-read the file around the place you want to change "
        "and copy old_string verbatim (same indentation, tabs vs spaces, blank lines), include a "
        "few unchanged lines around it, or locate the text with Grep first."
    )
    first = next((s.strip(_WS) for s in old.split("\n") if s.strip(_WS)), "")
    pos = text.find(first) if first else -1
    line = text.count("\n", 0, pos) + 1 if pos != -1 else None
    if line is not None:
        message += f" Its first non-blank line appears at line {line}: the difference is after it."
    return ToolError("workspace.edit_no_match", message, structured={"firstLineFoundAt": line})
