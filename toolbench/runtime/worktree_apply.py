"""Applying a worktree child's changes to the workspace: a three-way merge, decided whole first.

The base is the commit the worktree was made from (`Worktree.base`). For each path the child
changed, three versions are compared: base, parent (the workspace file now, committed or not) and
child (the worktree file). The parent unchanged since base: the child's version is taken (a
deletion too). The child unchanged, or both the same: the parent's is kept. Both changed: text is
merged with `git merge-file` (through the hardened runner); a clean merge is written. A conflict
is both changing the same lines, a deletion against a change, both adding a file with other
content, or both changing a binary file (a NUL byte; no text merge).

The whole apply is decided before anything is written, and it is all or nothing: one conflicted
file (`agent.apply_conflict`) or one refused path (`agent.apply_refused`: a link on the way, a
file that is not regular on either side, a file past MAX_FILE_BYTES, more than MAX_MERGES files
to merge or MAX_APPLY_BYTES to write) applies nothing, so the parent's work is never half
merged, and the worktree is kept with the child's versions for the person to take. Explaining
"nothing was applied, here are the files" is simpler and safer than a partial apply.

Files are read and written only along real folders: each folder is opened with O_NOFOLLOW from
the root's descriptor (a link anywhere on the way refuses the path), a file is read only if it
is regular (O_NONBLOCK, then fstat: a FIFO cannot block), and written by an atomic replace in
its folder's descriptor (`fileio.replace_at`), so nothing is torn or written outside."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import stat
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from ..core.fileio import read_capped, replace_at
from ..tools.workspace import beneath
from . import git

MAX_FILE_BYTES: Final = 20 * 1024 * 1024  # a changed file past this is refused (the tools' default read limit)
MAX_APPLY_BYTES: Final = 256 * 1024 * 1024  # the bytes one apply may write, all files together
MAX_MERGES: Final = 200  # files changed on both sides (each a few git commands)
_REGULAR_MODES: Final = frozenset({"100644", "100755"})


class Refused(Exception):
    """A path that cannot be read or written safely; the message says why (no host path)."""


@dataclass(frozen=True)
class Version:
    """A file's bytes and permission bits; `data` None: there is no file."""

    data: bytes | None
    mode: int = 0o644


@dataclass
class Plan:
    """What applying does: filled by `plan`; `write` carries it out when nothing conflicts or is refused."""

    writes: dict[str, Version] = field(default_factory=dict)  # a Version with data None is a deletion
    merged: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # "path: why"


