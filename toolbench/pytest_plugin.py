"""toolbench's pytest plugin: a bench per test, golden tool lists, and a call's code asserted.

pytest loads it through the `pytest11` entry point `toolbench.pytest_plugin` once toolbench is
installed (or `-p toolbench.pytest_plugin`, or `pytest_plugins = ["toolbench.pytest_plugin"]`;
all three name the module, so they never register it twice). toolbench does not depend on
pytest: only pytest imports this module.

    def test_dice(toolbench_bench, assert_golden, toolbench_call):
        inv = toolbench_bench.invocation("chat")
        assert_golden(inv.snapshot, "tools.json")   # golden/tools.json beside this test module
        toolbench_call("dice_roll", '{"formula":', code="tool.invalid_arguments")

    from toolbench.pytest_plugin import assert_code
    assert_code(inv.call("dice_roll", {"formula": "2d6"}), None)   # None: not an error

- `toolbench_bench`: `Workbench(workspace=tmp_path)` on the default profile, closed after the test.
- `assert_golden(snapshot, name)`: compares `snapshot.golden()` with `golden/<name>`; a missing or
  different file fails the test with what changed (`snapshot.diff`'s readable lines, then the
  golden text's diff: the old and new descriptions and schemas).
  `pytest --toolbench-update-golden` writes the files instead.
  The golden folder and its files must be real ones: a link (to the folder or a file) or a FIFO
  fails the test, in both modes, before anything is read or written (a link planted in a
  checkout would have an update overwrite its target, or a diff show it). A file is written to
  a temp file beside it and renamed over it, so a link put there meanwhile is replaced, not followed.
- `toolbench_call(call_name, arguments=MISSING, *, code=None, scene="chat")`: runs one call on
  `toolbench_bench` in a fresh invocation, asserts its code (`assert_code`) and returns the result.
"""

from __future__ import annotations

import difflib
import json
import os
import stat
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path, PurePosixPath
from typing import Any, Literal, Protocol

import pytest

from toolbench import MISSING, ToolbenchError, ToolResult, Workbench
from toolbench.protocols import diff as tool_list_diff

UPDATE_OPTION = "--toolbench-update-golden"
GOLDEN_DIR = "golden"
DIFF_LINES = 60  # of the golden text's diff in a failure: enough for a few tools' changes


class HasGolden(Protocol):
    """What `assert_golden` compares: a snapshot (anything with `golden()`)."""

    def golden(self) -> list[dict[str, Any]]: ...


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("toolbench")
    group.addoption(UPDATE_OPTION, action="store_true", default=False,
                    help="write the golden files assert_golden compares with, instead of comparing")


# the code of a call ------------------------------------------------------------------------
def assert_code(result: ToolResult, code: str | None) -> ToolResult:
    """Fail unless `result` has error code `code`; `None` means it must not be an error.

    Returns the result, so a test can go on reading it. The failure names both codes and
    quotes what the model read (the first 200 characters)."""
    __tracebackhide__ = True
    if result.error_code != code or result.is_error != (code is not None):
        got = result.error_code if result.is_error else "no error"
        want = code if code is not None else "no error"
        tool = result.tool_id or "no tool"
        pytest.fail(f"call `{result.call_id}` ({tool}): expected {want}, got {got}\n"
                    f"content: {_quote(result.content)}", pytrace=False)
    return result


def _quote(text: str, limit: int = 200) -> str:
    # The same 200-character rule as core.arguments.quote; the plugin keeps to the public face.
    return json.dumps(text[:limit] + ("…" if len(text) > limit else ""), ensure_ascii=False)


# golden tool lists -------------------------------------------------------------------------
def golden_text(snapshot: HasGolden) -> str:
    """The file form of a golden tool list: indented JSON with a final newline."""
    return json.dumps(snapshot.golden(), indent=2, ensure_ascii=False) + "\n"


