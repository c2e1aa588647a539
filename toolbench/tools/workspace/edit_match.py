"""Where an Edit's `old_string` sits in a file, and the file text after the edit.

LiveAgent's matcher (`edit_match.rs`): four passes, strictest first, and the first pass with at
least one match wins; ambiguity and counts are judged within that pass only. The strategy names
are upstream's (`matchStrategy`):

    exact                plain substring, non-overlapping; `new` goes in verbatim
    line-endings         CRLF -> LF on both sides, a leading BOM ignored; mid-line fragments allowed
    trailing-whitespace  whole-line windows, each line compared without trailing whitespace
    indentation          whole-line windows equal after a full trim that differ by one uniform
                         leading-whitespace shift; `new` is re-indented by that shift

The fuzzy passes write `new` in the file's dominant line ending. One deliberate difference:
upstream picks indentation windows before checking their shift, so a rejected window can hide a
valid overlapping one; here only valid windows take part in the leftmost, non-overlapping choice.

Only when all four find nothing, toolbench's own passes run, in this order (each is the four
passes again, so each also refuses on ambiguity and never touches a byte outside its windows):

    unicode-punctuation  the four passes over the file and old_string with Unicode dashes, quotes
                         and odd spaces folded to ASCII (`edit_fold`: one code point for one, so
                         the offsets are the file's); the replacements, built from `new` as given
                         (re-indented by the folded indentation), are spliced into the original
                         text. Tried only if old_string or the file holds a folded character.
    blank-lines          old_string's whitespace-only first and last lines dropped (Aider's
                         spurious blank line; the last real line keeps its newline), and the same
                         lines dropped from `new` when it starts / ends with them too; tried only
                         if something was dropped and a non-blank line remains
    blank-lines+unicode-punctuation   both, the punctuation fold over the trimmed old_string

Only when all of those find nothing, `edit_more`'s passes run, in this order (its docstring has
the rules, why each is safe and its cost): line-numbers (Read's prefixes stripped, then the
cascade again), whitespace-runs (whole lines equal with runs of whitespace inside a line read
as one space, the indentation the file's; `new` as given) and escapes (written-out \\n, \\t,
\\" ... read, then the cascade again).

No pass is a similarity guess: each finds old_string's text (folded or trimmed as named) in the
file's. When nothing matches, `edit_hint` builds the error: the closest region and what differs.

Every pass is linear in len(file) + len(old_string) (plus len(new_string) per distinct
replacement built, and that only for the matches applied):
    exact                `str.find`, resuming past each hit
    line-endings         the file collapsed (CRLF -> LF) once and `str.find` in it; each hit's
                         offsets mapped back by counting the removed CRs before it, resuming
                         where the last hit's count stopped (`_Uncollapse`)
    whole-line passes    the file's line model built once (one split, one rstrip per line) and
                         shared by every pass over that text; old_string is ruled out at once when
                         one of its trimmed lines equals no trimmed file line (a set of the file's
                         trimmed lines, or for up to `_FEW_CORES` distinct lines a substring search
                         each, a cheaper and weaker filter); trailing-whitespace is one `str.find`
                         over the joined line keys, resumed past each window; indentation is one
                         `str.find` over the joined trimmed lines (most files end there), then
                         Knuth-Morris-Pratt over per-line keys from the first candidate on, which
                         finds every candidate window, overlapping ones too, in O(lines), each
                         checked in O(its first line)
CPython's `str.find` is linear (two-way) for long needles and bounded for short ones; counts of
"\n" between hits are incremental.
Long loops call `check_deadline` (the builtin's time limit). Pure: no I/O.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from operator import eq

from ...core.errors import ToolError
from ..base import check_deadline
from . import edit_hint, edit_more
from .edit_fold import BOM as _BOM
from .edit_fold import WS as _WS
from .edit_fold import fold, has_foldable
from .edit_text import Strategy, _joined, _Match, _Pattern, _Text, window_starts

__all__ = ["EditResult", "Strategy", "apply_edit", "dry_run", "unified_diff"]

_TAIL = "\x01"  # separates the two tails of a relation (never whitespace)
_MAX_LISTED = 20  # match lines quoted in an ambiguity message
_HUNK = re.compile(r"@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@")
_TICK = 4096  # lines between two deadline checks in the per-line loops


@dataclass(frozen=True, slots=True)
class EditResult:
    """A successful edit: the new text, the pass that matched, and where."""

    text: str
    strategy: Strategy
    replacements: int
    lines: tuple[int, ...]  # 1-based line of the start of each replaced match


def apply_edit(
    text: str,
    old: str,
    new: str,
    *,
    replace_all: bool = False,
    expected_replacements: int | None = None,
) -> EditResult:
    """Replace `old` with `new` in `text`, tolerating line-ending, whitespace and indent drift,
    Unicode punctuation and spurious blank first / last lines of `old` (module doc).

    Raises `ToolError` with `workspace.edit_no_match` (with the closest region and what differs),
    `workspace.edit_ambiguous` (several matches without `replace_all`),
    `workspace.edit_count_mismatch` (`expected_replacements` differs from the count applied) or
    `tool.invalid_arguments`. `old == new` is allowed, as upstream: a fuzzy match still rewrites
    the window in the file's own line endings.
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
    base = _Text(text)
    found = _find(base, old, new, every=replace_all)
    if found is None:
        raise _no_match(base, old, new)  # upstream: edit_no_match
    strategy, matches = found
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


