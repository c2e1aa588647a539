"""Imports inside functions hide the data path, so the package has them for start-up only, for
one of three documented reasons (CONTRIBUTING.md, "Imports"):

- the command line's modules import what a command needs when it runs, so `toolbench --help`
  imports no runtime;
- the MCP SDK (`toolbench.mcp`, half a second) is imported when a server is first used, so a
  bench of builtins never pays for it;
- Ray (`toolbench.runtime.on_ray`) only with `executor="ray"`: an optional dependency.

The first test reads every function-level import of a toolbench module and names any other;
the others check that the start-up each reason buys is real (in a child interpreter).
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "toolbench"
COMMAND_LINE = {"cli", "cli_check", "cli_eval", "cli_screen", "cli_bench", "cli_args", "lab"}
STARTUP_TARGETS = ("toolbench.mcp", "toolbench.runtime.on_ray")


def lazy_imports(root: Path) -> list[tuple[str, int, tuple[str, ...]]]:
    """(module, line, what it may import) for each `from toolbench...` import inside a function
    of the package under `root`: the module `from` names, and each name as a submodule of it."""
    found = []
    for path in sorted((root / "toolbench").rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        module = ".".join(parts[:-1] if path.name == "__init__.py" else parts)
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for inner in ast.walk(node):
                if isinstance(inner, ast.ImportFrom):
                    up = package.split(".")[: len(package.split(".")) - max(inner.level - 1, 0)]
                    base = ".".join([*(up if inner.level else []), *([inner.module] if inner.module else [])])
                    targets = (base, *(f"{base}.{a.name}" for a in inner.names))
                elif isinstance(inner, ast.Import):
                    targets = tuple(a.name for a in inner.names)
                else:
                    continue
                if any(t.startswith("toolbench") for t in targets):
                    found.append((module, inner.lineno, targets))
    return sorted(set(found))


def _startup(target: str) -> bool:
    return any(target == s or target.startswith(s + ".") for s in STARTUP_TARGETS)


def _allowed(module: str, targets: tuple[str, ...]) -> bool:
    """The command line's own, or what it imports is a start-up target: the module `from`
    names, or else every name it takes from it (`from .runtime import on_ray`)."""
    if module.removeprefix("toolbench.") in COMMAND_LINE:
        return True
    base, *names = targets
    return _startup(base) or (bool(names) and all(_startup(n) for n in names))


def test_every_import_inside_a_function_is_a_start_up_one() -> None:
    found = lazy_imports(ROOT)
    assert any(m == "toolbench.cli" for m, _, _ in found), "the scan finds the command line's own lazy imports"
    others = [f"{m}:{line} imports {t[0]}" for m, line, t in found if not _allowed(m, t)]
    assert not others, "import these at the module's top (or say in CONTRIBUTING why not):\n" + "\n".join(others)


def test_the_scan_names_an_import_inside_a_function(tmp_path: Path) -> None:
    """The rule bites: a runtime module importing its neighbour lazily is named; the MCP SDK is not."""
    package = tmp_path / "toolbench" / "runtime"
    package.mkdir(parents=True)
    (package / "run.py").write_text("def f():\n    from .invocation import Invocation\n    from ..mcp import x\n"
                                    "    from . import on_ray\n    from . import on_ray, invocation\n")
    found = lazy_imports(tmp_path)
    assert [(m, line, t[0]) for m, line, t in found] == [
        ("toolbench.runtime.run", 2, "toolbench.runtime.invocation"), ("toolbench.runtime.run", 3, "toolbench.mcp"),
        ("toolbench.runtime.run", 4, "toolbench.runtime"), ("toolbench.runtime.run", 5, "toolbench.runtime")]
    assert [_allowed(m, t) for m, _, t in found] == [False, True, True, False]


def _imported_after(code: str) -> list[str]:
    probe = (f"import sys\n{code}\nimport json\n"
             "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
             "('toolbench', 'mcp', 'ray'))))")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    return list(json.loads(result.stdout.strip().splitlines()[-1]))


def test_a_bench_of_builtins_imports_no_mcp_sdk_and_no_ray(tmp_path: Path) -> None:
    loaded = _imported_after(f"from toolbench import Workbench\nbench = Workbench({str(tmp_path)!r})\n"
                             "bench.invocation('chat').call('dice_roll', {'formula': 'd6'})\nbench.close()")
    assert "toolbench.runtime.kernel" in loaded  # the probe ran a real call
    assert not [m for m in loaded if m == "mcp" or m.startswith(("mcp.", "toolbench.mcp", "ray"))]
    assert "toolbench.runtime.on_ray" not in loaded


def test_the_command_line_help_imports_no_runtime() -> None:
    loaded = _imported_after("import contextlib\nfrom toolbench.cli import main\n"
                             "with contextlib.suppress(SystemExit), contextlib.redirect_stdout(None):\n"
                             "    main(['--help'])")
    assert "toolbench.cli" in loaded
    assert not [m for m in loaded if m.startswith(("toolbench.runtime", "toolbench.mcp", "toolbench.protocols"))]