def compare_golden(snapshot: HasGolden, path: Path, *, update: bool, root: Path | None = None) -> None:
    """Compare `snapshot`'s golden form with the file at `path` (or write it when `update`).

    Each folder from `root` (default: `path`'s folder) down to `path`, and `path` itself, must be
    a real folder or file, or not exist yet (the module docstring says why)."""
    __tracebackhide__ = True
    _refuse_special(path, path.parent if root is None else root)
    text = golden_text(snapshot)
    if update:
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            _replace(path, text)
        return
    if not path.is_file():
        pytest.fail(f"golden file {path} is missing; run pytest {UPDATE_OPTION} to write it", pytrace=False)
    stored_text = path.read_text(encoding="utf-8")
    try:
        stored = json.loads(stored_text)
    except ValueError as exc:
        pytest.fail(f"golden file {path} is not JSON ({exc}); run pytest {UPDATE_OPTION} to rewrite it",
                    pytrace=False)
    current = snapshot.golden()
    if stored == current:
        return
    # From the stored list to the current one, so an added tool reads "+ added".
    try:
        summary = str(tool_list_diff(stored, current))
    except (ToolbenchError, TypeError, AttributeError, KeyError):  # a golden file of another shape
        summary = "no changes"
    # The summary names what changed, the text diff shows it (the old and new description).
    lines = list(difflib.unified_diff(stored_text.splitlines(), text.splitlines(), "golden", "current",
                                      n=1, lineterm=""))
    if len(lines) > DIFF_LINES:
        lines = [*lines[:DIFF_LINES], f"... ({len(lines) - DIFF_LINES} more diff lines)"]
    changes = "\n".join(lines) if summary == "no changes" else summary + "\n\n" + "\n".join(lines)
    pytest.fail(f"the tool list differs from golden file {path}:\n{changes}\n"
                f"(run pytest {UPDATE_OPTION} to accept it)", pytrace=False)


def _refuse_special(path: Path, root: Path) -> None:
    """Fail the test if a part of `path` below `root` is a link, or `path` is not a regular file."""
    __tracebackhide__ = True
    current = root
    parts = path.relative_to(root).parts
    for index, part in enumerate(parts):
        current = current / part
        try:
            mode = os.lstat(current).st_mode
        except FileNotFoundError:
            return  # not there yet: the update makes it
        what = "golden file" if index == len(parts) - 1 else "golden folder"
        if stat.S_ISLNK(mode):
            pytest.fail(f"{what} {current} is a link; assert_golden reads and writes real files only: replace the "
                        "link with the file (or folder) itself", pytrace=False)
        if index == len(parts) - 1 and not stat.S_ISREG(mode):
            pytest.fail(f"{what} {current} is not a regular file ({stat.filemode(mode)}); remove it, then run "
                        f"pytest {UPDATE_OPTION}", pytrace=False)


def _replace(path: Path, text: str) -> None:
    """Write `text` to a temp file beside `path`, then rename it over `path` (a link there is
    replaced as an entry, never followed)."""
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.chmod(temp, 0o644)  # mkstemp's 0600 would make a checked-in golden file private
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def _golden_path(test_file: Path, name: str) -> Path:
    parts = PurePosixPath(name).parts
    if not name or PurePosixPath(name).is_absolute() or ".." in parts or "\\" in name or not parts \
            or parts[-1] == ".":
        raise pytest.UsageError(f"assert_golden: {name!r} must be a relative path under {GOLDEN_DIR}/")
    return test_file.parent / GOLDEN_DIR / Path(*parts)


# fixtures ----------------------------------------------------------------------------------
@pytest.fixture
def toolbench_bench(tmp_path: Path) -> Iterator[Workbench]:
    """A `Workbench` on `tmp_path` with the default profile; closed after the test."""
    bench = Workbench(workspace=tmp_path)
    try:
        yield bench
    finally:
        bench.close()


@pytest.fixture
def assert_golden(request: pytest.FixtureRequest) -> Callable[[HasGolden, str], None]:
    """`assert_golden(snapshot, name)` compares with `golden/<name>` beside the test module."""
    update = bool(request.config.getoption(UPDATE_OPTION))
    test_file = request.path

    def check(snapshot: HasGolden, name: str) -> None:
        __tracebackhide__ = True
        compare_golden(snapshot, _golden_path(test_file, name), update=update, root=test_file.parent)

    return check


@pytest.fixture
def toolbench_call(toolbench_bench: Workbench) -> Callable[..., ToolResult]:
    """`toolbench_call(call_name, arguments=MISSING, *, code=None, scene="chat")` runs one call on
    `toolbench_bench` in a fresh invocation and asserts its code (`None`: not an error)."""

    def call(call_name: str, arguments: Any = MISSING, *, code: str | None = None,
             scene: Literal["chat", "session"] = "chat") -> ToolResult:
        __tracebackhide__ = True
        return assert_code(toolbench_bench.invocation(scene).call(call_name, arguments), code)

    return call