# --- the searched text, with what the passes derive from it ---------------------------------------


# --- the cascade --------------------------------------------------------------------------------


def _find(
    base: _Text, old: str, new: str, *, every: bool, more: frozenset[str] = edit_more.MORE
) -> tuple[Strategy, list[_Match]] | None:
    """The first pass with a match and its matches, or None. `every`: build the replacement of
    every match (replace_all), else only the first's (more than one is an ambiguity error);
    `more`: the passes of edit_more that may run when all the others found nothing."""
    found = _upstream(base, old, new, every)
    if found:
        return found
    found = _punctuation(base, old, new, every)
    if found:
        return "unicode-punctuation", found[1]
    trimmed = edit_more.drop_blank_lines(old, new)
    if trimmed is not None:
        # old_string was lines: without its blank lines it must still match whole lines, not a
        # fragment in the middle of one (`\nfoo\n` must not turn `xfoo` into `xbar`).
        found = _whole_lines(base.text, _upstream(base, *trimmed, every))
        if found:
            return "blank-lines", found[1]
        found = _whole_lines(base.text, _punctuation(base, *trimmed, every))
        if found:
            return "blank-lines+unicode-punctuation", found[1]
    return edit_more.find_more(base, old, new, every, more, _find) if more else None


def _whole_lines(text: str, found: tuple[Strategy, list[_Match]] | None) -> tuple[Strategy, list[_Match]] | None:
    """`found` with only the matches that start at a line start and end at a line end."""
    if not found:
        return None
    kept = [m for m in found[1]
            if (m.start == 0 or text[m.start - 1] == "\n" or (m.start == 1 and text[0] == _BOM))
            and (m.end == len(text) or text[m.end - 1] == "\n" or text[m.end] in "\r\n")]
    return (found[0], kept) if kept else None


def _upstream(t: _Text, old: str, new: str, every: bool) -> tuple[Strategy, list[_Match]] | None:
    """LiveAgent's four passes over `t`."""
    matches = _exact(t.text, old, new)
    if matches:
        return "exact", matches
    eol = t.eol
    new_lf = new.replace("\r\n", "\n")
    rendered = new_lf.replace("\n", eol) if eol != "\n" else new_lf
    matches = _line_endings(t.text, old, rendered, t.crlf > 0)
    if matches:
        return "line-endings", matches
    pattern = _Pattern.parse(old)
    if pattern is None or not t.has_lines(pattern.cores()):
        return None  # a whole-line window needs each trimmed line of old_string to be a trimmed file line
    matches = _trailing_whitespace(t, pattern, rendered)
    if matches:
        return "trailing-whitespace", matches
    matches = _indentation(t, pattern, new_lf, every)
    return ("indentation", matches) if matches else None


