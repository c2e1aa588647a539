"""Walking the workspace for list_files, glob and search_files.

Depth-first in name order (so output is sorted by path), never following symlinks (a link
is reported, not entered), skipping `.git/` and honouring `.gitignore` files: those of the
folders walked and of their ancestors up to the workspace root, with git's rules (a pattern
is relative to the folder of its `.gitignore`). The workspace root shows only the visible
roots; `skills/` shows the skills of the profile's skills directory.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from operator import attrgetter
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from .paths import SKILLS_ROOT, Resolved, Workspace

if TYPE_CHECKING:
    import pathspec

_SKIP_DIRS = frozenset({".git"})
_NAME = attrgetter("name")


class Entry(NamedTuple):  # a tuple: built once per entry of a walk, so it must be cheap
    rel: str
    path: str  # host path
    kind: str  # "file" | "dir" | "link"
    depth: int  # 1 for a child of the walked folder


class _Ignores:
    """The `.gitignore` specs in force: (folder host path, spec) pairs."""

    def __init__(self, specs: tuple[tuple[str, pathspec.PathSpec], ...] = ()) -> None:
        self.specs = specs

    def enter(self, folder: str) -> _Ignores:
        spec = _load(os.path.join(folder, ".gitignore"))
        return _Ignores((*self.specs, (folder, spec))) if spec is not None else self

    def ignored(self, path: str, is_dir: bool) -> bool:
        for folder, spec in self.specs:
            rel = os.path.relpath(path, folder).replace(os.sep, "/")
            if spec.match_file(rel + "/" if is_dir else rel):
                return True
        return False


def gitignore_spec(lines: Iterable[str]) -> pathspec.PathSpec:
    """Patterns with git's rules (the `.gitignore`s, and the glob arguments of the tools).

    pathspec is imported on first use: it costs ~25 ms, and `import toolbench` should not."""
    import pathspec

    return pathspec.PathSpec.from_lines("gitignore", lines)


def _load(path: str) -> pathspec.PathSpec | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    return gitignore_spec(lines) if any(ln.strip() for ln in lines) else None


def _ancestors(ws: Workspace, folder: Path) -> _Ignores:
    """The `.gitignore`s of the folders from the workspace root down to `folder` (inclusive)."""
    ignores = _Ignores()
    try:
        rel = folder.relative_to(ws.base)
    except ValueError:
        return ignores.enter(str(folder))
    cur = ws.base
    ignores = ignores.enter(str(cur))
    for part in rel.parts:
        cur = cur / part
        ignores = ignores.enter(str(cur))
    return ignores


def walk(ws: Workspace, res: Resolved, *, max_depth: int | None = None) -> Iterator[Entry]:
    """Every entry below the folder `res` (not `res` itself), depth-first in name order."""
    if res.rel == "":
        for root in sorted(ws.visible_roots()):
            real = ws.root_dir(root)
            if real.is_dir():
                yield Entry(root, str(real), "dir", 1)
                if max_depth is None or max_depth > 1:
                    yield from _walk_root(ws, root, real, 1, max_depth)
        return
    yield from _walk_root(ws, res.rel, res.real, 0, max_depth)


def _walk_root(ws: Workspace, rel: str, real: Path, depth: int, max_depth: int | None) -> Iterator[Entry]:
    if rel == SKILLS_ROOT:
        for name, folder in ws.skills().items():
            entry_rel = f"{SKILLS_ROOT}/{name}"
            yield Entry(entry_rel, str(folder), "dir", depth + 1)
            if max_depth is None or depth + 1 < max_depth:
                yield from _walk(entry_rel, str(folder), depth + 1, max_depth, _Ignores().enter(str(folder)))
        return
    yield from _walk(rel, str(real), depth, max_depth, _ancestors(ws, real))


def _walk(rel: str, folder: str, depth: int, max_depth: int | None, ignores: _Ignores) -> Iterator[Entry]:
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
            yield from _walk(entry_rel, entry.path, depth + 1, max_depth, ignores.enter(entry.path))