@contextlib.contextmanager
def _folder(root: Path, parts: Sequence[str], create: bool = False) -> Iterator[int | None]:
    """A descriptor of the folder `root/parts`, opened without following a link; None if a part
    is missing (and not `create`). Refused when a part is a link or a file (`_split` checked the names).
    `root` itself (the workspace or the worktree) is trusted: a link to it is followed."""
    fd = os.open(os.path.realpath(root), beneath.DIR_FLAGS)
    try:
        for part in parts:
            try:
                inner = os.open(part, beneath.DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    os.close(fd)
                    fd = -1
                    yield None
                    return
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, dir_fd=fd)
                inner = os.open(part, beneath.DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise Refused("goes through a link or a file") from exc
                raise
            os.close(fd)
            fd = inner
        yield fd
    finally:
        if fd >= 0:
            os.close(fd)


def _split(rel: str) -> tuple[list[str], str]:
    *parts, name = rel.split("/")
    if any(p in ("", ".", "..") for p in (*parts, name)):
        raise Refused("is not a plain relative path")
    return parts, name


def _kind(st: os.stat_result) -> str:
    if stat.S_ISDIR(st.st_mode):
        return "a folder"
    return "a FIFO" if stat.S_ISFIFO(st.st_mode) else "a device or socket"


def read(root: Path, rel: str) -> Version:
    """The version of `rel` under `root`: its bytes, or no file; Refused for anything else."""
    parts, name = _split(rel)
    with _folder(root, parts) as dir_fd:
        if dir_fd is None:
            return Version(None)
        try:
            fd, st = beneath.open_regular(dir_fd, name)
        except FileNotFoundError:
            return Version(None)
        except beneath.NotRegular as exc:
            raise Refused(f"is {_kind(exc.st)}, not a regular file") from exc
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise Refused("is a link") from exc
            raise
        try:
            data = read_capped(fd, MAX_FILE_BYTES, st.st_size)
        finally:
            os.close(fd)
    if data is None:
        raise Refused(f"is larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB")
    return Version(data, st.st_mode & 0o777)


def blob_id(data: bytes, like: str) -> str:
    """Git's object id of a blob holding `data`, in the hash of `like` (SHA-1 or SHA-256)."""
    digest = hashlib.sha256 if len(like) == 64 else hashlib.sha1
    return digest(b"blob %d\0" % len(data) + data).hexdigest()


def base_entries(repo: Path, base: str) -> dict[str, tuple[str, str]]:
    """Every path of the commit `base`: (mode, object id)."""
    out: dict[str, tuple[str, str]] = {}
    for item in os.fsdecode(git.run(repo, "ls-tree", "-r", "-z", "--full-tree", base)[1]).split("\0"):
        meta, _, path = item.partition("\t")
        if path:
            mode, _kind, oid = meta.split(" ")
            out[path] = (mode, oid)
    return out


def _base_text(repo: Path, rel: str, oid: str) -> bytes:
    """The base blob as a checkout writes it (line endings converted; filters are neutralised)."""
    return git.run(repo, "cat-file", "--filters", f"--path={rel}", oid)[1]


def _merge(repo: Path, parent: bytes, base: bytes, child: bytes) -> bytes | None:
    """`git merge-file -p` of the three texts: the merged bytes, or None on a conflict."""
    with tempfile.TemporaryDirectory(prefix="toolbench-merge-") as tmp:
        files = []
        for name, data in (("parent", parent), ("base", base), ("child", child)):
            (Path(tmp) / name).write_bytes(data)
            files.append(str(Path(tmp) / name))
        status, out = git.run(repo, "merge-file", "-p", "-q", *files, ok=range(128))
    return out if status == 0 else None


def _decide(repo: Path, rel: str, entry: tuple[str, str] | None, parent: Version, child: Version,
            plan: Plan) -> None:
    if parent.data == child.data:
        return  # both the same (both deleted too): nothing to do
    if entry is None:  # not in base: the child added it
        if parent.data is None:
            plan.writes[rel] = child
        else:
            plan.conflicts.append(rel)  # both added, other content
        return
    mode, oid = entry
    if mode not in _REGULAR_MODES:
        plan.refused.append(f"{rel}: is a link or a submodule at the base commit")
        return
    if parent.data is not None and blob_id(parent.data, oid) == oid:
        plan.writes[rel] = child  # the parent did not change it
        return
    if child.data is not None and blob_id(child.data, oid) == oid:
        return  # the child did not change its content: the parent's stays
    if len(plan.merged) + len(plan.conflicts) >= MAX_MERGES:
        plan.refused.append(f"{rel}: more than {MAX_MERGES} files were changed on both sides")
        return
    base = _base_text(repo, rel, oid)
    if parent.data == base:
        plan.writes[rel] = child
    elif child.data == base:
        return
    elif parent.data is None or child.data is None or any(b"\0" in d for d in (parent.data, base, child.data)):
        plan.conflicts.append(rel)  # a deletion against a change, or binary: no text merge
    elif (merged := _merge(repo, parent.data, base, child.data)) is None:
        plan.conflicts.append(rel)
    else:
        plan.writes[rel] = Version(merged, parent.mode)
        plan.merged.append(rel)


def plan(repo: Path, worktree: Path, base: str, paths: Sequence[str]) -> Plan:
    """Decide, for every changed path, what applying the child's changes to `repo` does."""
    out = Plan()
    entries = base_entries(repo, base)
    size = 0
    for rel in paths:
        try:
            child, parent = read(worktree, rel), read(repo, rel)
        except Refused as exc:
            out.refused.append(f"{rel}: {exc}")
            continue
        except OSError as exc:
            out.refused.append(f"{rel}: cannot be read ({exc.strerror})")
            continue
        _decide(repo, rel, entries.get(rel), parent, child, out)
        size += len(child.data or b"")
        if size > MAX_APPLY_BYTES:
            out.refused.append(f"{rel}: the changes pass {MAX_APPLY_BYTES // (1024 * 1024)} MiB together")
            break
    return out


def write(repo: Path, todo: Plan) -> None:
    """Carry out a plan with no conflict and nothing refused: each file replaced atomically in its
    folder, each deletion unlinked.

    Raises Refused (a folder turned into a link since `plan`) or OSError."""
    for rel, version in todo.writes.items():
        parts, name = _split(rel)
        with _folder(repo, parts, create=version.data is not None) as dir_fd:
            if dir_fd is None:
                continue  # a deletion whose folder is gone already
            if version.data is None:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(name, dir_fd=dir_fd)
                continue
            replace_at(dir_fd, name, version.data)
            os.chmod(name, version.mode, dir_fd=dir_fd)
