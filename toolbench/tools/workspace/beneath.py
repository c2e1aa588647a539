"""Finding and opening a path beneath a folder without following a link out of it.

The descriptor layer under `paths.Workspace`: every step works on a folder descriptor held
open, never on a host path name, so a folder swapped for a link between a check and a use
cannot send a call outside (there is no check-then-use).

`locate` walks the segments from the base folder's descriptor. Its fast path is one
`openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)` of the parent folder
(Linux 5.6+); a path with a link in it, a missing or mistyped name, or a kernel without
openat2 takes the walk: each folder opened with O_NOFOLLOW|O_DIRECTORY relative to the one
before, each link read (readlinkat) and its target walked the same way, `..` popping a folder
the walk holds (never opening `..`: the base cannot be left). An absolute target counts when
it names a place under the base (as given, or after `os.path.realpath` of the target string,
which only maps a name: what is opened is still walked beneath the base); anything else is
`Outside`. At most `MAX_LINKS` links are followed (ELOOP).

The walk records the names it went through (`Spot.parts`), so the root a descriptor lies in
is the first of them, with no later look-up by name: each step opens a child of a folder it
holds. (Only a rename of a held folder into another root during the call could make that
stale; the tools and the shell cannot rename into a root they cannot write or see.)

Names are matched as the file system stores them (`entry`): the exact name first, then its
NFC form, then (only for a non-ASCII name that is still missing, so the common path lists no
folder) the one entry of the folder that equals it under NFC. A name that does not exist is
given in NFC, the form new files and folders are created with.

`open_regular` opens the entry found with O_NOFOLLOW|O_NONBLOCK|O_NOCTTY and keeps it only if
fstat says it is a regular file: a FIFO or device can neither block the call nor be read.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import os
import platform
import stat
import sys
import time
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

MAX_LINKS: Final = 40
LOCK_SECONDS: Final = 10.0  # how long a writer waits for another writer of the same folder
_CLOEXEC: Final = getattr(os, "O_CLOEXEC", 0)
DIR_FLAGS: Final = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | _CLOEXEC
FILE_FLAGS: Final = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | _CLOEXEC
_RETRIES: Final = 16  # a folder that turns into something else between look and open, again and again
_RESOLVE_NO_MAGICLINKS, _RESOLVE_NO_SYMLINKS, _RESOLVE_BENEATH = 0x02, 0x04, 0x08
_SYS_OPENAT2: Final = 437  # one number for all architectures of the generic table (kernel 5.6+)
# Where 437 is surely openat2 (alpha, and the MIPS ABIs, number their syscalls apart): elsewhere the walk alone.
_OPENAT2_MACHINES: Final = frozenset({"x86_64", "amd64", "i386", "i686", "aarch64", "arm64", "armv6l", "armv7l",
                                      "armv8l", "riscv64", "ppc64", "ppc64le", "s390x", "loongarch64"})


class Outside(Exception):
    """The path (through a link, or `..` in a link) leads out of the base folder."""


class _OpenHow(ctypes.Structure):
    _fields_ = (("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64))


class _Openat2:
    """openat2(2) through libc's syscall(); `usable` turns False for good after ENOSYS."""

    def __init__(self) -> None:
        self.usable = sys.platform == "linux" and platform.machine() in _OPENAT2_MACHINES
        self._syscall: Callable[..., int] | None = None
        self._hows: dict[int, tuple[_OpenHow, int]] = {}  # flags -> a read-only open_how and its address

    def __call__(self, dir_fd: int, path: str, flags: int) -> int | None:
        """The descriptor, None when openat2 is missing; OSError when it refuses."""
        if not self.usable:
            return None
        if self._syscall is None:
            try:
                fn = ctypes.CDLL(None, use_errno=True).syscall
            except (OSError, AttributeError):
                self.usable = False
                return None
            # syscall() is variadic; on the machines above integer arguments pass as for a fixed
            # signature, and declaring it makes ctypes pass longs (not ints) quickly.
            fn.argtypes = (ctypes.c_long, ctypes.c_long, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_size_t)
            fn.restype = ctypes.c_long
            self._syscall = fn
        how = self._hows.get(flags)
        if how is None:
            made = _OpenHow(flags, 0, _RESOLVE_BENEATH | _RESOLVE_NO_SYMLINKS | _RESOLVE_NO_MAGICLINKS)
            how = self._hows[flags] = (made, ctypes.addressof(made))
        fd = self._syscall(_SYS_OPENAT2, dir_fd, os.fsencode(path), how[1], ctypes.sizeof(_OpenHow))
        if fd >= 0:
            return int(fd)
        err = ctypes.get_errno()
        if err in (errno.ENOSYS, errno.EPERM):  # no such syscall (old kernel, or a seccomp filter)
            self.usable = False
            return None
        raise OSError(err, os.strerror(err))


