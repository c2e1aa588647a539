"""Character sets as sorted, disjoint code point ranges, with the meanings Python's `re` gives them.

`regex_translate` builds every RE2 character class from these, so a search matches the
characters it matched when it ran on `re`: `\\w`, `\\d` and `\\s` as a str pattern reads
them (Unicode, or ASCII under `(?a)`), and IGNORECASE as `re` computes it (simple lowercase
plus its extra pairs such as `i`/`ı`, `s`/`ſ`, `μ`/`µ`), which differs from RE2's own case
folding on the Turkish i. The tables come from `re` itself, computed on first use (~0.1 s).
"""

from __future__ import annotations

import _sre  # type: ignore[import-not-found]
import array
import bisect
import functools
import re
from collections.abc import Iterable
from re import _constants as sre_c  # type: ignore[attr-defined]
from re._casefix import _EXTRA_CASES  # type: ignore[import-not-found]  # re's IGNORECASE extra pairs
from typing import Final

Ranges = tuple[tuple[int, int], ...]

MAX_CP: Final = 0x10FFFF
SURROGATES: Final[Ranges] = ((0xD800, 0xDFFF),)
# Every character `re` counts as a word character or a digit lies below this (planes 4-13 are
# unassigned, 14 holds tags and selectors, 15-16 private use), and so does every cased one.
_TABLE_END: Final = 0x40000
_CASED_END: Final = 0x20000
ASCII_WORD: Final[Ranges] = ((0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A))
ASCII_DIGIT: Final[Ranges] = ((0x30, 0x39),)
ASCII_SPACE: Final[Ranges] = ((0x09, 0x0D), (0x20, 0x20))
# str.isspace(), which is what `re`'s Unicode \s tests: \t-\r, \x1c-\x1f, space, NEL, NBSP, ...
UNICODE_SPACE: Final[Ranges] = ((0x09, 0x0D), (0x1C, 0x20), (0x85, 0x85), (0xA0, 0xA0), (0x1680, 0x1680),
                                (0x2000, 0x200A), (0x2028, 0x2029), (0x202F, 0x202F), (0x205F, 0x205F),
                                (0x3000, 0x3000))


def normalize(pairs: Iterable[tuple[int, int]]) -> Ranges:
    """Sorted, merged ranges (adjacent ones joined)."""
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(pairs):
        if out and lo <= out[-1][1] + 1:
            if hi > out[-1][1]:
                out[-1] = (out[-1][0], hi)
        else:
            out.append((lo, hi))
    return tuple(out)


def of_chars(codes: Iterable[int]) -> Ranges:
    return normalize((c, c) for c in codes)


def union(*sets: Ranges) -> Ranges:
    return normalize(pair for s in sets for pair in s)


def complement(s: Ranges) -> Ranges:
    out: list[tuple[int, int]] = []
    nxt = 0
    for lo, hi in s:
        if lo > nxt:
            out.append((nxt, lo - 1))
        nxt = hi + 1
    if nxt <= MAX_CP:
        out.append((nxt, MAX_CP))
    return tuple(out)


def difference(a: Ranges, b: Ranges) -> Ranges:
    return intersection(a, complement(b))


def intersection(a: Ranges, b: Ranges) -> Ranges:
    out: list[tuple[int, int]] = []
    i = j = 0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if lo <= hi:
            out.append((lo, hi))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return tuple(out)


def contains(s: Ranges, code: int) -> bool:
    i = bisect.bisect_right(s, (code, MAX_CP + 1)) - 1
    return i >= 0 and s[i][0] <= code <= s[i][1]


# -- Unicode tables, computed by `re` itself ------------------------------------------------

@functools.cache
def _universe() -> str:
    codes = array.array("I", range(0xD800))
    codes.extend(range(0xE000, _TABLE_END))
    return codes.tobytes().decode("utf-32-le" if codes.itemsize == 4 else "invalid")


def _index_to_code(i: int) -> int:
    return i if i < 0xD800 else i + 0x800


@functools.cache
def unicode_table(name: str) -> Ranges:
    """`re`'s Unicode `\\w` ("word") or `\\d` ("digit") as ranges."""
    text = _universe()
    found = re.finditer(r"\w+" if name == "word" else r"\d+", text)
    return normalize((_index_to_code(m.start()), _index_to_code(m.end() - 1)) for m in found)


