from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolbench.core.errors import ToolError
from toolbench.core.workspace_settings import WorkspaceSettings
from toolbench.tools.workspace.paths import Workspace, split_path


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    base = tmp_path / "ws"
    for root in ("work", "tmp", "output", "tool-results", "skills", "tool-args", ".toolbench"):
        (base / root).mkdir(parents=True)
    (base / "work" / "notes.md").write_text("x")
    return Workspace(base, WorkspaceSettings())


def code_of(fn, *args, **kw) -> str:
    with pytest.raises(ToolError) as info:
        fn(*args, **kw)
    return info.value.code


def test_relative_and_slash_absolute_paths_are_the_same(ws: Workspace) -> None:
    assert ws.resolve("work/notes.md") == ws.resolve("/work/notes.md") == ws.resolve("./work//notes.md")


def test_host_absolute_path_of_the_workspace_is_taken_as_relative(ws: Workspace) -> None:
    assert ws.resolve(str(ws.base / "work" / "notes.md")).rel == "work/notes.md"


@pytest.mark.parametrize("raw", ["../x", "work/../../etc", "a\x00b", "C:/x", "c:\\x", "work/a:b",
                                 "//host/share", "\\\\host\\share", "work/" + "n" * 300, "w" * 2000])
def test_bad_forms_are_invalid_path(raw: str) -> None:
    assert code_of(split_path, raw) == "workspace.invalid_path"


@pytest.mark.parametrize("raw", ["/etc/passwd", "tool-args/x.json", ".toolbench/x", "nope/x"])
def test_paths_outside_visible_roots_are_not_visible(ws: Workspace, raw: str) -> None:
    assert code_of(ws.resolve, raw) == "workspace.path_not_visible"


def test_symlink_to_etc_is_refused(ws: Workspace) -> None:
    os.symlink("/etc", ws.base / "work" / "etc")
    assert code_of(ws.resolve, "work/etc/passwd") == "workspace.path_not_visible"


def test_symlink_into_tool_results_is_not_writable(ws: Workspace) -> None:
    os.symlink(ws.base / "tool-results", ws.base / "work" / "tr")
    res = ws.resolve("work/tr/x.txt")
    assert res.root == "tool-results"
    assert code_of(ws.writable, res) == "workspace.path_not_writable"


def test_symlink_into_runtime_folder_is_not_visible(ws: Workspace) -> None:
    os.symlink(ws.base / "tool-args", ws.base / "work" / "ta")
    assert code_of(ws.resolve, "work/ta/x") == "workspace.path_not_visible"


def test_missing_file_suggests_siblings(ws: Workspace) -> None:
    with pytest.raises(ToolError) as info:
        ws.existing("work/note.md")
    assert info.value.code == "workspace.file_not_found"
    assert "notes.md" in info.value.structured["didYouMean"]


def test_read_only_roots_are_not_writable(ws: Workspace) -> None:
    assert code_of(ws.writable, ws.resolve("tool-results/x")) == "workspace.path_not_writable"
    assert ws.resolve("work/x").writable


def test_settings_refuse_runtime_roots_and_writable_outside_visible() -> None:
    with pytest.raises(ValueError):
        WorkspaceSettings(visible_roots=("work", "tool-args"))
    with pytest.raises(ValueError):
        WorkspaceSettings(visible_roots=("work",), writable_roots=("tmp",))
    with pytest.raises(ValueError):
        WorkspaceSettings(writable_roots=("work", "tool-results"))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([*"ab./\\:\x00~ C", "..", "work", "tmp", "tool-args", "é"]), max_size=12)
       .map("".join) | st.text(max_size=40))
def test_any_path_resolves_inside_or_is_refused(tmp_path_factory: pytest.TempPathFactory, raw: str) -> None:
    base = tmp_path_factory.mktemp("prop")
    for root in ("work", "tmp", "tool-args"):
        (base / root).mkdir()
    ws = Workspace(base, WorkspaceSettings())
    try:
        res = ws.resolve(raw)
    except ToolError as exc:
        assert exc.code.startswith("workspace.")
        return
    assert os.path.commonpath([ws.base, res.real]) == str(ws.base)
    assert res.root is None or res.root in ws.settings.visible_roots
