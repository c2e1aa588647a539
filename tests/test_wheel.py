"""The wheel works on its own: built from the sources, installed in a fresh venv, nothing from the checkout.

The venv has no system site packages and no PYTHONPATH, and every command runs outside the
checkout, so what answers is the installed wheel: its CLI, its bundled notebooks (copied out by
`toolbench lab` and executed there) and its JupyterLab server, which stops with `toolbench lab`.
Every command runs under a `tests/deadline.py` deadline. The dependencies come from a wheelhouse
downloaded once per dependency set (`_wheelhouse`); installing from it takes under a minute on 2
busy cores, the first download about one more.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.deadline import ROOT, run_with_deadline

SOURCES = ("pyproject.toml", "setup.py", "README.md", "toolbench", "notebooks")
NOTEBOOK = "01-quickstart.ipynb"

RUN = """
import json, subprocess, sys
spec = json.loads(sys.argv[1])
done = subprocess.run(spec["command"], cwd=spec["cwd"], env=spec["env"], capture_output=True, text=True)
report({"returncode": done.returncode, "stdout": done.stdout[-20000:], "stderr": done.stderr[-4000:]})
"""

DRIVE = """
import json, sys
from tests.lab_support import drive_lab
spec = json.loads(sys.argv[1])
report(drive_lab(spec["command"], cwd=spec["cwd"], env=spec["env"], notebook=spec["notebook"]))
"""


@dataclass(frozen=True)
class Installed:
    wheel: Path
    venv: Path
    home: Path  # the working folder every command runs in (outside the checkout)
    env: dict[str, str]

    def bin(self, name: str) -> str:
        return str(self.venv / ("Scripts" if os.name == "nt" else "bin") / name)


def _run(command: list[str], *, cwd: Path, env: dict[str, str], deadline: float, code: int = 0) -> dict[str, Any]:
    spec = {"command": command, "cwd": str(cwd), "env": env}
    done: dict[str, Any] = run_with_deadline(RUN, deadline=deadline, args=(json.dumps(spec),))
    assert done["returncode"] == code, f"{command} exited {done['returncode']}:\n{done['stdout']}\n{done['stderr']}"
    return done


def _wheelhouse(wheel: Path, *, home: Path, env: dict[str, str]) -> Path:
    """The wheel's dependencies and the `lab` extra as wheels, downloaded once per dependency set.

    Installing from it with `--no-index` still resolves every dependency the wheel declares (a
    missing one fails), but skips the index queries: half the install time on 2 busy cores. The
    key is the wheel's Requires-Dist and the Python version, so a changed dependency gets a new one."""
    with zipfile.ZipFile(wheel) as archive:
        metadata = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        lines = archive.read(metadata).decode().splitlines()
    requires = sorted(line for line in lines if line.startswith("Requires-Dist"))
    key = hashlib.sha256(json.dumps([sys.version_info[:2], requires]).encode()).hexdigest()[:16]
    cache = Path(os.environ.get("TOOLBENCH_WHEELHOUSE_DIR")
                 or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "toolbench-tests")
    house = cache / f"wheelhouse-{key}"
    if not house.is_dir():
        partial = Path(tempfile.mkdtemp(prefix="wheelhouse-", dir=_made(cache)))
        _run([sys.executable, "-m", "pip", "download", "-q", "-d", str(partial), f"{wheel}[lab]"],
             cwd=home, env=env, deadline=600)
        for own in partial.glob("toolbench-*.whl"):
            own.unlink()  # the wheel under test is always the one just built
        with contextlib.suppress(OSError):  # another run made it first: use that one
            partial.rename(house)
        shutil.rmtree(partial, ignore_errors=True)
    return house


