"""The no-match error: the closest region of the file, with its line numbers, and what differs."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolbench.core.errors import ToolError
from toolbench.tools.workspace.edit_hint import MAX_LINE, MAX_MESSAGE, MAX_SHOWN_LINES
from toolbench.tools.workspace.edit_match import apply_edit


def no_match(text, old, new="new"):
    with pytest.raises(ToolError) as info:
        apply_edit(text, old, new)
    assert info.value.code == "workspace.edit_no_match"
    message = str(info.value)
    assert "nothing was changed" in message and len(message) <= MAX_MESSAGE
    return message, info.value.structured


def closest(start, end, matching, total):
    return {"startLine": start, "endLine": end, "matchingLines": matching, "totalLines": total}


def test_indentation_that_is_not_one_uniform_shift():
    text, old = "class A:\n    def f(self):\n        return 1\n", "class A:\n  def f(self):\n        return 1\n"
    message, s = no_match(text, old)
    assert (s["closest"], s["differences"]) == (closest(1, 3, 3, 3), ["indentation"])
    assert "line 2 of the file is indented with 4 spaces where old_string's line 2 has 2 spaces" in message
    assert "1 | class A:\n2 |     def f(self):\n3 |         return 1" in message


def test_a_uniform_shift_new_string_cannot_take():
    message, s = no_match("fn f() {\n    a();\n}\n", "        a();\n", "b();\n")
    assert (s["closest"], s["differences"]) == (closest(2, 2, 1, 1), ["indentation"])
    assert "old_string is indented 4 spaces deeper than the file on every line" in message
    assert "The closest region of the file is line 2 (1 of old_string's 1 line found there" in message


def test_tabs_vs_spaces():
    message, s = no_match("if x:\n\tcall()\n\tdone()\n", "if x:\n    call()\n    done()\n")
    assert s["differences"] == ["tabs_vs_spaces"]
    assert "indented with 1 tab where old_string's line 2 has 4 spaces" in message


def test_unicode_punctuation_is_named_only_where_folding_makes_the_line_equal():
    message, s = no_match("say(“hi”)\nwait()\nend()\n", 'say("hi")\nwait(1)\nend()\n')
    assert s["differences"] == ["unicode_punctuation", "line_differs"]
    assert "“ (U+201C) where old_string has '\"'" in message
    assert "file:       'wait()'\n  old_string: 'wait(1)'" in message
    _, s = no_match("a = 1\nb = 2\n", "a = 1\nb = 3\n")
    assert "unicode_punctuation" not in s["differences"]


# An old_string with escapes only is read by the escapes pass (edit_more) and matches; one that
# mixes real newlines with written-out escapes is not read so, and the hint names the escapes.
@pytest.mark.parametrize(("text", "old", "code", "start", "end"), [
    ("a = 1\nb = 2\nc = 3\n", "a = 1\nb = 2\\nc = 3", "escaped_newlines", 1, 3),
    ("x\n\tif y:\n\t\tz()\n", "x\n\\tif y:\\n\\t\\tz()", "escaped_tabs", 1, 3),
    ('print("hi")\nok\n', 'print(\\"hi\\")\nok', "escaped_quotes", 1, 2),
    ("a\r\nb\r\nc\r\n", "a\nb\\r\\nc", "escaped_newlines", 1, 3),
])
def test_literal_escape_sequences_are_named_when_unescaping_would_match(text, old, code, start, end):
    message, s = no_match(text, old)
    assert code in s["differences"]
    assert (s["closest"]["startLine"], s["closest"]["endLine"]) == (start, end)
    assert "literal escape sequences" in message and f"would match at line {start}" in message


def test_escapes_that_would_not_match_are_not_blamed():
    _, s = no_match('s = "a\\\\nb"\n', 's = "a\\nb" + 1')
    assert not any(code.startswith("escaped") for code in s["differences"])


def test_a_line_the_file_has_and_old_string_lacks():
    message, s = no_match("a\nb\nextra\nc\nd\n", "a\nb\nc\nd\n")
    assert (s["closest"], s["differences"]) == (closest(1, 4, 3, 4), ["line_differs"])
    assert "The file has line 3 here, which old_string lacks." in message


def test_a_line_old_string_has_and_the_file_lacks():
    message, s = no_match("x\ny\na\nb\nd\nz\n", "a\nb\nc\nd\n")
    assert s["closest"]["startLine"] == 3 and s["differences"] == ["line_differs"]
    assert "old_string's line 3 is not in the file here." in message


def test_no_region_when_no_line_of_old_string_is_in_the_file():
    message, s = no_match("one\ntwo\n", "zero\n")
    assert s == {"firstLineFoundAt": None, "closest": None, "differences": []}
    assert "No line of old_string appears in the file" in message


def test_a_region_deep_in_a_long_file_is_shown_around_the_first_difference():
    text = "".join(f"line {i}\n" for i in range(5000))
    old = "".join(f"line {i}\n" for i in range(3000, 3040)).replace("line 3025\n", "line 3025 changed\n")
    message, s = no_match(text, old)
    assert (s["firstLineFoundAt"], s["closest"]) == (3001, closest(3001, 3040, 39, 40))
    shown = [row for row in message.splitlines() if " | " in row]
    assert len(shown) == MAX_SHOWN_LINES and "3026 | line 3025" in message
    assert "line 3026 of the file differs from old_string's line 26" in message


def test_long_lines_are_cut_and_the_message_is_bounded():
    text = "".join(f"{i:05d} " + "x" * 5000 + "\n" for i in range(40))
    old = text[: len(text) // 2].replace("00007 ", "0007 ")
    message, s = no_match(text, old)
    assert s["closest"]["startLine"] == 1 and len(message) <= MAX_MESSAGE
    assert all(len(row) < MAX_LINE + 20 for row in message.splitlines())


def test_the_message_never_says_the_edit_was_made():
    for text, old in [("a\nb\n", "a\nc\n"), ("a = 1\nb\n", "a = 1\nb\\n"), ("x\n", "y\n")]:
        message, _ = no_match(text, old)
        assert "applied" not in message and "replaced" not in message


TEXT = st.text(alphabet=st.sampled_from("ab \t\n“\\n"), max_size=60)


@settings(max_examples=300)
@given(TEXT, TEXT)
def test_the_hint_is_well_formed_on_any_input(text, old):
    try:
        apply_edit(text, old or "a", "x")
    except ToolError as exc:
        if exc.code != "workspace.edit_no_match":
            return
        s = exc.structured
        assert len(str(exc)) <= MAX_MESSAGE and set(s) == {"firstLineFoundAt", "closest", "differences"}
        if s["closest"] is not None:
            c = s["closest"]
            assert 1 <= c["startLine"] <= c["endLine"] <= text.count("\n") + 1
            assert 0 <= c["matchingLines"] <= c["endLine"] - c["startLine"] + 1