openat2 = _Openat2()


@dataclass(slots=True)
class Spot:
    """Where a path lands: the entry `name` of the folder `dir_fd` (`parts` from the base).

    `st` is the entry's lstat, None when it does not exist. `rest` is what the walk could not
    reach: non-empty when `name` (an inner part of the path) is missing (`st` None) or is not
    a folder (`st` set). `name` is None when the path is the base folder itself. The spot
    owns `dir_fd` unless it is the base's."""

    base_fd: int
    dir_fd: int
    parts: tuple[str, ...]
    name: str | None
    st: os.stat_result | None
    rest: tuple[str, ...] = ()

    @property
    def exists(self) -> bool:
        return self.st is not None and not self.rest

    def close(self) -> None:
        """Close `dir_fd` if the spot owns it (not the base's); closing twice is harmless."""
        fd, self.dir_fd = self.dir_fd, -1
        if fd >= 0 and fd != self.base_fd:
            os.close(fd)


def locate(base_fd: int, base: str, segs: Sequence[str], *, follow_last: bool = True, create: bool = False,
           enter: Callable[[str], None] | None = None) -> Spot:
    """Walk `segs` beneath the folder `base_fd` (whose real path is `base`).

    `follow_last`: follow a link at the last part (else the link itself is the spot).
    `create`: make missing inner folders (NFC names). `enter(name)` is called with each
    top-level entry the walk goes into or ends on, before anything is made there; it raises to
    refuse. Raises Outside, or OSError (ELOOP past MAX_LINKS, EACCES, ...)."""
    if enter is not None and segs:
        enter(segs[0])
    if len(segs) > 1:
        try:
            fd = openat2(base_fd, "/".join(segs[:-1]), DIR_FLAGS)
        except OSError:
            fd = None  # a link, a missing or mistyped name, a file in the way: the walk says which
        if fd is not None:
            try:
                name, st = entry(fd, segs[-1])
            except BaseException:
                os.close(fd)
                raise
            if st is None or not (follow_last and stat.S_ISLNK(st.st_mode)):
                return Spot(base_fd, fd, tuple(segs[:-1]), name, st)
            os.close(fd)
    return _walk(base_fd, base, segs, follow_last, create, enter)


def _walk(base_fd: int, base: str, segs: Sequence[str], follow_last: bool, create: bool,
          enter: Callable[[str], None] | None) -> Spot:
    fds: list[int] = []
    parts: list[str] = []
    todo = list(reversed(segs))
    links = retries = 0
    try:
        while todo:
            seg = todo.pop()
            if seg == "..":
                if not parts:
                    raise Outside
                parts.pop()
                os.close(fds.pop())
                continue
            cur = fds[-1] if fds else base_fd
            last = not todo
            name, st = entry(cur, seg)
            if st is not None and stat.S_ISLNK(st.st_mode) and (follow_last or not last):
                links += 1
                if links > MAX_LINKS:
                    raise OSError(errno.ELOOP, os.strerror(errno.ELOOP))
                try:
                    target = os.readlink(name, dir_fd=cur)
                except OSError as exc:  # not a link any more (EINVAL), or gone: look again
                    if exc.errno not in (errno.EINVAL, errno.ENOENT) or retries >= _RETRIES:
                        raise
                    retries += 1
                    links -= 1
                    todo.append(seg)
                    continue
                if target.startswith("/"):
                    todo.extend(reversed(_inside(base, target)))
                    while fds:
                        os.close(fds.pop())
                    parts.clear()
                else:
                    todo.extend(reversed(_split(target)))
                continue
            if enter is not None and not parts:
                enter(name)
            if last:
                return _spot(base_fd, fds, parts, name, st)
            if st is None and create:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, dir_fd=cur)
            elif st is None or not stat.S_ISDIR(st.st_mode):
                return _spot(base_fd, fds, parts, name, st, tuple(reversed(todo)))
            try:
                fds.append(os.open(name, DIR_FLAGS, dir_fd=cur))
            except OSError as exc:  # it changed since it was looked at: look again
                if exc.errno not in (errno.ELOOP, errno.ENOTDIR, errno.ENOENT) or retries >= _RETRIES:
                    raise
                retries += 1
                todo.append(seg)
                continue
            parts.append(name)
        # The walk ended on a folder it holds (a link to it, or `..`): its spot is in the parent.
        if not parts:
            return Spot(base_fd, base_fd, (), None, None)
        name = parts.pop()
        os.close(fds.pop())
        cur = fds[-1] if fds else base_fd
        return _spot(base_fd, fds, parts, name, os.stat(name, dir_fd=cur, follow_symlinks=False))
    except BaseException:
        for fd in fds:
            os.close(fd)
        raise


