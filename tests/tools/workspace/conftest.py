from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from toolbench import Profile, Workbench

ALL_WORKSPACE = [
    "builtin:workspace.list_files", "builtin:workspace.read_file", "builtin:workspace.search_files",
    "builtin:workspace.write_file", "builtin:workspace.apply_patch", "builtin:workspace.shell",
    "builtin:workspace.commit", "builtin:workspace.finish", "builtin:workspace.glob", "builtin:workspace.delete",
]


class Caller:
    def __init__(self, bench: Workbench) -> None:
        self.bench = bench
        self.inv = bench.invocation()

    def __call__(self, name: str, args: Any = None) -> Any:
        return self.inv.call(f"workspace_{name}", {} if args is None else args)

    def ok(self, name: str, args: Any = None) -> Any:
        result = self(name, args)
        assert not result.is_error, result.content
        return result

    def err(self, name: str, args: Any, code: str) -> Any:
        result = self(name, args)
        assert result.is_error and result.error_code == code, (result.error_code, result.content)
        return result


@pytest.fixture
def profile() -> Profile:
    return Profile.default().edit(allow=ALL_WORKSPACE)


@pytest.fixture
def bench(tmp_path: Path, profile: Profile) -> Iterator[Workbench]:
    with Workbench(tmp_path / "ws", profile) as b:
        yield b


@pytest.fixture
def call(bench: Workbench) -> Caller:
    return Caller(bench)
