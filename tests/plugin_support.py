"""Installed providers without a pip install: a `*.dist-info` folder (METADATA and
entry_points.txt) written into a temporary folder on `sys.path` is what `importlib.metadata`
finds, and tests/fixtures/user_provider holds the package it names (`tb_mistral`)."""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from toolbench.protocols import _plugins, _registry

ROOT = Path(__file__).resolve().parent.parent  # the checkout: its toolbench, not an installed one
USER_PROVIDER = ROOT / "tests" / "fixtures" / "user_provider"
MISTRAL_ENTRY = {"mistral": "tb_mistral:MISTRAL"}  # as the fixture's pyproject.toml declares it


def write_dist(root: Path, name: str, entry_points: Mapping[str, str], version: str = "0.1",
               group: str = _plugins.GROUP) -> Path:
    """A distribution's metadata in `root`, declaring `entry_points` in `group` (default
    `toolbench.providers`)."""
    info = root / f"{name}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf-8")
    lines = "".join(f"{key} = {value}\n" for key, value in entry_points.items())
    (info / "entry_points.txt").write_text(f"[{group}]\n{lines}", encoding="utf-8")
    return info


def pythonpath(root: Path) -> dict[str, str]:
    """The environment of a subprocess that finds the distributions in `root` and the fixture."""
    paths = [str(ROOT), str(root), str(USER_PROVIDER), os.environ.get("PYTHONPATH", "")]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}


@contextmanager
def installed(root: Path) -> Iterator[None]:
    """The distributions written in `root` (and the fixture package) on `sys.path`, with the
    registry's entry points read afresh on the next lookup, and forgotten after."""
    added = [str(root), str(USER_PROVIDER)]
    sys.path[:0] = added
    importlib.invalidate_caches()
    _registry.reset_installed()
    try:
        yield
    finally:
        _registry.reset_installed()
        for path in added:
            sys.path.remove(path)
        importlib.invalidate_caches()


SOURCE_MODULE = '''
from toolbench import ToolDescriptor, ToolId, ToolOutput, ToolSource

class Remote(ToolSource):
    kind = "remote"
    def descriptors(self):
        return [ToolDescriptor(id=ToolId.parse("remote/api:search"), description="Search remotely.")]
    def call(self, tool_id, arguments, ctx, *, blocking):
        return ToolOutput("found")

class Offline(ToolSource):
    kind = "offline"
    def descriptors(self):
        raise ConnectionError("the API is unreachable")
    def call(self, tool_id, arguments, ctx, *, blocking):
        raise AssertionError("never called")

def broken():
    return 42
'''


def write_source_dist(root: Path, entries: Mapping[str, str]) -> Path:
    """A distribution `tb_sources` in `root` declaring `entries` in `toolbench.sources` (objects of
    SOURCE_MODULE, `tb_sources:Remote`), and its module; its dist-info folder."""
    info = write_dist(root, "tb_sources", entries, group="toolbench.sources")
    (root / "tb_sources.py").write_text(SOURCE_MODULE, encoding="utf-8")
    return info


@contextmanager
def installed_sources(root: Path, entries: Mapping[str, str]) -> Iterator[None]:
    """`write_source_dist` on `sys.path`, forgotten after."""
    write_source_dist(root, entries)
    sys.path.insert(0, str(root))
    importlib.invalidate_caches()
    try:
        yield
    finally:
        sys.path.remove(str(root))
        sys.modules.pop("tb_sources", None)
        importlib.invalidate_caches()
