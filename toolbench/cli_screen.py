r"""What a `toolbench` command prints, made safe: `Screen` is the one filter of its output
(the report, the JSON, every stderr line). A server's text (its name, stderr, tools, answers)
and a file's are untrusted, and a terminal acts on the control characters in them
(`\x1b[2K\r` erases a line, and what follows seems to be a line of its own).

- Text lines: every character `str.isprintable` refuses (C0 and C1 controls, DEL, line and
  paragraph separators, bidi and other format characters, lone surrogates) is written as an
  escape (`\x1b`, `\n`, `\u202e`); a newline too, within one field. The backslash is left as
  it is: the escapes are for a reader, not a parser.
- JSON: `json.dumps` escapes C0 only (with `ensure_ascii=False`, kept so names stay readable);
  the same characters are written as `\uXXXX` escapes, which any JSON reader reads back as the
  text itself.
- A config's `${env:...}` values are shown as written: each value its placeholders took from
  the environment (`toolbench.mcp.expanded_values`) is replaced by the placeholder wherever the
  output holds it (an OS error naming an expanded path, a server echoing a token on stderr).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any


class Screen:
    """The filter of everything a command prints (see the module docstring)."""

    def __init__(self) -> None:
        self._hidden: dict[str, str] = {}  # a value -> what is shown instead

    def hide_config_values(self, config: str | Path | Mapping[str, Any]) -> None:
        """Show the values `config`'s placeholders expand to as the placeholders; a config that
        cannot be read is `mcp.config_invalid`."""
        from .mcp import expanded_values, read_mcp_json

        self._hidden.update(expanded_values(config if isinstance(config, Mapping) else read_mcp_json(config)))

    def line(self, text: str) -> str:
        """`text` as one line: hidden values masked, control characters escaped."""
        return one_line(self._masked(text))

    def lines(self, text: str) -> str:
        """A block of lines, each as `line` gives it."""
        return "\n".join(one_line(part) for part in self._masked(text).split("\n"))

    def json(self, value: Any) -> str:
        """`value` as indented JSON with a final newline: hidden values masked, controls escaped."""
        text = self._masked(json.dumps(value, indent=2, ensure_ascii=False), in_json=True)
        return _UNSAFE.sub(_json_escape, text) + "\n"

    def _masked(self, text: str, *, in_json: bool = False) -> str:
        for value in sorted(self._hidden, key=len, reverse=True):  # a longer value first: it may hold a shorter
            written = json.dumps(value, ensure_ascii=False)[1:-1] if in_json else value
            text = text.replace(written, self._hidden[value])
        return text


# What may need escaping: anything but the printable ASCII and the newline (checked per character).
_UNSAFE = re.compile(r"[^\n -~]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def one_line(text: str) -> str:
    """`text` with each character a terminal could act on, newlines included, written as an
    escape (see the module docstring)."""
    return text if text.isprintable() else re.sub(r"[^ -~]", _text_escape, text)


def _text_escape(match: re.Match[str]) -> str:
    ch = match.group()
    if ch.isprintable():
        return ch
    code = ord(ch)
    return _NAMED.get(ch) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000
                              else f"\\U{code:08x}")


def _json_escape(match: re.Match[str]) -> str:
    ch = match.group()
    if ch.isprintable():
        return ch
    code = ord(ch)
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
