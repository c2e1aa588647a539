"""Properties of the descriptor-based resolver (`Workspace.locate`, `files.open_file`).

* On a quiet tree of folders, files and links (relative, absolute inside, absolute outside,
  into read-only and runtime roots, chains), a path either is refused with a workspace.* code
  or lands where `os.path.realpath` says, judged on the root it really lands in, and the file
  opened is that file.
* NFC and NFD twins: the exact spelling wins; a missing spelling finds its only twin.
* Races, replayed deterministically: a folder of the path is swapped for a link out at any
  one step of the walk (any system call of it); nothing outside is ever opened or written.
Each runs with openat2 and with the walk alone (a kernel without openat2).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import tempfile
import unicodedata
from collections.abc import Callable, Iterator
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolbench.core.errors import ToolError
from toolbench.core.workspace_settings import WorkspaceSettings
from toolbench.tools.workspace import beneath
from toolbench.tools.workspace.files import open_file
from toolbench.tools.workspace.paths import Workspace

E_NFC, E_NFD = unicodedata.normalize("NFC", "é"), unicodedata.normalize("NFD", "é")
NAMES = ("a", "b", E_NFC, E_NFD)
ROOTS = ("work", "tmp", "tool-results", "tool-args")
LINK_ROOTS = ("work", "tmp")  # links live where tools write (a link inside tool-args is the runtime's business)


@contextlib.contextmanager
def _workspace() -> Iterator[tuple[Workspace, Path]]:
    with tempfile.TemporaryDirectory() as scratch:
        top = Path(os.path.realpath(scratch))
        base, outside = top / "ws", top / "outside"
        for root in ROOTS:
            (base / root).mkdir(parents=True)
        outside.mkdir()
        (outside / "a").write_text("OUTSIDE")
        yield Workspace(base, WorkspaceSettings()), outside


def _openat2(on: bool) -> contextlib.AbstractContextManager[object]:
    """With openat2 (where the kernel has it) or with the walk alone, as without openat2."""
    return contextlib.nullcontext() if on else mock.patch.object(beneath.openat2, "usable", False)


names = st.lists(st.sampled_from(NAMES), min_size=1, max_size=3)
targets = st.one_of(
    st.tuples(st.just("rel"), st.integers(0, 3), st.sampled_from(ROOTS), names),
    st.tuples(st.just("abs"), st.just(0), st.sampled_from(ROOTS), names),
    st.tuples(st.just("out"), st.just(0), st.just(""), names),
)
entries = st.lists(st.tuples(st.sampled_from(ROOTS), names, st.sampled_from(["dir", "file", "link"]), targets),
                   max_size=14)
paths = st.tuples(st.sampled_from(ROOTS), st.lists(st.sampled_from(NAMES), max_size=4)).map(
    lambda p: "/".join((p[0], *p[1])))


def _build(base: Path, outside: Path, spec: list) -> None:
    for root, parts, kind, (how, ups, troot, tparts) in spec:
        path = base.joinpath(root, *parts)
        if kind == "link" and root not in LINK_ROOTS:
            continue
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if kind == "dir":
                path.mkdir()
            elif kind == "file":
                path.write_text("/".join((root, *parts)))
            elif how == "rel":  # up `ups` folders (at most to the workspace folder), then down
                depth = min(ups, len(parts))
                os.symlink("/".join([".."] * depth + ([troot] if depth == len(parts) else []) + tparts), path)
            else:
                os.symlink(str((base / troot if how == "abs" else outside).joinpath(*tparts)), path)
        except OSError:  # a name taken by an earlier entry, a file where a folder was wanted
            continue


@settings(max_examples=250, deadline=None)
@given(entries, st.lists(paths, min_size=1, max_size=6), st.booleans())
def test_a_path_lands_where_realpath_says_or_is_refused(spec, raws, openat2) -> None:
    with _workspace() as (ws, outside), _openat2(openat2):
        _build(ws.base, outside, spec)
        for raw in raws:
            real = os.path.realpath(ws.base / raw)
            try:
                res = ws.resolve(raw)
            except ToolError as exc:
                assert exc.code.startswith("workspace."), exc.code
                if os.path.exists(real):  # refused only when realpath leaves, or lands in a hidden root
                    inside = real.startswith(str(ws.base) + "/")
                    root = Path(real).relative_to(ws.base).parts[0] if inside else None
                    assert root not in ws.settings.visible_roots, (raw, real, exc.code)
                continue
            assert str(res.real).startswith(str(ws.base) + "/") and res.root in ws.settings.visible_roots
            if os.path.exists(real):
                assert str(res.real) == real, raw
                assert res.root == Path(real).relative_to(ws.base).parts[0]
                if os.path.isfile(real):
                    with open_file(ws, raw) as f:
                        assert f.st is not None and (f.st.st_dev, f.st.st_ino) == (os.stat(real).st_dev,
                                                                                   os.stat(real).st_ino)


@settings(max_examples=60, deadline=None)
@given(st.sets(st.sampled_from([E_NFC, E_NFD])), st.sampled_from([E_NFC, E_NFD]), st.sampled_from(["", "x"]))
def test_the_exact_spelling_wins_and_a_missing_one_finds_its_twin(present, sent, suffix) -> None:
    with _workspace() as (ws, _):
        for name in present:
            (ws.base / "work" / (name + suffix)).write_text(name)
        twin = E_NFD if sent == E_NFC else E_NFC
        want = sent if sent in present else twin if twin in present else None
        try:
            with open_file(ws, f"work/{sent}{suffix}") as f:
                got = f.read(ws).decode()
        except ToolError as exc:
            assert want is None and exc.code == "workspace.file_not_found"
        else:
            assert got == want


def _exchange() -> Callable[..., int] | None:
    """libc's renameat2 (RENAME_EXCHANGE swaps two names at once), if it has one."""
    libc = ctypes.CDLL(None, use_errno=True)
    return getattr(libc, "renameat2", None)


