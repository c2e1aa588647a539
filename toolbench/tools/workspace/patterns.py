"""Glob and `.gitignore` patterns with git's rules, matched in time linear in the path.

pathspec turns each pattern into a regular expression with git's rules (negation `!`,
anchoring by a `/`, `**`, a trailing `/` for folders only: `GitIgnoreBasicPattern.
pattern_to_regex`), and the regexes of one file run together in RE2 sets: one pass over a
path finds every pattern that matches it, and the last one decides. pathspec's own matcher is
not used: it also compiles every pattern with Python's `re` (backtracking: `*a*a*a*a*a*a*a*b`
against a 60-letter name ran for over a minute; its class compiler walks every character of
a wide `[a-\\uffff]`), and it picks RE2 only when RE2 happens to be importable.

Bounds, so a hostile pattern costs little to compile and to match: a pattern is at most
MAX_PATTERN_CHARS long with at most MAX_BRACKETS `[` (pathspec's translation of brackets is
quadratic); an ignore file is read up to MAX_IGNORE_BYTES and gives at most
MAX_IGNORE_PATTERNS patterns. A glob argument past a bound is `workspace.glob_invalid`; an
ignore file past one is used in part, and `load_ignore` says so in a note.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final

from . import beneath

MAX_PATTERN_CHARS: Final = 1024
MAX_BRACKETS: Final = 64
MAX_IGNORE_BYTES: Final = 64 * 1024
MAX_IGNORE_PATTERNS: Final = 1000
_SET_SIZE: Final = 200  # patterns per RE2 set: a set of thousands can pass RE2's memory budget


class PatternError(ValueError):
    """A pattern that cannot be used; the message says why (for the model)."""


@dataclass(frozen=True, slots=True)
class PatternSet:
    """Compiled patterns, in order: `matches(path)` is git's answer (the last match decides)."""

    sets: tuple[Any, ...]  # RE2 sets, in pattern order
    includes: tuple[tuple[bool, ...], ...]  # per set: does its i-th pattern include (not `!`)?

    def matches(self, path: str) -> bool:
        """Whether `path` (relative, `/`-separated; a folder ends with `/`) is matched."""
        # surrogatepass: a name that is not UTF-8 (os.scandir gives its bytes as lone
        # surrogates) reaches RE2 one character per surrogate, as `re` saw it.
        raw = path.encode("utf-8", "surrogatepass")
        for found, includes in zip(reversed(self.sets), reversed(self.includes), strict=True):
            hit = found.Match(raw)
            if hit:
                return bool(includes[max(hit)])
        return False


def _check(pattern: str) -> None:
    if len(pattern) > MAX_PATTERN_CHARS:
        raise PatternError(f"it is {len(pattern):,} characters long; the most is {MAX_PATTERN_CHARS:,}")
    if pattern.count("[") > MAX_BRACKETS:
        raise PatternError(f"it has more than {MAX_BRACKETS} `[`")


def _regex(pattern: str) -> tuple[str | None, bool | None]:
    from pathspec.patterns.gitignore.basic import GitIgnoreBasicPattern

    try:
        regex, include = GitIgnoreBasicPattern.pattern_to_regex(pattern)
        return regex, include
    except ValueError as exc:  # GitIgnorePatternError
        raise PatternError(str(exc) or "it is not a valid pattern") from exc


