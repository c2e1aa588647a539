"""A search pattern compiled for RE2, and the bytes each file is searched as.

RE2 runs over UTF-8 bytes, which is what a file holds: a pure-ASCII file or a valid UTF-8
one is searched as it is. A file with invalid bytes is searched as the text the tool shows
(each invalid sequence one U+FFFD, as `bytes.decode(errors="replace")` gives), and a pattern
with a Unicode `\\b`/`\\B` meets non-ASCII text marked (`regex_translate.mark_text`). Offsets
are in those bytes; newlines are the same ones, so line numbers are too.
"""

from __future__ import annotations

from typing import Any

from .regex_translate import Marks, Unsupported, choose_marks, copies_for, mark_text, translate


class PatternTooLarge(ValueError):
    """RE2 refused the translated pattern (its program would pass RE2's memory budget)."""


def _options() -> Any:
    import re2  # type: ignore[import-untyped]  # google-re2, imported on first use: `import toolbench` stays light

    options = re2.Options()
    options.log_errors = False  # RE2 would print every refused pattern to stderr
    options.never_capture = True  # only where a match starts counts
    return options


def _compile(text: str) -> Any:
    import re2

    try:
        return re2.compile(text, _options())
    except re2.error as exc:
        raise PatternTooLarge(str(exc)) from exc


class Query:
    """The RE2 form of one parsed pattern. Raises Unsupported or PatternTooLarge on creation."""

    def __init__(self, parsed: Any, flags: int) -> None:
        self._parsed, self._flags = parsed, flags
        plain = translate(parsed, flags)
        self._plain = _compile(plain.text)
        self._copies = copies_for(plain.unicode_gaps) if plain.unicode_gaps else 0
        self._marked: dict[Marks, Any] = {}
        if self._copies:
            self._relaxed = _compile(translate(parsed, flags, relaxed=True).text)
            # The marked form compiles now too, so a too-large one fails the call, not a file.
            self._marked_pattern(choose_marks("", self._copies)[0])

    def prepare(self, data: bytes) -> tuple[Any, bytes, int] | None:
        """(compiled pattern, the bytes to run it over, where the text's end starts in them) for
        a file's or a line's bytes (past that offset lie only the end's markers); None when the
        query cannot match them."""
        if data.isascii():
            return self._plain, data, len(data)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = data.decode("utf-8", "replace")
            data = text.encode("utf-8")
        if not self._copies:
            return self._plain, data, len(data)
        if self._relaxed.search(data) is None:  # marking costs far more than this test
            return None
        marks, text = choose_marks(text, self._copies)
        marked = mark_text(text, marks).encode("utf-8")
        return self._marked_pattern(marks), marked, len(marked) - marks.copies * len(chr(marks.other).encode())

    def matches(self, data: bytes) -> bool:
        prepared = self.prepare(data)
        return prepared is not None and prepared[0].search(prepared[1]) is not None

    def _marked_pattern(self, marks: Marks) -> Any:
        found = self._marked.get(marks)
        if found is None:
            found = self._marked[marks] = _compile(translate(self._parsed, self._flags, marks).text)
        return found


__all__ = ["PatternTooLarge", "Query", "Unsupported"]
