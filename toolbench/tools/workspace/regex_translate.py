"""Python `re` patterns run by RE2: `re`'s own parse tree, written out in RE2 syntax.

Why: `re` backtracks (`(a+)+$` against 40 `a`s and a `!` never ends, and holds the GIL all the
while); RE2 takes time linear in the text. The model still writes Python syntax, and what a
pattern matches stays what `re` matched: every character class is written out as explicit
code point ranges with `re`'s meanings (`charsets`: Unicode `\\w` `\\d` `\\s`, IGNORECASE with
`re`'s extra pairs), `^`/`$` are multi-line as the search sets them, `\\Z` is RE2's `\\z`.
What RE2 cannot run raises `Unsupported`: backreferences, lookahead and lookbehind,
conditional groups, atomic groups, possessive repeats, counted repeats over 1000.

Word boundaries: RE2's `\\b`/`\\B` are ASCII, `re`'s Unicode. They agree on ASCII text, where
the pattern uses RE2's (`marks=None`). For other text the pattern is written against a copy of
the text made by `mark_text`: every gap between two characters (and both ends) holds `copies`
marker characters, B where `re` sees a word boundary and N where it does not. `\\b` consumes
one B, `\\B` one N, and every other atom first skips the markers in front of it; no class
matches a marker. `^`/`\\A` look behind and `$`/`\\z` consume the markers, so in a run of
assertions `^` comes first and `$` last. The one form read differently from `re`, on non-ASCII
text only: a `\\b`/`\\B` before a `^` (or after a `$`) at the same place of the text with only
optional items or a group boundary between them, as in `\\b\\w*^` or `$)\\b`, never matches.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from re import _constants as c  # type: ignore[attr-defined]
from re import _parser as sre  # type: ignore[attr-defined]
from typing import Any, Final

from . import charsets as cs

MAX_REPEAT: Final = 1000  # RE2's limit on `{n,m}`
MAX_COPIES: Final = 3  # markers per gap: how many `\b`/`\B` can meet at one place of a match
_NEVER: Final = r"[^\x00-\x{10ffff}]"
_BEGIN: Final = frozenset({c.AT_BEGINNING, c.AT_BEGINNING_STRING, c.AT_BEGINNING_LINE})
_GAP: Final = frozenset({c.AT_BOUNDARY, c.AT_NON_BOUNDARY})
_REPEATS: Final = frozenset({c.MAX_REPEAT, c.MIN_REPEAT})
# Control characters that are neither line breaks nor whitespace, then noncharacters: a
# marker is one the text does not hold.
_MARK_CANDIDATES: Final = (*range(0x01, 0x09), *range(0x0E, 0x1C), *range(0xFDD0, 0xFDF0))
_BOUNDARY: Final = re.compile(r"\b")  # re's own Unicode word boundary; a zero-width split, linear


class Unsupported(ValueError):
    """A construct RE2 cannot run; the message names it."""


@dataclass(frozen=True, slots=True)
class Marks:
    boundary: int  # the code point standing for "a word boundary here"
    other: int  # ... for "no word boundary here"
    copies: int


@dataclass(frozen=True, slots=True)
class Translation:
    text: str
    unicode_gaps: int  # how many Unicode `\b`/`\B` the pattern has: >0 means non-ASCII text needs marks


def translate(parsed: Any, flags: int, marks: Marks | None = None, *, relaxed: bool = False) -> Translation:
    """RE2 syntax for an `sre` parse tree under `flags`; raises Unsupported.

    `relaxed`: Unicode `\\b`/`\\B` are left out, so the pattern matches wherever the exact one
    does (and more): a cheap first test on non-ASCII text before it is marked."""
    writer = _Writer(marks, relaxed)
    text = writer.seq(list(parsed), flags, True)
    if writer.unicode_gaps and writer.ascii_gaps:
        raise Unsupported("`\\b`/`\\B` both with and without `(?a)` in one pattern")
    return Translation(text, writer.unicode_gaps)


def copies_for(unicode_gaps: int) -> int:
    return max(1, min(unicode_gaps, MAX_COPIES))


def choose_marks(text: str, copies: int) -> tuple[Marks, str]:
    """Two marker characters `text` does not hold, and the text to mark (a text holding every
    candidate, which no real file does, has the first two replaced by U+FFFD)."""
    free = [m for m in _MARK_CANDIDATES if chr(m) not in text][:2]
    if len(free) < 2:
        free = list(_MARK_CANDIDATES[:2])
        text = text.replace(chr(free[0]), "\ufffd").replace(chr(free[1]), "\ufffd")
    return Marks(free[0], free[1], copies), text


def mark_text(text: str, marks: Marks) -> str:
    """`text` with the markers of `marks` in every gap (see the module doc)."""
    yes, no = chr(marks.boundary) * marks.copies, chr(marks.other) * marks.copies
    if not text:
        return no
    pieces = _BOUNDARY.split(text)  # cut at every Unicode word boundary, as `re` sees them
    body = yes.join(no.join(piece) for piece in pieces)
    return (no if pieces[0] else "") + body + (no if pieces[-1] else "")


def _combine(flags: int, add: int, remove: int) -> int:
    if add & sre.TYPE_FLAGS:
        flags &= ~sre.TYPE_FLAGS
    return (flags | add) & ~remove


def _consumes(op: Any, av: Any) -> bool:
    """Whether the item can consume a character (False: it only ever matches empty)."""
    if op is c.AT:
        return False
    if op is c.SUBPATTERN:
        return any(_consumes(o, a) for o, a in av[3])
    if op is c.BRANCH:
        return any(_consumes(o, a) for alt in av[1] for o, a in alt)
    if op in _REPEATS:
        return av[1] > 0 and any(_consumes(o, a) for o, a in av[2])
    return True


def _esc(code: int) -> str:
    ch = chr(code)
    return ch if ch.isascii() and ch.isalnum() else f"\\x{{{code:x}}}"


def _class_text(s: cs.Ranges) -> str:
    if not s:
        return _NEVER
    if len(s) == 1 and s[0][0] == s[0][1]:
        return _esc(s[0][0])
    negated = cs.difference(cs.complement(s), cs.SURROGATES)
    if not negated:
        return "(?s:.)"
    body, neg = (negated, "^") if len(negated) < len(s) else (s, "")
    return f"[{neg}" + "".join(_esc(lo) if lo == hi else f"{_esc(lo)}-{_esc(hi)}" for lo, hi in body) + "]"


class _Writer:
    def __init__(self, marks: Marks | None, relaxed: bool = False) -> None:
        self.marks = marks
        self.relaxed = relaxed
        self.unicode_gaps = 0
        self.ascii_gaps = 0
        self.skip = "" if marks is None else f"[{_esc(marks.boundary)}{_esc(marks.other)}]*"
        self.excluded: cs.Ranges = cs.SURROGATES if marks is None else cs.union(
            cs.SURROGATES, cs.of_chars((marks.boundary, marks.other)))

    def seq(self, items: list[Any], flags: int, tail_empty: bool) -> str:
        """A sequence; `tail_empty`: nothing that consumes can follow it in the whole pattern."""
        out: list[str] = []
        i = 0
        while i < len(items):
            j = i + 1
            if items[i][0] is c.AT:
                while j < len(items) and items[j][0] is c.AT:
                    j += 1
            rest_empty = tail_empty and not any(_consumes(o, a) for o, a in items[j:])
            op, av = items[i]
            if op is c.AT:
                out.append(self.anchors([a for _, a in items[i:j]], flags, rest_empty))
            else:
                out.append(self.item(op, av, flags, rest_empty))
            i = j
        return "".join(out)

    def anchors(self, kinds: list[Any], flags: int, tail_empty: bool) -> str:
        """A run of zero-width assertions at one place: look-behind ones, the gap, look-ahead ones."""
        multiline = bool(flags & c.SRE_FLAG_MULTILINE)
        begin = "".join(dict.fromkeys(
            "(?m:^)" if k is c.AT_BEGINNING and multiline else r"\A" for k in kinds if k in _BEGIN))
        gaps = {k for k in kinds if k in _GAP}
        end = ""
        for k in dict.fromkeys(k for k in kinds if k not in _BEGIN and k not in _GAP):
            if k is c.AT_END_STRING:
                end += self.skip + r"\z"
            elif multiline:
                end += self.skip + "(?m:$)"
            elif tail_empty:  # `$` without MULTILINE: the end, or before a final newline
                end += self.skip + f"(?:\\n{self.skip})?\\z"
            else:
                raise Unsupported("`$` without multi-line mode followed by more pattern")
        return begin + self.gap(gaps, flags) + end

    def gap(self, gaps: set[Any], flags: int) -> str:
        if not gaps:
            return ""
        if len(gaps) == 2:
            return _NEVER  # \b\B
        boundary = c.AT_BOUNDARY in gaps
        if flags & c.SRE_FLAG_ASCII:
            if not boundary:  # RE2 checks assertions between bytes: inside `é` there is no boundary
                raise Unsupported("`\\B` under `(?a)`: use `\\B` without it, or `\\b`")
            self.ascii_gaps += 1
            return r"\b"
        self.unicode_gaps += 1
        if self.relaxed:
            return ""
        if self.marks is None:
            return r"\b" if boundary else r"\B"  # exact on ASCII text, which is where this one runs
        return _esc(self.marks.boundary if boundary else self.marks.other)

    def item(self, op: Any, av: Any, flags: int, tail_empty: bool) -> str:
        fold = bool(flags & c.SRE_FLAG_IGNORECASE)
        ascii_only = bool(flags & c.SRE_FLAG_ASCII)
        if op is c.LITERAL:
            return self.atom(cs.fold_char(av, ascii_only=ascii_only) if fold else ((av, av),))
        if op is c.NOT_LITERAL:
            return self.atom(cs.complement(cs.fold_char(av, ascii_only=ascii_only) if fold else ((av, av),)))
        if op is c.ANY:
            return self.atom(((0, cs.MAX_CP),) if flags & c.SRE_FLAG_DOTALL else cs.complement(((10, 10),)))
        if op is c.IN:
            return self.atom(_charset(av, fold, ascii_only))
        if op is c.SUBPATTERN:
            return "(?:" + self.seq(list(av[3]), _combine(flags, av[1], av[2]), tail_empty) + ")"
        if op is c.BRANCH:
            return "(?:" + "|".join(self.seq(list(alt), flags, tail_empty) for alt in av[1]) + ")"
        if op in _REPEATS:
            return self.repeat(op, av, flags, tail_empty)
        raise Unsupported(_UNSUPPORTED.get(op, f"`{op}`"))

    def repeat(self, op: Any, av: Any, flags: int, tail_empty: bool) -> str:
        lo, hi, body = av
        unbounded = hi == c.MAXREPEAT
        if lo > MAX_REPEAT or (not unbounded and hi > MAX_REPEAT):
            raise Unsupported(f"a counted repeat over {MAX_REPEAT}")
        inner = self.seq(list(body), flags, tail_empty and (hi <= 1 or not any(_consumes(o, a) for o, a in body)))
        if (lo, unbounded) == (0, True):
            quant = "*"
        elif (lo, unbounded) == (1, True):
            quant = "+"
        elif (lo, hi) == (0, 1):
            quant = "?"
        elif unbounded:
            quant = f"{{{lo},}}"
        else:
            quant = f"{{{lo}}}" if lo == hi else f"{{{lo},{hi}}}"
        return f"(?:{inner}){quant}" + ("?" if op is c.MIN_REPEAT else "")

    def atom(self, s: cs.Ranges) -> str:
        return self.skip + _class_text(cs.difference(s, self.excluded))


def _charset(items: Any, fold: bool, ascii_only: bool) -> cs.Ranges:
    negate = False
    members: list[tuple[int, int]] = []
    categories: list[cs.Ranges] = []
    for op, av in items:
        if op is c.NEGATE:
            negate = True
        elif op is c.LITERAL:
            members.append((av, av))
        elif op is c.RANGE:
            members.append(av)
        elif op is c.CATEGORY:
            categories.append(cs.category(av, ascii_only))
        else:
            raise Unsupported(f"`{op}` in a character class")
    lits, cats = cs.normalize(members), cs.union(*categories)
    s = cs.fold(lits, cats, ascii_only=ascii_only) if fold else cs.union(lits, cats)
    return cs.complement(s) if negate else s


_UNSUPPORTED: Final = {
    c.GROUPREF: "backreferences such as `\\1` or `(?P=name)`",
    c.GROUPREF_EXISTS: "conditional groups `(?(1)...|...)`",
    c.ASSERT: "lookahead and lookbehind `(?=...)`, `(?<=...)`",
    c.ASSERT_NOT: "negative lookahead and lookbehind `(?!...)`, `(?<!...)`",
    c.ATOMIC_GROUP: "atomic groups `(?>...)`",
    c.POSSESSIVE_REPEAT: "possessive repeats such as `a*+`",
}
