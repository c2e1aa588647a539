"""Walking the workspace for list_files, glob and search_files.

Depth-first in name order (so output is sorted by path), never following symlinks (a link
is reported, not entered), skipping `.git/` and honouring `.gitignore` files: those of the
folders walked and of their ancestors up to the workspace root, with git's rules (a pattern
is relative to the folder of its `.gitignore`), matched in linear time (`patterns`). An
ignore file used only in part (too long, a refused line) adds a note to `notes`. Only
regular files, folders and links are yielded: a FIFO, socket or device is never opened.
The workspace root shows only the visible roots; `skills/` shows the skills of the
profile's skills directory. Each folder checks the call's time limit (`check_deadline`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from operator import attrgetter
from pathlib import Path
from typing import NamedTuple

from ..base import check_deadline
from .paths import SKILLS_ROOT, Resolved, Workspace
from .patterns import PatternSet, load_ignore

_SKIP_DIRS = frozenset({".git"})
_NAME = attrgetter("name")


class Entry(NamedTuple):  # a tuple: built once per entry of a walk, so it must be cheap
    rel: str
    path: str  # host path
    kind: str  # "file" | "dir" | "link"
    depth: int  # 1 for a child of the walked folder


class _Ignores:
    """The `.gitignore` sets in force: (folder host path, set) pairs, and where notes go."""

    def __init__(self, specs: tuple[tuple[str, PatternSet], ...] = (), notes: list[str] | None = None) -> None:
        self.specs = specs
        self.notes = notes

    def enter(self, folder: str, shown: str) -> _Ignores:
        """Add the `.gitignore` of `folder` (`shown`: the folder's workspace path, "" for the base)."""
        spec, notes = load_ignore(os.path.join(folder, ".gitignore"), f"{shown}/.gitignore" if shown else ".gitignore")
        if notes and self.notes is not None:
            self.notes.extend(n for n in notes if n not in self.notes)
        return _Ignores((*self.specs, (folder, spec)), self.notes) if spec is not None else self

    def ignored(self, path: str, is_dir: bool) -> bool:
        for folder, spec in self.specs:
            rel = os.path.relpath(path, folder).replace(os.sep, "/")
            if spec.matches(rel + "/" if is_dir else rel):
                return True
        return False


def _ancestors(ws: Workspace, folder: Path, rel: str, notes: list[str] | None) -> _Ignores:
    """The `.gitignore`s of the folders from the workspace root down to `folder` (inclusive)."""
    ignores = _Ignores(notes=notes)
    try:
        parts = folder.relative_to(ws.base).parts
    except ValueError:
        return ignores.enter(str(folder), rel)
    cur = ws.base
    ignores = ignores.enter(str(cur), "")
    for i, part in enumerate(parts):
        cur = cur / part
        ignores = ignores.enter(str(cur), "/".join(parts[: i + 1]))
    return ignores


def walk(ws: Workspace, res: Resolved, *, max_depth: int | None = None,
         notes: list[str] | None = None) -> Iterator[Entry]:
    """Every entry below the folder `res` (not `res` itself), depth-first in name order.

    `notes` collects what the model should know about the ignore files met (one used in part)."""
    if res.rel == "":
        for root in sorted(ws.visible_roots()):
            real = ws.root_dir(root)
            if real.is_dir():
                yield Entry(root, str(real), "dir", 1)
                if max_depth is None or max_depth > 1:
                    yield from _walk_root(ws, root, real, 1, max_depth, notes)
        return
    yield from _walk_root(ws, res.rel, res.real, 0, max_depth, notes)


def _walk_root(ws: Workspace, rel: str, real: Path, depth: int, max_depth: int | None,
               notes: list[str] | None) -> Iterator[Entry]:
    if rel == SKILLS_ROOT:
        for name, folder in ws.skills().items():
            entry_rel = f"{SKILLS_ROOT}/{name}"
            yield Entry(entry_rel, str(folder), "dir", depth + 1)
            if max_depth is None or depth + 1 < max_depth:
                ignores = _Ignores(notes=notes).enter(str(folder), entry_rel)
                yield from _walk(entry_rel, str(folder), depth + 1, max_depth, ignores)
        return
    yield from _walk(rel, str(real), depth, max_depth, _ancestors(ws, real, rel, notes))


def _walk(rel: str, folder: str, depth: int, max_depth: int | None, ignores: _Ignores) -> Iterator[Entry]:
    check_deadline()
    try:
        with os.scandir(folder) as it:
            entries = sorted(it, key=_NAME)
    except OSError:
        return
    for entry in entries:
        try:  # not following links, so a link is neither a file nor a folder here
            if entry.is_file(follow_symlinks=False):
                kind = "file"
            elif entry.is_dir(follow_symlinks=False):
                kind = "dir"
            elif entry.is_symlink():
                kind = "link"
            else:
                continue  # sockets, fifos, devices
        except OSError:
            continue
        if kind == "dir" and entry.name in _SKIP_DIRS:
            continue
        if ignores.specs and ignores.ignored(entry.path, kind == "dir"):
            continue
        entry_rel = f"{rel}/{entry.name}" if rel else entry.name
        yield Entry(entry_rel, entry.path, kind, depth + 1)
        if kind == "dir" and (max_depth is None or depth + 1 < max_depth):
            yield from _walk(entry_rel, entry.path, depth + 1, max_depth, ignores.enter(entry.path, entry_rel))