def _punctuation(base: _Text, old: str, new: str, every: bool) -> tuple[Strategy, list[_Match]] | None:
    """The four passes with Unicode punctuation folded in the file and old_string; the offsets
    are the original text's (the fold is one code point for one)."""
    if not (base.foldable or has_foldable(old)):
        return None  # folding changes neither side: nothing new to find
    return _upstream(base.folded, fold(old), new, every)


def _exact(text: str, old: str, new: str) -> list[_Match]:
    out: list[_Match] = []
    line, counted = 1, 0
    pos = text.find(old)
    while pos != -1:
        if len(out) % _TICK == 0:
            check_deadline()  # a one-character old_string in a large file hits millions of times
        line += text.count("\n", counted, pos)
        counted = pos
        out.append(_Match(pos, pos + len(old), new, line))
        pos = text.find(old, pos + len(old))
    return out


def _line_endings(text: str, old: str, rendered: str, has_crlf: bool | None = None) -> list[_Match]:
    """The needle (CRLF-free, BOM-less) searched in the file read as if each CRLF were an LF,
    the hits mapped back to the file's offsets: a hit starting at an LF that was a CRLF starts at
    its CR, one ending at such an LF ends after it; the BOM stays outside every hit."""
    bom = 1 if text.startswith(_BOM) else 0
    needle = old.removeprefix(_BOM).replace("\r\n", "\n")
    if has_crlf is None:
        has_crlf = "\r\n" in text
    if not needle or (not bom and needle == old and not has_crlf):
        return []  # empty, or the same search as the exact pass
    view = text[bom:].replace("\r\n", "\n")
    to_file = _Uncollapse(text, bom)
    out: list[_Match] = []
    line, counted = 1, 0
    pos = view.find(needle)
    while pos != -1:
        check_deadline()
        end = pos + len(needle)
        start = to_file(pos)
        line += text.count("\n", counted, start)
        counted = start
        out.append(_Match(start, to_file(end), rendered, line))
        pos = view.find(needle, end)
    return out


class _Uncollapse:
    """Maps offsets of the text with its CRLFs collapsed (after the BOM) to the file's, for
    non-decreasing offsets, in time linear in the file overall.

    Offset p of the collapsed text is p + R(p) in the file (past the BOM), R(p) the CRs removed
    before it: those of the CRLFs whose LF lands before p. The k-th CRLF (0-based, its CR at
    file offset r_k) has its LF at collapsed r_k - k, which grows with k, so R(p) is the number
    of k with r_k < p + k: the least fixed point of c = #{CRLF with r < p + c}, reached from
    below by counting, each round, only the CRLFs in the stretch the last round added (about
    half as long as the one before, since CRLFs take two characters)."""

    def __init__(self, text: str, bom: int) -> None:
        self.text, self.bom = text, bom
        self.removed = 0  # CRLFs counted, those with r < self.upto
        self.upto = 0

    def __call__(self, p: int) -> int:
        while self.upto < p + self.removed:
            target = p + self.removed
            # CRLFs with r in [upto, target): the pairs wholly inside [upto, target + 1)
            self.removed += self.text.count("\r\n", self.bom + self.upto, self.bom + target + 1)
            self.upto = target
        return self.bom + p + self.removed


# --- the line model of the whole-line passes -----------------------------------------------------


