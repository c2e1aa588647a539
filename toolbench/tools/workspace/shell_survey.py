"""Checks around a `workspace.shell` call: the host survey, the root folders, what a command may do.

What the shell may open is checked on the host before each call (`_survey`), since bashkit
reads a mounted file whole into memory (`head -c 16` of a 1 GiB file takes 1 GiB; it has no
size limit for real mounts, only for its in-memory filesystem) and blocks in `open` on a FIFO.
A hazard is a regular file over `max_file_bytes` (the workspace's limit) or anything that is
neither a regular file, a folder nor a link (FIFO, socket, device). In a read-only root each
hazard, and each link to a folder that leads to one, is covered by an empty read-only folder
mounted on its path: nothing in a read-only root can be renamed, so the cover holds. In a
writable root a cover would not hold (rename the folder above it, or link to it, and read it
there), so the call is refused (`failed`, naming the files) unless it provably opens no file
(`touches_no_content`: `ls`, `stat`, `rm`, ... with no redirect), which lets the model remove it.
Past `_MAX_SURVEY_ENTRIES` entries the survey gives up and the same rule applies. A survey
costs about 2.5 µs per entry; its stat calls let the bench's other threads take the GIL, so
back-to-back calls each surveying ran ~30% slower. A survey is therefore reused for the same
mounts for `_RESURVEY_NS` (50 ms) while no shell call may have written and no root folder's
stamp changed; what that can miss is a hazard another program makes below a root within
50 ms before a call, the same race as one it makes during the call, which no check before the
call closes. A file a command itself grows past the limit (`>>` in a loop, about 5 MB/s
through bashkit) is caught at the next call.

A writable root's folder survives its removal: bashkit's `rm -rf /work` removes the mounted
folder itself (the file tools refuse with `workspace.root_not_deletable`), so a missing root
folder is recreated, empty, when a survey finds it gone and after each call that may have
written (`_keep_roots`); its contents go, as asked. A folder never seen stays missing (a mount
error for the developer). Renaming a root (`mv /work /x`) is refused by bashkit itself: a
mount point only moves across mounts, and bashkit moves only files and links across mounts.

bashkit keeps no log of writes through a real mount, and its snapshot diff covers only the
in-memory filesystem, so the outcome does not list changed paths. `may_have_written` is a cheap
static judgement instead (bashkit's `analyze`, `may_write`): False only when every command is a
known reader and every write redirect goes to `/dev/null`, `/dev/stdout` or `/dev/stderr`.

A caller that needs the changed files passes `watch`, a predicate on file names: when the
command may write, the files of the writable mounts whose names it accepts are stat'ed before
and after the run (`scan`, in the worker thread; other names are never stat'ed, and a scan gives
up past `_MAX_WATCH_ENTRIES` directory entries), and `changed` lists those created or modified,
oldest change first (`diff`). Static analysis cannot name the targets (python's `open`, `mv` of
a folder, globs), so the stat diff over the writable roots is the one reliable source.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from .shell_engine import Mount

_HARMLESS_SINKS: Final = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})
_MAX_WATCH_ENTRIES: Final = 20_000  # directory entries one `watch` scan visits before giving up
_MAX_SURVEY_ENTRIES: Final = 100_000  # directory entries the hazard survey visits before giving up
# Commands that open no file's content, so they run whatever the roots hold (to list or remove a
# hazard). `mv` and `cp` are not among them: across mounts they read the file whole.
_CONTENT_FREE: Final = frozenset(
    {":", "[", "basename", "cd", "dirname", "du", "echo", "false", "ls", "mkdir", "printf", "pwd", "rm", "rmdir",
     "stat", "test", "true"}
)
# Commands that cannot change a file by themselves (options such as `sort -o`, `uniq IN OUT`,
# `tree -o`, `sed -i` or `xxd IN OUT` rule the others out). Redirects are judged separately.
_READERS: Final = frozenset(
    """
    : [ basename bc cat cd cksum cmp column comm cut date declare df diff dirname du echo egrep exit expand
    export expr factor false fgrep file fmt fold grep head hexdump hostname id join jq local ls md5sum nl od
    paste printenv printf pwd read readlink realpath return rev rg seq set sha1sum sha224sum sha256sum
    sha384sum sha512sum shasum shift sleep stat strings sum tac tail test tr true type uname unexpand unset
    wc which whoami
    """.split()  # noqa: SIM905 (a word list reads better than 80 quoted strings)
)


@dataclass(frozen=True, slots=True)
class _Survey:
    """What the shell must not open: guest paths to cover, or why the call may only touch no content."""

    covers: tuple[str, ...] = ()
    refusal: str | None = None


def recent_survey(mounts: tuple[Mount, ...], max_file_bytes: int) -> _Survey:
    """`_survey`, or the one made for the same mounts less than `_RESURVEY_NS` ago if no shell
    call may have written since and no root folder's stamp changed (module doc)."""
    key = (mounts, max_file_bytes)
    now, writes, roots = time.monotonic_ns(), _WRITES[0], _stamps(mounts)
    kept = _SURVEYS.get(key)
    if kept is not None and kept[1:3] == (writes, roots) and now - kept[3] < _RESURVEY_NS:
        return kept[0]
    survey = _survey(mounts, max_file_bytes)  # also recreates a root folder gone since
    if len(_SURVEYS) >= _MAX_SURVEYS:
        _SURVEYS.clear()
    _SURVEYS[key] = (survey, writes, roots, now)
    return survey


_Stamp = tuple[int, int, int, int] | None  # a folder's device, inode, mtime and ctime; None when missing


def _stamps(mounts: tuple[Mount, ...]) -> tuple[_Stamp, ...]:
    stamps: list[_Stamp] = []
    for mount in mounts:
        try:
            found = os.stat(mount.host_path)
        except OSError:
            stamps.append(None)
        else:
            stamps.append((found.st_dev, found.st_ino, found.st_mtime_ns, found.st_ctime_ns))
    return tuple(stamps)


_RESURVEY_NS: Final = 50_000_000
_MAX_SURVEYS: Final = 256  # mount sets whose last survey is kept (then all are forgotten at once)
_WRITES: Final = [0]  # bumped after each call that may have written
# (mounts, max_file_bytes) -> (survey, _WRITES then, root stamps then, time.monotonic_ns() then)
_SURVEYS: Final[dict[tuple[tuple[Mount, ...], int], tuple[_Survey, int, tuple[_Stamp, ...], int]]] = {}


def after_write(mounts: tuple[Mount, ...]) -> None:
    """After a call that may have written: the next call surveys afresh, and a writable root's
    folder that is gone is recreated (`_keep_roots`)."""
    _WRITES[0] += 1
    _keep_roots(mounts)


def _survey(mounts: tuple[Mount, ...], max_file_bytes: int) -> _Survey:
    """Walk every mount (links not followed) for hazards: regular files over `max_file_bytes`
    and entries that are neither a regular file, a folder nor a link (module doc)."""
    hazards: list[tuple[Mount, str, str, str]] = []  # mount, host path, guest path, what it is
    links: list[tuple[str, str]] = []  # links in read-only mounts: host path, guest path
    visited = 0
    for mount in mounts:
        root = str(mount.host_path)
        if not os.path.isdir(root):  # the root itself may be a link: the workspace's own setup
            if mount.writable:
                _keep_roots((mount,))
            continue
        if mount.writable:
            _SEEN_ROOTS.add(root)
        for entry, path in _entries(root, mount.guest_path):
            visited += 1
            if visited > _MAX_SURVEY_ENTRIES:
                return _Survey(refusal=(
                    f"the mounted roots hold over {_MAX_SURVEY_ENTRIES:,} entries, more than the shell checks "
                    "for files it must not open; only commands that open no file (ls, stat, rm, ...) run"))
            try:
                if entry.is_dir(follow_symlinks=False):
                    continue
                if entry.is_symlink():
                    if not mount.writable:
                        links.append((entry.path, path))
                elif not entry.is_file(follow_symlinks=False):
                    hazards.append((mount, entry.path, path, "a FIFO, socket or device"))
                elif (size := entry.stat(follow_symlinks=False).st_size) > max_file_bytes:
                    hazards.append((mount, entry.path, path, f"{size:,} bytes"))
            except OSError:  # removed while we looked
                continue
    if not hazards:
        return _Survey()
    blocked = [(path, what) for mount, _, path, what in hazards if mount.writable]
    covers = {path for mount, _, path, _ in hazards if not mount.writable}
    hidden = [os.path.realpath(host) for mount, host, _, _ in hazards if not mount.writable]
    for host, path in links:  # a link to a folder reaches a hidden file under another name
        target = os.path.realpath(host) + os.sep
        if any(h.startswith(target) for h in hidden):
            covers.add(path)
    blocked += [(path, "a name the shell cannot cover") for path in covers if not _is_text(path)]
    if blocked:
        names = "; ".join(f"{_shown(path)} ({what})" for path, what in sorted(blocked)[:5])
        more = f" and {len(blocked) - 5} more" if len(blocked) > 5 else ""
        return _Survey(refusal=(
            f"the shell does not open files over {max_file_bytes:,} bytes, FIFOs, sockets or devices, and the roots "
            f"hold {names}{more}; only commands that open no file (ls, stat, rm, ...) run until they are gone"))
    return _Survey(covers=tuple(sorted(covers)))


def _is_text(path: str) -> bool:
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:  # a host name that is not UTF-8 (surrogate escapes): bashkit cannot take it
        return False
    return True


def _shown(path: str) -> str:
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _keep_roots(mounts: tuple[Mount, ...]) -> None:
    """Recreate, empty, the folder of a writable root that was there before and is gone (`rm -rf
    /work` removes it)."""
    for mount in mounts:
        if not mount.writable:
            continue
        host = str(mount.host_path)
        if os.path.isdir(host):
            _SEEN_ROOTS.add(host)
        elif host in _SEEN_ROOTS:
            with contextlib.suppress(OSError):  # something else stands there, or the workspace is gone
                os.mkdir(os.path.realpath(host))


_SEEN_ROOTS: Final[set[str]] = set()  # host folders of writable roots found in place at a call


def is_directory(bash: Any, path: str) -> bool:
    try:
        return bool(bash.stat(path).get("file_type") == "directory")
    except RuntimeError:
        return False


_Stat = tuple[int, int, int, int]  # ctime_ns, mtime_ns, size, inode


def scan(mounts: tuple[Mount, ...], watch: Callable[[str], bool]) -> dict[str, _Stat] | None:
    """Guest path -> stat of each watched regular file in the writable mounts (links not
    followed); None past `_MAX_WATCH_ENTRIES` entries."""
    found: dict[str, _Stat] = {}
    visited = 0
    for mount in mounts:
        if not mount.writable:
            continue
        for entry, path in _entries(str(mount.host_path), mount.guest_path):
            visited += 1
            if visited > _MAX_WATCH_ENTRIES:
                return None
            try:
                if watch(entry.name) and entry.is_file(follow_symlinks=False):
                    st = entry.stat(follow_symlinks=False)
                    found[path] = (st.st_ctime_ns, st.st_mtime_ns, st.st_size, st.st_ino)
            except OSError:  # removed while we looked
                continue
    return found


def _entries(root: str, guest: str) -> Iterator[tuple[os.DirEntry[str], str]]:
    """Every entry below the host folder `root`, with its guest path (under `guest`); folders
    are entered after their own entry is given, links never (the survey's and the scan's walk)."""
    stack = [(root, guest)]
    while stack:
        host, at = stack.pop()
        try:
            entries = os.scandir(host)
        except OSError:
            continue
        with entries:
            for entry in entries:
                path = f"{at}/{entry.name}"
                yield entry, path
                with contextlib.suppress(OSError):  # removed while we looked
                    if entry.is_dir(follow_symlinks=False):
                        stack.append((entry.path, path))


def diff(before: dict[str, _Stat] | None, after: dict[str, _Stat] | None) -> tuple[str, ...] | None:
    """Files created or modified between two scans, oldest change first (ctime covers a
    rename too; equal times, common within one command, fall back to the path order)."""
    if before is None or after is None:
        return None
    changed = sorted((stat[0], stat[1], path) for path, stat in after.items() if before.get(path) != stat)
    return tuple(path for _, _, path in changed)


def analyze(bash: Any, command: str) -> Any:
    """bashkit's static analysis of `command`, or None when it does not parse."""
    try:
        return bash.analyze(command)
    except Exception:  # does not parse: it will fail before running anything, but stay cautious
        return None


def may_write(analysis: Any) -> bool:
    if analysis is None or analysis.is_opaque or analysis.has_dynamic_commands or analysis.functions:
        return True
    if any(r.is_write and r.path not in _HARMLESS_SINKS for r in analysis.redirects):
        return True
    return not set(analysis.command_names) <= _READERS


def touches_no_content(analysis: Any) -> bool:
    """True when the command can open no file: only `_CONTENT_FREE` commands, no redirect but
    to a harmless sink, nothing hidden (aliases, eval, functions, computed names)."""
    if analysis is None or analysis.is_opaque or analysis.has_dynamic_commands or analysis.functions:
        return False
    if any(r.path not in _HARMLESS_SINKS for r in analysis.redirects):
        return False
    return set(analysis.command_names) <= _CONTENT_FREE
