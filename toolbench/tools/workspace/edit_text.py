"""The texts the edit passes search: a file's line model and keys, and old_string's.

`_Text` builds each view of a text once, on first use (the later passes search the same text
again); `_Pattern` is old_string read as lines; `_Lines` maps a window of lines back to file
offsets; `window_starts` finds a joined key sequence in another. Shared by the cascade
(`edit_match.py`) and the extra passes it calls (`edit_more.py`), so that one needs nothing of
the cascade's module. Pure: no I/O.
"""

from __future__ import annotations

from functools import cached_property
from itertools import islice, repeat
from typing import Literal, NamedTuple

from ..base import check_deadline
from .edit_fold import BOM as _BOM
from .edit_fold import WS as _WS
from .edit_fold import fold, has_foldable

Strategy = Literal[
    "exact", "line-endings", "trailing-whitespace", "indentation",
    "unicode-punctuation", "blank-lines", "blank-lines+unicode-punctuation",
    "line-numbers", "whitespace-runs", "escapes",
]

_FEW_CORES = 8  # old_string's distinct trimmed lines checked by substring search rather than a set


class _Match(NamedTuple):
    start: int
    end: int
    replacement: str
    line: int  # 1-based


class _Text:
    """One text the passes search, and its line model and keys, each built once on first use
    (the later passes search the same text again, so they cost only their own search)."""

    def __init__(self, text: str) -> None:
        self.text = text

    @cached_property
    def crlf(self) -> int:
        return self.text.count("\r\n") if "\r" in self.text else 0  # a CR search is the faster scan

    @cached_property
    def eol(self) -> str:
        """The dominant line ending the fuzzy passes write `new` in."""
        crlf = self.crlf
        return "\r\n" if crlf > 0 and crlf >= self.text.count("\n") - crlf else "\n"  # a tie goes to CRLF

    def has_lines(self, cores: set[str]) -> bool:
        """Whether each of `cores` is a fully trimmed line of the text: one set lookup each, or,
        for a few, a substring search each (a weaker test, and cheaper than building the set)."""
        if len(cores) <= _FEW_CORES and "core_set" not in self.__dict__:
            return all(core in self.text for core in cores)
        return cores <= self.core_set

    @cached_property
    def lines(self) -> _Lines:
        return _Lines(self.text)

    @cached_property
    def cores(self) -> list[str]:
        """Each line fully trimmed."""
        return list(map(str.lstrip, self.lines.rkeys, repeat(_WS)))

    @cached_property
    def core_set(self) -> set[str]:
        return set(self.cores)

    @cached_property
    def rkeys_joined(self) -> str:
        return _joined(self.lines.rkeys)

    @cached_property
    def cores_joined(self) -> str:
        return _joined(self.cores)

    @cached_property
    def foldable(self) -> bool:
        return has_foldable(self.text)

    @cached_property
    def folded(self) -> _Text:
        """The text with Unicode punctuation folded (itself when there is nothing to fold)."""
        return _Text(fold(self.text)) if self.foldable else self


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
    """The file's lines: split at LF; a line's content drops its EOL (and the CR of a CRLF), the
    first line starts after a BOM, and a final unterminated line counts only if non-empty."""

    def __init__(self, text: str) -> None:
        self.start = 1 if text.startswith(_BOM) else 0  # the offset of the first line's content
        self.pieces = text[self.start :].split("\n")
        self.count = len(self.pieces) - (self.pieces[-1] == "")
        self.rkeys = list(map(str.rstrip, islice(self.pieces, self.count), repeat(_WS)))
        self._at = (0, self.start)  # (line, offset of its content) of the last `_offset` asked

    def span(self, first: int, height: int, ends_with_newline: bool) -> tuple[int, int]:
        """The text a window replaces: from its first line's content to its last line's end,
        EOL included only when old_string ends with a newline."""
        last = first + height - 1
        start = self._offset(first)
        piece = self.pieces[last]
        end = self._offset(last) + len(piece)
        terminated = last < len(self.pieces) - 1
        if ends_with_newline and terminated:
            end += 1
        elif not ends_with_newline and terminated and piece.endswith("\r"):
            end -= 1
        return start, end

    def _offset(self, k: int) -> int:
        """The file offset of line k's content; summed on from the line asked for before (the
        windows come in order), so all the spans of a pass cost one walk over the lines."""
        at, offset = self._at
        if k < at:
            at, offset = 0, self.start
        offset += sum(map(len, self.pieces[at:k])) + (k - at)
        self._at = (k, offset)
        return offset

    def matches(self, windows: list[tuple[int, str]], pattern: _Pattern) -> list[_Match]:
        height = len(pattern.rkeys)
        return [_Match(*self.span(i, height, pattern.ends_with_newline), rep, i + 1) for i, rep in windows]


def _joined(keys: list[str]) -> str:
    """One string holding every key between LFs, so a window search is one `str.find`."""
    return "\n" + "\n".join(keys) + "\n"


def window_starts(hay: str, needle: str) -> list[int]:
    """The 0-based first line of each non-overlapping occurrence of `needle` (keys between LFs,
    starting and ending with one) in `hay` (the same), leftmost first."""
    out: list[int] = []
    line, counted = 0, 0
    pos = hay.find(needle)
    while pos != -1:  # each hit starts at the LF before its window's first line
        check_deadline()
        line += hay.count("\n", counted, pos)
        counted = pos
        out.append(line)
        pos = hay.find(needle, pos + len(needle) - 1)  # resume at the LF ending the window
    return out