class _Builder:
    """Collects (regex, include) pairs, each checked by RE2 as it comes, then builds the sets."""

    def __init__(self) -> None:
        import re2  # type: ignore[import-untyped]  # google-re2, imported on first use: `import toolbench` stays light

        self._re2 = re2
        self._options = re2.Options()
        self._options.log_errors = False  # a refused pattern would be printed to stderr
        self._options.never_capture = True
        self.regexes: list[tuple[bytes, bool]] = []

    def add(self, pattern: str) -> None:
        """Add one pattern; PatternError when it is refused (then nothing was added)."""
        _check(pattern)
        regex, include = _regex(pattern)
        if regex is None or include is None:
            return  # blank or a comment
        raw = regex.encode("utf-8", "surrogatepass")
        try:
            self._new_set().Add(raw)
        except self._re2.error as exc:
            raise PatternError("it uses syntax the matcher does not take") from exc
        self.regexes.append((raw, include))

    def _new_set(self) -> Any:
        return self._re2.Set.SearchSet(self._options)

    def _compiled(self, chunk: list[tuple[bytes, bool]]) -> list[tuple[Any, tuple[bool, ...]]]:
        found = self._new_set()
        for raw, _ in chunk:
            found.Add(raw)
        try:
            found.Compile()
        except self._re2.error:
            if len(chunk) == 1:
                return []  # cannot happen for a pattern under the bounds; never crash a walk on it
            half = len(chunk) // 2  # past RE2's memory budget together: smaller sets
            return self._compiled(chunk[:half]) + self._compiled(chunk[half:])
        return [(found, tuple(include for _, include in chunk))]

    def build(self) -> PatternSet | None:
        parts = [part for i in range(0, len(self.regexes), _SET_SIZE)
                 for part in self._compiled(self.regexes[i:i + _SET_SIZE])]
        if not parts:
            return None
        return PatternSet(tuple(s for s, _ in parts), tuple(inc for _, inc in parts))


def compile_glob(pattern: str) -> PatternSet | None:
    """One glob argument as a PatternSet (None for a pattern that matches nothing, e.g. `#x`).

    Raises PatternError."""
    builder = _Builder()
    builder.add(pattern)
    return builder.build()


def compile_lines(lines: Iterable[str]) -> tuple[PatternSet | None, list[str]]:
    """Patterns of an ignore file, skipping the refused ones: (set, why each was skipped)."""
    builder = _Builder()
    skipped: list[str] = []
    for number, line in enumerate(lines, 1):
        if len(builder.regexes) >= MAX_IGNORE_PATTERNS:
            skipped.append(f"only its first {MAX_IGNORE_PATTERNS:,} patterns are used")
            break
        try:
            builder.add(line)
        except PatternError as exc:
            skipped.append(f"line {number} is skipped: {exc}")
    return builder.build(), skipped


def read_ignore(dir_fd: int, name: str = ".gitignore") -> tuple[bytes, bool] | None:
    """The bytes of the ignore file `name` in the folder `dir_fd` (whole lines, at most
    MAX_IGNORE_BYTES) and whether it was cut there.

    None when there is no regular file there: a link is not followed (git does not follow a
    linked `.gitignore` either), and a FIFO or device is never read (O_NONBLOCK, then fstat)."""
    try:
        fd, _ = beneath.open_regular(dir_fd, name)
    except (OSError, beneath.NotRegular):
        return None
    try:
        data = os.read(fd, MAX_IGNORE_BYTES + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    if len(data) <= MAX_IGNORE_BYTES:
        return data, False
    return data[: data.rfind(b"\n", 0, MAX_IGNORE_BYTES) + 1], True


@functools.lru_cache(maxsize=128)
def _compile_ignore(data: bytes) -> tuple[PatternSet | None, tuple[str, ...]]:
    # Keyed by content: every list or search walk reads the same files again, and pathspec's
    # translation costs tens of microseconds a line.
    found, skipped = compile_lines(data.decode("utf-8", "replace").splitlines())
    return found, tuple(skipped)


def load_ignore(dir_fd: int, shown: str, name: str = ".gitignore") -> tuple[PatternSet | None, list[str]]:
    """The ignore file `name` in the folder `dir_fd` (`shown` is its workspace path): (set, notes for the model)."""
    read = read_ignore(dir_fd, name)
    if read is None:
        return None, []
    data, cut = read
    found, skipped = _compile_ignore(data)
    notes = [f"{shown}: {why}" for why in skipped]
    if cut:
        notes.insert(0, f"{shown}: only its first {MAX_IGNORE_BYTES // 1024} KiB are read")
    return found, notes