def _made(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """The wheel, built from a clean copy of the sources, installed with the `lab` extra in a fresh venv."""
    tmp = tmp_path_factory.mktemp("wheel")
    source = tmp / "src"
    source.mkdir()
    for name in SOURCES:  # a copy: no stale build/ of the checkout gets into the wheel, nothing written there
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(ROOT / name, source / name)
    home = tmp / "home"
    home.mkdir()
    base = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    _run([sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", "-q", "-w", str(tmp / "dist")],
         cwd=home, env=base, deadline=300)
    (wheel,) = (tmp / "dist").glob("toolbench-*.whl")
    house = _wheelhouse(wheel, home=home, env=base)
    venv = tmp / "venv"
    # No pip inside (the test's pip installs into it with --python): a fresh, empty venv in a second.
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], cwd=home, env=base, deadline=120)
    bin_dir = venv / ("Scripts" if os.name == "nt" else "bin")
    python = bin_dir / ("python.exe" if os.name == "nt" else "python")
    _run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-compile", "--no-index",
          "--find-links", str(house), f"{wheel}[lab]"], cwd=home, env=base, deadline=600)
    env = {**base, "VIRTUAL_ENV": str(venv), "PATH": os.pathsep.join([str(bin_dir), base.get("PATH", "")]),
           # Jupyter's own folders in the test's tmp: no user config, no runtime files left behind.
           "JUPYTER_CONFIG_DIR": str(tmp / "jupyter-config"), "JUPYTER_RUNTIME_DIR": str(tmp / "jupyter-runtime"),
           "JUPYTERLAB_SETTINGS_DIR": str(tmp / "lab-settings"),
           "JUPYTERLAB_WORKSPACES_DIR": str(tmp / "lab-workspaces")}
    return Installed(wheel, venv, home, env)


def test_the_wheel_carries_every_module_and_the_notebooks(installed: Installed) -> None:
    names = set(zipfile.ZipFile(installed.wheel).namelist())
    # The browser code of the anywidget views (file view, argument box, copy button) too.
    modules = {p.relative_to(ROOT).as_posix() for pattern in ("*.py", "*.js")
               for p in (ROOT / "toolbench").rglob(pattern)}
    notebooks = {f"toolbench/_notebooks/{p.name}" for p in (ROOT / "notebooks").glob("*.ipynb")}
    assert modules <= names
    assert notebooks <= names and len(notebooks) >= 12


def test_the_installed_package_is_the_wheel_not_the_checkout(installed: Installed) -> None:
    done = _run([installed.bin("python"), "-c", "import toolbench; print(toolbench.__file__)"],
                cwd=installed.home, env=installed.env, deadline=60)
    assert Path(done["stdout"].strip()).is_relative_to(installed.venv)


def test_the_installed_cli_helps_and_rolls_dice(installed: Installed) -> None:
    helped = _run([installed.bin("toolbench"), "--help"], cwd=installed.home, env=installed.env, deadline=60)
    assert "lab" in helped["stdout"] and "call" in helped["stdout"]
    rolled = _run([installed.bin("toolbench"), "call", "dice_roll", '{"formula": "2d6+1"}', "--seed", "3"],
                  cwd=installed.home, env=installed.env, deadline=60)
    result = json.loads(rolled["stdout"])
    assert result["isError"] is False and result["toolId"] == "builtin:dice.roll"
    assert result["content"].startswith("Rolled 2d6+1: ")


