"""The public face: the names of api.md, `__all__`, what `import toolbench` pulls in, and one
list of error codes. (The direction of imports is import-linter's: tests/test_lint.py.)"""

from __future__ import annotations

import ast
import subprocess
import sys
import types
from pathlib import Path

import pytest

import toolbench
from toolbench import CODES

PACKAGE = Path(toolbench.__file__).parent

# Every name api.md says imports from `toolbench`.
API_NAMES = {
    "MISSING",
    "Attachment",
    "CallRecord",
    "Invocation",
    "Profile",
    "ToolArguments",
    "ToolDescriptor",
    "ToolError",
    "ToolId",
    "ToolResult",
    "ToolbenchError",
    "Workbench",
}


@pytest.mark.parametrize("name", sorted(API_NAMES))
def test_api_names_import_from_the_top_level(name):
    namespace: dict = {}
    exec(f"from toolbench import {name}", namespace)
    assert namespace[name] is getattr(toolbench, name)
    assert name in toolbench.__all__


def test_all_is_sorted_the_isort_way():
    """Constants first, then classes, then the rest; each group in code-point order (ruff RUF022)."""

    def key(name: str) -> tuple[int, str]:
        group = 0 if name.isupper() else 1 if name[:1].isupper() else 2
        return group, name

    assert toolbench.__all__ == sorted(toolbench.__all__, key=key)
    assert len(set(toolbench.__all__)) == len(toolbench.__all__)


def test_all_is_complete_and_every_entry_resolves():
    for name in toolbench.__all__:
        assert hasattr(toolbench, name), name
    public = {name for name, value in vars(toolbench).items()
              if not name.startswith("_") and not isinstance(value, types.ModuleType)}
    assert public == set(toolbench.__all__)


def test_errors_carry_their_code_and_message():
    from toolbench import ToolbenchError, ToolError

    error = ToolbenchError("tool.id_invalid", "bad")
    assert (error.code, error.message, str(error)) == ("tool.id_invalid", "bad", "tool.id_invalid: bad")
    tool_error = ToolError("tool.invalid_arguments", "no", structured={"k": 1})
    assert (tool_error.code, tool_error.message, tool_error.structured) == ("tool.invalid_arguments", "no", {"k": 1})
    assert not issubclass(ToolError, ToolbenchError) and not issubclass(ToolbenchError, ToolError)


def test_import_toolbench_pulls_in_no_heavy_dependency():
    # The widgets, the MCP SDK and pandas, and what only some tools need (cron expressions,
    # front matter, gitignore patterns): each loads when first used.
    code = (
        "import sys, toolbench\n"
        "heavy = ('ipywidgets', 'mcp', 'pandas', 'croniter', 'frontmatter', 'yaml', 'pathspec', 'openai', 'anthropic',"
        " 'google')\n"
        "print(sorted(m for m in sys.modules if m in heavy or m.startswith(tuple(h + '.' for h in heavy))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip() == "[]"


def test_each_name_is_imported_on_first_use_from_the_module_the_type_checkers_read():
    """`__all__`, the lazy table and the `if TYPE_CHECKING:` imports name the same things."""
    tree = ast.parse((PACKAGE / "__init__.py").read_text(encoding="utf-8"))
    guarded = next(n for n in tree.body if isinstance(n, ast.If) and "TYPE_CHECKING" in ast.unparse(n.test)
                   and not isinstance(n.test, ast.UnaryOp))
    typed = {alias.name: "." + (node.module or "") for node in guarded.body if isinstance(node, ast.ImportFrom)
             for alias in node.names}
    assert typed == toolbench._HOME
    assert set(toolbench._HOME) == set(toolbench.__all__)


def test_import_toolbench_imports_no_name_until_one_is_used():
    code = (
        "import sys, toolbench\n"
        "before = sorted(m for m in sys.modules if m.startswith('toolbench.') or m.split('.')[0] == 'pydantic')\n"
        "from toolbench import ToolbenchError\n"
        "print(before, 'toolbench.runtime' in sys.modules, ToolbenchError.__module__)\n"
        "print(sorted(dir(toolbench)) == sorted({*vars(toolbench), *toolbench.__all__}))\n"
        "try:\n    toolbench.NotAName\nexcept AttributeError as exc:\n    print(type(exc).__name__)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.splitlines() == ["[] False toolbench.core.errors", "True", "AttributeError"]


def test_subpackages_are_attributes_after_a_plain_import():
    """`toolbench.protocols.register(...)` (README, CONTRIBUTING) after `import toolbench` alone."""
    code = ("import toolbench\n"
            "print([type(getattr(toolbench, n)).__name__ for n in ('protocols', 'testing', 'mcp', 'models', 'core')])\n"
            "print(callable(toolbench.protocols.register), toolbench.testing.ScriptedModel.__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.splitlines() == ["['module', 'module', 'module', 'module', 'module']", "True ScriptedModel"]


def test_help_lists_every_public_name():
    import pydoc

    text = pydoc.render_doc(toolbench, renderer=pydoc.plaintext)
    assert all(name in text for name in ("Workbench", "ToolArguments", "Profile", "RunRound"))


# --- one list of codes --------------------------------------------------------------------

_CODE_CALLS = {"ToolbenchError", "ToolError", "OutcomeUnknown", "error_result", "_refuse", "Diagnostic"}


def _codes_used(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    codes = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        if name not in _CODE_CALLS:
            continue
        values = [*node.args, *(k.value for k in node.keywords if k.arg == "code")]
        for value in values:
            if isinstance(value, ast.Constant) and isinstance(value.value, str) and value.value.count(".") == 1 \
                    and " " not in value.value and value.value.islower():
                codes.add(value.value)
    return codes


def test_every_code_raised_by_core_runtime_and_dice_is_listed():
    files = [*(PACKAGE / "core").glob("*.py"), *(PACKAGE / "runtime").glob("*.py"), *(PACKAGE / "models").glob("*.py"),
             PACKAGE / "tools" / "dice.py", PACKAGE / "testing.py"]
    used = set().union(*(_codes_used(path) for path in files))
    assert "tool.invalid_arguments" in used and "bench.misuse" in used  # the scan finds codes
    assert sorted(used - set(CODES)) == []


def test_codes_are_dotted_and_explained():
    for code, meaning in CODES.items():
        assert code.count(".") == 1 and code == code.lower() and " " not in code, code
        assert meaning.strip(), code
