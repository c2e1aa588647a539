"""Run a piece of Python in a child process with a deadline.

For tests of things that could hang (regexes, globs, races, FIFOs): a regression then fails
with the child's output instead of freezing the suite. The child runs `python -c SCRIPT` from
the checkout, so it imports the same toolbench as the tests.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
RESULT_MARK = "@@RESULT@@ "


def run_with_deadline(script: str, *, deadline: float = 30.0, args: tuple[str, ...] = (),
                      cwd: Path | None = None, returncode: int = 0, memory_mb: int | None = None) -> Any:
    """Run `script` in a fresh interpreter; fail the test if it takes over `deadline` seconds.

    The script reports its value with `report(value)` (any JSON value), which this returns.
    An exit status other than `returncode` (-9 for a child that kills itself with SIGKILL)
    fails the test with the child's stderr. `memory_mb` caps the child's address space, so an
    input that blows memory up fails fast with MemoryError instead of swapping the machine."""
    prelude = ("import json as _json, sys as _sys\n"
               f"def report(value):\n    print({RESULT_MARK!r} + _json.dumps(value), flush=True)\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    limit = None if memory_mb is None else memory_mb * 1024 * 1024

    def cap() -> None:
        if limit is not None:
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    try:
        done = subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(script), *args],
                              capture_output=True, text=True, timeout=deadline, cwd=cwd or ROOT, env=env,
                              preexec_fn=cap if limit is not None else None)
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        pytest.fail(f"child did not finish within {deadline} s (a hang or a super-linear path); stdout:\n{out[-2000:]}")
    if done.returncode != returncode:
        pytest.fail(f"child exited {done.returncode}, not {returncode}:\n{done.stderr[-4000:]}")
    values = [line[len(RESULT_MARK):] for line in done.stdout.splitlines() if line.startswith(RESULT_MARK)]
    return json.loads(values[-1]) if values else None