def _spot(base_fd: int, fds: list[int], parts: list[str], name: str, st: os.stat_result | None,
          rest: tuple[str, ...] = ()) -> Spot:
    """The spot in the innermost folder held; the others are closed."""
    dir_fd = fds.pop() if fds else base_fd
    while fds:
        os.close(fds.pop())
    return Spot(base_fd, dir_fd, tuple(parts), name, st, rest)


def _split(target: str) -> list[str]:
    return [p for p in target.split("/") if p not in ("", ".")]


def _inside(base: str, target: str) -> list[str]:
    """The parts of an absolute link target under `base` (as written, else after realpath), or Outside."""
    parts = _under(base, target)
    if parts is None:
        parts = _under(base, os.path.realpath(target))
    if parts is None:
        raise Outside
    return parts


def _under(base: str, path: str) -> list[str] | None:
    if path == base:
        return []
    prefix = base if base.endswith("/") else base + "/"
    return _split(path[len(prefix):]) if path.startswith(prefix) else None


def entry(dir_fd: int, seg: str) -> tuple[str, os.stat_result | None]:
    """(the name `seg` has in the folder, its lstat or None): the exact name, else its NFC
    form, else the one entry equal to it under NFC (non-ASCII names only); else NFC and None."""
    with contextlib.suppress(FileNotFoundError):
        return seg, os.stat(seg, dir_fd=dir_fd, follow_symlinks=False)
    if seg.isascii():
        return seg, None
    nfc = unicodedata.normalize("NFC", seg)
    if nfc != seg:
        with contextlib.suppress(FileNotFoundError):
            return nfc, os.stat(nfc, dir_fd=dir_fd, follow_symlinks=False)
    twins = [n for n in names(dir_fd) if n != nfc and unicodedata.normalize("NFC", n) == nfc]
    if len(twins) == 1:
        with contextlib.suppress(FileNotFoundError):
            return twins[0], os.stat(twins[0], dir_fd=dir_fd, follow_symlinks=False)
    return nfc, None


def names(dir_fd: int) -> list[str]:
    """The entries of the folder `dir_fd`; [] if it cannot be listed."""
    try:
        return os.listdir(dir_fd)
    except OSError:
        return []


def open_regular(dir_fd: int, name: str) -> tuple[int, os.stat_result]:
    """Open the entry `name` for reading if it is a regular file: (fd, fstat).

    OSError(ELOOP) if it is a link now, OSError(ENOENT) if gone; NotRegular otherwise."""
    fd = os.open(name, FILE_FLAGS, dir_fd=dir_fd)
    try:
        st = os.fstat(fd)
    except BaseException:
        os.close(fd)
        raise
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise NotRegular(st)
    return fd, st


class NotRegular(Exception):
    """The entry is a folder, FIFO, socket or device (`st` says which)."""

    def __init__(self, st: os.stat_result) -> None:
        super().__init__(stat.filemode(st.st_mode))
        self.st = st


def lock_folder(dir_fd: int, seconds: float = LOCK_SECONDS, waiting: Callable[[], None] | None = None) -> None:
    """Take an exclusive flock on the folder `dir_fd`; release it with `unlock_folder` (or by
    closing the descriptor). Each writer opens its own descriptor of the folder, so threads
    exclude each other too. TimeoutError after `seconds`: a writer that holds the lock longer
    (another process) cannot freeze a call. `waiting()` runs between tries (it may raise)."""
    deadline = time.monotonic() + seconds
    pause = 0.0002
    while True:
        try:
            fcntl.flock(dir_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() > deadline:
                raise TimeoutError(errno.EWOULDBLOCK, "another writer holds the folder") from None
            if waiting is not None:
                waiting()
            time.sleep(pause)
            pause = min(pause * 2, 0.01)


def unlock_folder(dir_fd: int) -> None:
    fcntl.flock(dir_fd, fcntl.LOCK_UN)