def _digests(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


def test_lab_serves_a_working_copy_stops_on_sigterm_and_its_notebook_runs(installed: Installed) -> None:
    bundled = next(installed.venv.glob("lib*/python*/site-packages/toolbench/_notebooks"), None) or next(
        installed.venv.glob("Lib/site-packages/toolbench/_notebooks"))
    before = _digests(bundled)
    copy = installed.home / "my-notebooks"
    copy.mkdir()
    edited = sorted(before)[1]
    (copy / edited).write_text('{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}')  # the user's

    spec = {"command": [installed.bin("toolbench"), "lab", "--dir", str(copy), "--no-browser"],
            "cwd": str(installed.home), "env": installed.env, "notebook": NOTEBOOK}
    seen = run_with_deadline(DRIVE, deadline=180, args=(json.dumps(spec),))
    assert seen["dir"] == str(copy.resolve())
    assert seen["page_status"] == 200
    assert (seen["contents"]["name"], seen["contents"]["type"]) == (NOTEBOOK, "notebook")
    assert seen["servers"], "toolbench lab started no server process"
    assert (seen["lab_status"], seen["left"], seen["port_open"]) == (143, [], False), seen["stderr"]

    assert sorted(p.name for p in copy.iterdir()) == sorted(before)
    assert json.loads((copy / edited).read_text())["cells"] == []  # never overwritten
    assert _digests(bundled) == before  # the installed files untouched

    _run([installed.bin("jupyter"), "nbconvert", "--to", "notebook", "--execute", NOTEBOOK, "--output", "ran.ipynb"],
         cwd=copy, env=installed.env, deadline=300)
    cells = json.loads((copy / "ran.ipynb").read_text())["cells"]
    outputs = [o for c in cells if c["cell_type"] == "code" for o in c["outputs"]]
    assert not [o for o in outputs if o["output_type"] == "error"]
    assert any("Rolled 3d6+4" in "".join(o.get("text", "")) for o in outputs)


def test_the_installed_check_exits_0_1_2(installed: Installed) -> None:
    """`toolbench check` from the wheel: the example server clean, a server listing broken tools,
    a server that cannot be started."""
    python = installed.bin("python")
    servers = {
        "clean": {"demo": {"command": python, "args": ["-m", "toolbench.examples.demo_mcp"],
                           "toolbench": {"smoke": [{"tool": "echo", "arguments": {"text": "hi"}}]}}},
        "broken": {"bad": {"command": python, "args": [str(ROOT / "tests" / "mcp" / "servers" / "bad_tools.py")]}},
        "unreachable": {"demo": {"command": python, "args": ["-m", "toolbench.examples.demo_mcp"]},
                        "gone": {"command": "no-such-mcp-server"}},
    }
    codes = {}
    for name, config in servers.items():
        (installed.home / f"{name}.json").write_text(json.dumps({"mcpServers": config}))
        expected = {"clean": 0, "broken": 1, "unreachable": 2}[name]
        done = _run([installed.bin("toolbench"), "check", "--mcp-config", f"{name}.json", "--format", "json"],
                    cwd=installed.home, env=installed.env, deadline=180, code=expected)
        codes[name] = json.loads(done["stdout"])["summary"]
    assert codes["clean"]["smoke_failed"] == 0 and codes["clean"]["fatal"] == 0
    assert codes["broken"]["fatal"] > 0 and codes["unreachable"]["unreachable"] == 1


USER_SUITE = """
def shout(text: str) -> str:
    \"\"\"Repeat the text in capitals.\"\"\"
    return text.upper()


def test_tools(toolbench_bench, assert_golden, toolbench_call):
    toolbench_bench.enable(toolbench_bench.register_tool("project", shout))
    assert_golden(toolbench_bench.invocation("chat").snapshot, "tools.json")
    toolbench_call("shout", {"text": "hi"}, code=None)
    toolbench_call("shout", "{", code="tool.invalid_arguments")
"""


def test_a_user_suite_gets_the_plugin_from_the_wheel(installed: Installed) -> None:
    suite = installed.home / "suite"
    suite.mkdir()
    (suite / "test_user.py").write_text(USER_SUITE)
    pytest_cmd = [installed.bin("python"), "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    first = _run([*pytest_cmd, "--toolbench-update-golden"], cwd=suite, env=installed.env, deadline=180)
    assert "1 passed" in first["stdout"]
    assert json.loads((suite / "golden" / "tools.json").read_text())  # written by the installed plugin
    _run(pytest_cmd, cwd=suite, env=installed.env, deadline=180)
    (suite / "test_user.py").write_text(USER_SUITE.replace("in capitals", "louder"))
    changed = _run(pytest_cmd, cwd=suite, env=installed.env, deadline=180, code=1)
    assert "~ description of `shout` changed" in changed["stdout"]