@pytest.mark.skipif(_exchange() is None, reason="the C library has no renameat2")
@settings(max_examples=120, deadline=None)
@given(st.integers(0, 12), st.sampled_from(["read", "write"]), st.booleans(), st.booleans())
def test_a_folder_swapped_at_any_step_never_lets_the_walk_out(step, op, deep, openat2) -> None:
    swap = _exchange()
    assert swap is not None
    with _workspace() as (ws, outside), _openat2(openat2):
        work = ws.base / "work"
        inner = work / "d" / "e" if deep else work / "d"
        inner.mkdir(parents=True)
        (inner / "a").write_text("inside")
        (work / "link").symlink_to(outside)
        path = "work/d/e/a" if deep else "work/d/a"
        calls = [0]
        real = {name: getattr(os, name) for name in ("open", "stat", "readlink", "listdir")}

        def counted(name: str):
            def call(*args, **kwargs):
                if calls[0] == step:
                    assert swap(-100, os.fsencode(work / "d"), -100, os.fsencode(work / "link"), 2) == 0
                calls[0] += 1
                return real[name](*args, **kwargs)
            return call

        before = sorted(os.listdir(outside)), (outside / "a").read_text()
        patches = [mock.patch.object(beneath.os, name, counted(name)) for name in real]
        with contextlib.ExitStack() as stack:
            for p in patches:
                stack.enter_context(p)
            try:
                with open_file(ws, path if op == "read" else path.replace("/a", "/n"), write=op != "read",
                               create=op != "read") as f:
                    if op == "read":
                        assert f.read(ws) == b"inside"
                    else:
                        f.replace(ws, "x")
            except ToolError as exc:
                assert exc.code in ("workspace.path_not_visible", "workspace.file_not_found", "workspace.io_error")
        assert (sorted(os.listdir(outside)), (outside / "a").read_text()) == before
