"""How `workspace.search_files` scans bytes for a query: needles, line-local matching, the RE2 query.

Pure: from (query, regex, case_sensitive) to a `Plan`. The pattern is parsed by `re`'s own
parser (the syntax the tool takes) and run by RE2 (`regex_query`: linear time, with `re`'s
meanings). Every shortcut here is exact, i.e. it finds the same lines as running the query
over the whole file:

- `needles`: byte strings of which every match contains one (the required literals of the
  pattern, or the members of a short class like `[-/]`, read from its parse tree). A file
  holding none of them cannot match and is never decoded. When the search folds case,
  needles are ASCII, lowered, and compared against `data.lower()`; the four non-ASCII
  characters that fold onto ASCII letters (U+0130, U+0131 and U+212A, U+017F onto i, k, s)
  void that test for a file that holds one folding onto a letter of the needles
  (`fold_specials`).
- `line_local`: no match can span a newline (nor use `\\A`/`\\Z`), so only the lines that hold
  a needle need the regex, each alone; with `literal_only`, holding the needle is the match
  (plain text), and no regex runs at all.
- IGNORECASE is dropped when nothing in the pattern has case (digits, punctuation, classes
  like `\\d`): the classes come out the same and are simpler to write.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from re import _parser as sre  # type: ignore[attr-defined]
from typing import Any

from .regex_query import Query

# Non-ASCII characters that Python's IGNORECASE matches against ASCII letters, by letter:
# U+0130 and U+0131 (dotted and dotless I), U+212A (Kelvin sign), U+017F (long s).
FOLD_SPECIALS = {"i": ("\u0130".encode(), "\u0131".encode()), "k": ("\u212a".encode(),), "s": ("\u017f".encode(),)}
_LINE_SAFE_CATEGORIES = frozenset({sre.CATEGORY_DIGIT, sre.CATEGORY_WORD, sre.CATEGORY_NOT_SPACE})
_REPEATS = frozenset({sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT})
_SMALL_SET = 8  # a class of up to this many characters serves as single-character needles
# The prefilter costs a pass over the file per needle: past this many alternatives the one
# linear RE2 pass is cheaper (a query of 2,500 alternatives took minutes per file, GIL held).
_MAX_NEEDLES = 16
_CASE_SCAN_BUDGET = 100_000  # characters of ranges _has_case looks at before it assumes case


@dataclass(frozen=True, slots=True)
class Plan:
    query: Query
    needles: tuple[bytes, ...]
    fold: bool
    fold_specials: tuple[bytes, ...]  # FOLD_SPECIALS onto the needles' letters, when folding
    line_local: bool
    literal_only: bool

    def needle_test_valid(self, data: bytes) -> bool:
        """False when case folding could match a needle through a non-ASCII letter in this file."""
        # A special's lead byte is looked for first: one memchr, far cheaper than a substring search.
        return not self.fold_specials or data.isascii() or not any(
            s[0] in data and s in data for s in self.fold_specials)


@functools.lru_cache(maxsize=64)
def make_plan(query: str, regex: bool, case_sensitive: bool) -> Plan:
    """The scan plan (plans are frozen, so a repeated query reuses one).

    Raises re.error for an invalid pattern, regex_translate.Unsupported for one RE2 cannot
    run, regex_query.PatternTooLarge, and RecursionError for one nested too deeply."""
    source = query if regex else re.escape(query)
    parsed = sre.parse(source, re.MULTILINE | (0 if case_sensitive else re.IGNORECASE))
    flags = parsed.state.flags
    items = list(parsed)
    if flags & re.IGNORECASE and not _has_case(items):
        flags &= ~re.IGNORECASE
    fold = bool(flags & re.IGNORECASE)
    needles = _needles(items, fold)
    safe = needles != () and _line_safe(items, bool(flags & re.DOTALL), True)
    letters = {chr(b) for n in needles for b in n} if fold else set()
    specials = tuple(s for letter, found in FOLD_SPECIALS.items() if letter in letters for s in found)
    literal_only = (not regex and safe and len(needles) == 1
                    and needles[0] == (query.lower() if fold else query).encode("utf-8", "surrogatepass"))
    return Plan(query=Query(parsed, flags), needles=needles, fold=fold, fold_specials=specials, line_local=safe,
                literal_only=literal_only and not _has_surrogate(query))


def _has_surrogate(text: str) -> bool:
    # A lone surrogate never occurs in decoded text, so its bytes in a file are no match.
    return not text.isascii() and any("\ud800" <= ch <= "\udfff" for ch in text)


# -- the parse tree -------------------------------------------------------------------------

def _walk(items: Any) -> Any:
    """Every (op, arg) of a parsed pattern, nested ones included."""
    for op, av in items:
        yield op, av
        if op is sre.SUBPATTERN:
            yield from _walk(av[3])
        elif op in _REPEATS:
            yield from _walk(av[2])
        elif op is sre.BRANCH:
            for alt in av[1]:
                yield from _walk(alt)
        elif op in (sre.ASSERT, sre.ASSERT_NOT):
            yield from _walk(av[1])
        elif op is sre.ATOMIC_GROUP:
            yield from _walk(av)
        elif op is sre.GROUPREF_EXISTS:
            yield from _walk(av[1])
            if av[2] is not None:
                yield from _walk(av[2])
        elif op is sre.IN:
            yield from av


def _cased(code: int) -> bool:
    ch = chr(code)
    return ch.lower() != ch or ch.upper() != ch


def _has_case(items: Any) -> bool:
    """Whether IGNORECASE can change what the pattern matches (True when unsure: keeping it is exact)."""
    budget = _CASE_SCAN_BUDGET
    for op, av in _walk(items):
        if op in (sre.LITERAL, sre.NOT_LITERAL) and _cased(av):
            return True
        if op is sre.RANGE:
            budget -= av[1] - av[0] + 1
            if budget < 0 or any(_cased(c) for c in range(av[0], av[1] + 1)):
                return True
        if op in (sre.GROUPREF, sre.GROUPREF_EXISTS):
            return True  # a backreference compares what a group caught, case-insensitively
    return False


def _set_has_newline(items: Any) -> bool:
    hit, negate = False, False
    for op, av in items:
        if op is sre.NEGATE:
            negate = True
        elif (op is sre.LITERAL and av == 10) or (op is sre.RANGE and av[0] <= 10 <= av[1]) or (
                op is sre.CATEGORY and av not in _LINE_SAFE_CATEGORIES):
            hit = True
    return hit != negate


def _line_safe(items: Any, dotall: bool, multiline: bool) -> bool:
    """True when no match can hold a newline or depend on the text beyond its own line."""
    for op, av in items:
        if op is sre.LITERAL:
            if av == 10:
                return False
        elif op is sre.NOT_LITERAL:
            if av != 10:
                return False
        elif op is sre.ANY:
            if dotall:
                return False
        elif op is sre.IN:
            if _set_has_newline(av):
                return False
        elif op is sre.AT:
            if av in (sre.AT_BEGINNING_STRING, sre.AT_END_STRING) or (
                    not multiline and av in (sre.AT_BEGINNING, sre.AT_END)):
                return False
        elif op is sre.SUBPATTERN:
            _, add, remove, sub = av
            if not _line_safe(sub, (dotall or bool(add & re.DOTALL)) and not remove & re.DOTALL,
                              (multiline or bool(add & re.MULTILINE)) and not remove & re.MULTILINE):
                return False
        elif op in _REPEATS:
            if not _line_safe(av[2], dotall, multiline):
                return False
        elif op is sre.BRANCH:
            if not all(_line_safe(alt, dotall, multiline) for alt in av[1]):
                return False
        elif op in (sre.ASSERT, sre.ASSERT_NOT):
            if not _line_safe(av[1], dotall, multiline):
                return False
        elif op is sre.ATOMIC_GROUP:
            if not _line_safe(av, dotall, multiline):
                return False
        elif op is sre.GROUPREF_EXISTS:
            if not _line_safe(av[1], dotall, multiline) or (
                    av[2] is not None and not _line_safe(av[2], dotall, multiline)):
                return False
        elif op is not sre.GROUPREF:
            return False  # an op this scan does not know: assume the worst
    return True


def _required(items: Any) -> list[tuple[str, ...]]:
    """Sets of strings, each set with one member in every match (a literal run, or alternatives)."""
    out: list[tuple[str, ...]] = []
    run: list[str] = []

    def flush() -> None:
        if run:
            out.append(("".join(run),))
            run.clear()

    for op, av in items:
        if op is sre.LITERAL:
            run.append(chr(av))
            continue
        flush()
        if op is sre.SUBPATTERN:
            if not (av[1] | av[2]) & re.IGNORECASE:  # a scoped case flag changes what a literal means
                out += _required(av[3])
        elif op in _REPEATS:
            if av[0] >= 1:
                out += _required(av[2])
        elif op is sre.ATOMIC_GROUP:
            out += _required(av)
        elif op is sre.IN:
            members = _small_set(av)
            if members:
                out.append(members)
        elif op is sre.BRANCH:
            alternatives: list[str] = []
            for alt in av[1]:
                best = _best(_required(alt))
                if best is None:
                    break
                alternatives += best
            else:
                out.append(tuple(dict.fromkeys(alternatives)))
    flush()
    return out


def _small_set(items: Any) -> tuple[str, ...] | None:
    """The characters of a short positive class like `[-/]`; one of them is in every match."""
    chars: list[str] = []
    for op, av in items:
        if op is sre.LITERAL:
            chars.append(chr(av))
        elif op is sre.RANGE and av[1] - av[0] < _SMALL_SET:
            chars += map(chr, range(av[0], av[1] + 1))
        else:
            return None  # negated, a category (\d, \w), or a wide range
    return tuple(chars) if 0 < len(chars) <= _SMALL_SET else None


def _best(sets: list[tuple[str, ...]]) -> tuple[str, ...] | None:
    """The set whose shortest member is longest (fewer members break ties)."""
    usable = [s for s in sets if s and all(s)]
    return max(usable, key=lambda s: (min(map(len, s)), -len(s)), default=None)


def _as_needle(text: str, fold: bool) -> bytes:
    if not fold:
        return text.encode("utf-8", "surrogatepass")
    # Folding is tested on ASCII only (bytes.lower()); keep the longest ASCII stretch.
    stretch = max(re.split(r"[^\x00-\x7f]+", text), key=len)
    return stretch.lower().encode("ascii")


def _needles(items: Any, fold: bool) -> tuple[bytes, ...]:
    candidates = [tuple(dict.fromkeys(_as_needle(t, fold) for t in s)) for s in _required(items)]
    candidates = [s for s in candidates if all(s) and len(s) <= _MAX_NEEDLES]
    if not candidates:
        return ()
    return max(candidates, key=lambda s: (min(map(len, s)), -len(s)))
