"""The command line's one output filter: any text a server or a file sends comes out with no
character a terminal acts on, JSON output reads back as the same value, and a config's
expanded values are shown as the placeholders that made them."""

from __future__ import annotations

import json
import re

from hypothesis import given
from hypothesis import strategies as st

from toolbench.cli_screen import Screen, one_line

# What a terminal could act on, and what cannot be written as UTF-8 (a lone surrogate).
CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
ANY_TEXT = st.text(st.characters(codec=None, categories=None))
JSON_VALUES = st.recursive(st.none() | st.booleans() | st.integers() | ANY_TEXT,
                           lambda inner: st.lists(inner, max_size=4) | st.dictionaries(ANY_TEXT, inner, max_size=4),
                           max_leaves=20)


@given(ANY_TEXT)
def test_one_line_leaves_nothing_a_terminal_acts_on(text: str) -> None:
    shown = one_line(text)
    assert not CONTROL.search(shown) and "\n" not in shown
    shown.encode("utf-8")  # printable: a lone surrogate is escaped too
    assert one_line(shown) == shown  # escaping twice changes nothing


def test_one_line_writes_escapes_a_reader_knows() -> None:
    assert one_line("a\x1b[2K\rb\x9b\x7f\u202e\n") == "a\\x1b[2K\\rb\\x9b\\x7f\\u202e\\n"
    assert one_line("héllo wörld ✓") == "héllo wörld ✓"  # printable text is left as it is


@given(JSON_VALUES)
def test_json_output_has_no_control_character_and_reads_back_the_same(value: object) -> None:
    text = Screen().json(value)
    assert not CONTROL.search(text.replace("\n", ""))
    text.encode("utf-8")
    assert json.loads(text) == value


def test_an_expanded_value_is_shown_as_its_placeholder_in_lines_and_json(monkeypatch) -> None:
    monkeypatch.setenv("TB_TOKEN", "sk-abc-123456")
    monkeypatch.setenv("TB_SHORT", "ab")
    screen = Screen()
    screen.hide_config_values({"mcpServers": {"a": {"command": "${env:TB_TOKEN}/bin", "args": ["${TB_SHORT}"],
                                                    "cwd": "${TB_UNSET:-defaultdir}"}}})
    assert screen.line("cannot start `sk-abc-123456/bin`") == "cannot start `${env:TB_TOKEN}/bin`"
    assert json.loads(screen.json({"m": "x sk-abc-123456 y"})) == {"m": "x ${env:TB_TOKEN} y"}
    # a short value would hide ordinary text, and a default is written in the file already
    assert screen.line("ab defaultdir") == "ab defaultdir"
