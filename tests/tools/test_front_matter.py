"""`core.front_matter`: the one reader of skill and memory front matter. It reads what
python-frontmatter reads, and refuses, quickly and with `FrontMatterError`, what would freeze or
exhaust the process: anchors and aliases, deep nesting, huge blocks, long numbers."""

from __future__ import annotations

import frontmatter
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from tests.deadline import run_with_deadline
from toolbench.core import front_matter
from toolbench.core.front_matter import MAX_CHARS, MAX_DEPTH, FrontMatterError, load, parse, render

ORDINARY = [
    "---\nname: a-skill\ndescription: Does things & more *well*\n---\n\n# Body\n",
    "---\nname: n\nsource:\n  trigger: tool\n  model: null\nlinks: []\ncreatedAt: '2026-03-10T12:00:00+02:00'\n---\nb",
    "---\ntitle: x\n---\nbody with a rule\n---\nand more\n",
    "---\n- a list\n---\nbody",
    "no front matter at all\n---\nx\n---\n",
    "---\nname: never closed\n",
    "---\n---\nempty block",
]


@pytest.mark.parametrize("text", ORDINARY)
def test_reads_what_python_frontmatter_reads(text):
    expected = frontmatter.loads(text)
    got = parse(text)
    assert (got.metadata, got.body) == (expected.metadata, expected.content)


def test_a_bom_is_dropped_and_presence_is_told():
    assert parse("\ufeff---\nname: a\n---\nbody").metadata == {"name": "a"}
    assert parse("---\nname: a\n---\nbody").present
    assert not parse("plain text").present and not parse("---\nname: a\nnever closed").present


def test_render_reads_back():
    meta = {"name": "n", "description": "a: colon, 'quotes' and \u4e2d\u6587", "links": [], "n": 3}
    text = render(meta, "The body.")
    assert text.startswith("---\nname: n\n") and text.endswith("---\n\nThe body.")
    assert (parse(text).metadata, parse(text).body) == (meta, "The body.")


def _nested(depth: int) -> str:
    return "a: " + "[" * (depth - 1) + "]" * (depth - 1)


REFUSED = {
    "anchor": "a: &x 1\n",
    "alias": "a: [1]\nb: *x\n",
    "laughs": "a: &a [x, x]\nb: &b [*a, *a]\nc: [*b, *b]\n",
    "merge-alias": "base: &b {k: 1}\nother:\n  <<: *b\n",
    "deep-flow": _nested(MAX_DEPTH + 1),
    "deep-block": "".join(" " * i + f"k{i}:\n" for i in range(MAX_DEPTH + 1)) + " " * (MAX_DEPTH + 1) + "x",
    "huge": "a: " + "x" * MAX_CHARS,
    "base-60": "a: 1" + ":1" * 5000,
    "long-int": "a: " + "9" * 5000,
    "bad-yaml": "a: [unclosed\n",
    "two-documents": "a: 1\n...\n---\nb: 2\n",
    "python-tag": "a: !!python/object/apply:os.system [echo]\n",
    "bad-date": "a: 2020-13-45\n",
}


@pytest.mark.parametrize("libyaml", [True, False], ids=["libyaml", "pure-python"])
@pytest.mark.parametrize("case", sorted(REFUSED))
def test_hostile_blocks_are_refused(case, libyaml, monkeypatch):
    monkeypatch.setattr(front_matter, "_loader", lambda fast: front_matter._make_loader(libyaml=libyaml, fast=fast))
    with pytest.raises(FrontMatterError) as caught:
        load(REFUSED[case])
    assert caught.value.reason and "\n" not in caught.value.reason


@pytest.mark.parametrize("libyaml", [True, False], ids=["libyaml", "pure-python"])
def test_the_depth_cap_itself_is_allowed(libyaml, monkeypatch):
    monkeypatch.setattr(front_matter, "_loader", lambda fast: front_matter._make_loader(libyaml=libyaml, fast=fast))
    assert load(_nested(MAX_DEPTH))["a"] is not None
    assert load("a: '1:2:3'\nb: 1:30\nc: 3.25\n") == {"a": "1:2:3", "b": 90, "c": 3.25}


def test_a_bomb_or_a_deep_block_neither_hangs_nor_crashes_the_process():
    # libyaml's own composer recurses in C and dies with SIGSEGV near 100,000 levels.
    script = """
from toolbench.core.front_matter import FrontMatterError, parse
levels = "l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\\n" + "".join(
    f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]\\n" for i in range(1, 9))
out = []
for block in (levels + "description: *l8\\n", "a: " + "[" * 120_000 + "]" * 120_000 + "\\n",
              "- " * 50_000 + "x\\n", "a: 1" + ":1" * 100_000 + "\\n"):
    try:
        parse("---\\n" + block + "---\\nbody")
        out.append("read")
    except FrontMatterError:
        out.append("refused")
report(out)
"""
    assert run_with_deadline(script, deadline=20, memory_mb=1024) == ["refused"] * 4  # the deadline bounds it


def _depth(value) -> int:
    """Nodes from the root to the deepest leaf, as the composer counts them (keys are nodes)."""
    if isinstance(value, dict):
        return 1 + max((max(_depth(k), _depth(v)) for k, v in value.items()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    return 1


@given(kinds=st.lists(st.sampled_from(["map", "seq", "pair"]), min_size=1, max_size=90),
       flow=st.sampled_from([False, None, True]), indent=st.integers(2, 5))
def test_the_fast_path_bound_never_passes_a_block_deeper_than_the_cap(kinds, flow, indent):
    value: object = "leaf"
    for kind in reversed(kinds):
        value = {"k": value} if kind == "map" else [value] if kind == "seq" else [{"a": 1, "b": value}]
    text = yaml.safe_dump(value, default_flow_style=flow, indent=indent)
    if front_matter._shallow(text):
        assert _depth(yaml.safe_load(text)) <= MAX_DEPTH
        assert load(text) == value  # and libyaml's composer reads it as the guarded one would
