"""Glob and ignore patterns: git's rules as pathspec reads them, matched by RE2 sets, bounded."""

from __future__ import annotations

import os
import re

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from toolbench.tools.workspace import patterns
from toolbench.tools.workspace.patterns import PatternError, compile_glob, compile_lines, load_ignore

# Patterns from git's glob syntax (stars, `?`, brackets, ranges, negation, anchoring, escapes,
# a trailing `/`), paths of up to three short parts. pathspec's own matcher (Python `re`) is
# the reference; on inputs this small it is fast.
PATTERN_PIECES = ["a", "b", ".", "*", "**", "?", "/", "[ab]", "[!a]", "[a-b]", "[]a]", "\\*", "\\", "!", " ", "#",
                  "[", "]", "-", "a*a", "**/", "/**"]
patterns_text = st.lists(st.sampled_from(PATTERN_PIECES), min_size=1, max_size=6).map("".join)
names = st.text(alphabet="ab.*-[] ", min_size=1, max_size=4).filter(lambda n: n not in (".", ".."))
paths = st.lists(names, min_size=1, max_size=3).map("/".join).flatmap(lambda p: st.sampled_from([p, p + "/"]))


def reference(lines: list[str], path: str) -> bool:
    import pathspec

    return pathspec.PathSpec.from_lines("gitignore", lines, backend="simple").match_file(path)


@pytest.mark.filterwarnings("ignore::FutureWarning")  # the reference's `re` on a `[[` class
@settings(max_examples=500, deadline=None)
@given(lines=st.lists(patterns_text, min_size=1, max_size=4), path=paths)
def test_pattern_sets_match_as_pathspec_does(lines: list[str], path: str) -> None:
    try:
        expected = reference(lines, path)
    except (ValueError, re.error):
        assume(False)  # pathspec refuses the pattern, or writes a regex `re` refuses (`[a-[b]`)
    found, skipped = compile_lines(lines)
    assume(not skipped)  # a line RE2 refuses is skipped (and said so), not matched
    assert (found is not None and found.matches(path)) == expected


def test_git_rules_hold() -> None:
    spec = compile_lines(["*.log", "!keep.log", "/top.txt", "build/", "docs/**/*.md", "# comment", ""])[0]
    assert spec is not None
    assert spec.matches("a/b.log") and not spec.matches("a/keep.log")
    assert spec.matches("top.txt") and not spec.matches("sub/top.txt")
    assert spec.matches("x/build/") and not spec.matches("x/build")
    assert spec.matches("docs/a/b/c.md") and not spec.matches("other/c.md")
    assert compile_glob("# only a comment") is None


def test_a_pattern_past_the_bounds_is_refused() -> None:
    with pytest.raises(PatternError):
        compile_glob("a" * (patterns.MAX_PATTERN_CHARS + 1))
    with pytest.raises(PatternError):
        compile_glob("[a]" * (patterns.MAX_BRACKETS + 1))
    found, skipped = compile_lines(["x.txt", "b" * 5000, *(f"*.e{i}" for i in range(patterns.MAX_IGNORE_PATTERNS + 5))])
    assert found is not None and found.matches("x.txt")
    assert len(skipped) == 2  # the long line, and the patterns past the limit


def test_many_patterns_split_into_several_sets_keep_their_order() -> None:
    lines = [f"f{i}.txt" for i in range(450)] + ["!f3.txt", "f3.txt", "!f7.txt"]
    spec = compile_lines(lines)[0]
    assert spec is not None and len(spec.sets) > 1
    assert spec.matches("f449.txt") and spec.matches("f3.txt") and not spec.matches("f7.txt")


def test_names_that_are_not_utf8_are_matched_per_character(tmp_path) -> None:
    name = os.fsdecode(b"caf\xe9.md")  # a lone surrogate stands for the byte
    spec = compile_glob("caf?.md")
    assert spec is not None and spec.matches(name) and compile_glob("*.md").matches(name)  # type: ignore[union-attr]


def test_an_ignore_file_is_read_only_when_regular_and_in_part_when_long(tmp_path) -> None:
    (tmp_path / "big").write_bytes(b"keep.txt\n" + b"#" * 100 + b"\n" + b"x\n" * patterns.MAX_IGNORE_BYTES)
    (tmp_path / "real").write_text("secret.txt\n")
    os.symlink(tmp_path / "real", tmp_path / "link")
    folder = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        found, notes = load_ignore(folder, "work/.gitignore", "big")
        assert found is not None and found.matches("keep.txt") and notes
        assert load_ignore(folder, "link", "link") == (None, [])  # a link is not followed, as git does
        assert load_ignore(folder, "missing", "missing") == (None, [])
    finally:
        os.close(folder)
