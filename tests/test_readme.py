"""The README's dice examples print what their comments say, in a fresh process, every run
(the dice are seeded, and a seeded run does not depend on the random invocation ids)."""

from __future__ import annotations

import ast
import json
import shlex

import pytest
from deadline import ROOT, run_with_deadline

README = ROOT / "README.md"
COMMENT = "  # "

FIRST_LOOK = """
import sys
namespace = {}
shown = []
for line in sys.argv[1].splitlines():
    if line.startswith('inv.call("dice_roll"'):
        shown.append(eval(line, namespace))
    else:
        exec(line, namespace)
namespace["bench"].close()
report(shown)
"""

CLI = """
import contextlib, io, json, sys
from toolbench.cli import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    code = main(sys.argv[1:])
report([code, json.loads(out.getvalue())["content"]])
"""


def block(heading: str, lang: str) -> list[str]:
    """The lines of the first `lang` code block after the README's `heading`."""
    after = README.read_text(encoding="utf-8").split(f"\n{heading}\n", 1)[1]
    return after.split(f"```{lang}\n", 1)[1].split("\n```", 1)[0].splitlines()


def first_look() -> tuple[str, list[object]]:
    """The first look's lines up to its last dice call, and what the dice calls' comments show."""
    lines = block("## A first look", "python")
    last = max(n for n, line in enumerate(lines) if line.startswith('inv.call("dice_roll"'))
    shown = [ast.literal_eval(line.split(COMMENT, 1)[1]) for line in lines[:last + 1]
             if line.startswith('inv.call("dice_roll"')]
    return "\n".join(lines[:last + 1]), shown


@pytest.mark.parametrize("run", [1, 2])
def test_the_first_looks_dice_calls_print_what_the_readme_shows(run):
    script, shown = first_look()
    assert len(shown) == 2
    assert run_with_deadline(FIRST_LOOK, args=(script,)) == shown


@pytest.mark.parametrize("run", [1, 2])
def test_the_command_lines_seeded_roll_prints_what_the_readme_shows(run):
    line = next(line for line in block("From the command line:", "bash") if line.startswith("toolbench call dice_roll"))
    command, comment = line.split(COMMENT, 1)
    content = json.loads(comment.split('"content": ', 1)[1])
    assert run_with_deadline(CLI, args=tuple(shlex.split(command)[1:])) == [0, content]
