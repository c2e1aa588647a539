"""Walking the workspace for list_files, glob and search_files, by folder descriptors.

Depth-first in name order (so output is sorted by path), never following symlinks (a link
is reported, not entered), skipping `.git/` and honouring `.gitignore` files: those of the
folders walked and of their ancestors up to the workspace root, with git's rules (a pattern
is relative to the folder of its `.gitignore`), matched in linear time (`patterns`). An
ignore file used only in part (too long, a refused line) adds a note to `notes`. Only
regular files, folders and links are yielded: a FIFO, socket or device is never opened.
The workspace root shows only the visible roots; `skills/` shows the skills of the
profile's skills directory. Each folder checks the call's time limit (`check_deadline`).

No host path is opened. The start folder is opened beneath the workspace (`Workspace.open_dir`:
each visible root for the workspace root, each skill's folder through the skills directory
for `skills/`), and the ancestors' `.gitignore`s are read on the way down to it; each folder
is scanned through its descriptor and each subfolder opened from its parent's with
O_NOFOLLOW|O_DIRECTORY, so a folder swapped for a link mid-walk is not entered (the open
fails) and nothing outside is listed or read. A consumer opens an entry the same way, from
`Entry.dir_fd`. One descriptor is held per folder the walk is in (at most depth + 1), each
closed when the walk leaves its folder, or when the generator is closed half way.

The ignore rules match strings: an entry's path relative to the folder of each `.gitignore`
is cut from its workspace path (an ancestor of the start folder gets the start's real path
under it as a prefix, so a start reached through a link is matched where it really lies).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Generator, Iterator
from operator import attrgetter
from typing import NamedTuple

from ...core.errors import ToolError
from ..base import check_deadline
from .beneath import DIR_FLAGS
from .paths import SKILLS_ROOT, Resolved, Workspace
from .patterns import PatternSet, load_ignore

_SKIP_DIRS = frozenset({".git"})
_NAME = attrgetter("name")


class Entry(NamedTuple):  # a tuple: built once per entry of a walk, so it must be cheap
    """One entry of a walk: open it as `name` in the folder `dir_fd`, beneath the workspace.

    `dir_fd` is the walk's own descriptor of the entry's folder: valid only while the walk is
    at that folder, i.e. while the consumer handles this entry, before it asks for the next
    one; never close it. A root (or a skill's folder) the walk opened itself is `.` of its
    own descriptor."""

    rel: str
    kind: str  # "file" | "dir" | "link"
    depth: int  # 1 for a child of the walked folder
    name: str
    dir_fd: int


class _Ignores:
    """The `.gitignore` sets in force, and where notes go.

    Each set comes with how to make an entry's path relative to the set's folder: `prefix`
    plus the entry's workspace path from index `cut` on."""

    def __init__(self, specs: tuple[tuple[str, int, PatternSet], ...] = (), notes: list[str] | None = None) -> None:
        self.specs = specs
        self.notes = notes

    def load(self, dir_fd: int, shown: str) -> PatternSet | None:
        """The `.gitignore` of the folder `dir_fd` (`shown`: its workspace path), its notes kept."""
        spec, notes = load_ignore(dir_fd, f"{shown}/.gitignore" if shown else ".gitignore")
        if notes and self.notes is not None:
            self.notes.extend(n for n in notes if n not in self.notes)
        return spec

    def enter(self, dir_fd: int, rel: str) -> _Ignores:
        """Add the `.gitignore` of the folder `dir_fd` the walk entered at workspace path `rel`."""
        spec = self.load(dir_fd, rel)
        return _Ignores((*self.specs, ("", len(rel) + 1, spec)), self.notes) if spec is not None else self

    def ignored(self, rel: str, is_dir: bool) -> bool:
        for prefix, cut, spec in self.specs:
            path = prefix + rel[cut:]
            if spec.matches(path + "/" if is_dir else path):
                return True
        return False


class _Ancestors:
    """Collects the `.gitignore`s met while `open_dir` goes down to a start folder (its `visit`)."""

    def __init__(self, notes: list[str] | None) -> None:
        self.ignores = _Ignores(notes=notes)
        self.found: list[tuple[str, PatternSet]] = []
        self.real = ""  # the start folder's workspace path as found (the last folder visited)

    def __call__(self, dir_fd: int, shown: str) -> None:
        self.real = shown
        spec = self.ignores.load(dir_fd, shown)
        if spec is not None:
            self.found.append((shown, spec))

    def of(self, rel: str) -> _Ignores:
        """The sets for a walk of the start folder named `rel` (its path as the model gave it)."""
        cut, real = len(rel) + 1, self.real + "/"
        specs = tuple((real[len(folder) + 1:] if folder else real, cut, spec) for folder, spec in self.found)
        return _Ignores(specs, self.ignores.notes)


def is_folder(ws: Workspace, res: Resolved) -> bool:
    """Whether `res` is a folder now, as found beneath the workspace (its root is one)."""
    if not res.rel:
        return True
    with ws.locate(res.rel) as loc:
        st = loc.spot.st
        return loc.spot.exists and st is not None and stat.S_ISDIR(st.st_mode)


def walk(ws: Workspace, res: Resolved, *, max_depth: int | None = None,
         notes: list[str] | None = None) -> Generator[Entry, None, None]:
    """Every entry below the folder `res` (not `res` itself), depth-first in name order.

    `notes` collects what the model should know about the ignore files met (one used in part).
    A root that cannot be opened beneath the workspace (missing, a file, a link out) is left
    out of the workspace root's walk; for another folder the ToolError of `open_dir` is raised
    (the folder changed since `res` was resolved). Close the generator (or exhaust it) to
    close the folders it holds."""
    if res.rel:
        yield from _start(ws, res.rel, 0, max_depth, notes, shown=False)
        return
    for root in sorted(ws.visible_roots()):
        yield from _start(ws, root, 1, max_depth, notes, shown=True)


def _start(ws: Workspace, rel: str, depth: int, max_depth: int | None, notes: list[str] | None,
           *, shown: bool) -> Iterator[Entry]:
    """The folder `rel` opened beneath the workspace (an entry at `depth` when `shown`) and what is below it."""
    ancestors = _Ancestors(notes)
    try:
        fd = ws.open_dir(rel, visit=None if rel == SKILLS_ROOT else ancestors)
    except ToolError:
        if shown:
            return
        raise
    try:
        if shown:
            yield Entry(rel, "dir", depth, ".", fd)
        if max_depth is not None and depth >= max_depth:
            return
        if rel == SKILLS_ROOT:
            for name in ws.skills():
                yield from _start(ws, f"{SKILLS_ROOT}/{name}", depth + 1, max_depth, notes, shown=True)
        else:
            yield from _walk(fd, rel, depth, max_depth, ancestors.of(rel))
    finally:
        os.close(fd)


def _walk(fd: int, rel: str, depth: int, max_depth: int | None, ignores: _Ignores) -> Iterator[Entry]:
    """The entries of the folder `fd` (workspace path `rel`, at `depth`) and below; `fd` stays the caller's."""
    check_deadline()
    try:
        with os.scandir(fd) as it:
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
        name = entry.name
        if kind == "dir" and name in _SKIP_DIRS:
            continue
        entry_rel = f"{rel}/{name}"
        if ignores.specs and ignores.ignored(entry_rel, kind == "dir"):
            continue
        yield Entry(entry_rel, kind, depth + 1, name, fd)
        if kind == "dir" and (max_depth is None or depth + 1 < max_depth):
            try:
                child = os.open(name, DIR_FLAGS, dir_fd=fd)
            except OSError:
                continue  # a link now (ELOOP), gone, unreadable: not entered
            try:
                yield from _walk(child, entry_rel, depth + 1, max_depth, ignores.enter(child, entry_rel))
            finally:
                os.close(child)
