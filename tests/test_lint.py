"""The house checks run with the tests: ruff over the code and tests, mypy (strict) over the
package, and import-linter's layer contracts (pyproject.toml, `[tool.importlinter]`)."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_ruff_finds_nothing() -> None:
    result = _run("ruff", "check", "toolbench", "tests", "benchmarks")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_strict_finds_nothing_in_the_package() -> None:
    result = _run("mypy")  # strict, over the package: pyproject.toml [tool.mypy]
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_import_contracts_are_kept() -> None:
    result = subprocess.run([sys.executable, "-c", "from importlinter.cli import lint_imports_command; "
                             "lint_imports_command()"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout, result.stdout


def _stand_in_package(root: Path) -> Path:
    """An empty `toolbench` holding every module the contracts name (import-linter refuses a
    contract whose module is missing), each a package where the real one is."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    names = {"toolbench"}
    for contract in contracts:
        names.update(contract.get("source_modules", []), contract.get("forbidden_modules", []))
        for layer in contract.get("layers", []):
            names.update(f"toolbench.{m.strip()}" for m in layer.split("|"))
    for name in sorted(names):
        parts = name.split(".")
        for i in range(1, len(parts)):  # the parents are packages
            (root.joinpath(*parts[:i])).mkdir(parents=True, exist_ok=True)
            (root.joinpath(*parts[:i]) / "__init__.py").touch()
        if (ROOT.joinpath(*parts)).is_dir():
            root.joinpath(*parts).mkdir(parents=True, exist_ok=True)
            (root.joinpath(*parts) / "__init__.py").touch()
        else:
            root.joinpath(*parts[:-1], f"{parts[-1]}.py").touch()
    return root / "toolbench"


def test_a_broken_layer_is_caught(tmp_path: Path) -> None:
    """The contracts bite: a core module that imports the runtime breaks the layers contract."""
    package = _stand_in_package(tmp_path)
    (package / "core" / "bad.py").write_text("from ..runtime import bench\n")
    (package / "core" / "snapshot.py").write_text("def render():\n    from .. import protocols\n")
    (package / "runtime" / "bench.py").write_text("")
    (tmp_path / "pyproject.toml").write_text((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    result = subprocess.run([sys.executable, "-c", "from importlinter.cli import lint_imports_command; "
                             "lint_imports_command()"], cwd=tmp_path, capture_output=True, text=True, timeout=600,
                            env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert result.returncode == 1, result.stdout + result.stderr
    assert "toolbench.core.bad -> toolbench.runtime" in result.stdout


def test_a_part_that_takes_the_kernel_is_caught(tmp_path: Path) -> None:
    """The kernel contract bites: cron importing the kernel (even for a type) breaks it."""
    package = _stand_in_package(tmp_path)
    (package / "runtime" / "cron.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                                 "    from .kernel import Kernel\n")
    (tmp_path / "pyproject.toml").write_text((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    result = subprocess.run([sys.executable, "-c", "from importlinter.cli import lint_imports_command; "
                             "lint_imports_command()"], cwd=tmp_path, capture_output=True, text=True, timeout=600,
                            env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert result.returncode == 1, result.stdout + result.stderr
    assert "never hold its kernel BROKEN" in " ".join(result.stdout.split())
    assert "toolbench.runtime.cron -> toolbench.runtime.kernel" in result.stdout