def _trailing_whitespace(t: _Text, pattern: _Pattern, rendered: str) -> list[_Match]:
    if t.lines.count == 0:
        return []  # _joined([]) would read as one blank line
    starts = window_starts(t.rkeys_joined, _joined(pattern.rkeys))
    return t.lines.matches([(i, rendered) for i in starts], pattern)


# --- pass 4: a uniform indentation shift ---------------------------------------------------------
#
# Upstream accepts a window when, after a full trim, its lines equal old_string's, and every
# non-blank line pair gives the same shift: Add(p) when the file's indent is p + the pattern's,
# Remove(p) when the pattern's is p + the file's. Checking that per window costs the window's
# height, so here the rule is split in two, each checkable in O(1) per line:
#   - between consecutive non-blank lines, the indents relate the same way in file and pattern:
#     with c their common prefix, (a, b) = (a', b') where a = c + a', b = c + b' (adding or
#     removing one prefix on both keeps those tails); this goes into a per-line key, so the
#     windows where it holds are the occurrences of old_string's key sequence in the file's;
#   - the first non-blank pair gives a shift (Add or Remove); that one is checked per hit.
# By induction the two together are exactly upstream's rule. The first non-blank line's key has
# a relation to a line outside the window, so the sequence search compares only its trimmed
# text: Knuth-Morris-Pratt with that one "class" symbol at the start of the pattern (a border of
# the pattern then compares a pattern symbol against the class, which is as well defined as a
# text symbol against it, so the failure function stays exact). KMP reports every occurrence,
# overlapping ones too, in O(lines + height), so a hit rejected for its shift, its leading blank
# lines or an overlap with the window taken before costs O(1) plus its first line.


def _relation(a: str, b: str) -> str:
    if b.startswith(a):
        return _TAIL + b[len(a) :]
    if a.startswith(b):
        return a[len(b) :] + _TAIL
    n = 0
    while a[n] == b[n]:  # neither is a prefix of the other, so they differ before either ends
        n += 1
    return a[n:] + _TAIL + b[n:]


_CORE = "\x00"  # separates a line key's relation from its core (never whitespace)
_SAME = _TAIL + _CORE  # the key prefix of a line indented like the non-blank line before


def _indent_keys(rkeys: list[str], cores: list[str]) -> list[str]:
    """Per line: "" if blank, else its relation to the previous non-blank line's indent, then
    `_CORE`, then its core; the first non-blank line's relation is "" (any other holds `_TAIL`).
    Strings, not tuples: a million tuples would keep the cyclic garbage collector busy."""
    out: list[str] = []
    append = out.append
    prev: str | None = None
    for r, core in zip(rkeys, cores, strict=True):
        if not core:
            append("")
            continue
        lead = r[: len(r) - len(core)]
        if lead == prev:
            append(_SAME + core)
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


def _removable(new_lf: str) -> str | None:
    """The longest prefix every non-blank line of `new` starts with (None: no such line), so
    Remove(p) applies to `new` exactly when it starts with p."""
    lines = [line for line in new_lf.split("\n") if line.strip(_WS)]
    if not lines:
        return None
    low, high = min(lines), max(lines)  # every line lies between them, so shares their common prefix
    n = next((k for k, (a, b) in enumerate(zip(low, high, strict=False)) if a != b), len(low))
    return low[:n]


def _kmp_failure(symbols: list[int], heads: list[bool]) -> list[int]:
    """KMP's failure function of `symbols`, whose first entry is a class: symbol j (j >= 1)
    matches it when `heads[j]`."""
    m = len(symbols)
    fail = [0] * (m + 1)
    k = 0
    for j in range(1, m):
        s = symbols[j]
        while k and s != symbols[k]:
            k = fail[k]
        if k or heads[j]:
            k += 1
        fail[j + 1] = k
    return fail