_CATEGORY_BASE: Final = {
    sre_c.CATEGORY_DIGIT: "digit", sre_c.CATEGORY_NOT_DIGIT: "digit", sre_c.CATEGORY_SPACE: "space",
    sre_c.CATEGORY_NOT_SPACE: "space", sre_c.CATEGORY_WORD: "word", sre_c.CATEGORY_NOT_WORD: "word"}


def category(code: int, ascii_only: bool) -> Ranges:
    """The set of an sre CATEGORY code (\\d \\D \\s \\S \\w \\W)."""
    base = _CATEGORY_BASE[code]
    if ascii_only:
        table = {"digit": ASCII_DIGIT, "space": ASCII_SPACE, "word": ASCII_WORD}[base]
    else:
        table = UNICODE_SPACE if base == "space" else unicode_table(base)
    negated = code in (sre_c.CATEGORY_NOT_DIGIT, sre_c.CATEGORY_NOT_SPACE, sre_c.CATEGORY_NOT_WORD)
    return complement(table) if negated else table


# -- IGNORECASE, as `re` computes it --------------------------------------------------------

class _Lowering:
    """re's case tables below _CASED_END: who lowers to what, both ways, and who is cased."""

    def __init__(self) -> None:
        pairs = [(x, low) for x in range(_CASED_END) if (low := _sre.unicode_tolower(x)) != x]
        self.lowered = [x for x, _ in pairs]  # ascending
        self.lower_of = dict(pairs)
        self.uppers_of: dict[int, list[int]] = {}
        for x, low in pairs:
            self.uppers_of.setdefault(low, []).append(x)
        self.lows = sorted(self.uppers_of)
        self.cased = [x for x in range(_CASED_END) if _sre.unicode_iscased(x)]


@functools.cache
def _lowering() -> _Lowering:
    return _Lowering()


def _members_of(sorted_codes: list[int], s: Ranges) -> Iterable[int]:
    """The codes of an ascending list that lie in `s` (a bisect per range)."""
    for lo, hi in s:
        i = bisect.bisect_left(sorted_codes, lo)
        while i < len(sorted_codes) and sorted_codes[i] <= hi:
            yield sorted_codes[i]
            i += 1


def _preimage(s: Ranges, table: _Lowering) -> Ranges:
    """{x : lower(x) in s}: a character without a lowercase stands for itself, the others by it."""
    keep = difference(s, of_chars(table.lowered))
    return union(keep, of_chars(x for low in _members_of(table.lows, s) for x in table.uppers_of[low]))


def fold(members: Ranges, categories: Ranges = (), *, ascii_only: bool = False) -> Ranges:
    """What a class of `members` (characters and ranges) and `categories` matches under IGNORECASE.

    As `re` does it: with no cased member the class matches as written; otherwise the text's
    character is lowered and looked up among the lowered members plus their extra pairs
    (`_EXTRA_CASES`), and in the categories (which get no extra pairs)."""
    if ascii_only:  # only A-Z and a-z fold onto each other
        letters = intersection(members, ((0x41, 0x5A), (0x61, 0x7A)))
        return union(members, tuple((lo ^ 0x20, hi ^ 0x20) for lo, hi in letters), categories)
    table = _lowering()
    if next(iter(_members_of(table.cased, members)), None) is None:
        return union(members, categories)
    lowered = union(difference(members, of_chars(table.lowered)),
                    of_chars(table.lower_of[x] for x in _members_of(table.lowered, members)))
    extra = of_chars(k for low, ks in _EXTRA_CASES.items() if contains(lowered, low) for k in ks)
    return union(_preimage(union(lowered, extra), table), _preimage(categories, table))


def fold_char(code: int, *, ascii_only: bool = False) -> Ranges:
    """`fold` of one character, by table look-ups (a query is mostly single characters)."""
    if ascii_only:
        return of_chars((code, code ^ 0x20)) if 0x41 <= code <= 0x5A or 0x61 <= code <= 0x7A else ((code, code),)
    if not _sre.unicode_iscased(code):
        return ((code, code),)
    table = _lowering()
    low = table.lower_of.get(code, code)
    return of_chars(x for lw in (low, *_EXTRA_CASES.get(low, ())) for x in (lw, *table.uppers_of.get(lw, ())))
