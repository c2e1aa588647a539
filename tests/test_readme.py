"""The README runs as written: its dice examples print what their comments say, in a fresh
process, every run (the dice are seeded, and a seeded run does not depend on the random
invocation ids); every python block and every self-contained `toolbench` command runs and
leaves nothing behind."""

from __future__ import annotations

import ast
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

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


# Every python block, each in a fresh interpreter whose temp folder is its own: the block runs as
# written (a block of `def test_...` functions runs as a pytest module, with the plugin), leaves
# no bench open and no toolbench-* folder behind (an open demo bench is only swept at exit).
SNIPPET = """
import gc, sys
namespace = {"__name__": "__main__"}  # kept alive: a bench the block left open is still here
exec(compile(sys.argv[1], "README.md", "exec"), namespace)
from toolbench import Workbench
report(sum(1 for o in gc.get_objects() if isinstance(o, Workbench) and not o.closed))
"""

PYTEST_SNIPPET = """
import sys
import pytest
report([int(pytest.main([sys.argv[1], "-q", "-p", "toolbench.pytest_plugin", "-p", "no:cacheprovider", *extra]))
        for extra in (["--toolbench-update-golden"], [])])
"""

# Shell lines that run as they are: `toolbench ...` commands, but not `toolbench lab` (a server
# that runs until stopped); lines that install (`pip install ...`) are for a reader's machine.
LONG_RUNNING = ("toolbench lab",)


def blocks(lang: str) -> list[str]:
    """Every `lang` code block of the README, in order."""
    return [part.split("\n```", 1)[0] for part in README.read_text(encoding="utf-8").split(f"```{lang}\n")[1:]]


def commands() -> list[list[str]]:
    """The self-contained `toolbench` commands of the README's shell blocks, split as a shell
    would, each followed by the exit status its comment promises (`(exit N`, else 0)."""
    out = []
    for text in blocks("bash"):
        for line in text.splitlines():
            if line.startswith("toolbench ") and not line.startswith(LONG_RUNNING):
                promised = re.search(r"\(exit (\d)", line.partition(" # ")[2])
                out.append([*shlex.split(line, comments=True), promised.group(1) if promised else "0"])
    return out


def leftovers(tmp: Path) -> list[str]:
    return sorted(p.name for p in tmp.iterdir() if p.name.startswith("toolbench-"))


@pytest.fixture
def own_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A temp folder of the child's own (TMPDIR), so other runs' folders are not counted."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))
    return tmp


def test_the_readme_has_the_blocks_these_tests_run() -> None:
    assert len(blocks("python")) >= 3
    assert any(command[1] == "call" for command in commands())


@pytest.mark.parametrize("number", range(len(blocks("python"))))
def test_every_python_block_runs_as_written_and_leaves_nothing_behind(number: int, own_tmp: Path,
                                                                     tmp_path: Path) -> None:
    code = blocks("python")[number]
    if "\ndef test_" in f"\n{code}":
        module = tmp_path / "suite" / "test_readme_block.py"
        module.parent.mkdir()
        module.write_text(code + "\n", encoding="utf-8")
        assert run_with_deadline(PYTEST_SNIPPET, args=(str(module),), deadline=90, cwd=module.parent) == [0, 0]
    else:
        assert run_with_deadline(SNIPPET, args=(code,), deadline=90) == 0  # no bench left open
    assert leftovers(own_tmp) == []


@pytest.mark.parametrize("command", commands(), ids=lambda c: " ".join(c[:-1]))
def test_every_toolbench_command_runs_as_written(command: list[str], own_tmp: Path) -> None:
    """The exit status its comment promises (0 unless it says `(exit N`); JSON on stdout."""
    *command, promised = command
    done = subprocess.run([sys.executable, "-m", "toolbench", *command[1:]], capture_output=True,
                          text=True, timeout=60, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT),
                                                                                         os.environ.get("PYTHONPATH")]))})
    assert done.returncode == int(promised), done.stderr[-2000:]
    json.loads(done.stdout)
    assert leftovers(own_tmp) == []