def _indentation(t: _Text, pattern: _Pattern, new_lf: str, every: bool) -> list[_Match]:
    cores = [r.lstrip(_WS) for r in pattern.rkeys]
    first = next((j for j, core in enumerate(cores) if core), None)
    lines = t.lines
    height = len(cores)
    if first is None or lines.count < height:
        return []  # an all-blank old_string is the trailing-whitespace pass's business
    # Every window's lines equal old_string's after a full trim: one search rules most files out
    # and gives the first line worth scanning from.
    pos = t.cores_joined.find(_joined(cores))
    if pos == -1:
        return []
    head = cores[first]
    pattern_lead = pattern.rkeys[first][: len(pattern.rkeys[first]) - len(head)]
    keys = _indent_keys(pattern.rkeys, cores)[first:]
    ids = {key: n for n, key in reversed(list(enumerate(keys)))}  # each key's first position
    wanted = [ids[key] for key in keys]
    m = len(wanted)
    fail = _kmp_failure(wanted, [core == head for core in cores[first:]])
    # Scanned from the first line that can be a window's first non-blank line. A line whose
    # previous non-blank line lies before it gets no relation, as if the file began there:
    # such a line can only be a window's first non-blank line, whose relation is not compared,
    # so the keys are what they would be over the whole file.
    begin = t.cores_joined.count("\n", 0, pos) + first
    rkeys, file_cores = lines.rkeys[begin:], t.cores[begin:]
    symbols = [ids.get(key, -1) for key in _indent_keys(rkeys, file_cores)]
    blank_run: list[int] = []  # per scanned line, the blank lines just before it (at most `first`)
    if first:
        run = 0
        for key in lines.rkeys[begin - first : begin]:
            run = 0 if key else run + 1
        for key in rkeys:
            blank_run.append(run)
            run = 0 if key else min(run + 1, first)
    removable = _removable(new_lf)
    shifts: dict[str, tuple[bool, str] | None] = {}  # per indent of a first line: its valid shift
    head_len = len(head)
    windows: list[tuple[int, tuple[bool, str]]] = []
    free = k = 0
    total = len(symbols)
    for chunk in range(0, total, _TICK):
        check_deadline()
        for x in range(chunk, min(chunk + _TICK, total)):
            s = symbols[x]
            while k and s != wanted[k]:
                k = fail[k]
            if not (k or file_cores[x] == head):
                continue
            k += 1
            if k < m:
                continue
            k = fail[m]
            top = x - m + 1  # the window's first non-blank line; the window starts `first` lines up
            i = begin + top - first
            if i < free or (first and blank_run[top] < first):
                continue  # overlaps the window taken before, or its leading lines are not blank
            rkey = rkeys[top]
            lead = rkey[: len(rkey) - head_len]
            if lead in shifts:
                shift = shifts[lead]
            else:
                shift = _shift(lead, pattern_lead)
                if shift is not None and not (shift[0] or removable is None or removable.startswith(shift[1])):
                    shift = None  # Remove(p) where a line of new_string does not start with p
                shifts[lead] = shift
            if shift is not None:
                windows.append((i, shift))
                free = i + height
    eol = t.eol
    built: dict[tuple[bool, str], str] = {}
    chosen: list[tuple[int, str]] = []
    for n, (i, shift) in enumerate(windows):
        if not (every or n == 0):
            chosen.append((i, ""))  # never spliced: more than one match without replace_all is refused
            continue
        if shift not in built:
            shifted = _reindent(new_lf, *shift)
            assert shifted is not None  # checked above with `removable`
            built[shift] = shifted.replace("\n", eol) if eol != "\n" else shifted
        chosen.append((i, built[shift]))
    return lines.matches(chosen, pattern)


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


def _no_match(base: _Text, old: str, new: str) -> ToolError:
    def locate(candidate: str) -> tuple[int, int, Strategy] | None:
        found = _find(base, candidate, new, every=False)
        return None if found is None else (found[1][0].line, len(found[1]), found[0])

    return edit_hint.no_match_error(base.text, base.lines.rkeys, base.folded.cores, old, locate)
