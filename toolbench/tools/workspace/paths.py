"""The one path resolver of the workspace tools.

A model's path goes through two steps. `split_path` is pure: it refuses NUL, `..`, drive
letters, `:` in a segment, UNC forms and over-long names, and gives the workspace-relative
segments (`/work/a.md` and `work/a.md` are the same path), spelled as sent. `Workspace.locate`
then walks the segments on the disk beneath the workspace folder's descriptor (`beneath`): no
step follows a link out, so there is no check-then-use a swapped folder could slip through.
Links inside the workspace are followed (an absolute one too, when it names a place inside);
the real location must lie inside the workspace (or inside the skill's folder for
`skills/<name>/`), and visibility and writability are judged on the root the walk *really*
enters, so a link from `work/` into `tool-results/` or `/etc` can be neither read nor written
through. A walk is refused where it enters a root tools cannot see (for a write: a root they
cannot write), before anything is created there.

Names are looked up as the file system stores them: the exact name wins, else the one entry
equal to it under NFC (a macOS-written NFD `café` is found by the NFC `café`); when both twins
exist each is addressed by its own bytes. A file or folder that does not exist yet is created
with the NFC spelling of its name.

`locate` gives a `Located` (its descriptors held until it is closed) for tools that go on
working on the disk (`files.open_file`); `open_dir` gives a folder's descriptor for the walking
tools (`walk`); `resolve`, `existing` and `file` give a `Resolved` path for tools that only need
where a path lands.

Skills are resolved through the skills directory instead of being copied: `skills/<name>/x`
is `<skills_dir>/<name>/x` when `<skills_dir>/<name>/SKILL.md` exists. Nothing is copied, so
the view is never stale and a skill can never be modified through the workspace.
"""

from __future__ import annotations

import difflib
import errno
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Final

from ...core.errors import ToolError
from ...core.workspace_settings import READ_ONLY_ROOTS, RUNTIME_DIRS, WorkspaceSettings
from . import beneath

if TYPE_CHECKING:
    from ..base import ToolContext

MAX_PATH_CHARS: Final = 1024
MAX_SEGMENT_BYTES: Final = 255
SKILLS_ROOT: Final = "skills"
SKILL_FILE: Final = "SKILL.md"
_OPEN_TRIES: Final = 8  # a folder on the way that keeps turning into a link between the walk and the open


def _invalid(raw: str, why: str, field: str) -> ToolError:
    shown = raw if len(raw) <= 120 else raw[:120] + "…"
    return ToolError("workspace.invalid_path",
                     f"`{field}` {shown!r} {why}. Use a workspace-relative path such as `work/notes.md`.",
                     structured={"path": shown})


def split_path(raw: object, *, field: str = "path", host_prefix: str | None = None) -> tuple[str, ...]:
    """The workspace-relative segments of `raw`, or ToolError(workspace.invalid_path). Pure.

    Segments keep the spelling sent (no Unicode normalisation: `Workspace.locate` matches NFC
    and NFD twins against the disk).

    `host_prefix` is the workspace's absolute host path: a path under it is taken as the
    workspace-relative rest (a model that copied an absolute path gets what it meant)."""
    if not isinstance(raw, str):
        raise ToolError("workspace.invalid_path", f"`{field}` must be a string path such as `work/notes.md`.")
    if "\x00" in raw:
        raise _invalid(raw.replace("\x00", "\\0"), "contains a NUL byte", field)
    if len(raw) > MAX_PATH_CHARS:
        raise _invalid(raw, f"is longer than {MAX_PATH_CHARS} characters", field)
    text = raw.strip().replace("\\", "/")
    if text.startswith("//"):
        raise _invalid(raw, "is a UNC or device path; only workspace paths are accepted", field)
    if len(text) >= 2 and text[1] == ":" and text[0].isalpha():
        raise _invalid(raw, "has a drive letter; only workspace paths are accepted", field)
    if host_prefix and (text == host_prefix or text.startswith(host_prefix.rstrip("/") + "/")):
        text = text[len(host_prefix):]
    segments = []
    for seg in text.split("/"):
        if seg in ("", "."):
            continue
        if seg == "..":
            raise _invalid(raw, "contains `..`; paths cannot leave the workspace", field)
        if ":" in seg:
            raise _invalid(raw, "has `:` in a segment (URLs, drive letters and streams are not paths)", field)
        try:  # as os.fsencode would: a lone surrogate outside surrogateescape's range names no file
            size = len(seg.encode("utf-8", "surrogateescape"))
        except UnicodeEncodeError:
            raise _invalid(raw, "has a character that cannot be in a file name (a lone surrogate)", field) from None
        if size > MAX_SEGMENT_BYTES:
            raise _invalid(raw, f"has a name longer than {MAX_SEGMENT_BYTES} bytes", field)
        segments.append(seg)
    return tuple(segments)


@dataclass(frozen=True, slots=True)
class Resolved:
    """A confined workspace path: `rel` as the model names it ("" is the workspace root)."""

    rel: str
    real: Path  # absolute, links resolved, names as stored (the part that exists)
    root: str | None  # the top-level root the real path lies in; None for the workspace root
    writable: bool

    @property
    def display(self) -> str:
        return self.rel or "."

    @property
    def is_root(self) -> bool:
        """The workspace root or one of its top-level roots (never deleted, never a file)."""
        return "/" not in self.rel


class Located:
    """A path found on the disk: `res`, and `spot` with its folder descriptor held open.

    `spot.name` is the entry in `spot.dir_fd`; it is None when the path is the base folder
    itself (a skill's folder, the skills root). Close it (or use it as a context manager)."""

    __slots__ = ("res", "spot")

    def __init__(self, res: Resolved, spot: beneath.Spot) -> None:
        self.res = res
        self.spot = spot

    def close(self) -> None:
        self.spot.close()
        base_fd, self.spot.base_fd = self.spot.base_fd, -1
        if base_fd >= 0:
            os.close(base_fd)

    def __enter__(self) -> Located:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()


def io_error(display: str, exc: OSError, doing: str = "read") -> ToolError:
    """workspace.io_error for an OS refusal: the workspace path and the OS reason, no host path."""
    return ToolError("workspace.io_error", f"`{display}` could not be {doing}: {exc.strerror or type(exc).__name__}.",
                     structured={"path": display})


def not_regular(display: str) -> ToolError:
    return ToolError("workspace.file_not_regular",
                     f"`{display}` is not a regular file (a FIFO, socket or device); the file tools read and write "
                     "regular files only.", structured={"path": display})


def is_folder(display: str) -> ToolError:
    return ToolError("workspace.path_is_directory",
                     f"`{display}` is a folder, not a file; list it to see its files.", structured={"path": display})


class Workspace:
    """The tools' view of one workspace folder under a profile's `workspace` settings."""

    def __init__(self, base: Path, settings: WorkspaceSettings) -> None:
        self.base = Path(os.path.realpath(base))
        self.settings = settings

    @classmethod
    def of(cls, ctx: ToolContext) -> Workspace:
        return cls(ctx.workspace, ctx.profile.workspace)

    # skills -------------------------------------------------------------------------------
    @property
    def skills_dir(self) -> Path:
        configured = self.settings.skills_dir
        if configured is None:
            return self.base / SKILLS_ROOT
        path = Path(configured).expanduser()
        return path if path.is_absolute() else self.base / path

    def skills(self) -> dict[str, Path]:
        """Skill name -> its real folder: each folder of the skills dir holding a SKILL.md."""
        if SKILLS_ROOT not in self.settings.visible_roots:
            return {}
        return find_skills(self.skills_dir)

    # roots --------------------------------------------------------------------------------
    def visible_roots(self) -> list[str]:
        return list(self.settings.visible_roots)

    def root_dir(self, root: str) -> Path:
        return Path(os.path.realpath(self.skills_dir)) if root == SKILLS_ROOT else self.base / root

    def is_writable_root(self, root: str | None) -> bool:
        return root is not None and root in self.settings.writable_roots and root not in READ_ONLY_ROOTS

    # resolution ---------------------------------------------------------------------------
    def locate(self, raw: object, *, field: str = "path", write: bool = False, create: bool = False,
               follow_last: bool = True) -> Located:
        """Find `raw` on the disk, confined; raise a workspace.* ToolError when it cannot be.

        `write`: refuse a read-only root before looking at the disk, and any root the walk
        enters that is not writable (path_not_writable). `create`: make missing parent
        folders (only with `write`). `follow_last`: follow a link at the last part (else the
        link is the entry, as delete wants). The path may not exist: see `spot.exists`."""
        segs = split_path(raw, field=field, host_prefix=str(self.base))
        if not segs:
            raise is_folder(".")
        return self._locate(segs, raw, field, write=write, create=create, follow_last=follow_last)

    def _locate(self, segs: tuple[str, ...], raw: object, field: str, *, write: bool = False, create: bool = False,
                follow_last: bool = True) -> Located:
        rel = "/".join(segs)
        root = segs[0]
        self._check_visible(root, raw, field)
        if write and len(segs) > 1 and not self.is_writable_root(root):
            self.writable(Resolved(rel, self.base, root, False))
        if root == SKILLS_ROOT:
            return self._locate_skill(segs, rel, follow_last)

        def enter(name: str) -> None:
            if name != root:
                self._check_visible(name, raw, field, via_link=True)
            if write and len(segs) > 1 and not self.is_writable_root(name):
                self.writable(Resolved(rel, self.base, name, False))

        spot = self._beneath(self.base, segs, rel, "the workspace", follow_last=follow_last,
                             create=create and write, enter=enter)
        if spot.name is None:  # a link to the workspace folder itself
            Located(Resolved(rel, self.base, None, False), spot).close()
            raise ToolError("workspace.path_not_visible",
                            f"`{rel}` is a link to the workspace folder itself; name a path inside a root instead.",
                            structured={"path": rel})
        real_root = spot.parts[0] if spot.parts else spot.name
        real = self.base.joinpath(*spot.parts, spot.name, *spot.rest)
        return Located(Resolved(rel, real, real_root, self.is_writable_root(real_root)), spot)

    def _beneath(self, folder: Path, segs: tuple[str, ...], rel: str, inside: str, *, follow_last: bool,
                 create: bool = False, enter: Callable[[str], None] | None = None) -> beneath.Spot:
        """Walk `segs` beneath `folder`; the spot holds the folder's descriptor (`Located.close`)."""
        try:
            base_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
        except FileNotFoundError:
            raise self.not_found(rel, rel.split("/", 1)[0], []) from None
        except OSError as exc:
            raise io_error(rel, exc, "resolved") from exc
        try:
            try:
                return beneath.locate(base_fd, str(folder), segs, follow_last=follow_last, create=create, enter=enter)
            except beneath.Outside:
                raise ToolError("workspace.path_not_visible",
                                f"`{rel}` is a link that points outside {inside}; it cannot be read or written.",
                                structured={"path": rel}) from None
            except OSError as exc:
                raise io_error(rel, exc, "resolved") from exc
        except BaseException:
            os.close(base_fd)
            raise

    def _locate_skill(self, segs: tuple[str, ...], rel: str, follow_last: bool) -> Located:
        if len(segs) == 1:
            folder = self.root_dir(SKILLS_ROOT)
        else:
            skills = self.skills()
            found = skills.get(segs[1])
            if found is None:
                raise self.not_found(rel, segs[1], sorted(skills))
            folder = found
        spot = self._beneath(folder, segs[2:], rel, "its skill folder", follow_last=follow_last)
        if spot.name is None:
            real = folder
            spot.st = os.fstat(spot.base_fd)
        else:
            real = folder.joinpath(*spot.parts, spot.name, *spot.rest)
        return Located(Resolved(rel, real, SKILLS_ROOT, False), spot)

    def open_dir(self, raw: object, *, field: str = "path",
                 visit: Callable[[int, str], None] | None = None) -> int:
        """A descriptor of the folder `raw` names, opened beneath the workspace; the caller closes it.

        The folder is found as `locate` finds it (links inside followed, visibility judged on
        the root really entered), then opened going down from the base folder (the workspace's,
        or the skill's for `skills/<name>/...`) one real name at a time with O_NOFOLLOW, so
        what is opened lies beneath the base whatever is swapped meanwhile. `visit(fd, shown)`
        is called for each folder on the way down, the base first and the folder itself last,
        while `fd` is open; `shown` is its workspace path as found on the disk ("" for the
        workspace folder). workspace.* ToolError when the path is missing or not visible;
        workspace.io_error when it is not a folder or keeps changing. The workspace folder
        itself ("") is not opened (it holds the runtime folders): path_not_visible."""
        segs = split_path(raw, field=field, host_prefix=str(self.base))
        if not segs:
            raise ToolError("workspace.path_not_visible", "The workspace folder itself is not opened; "
                            "name one of its roots.", structured={"path": "."})
        for _ in range(_OPEN_TRIES):
            with self._locate(segs, raw, field) as loc:
                fd = self._descend(loc, segs, visit)
            if fd is not None:
                return fd
        rel = "/".join(segs)
        raise ToolError("workspace.io_error", f"`{rel}` kept changing while it was opened; try again.",
                        structured={"path": rel})

    def _descend(self, loc: Located, segs: tuple[str, ...], visit: Callable[[int, str], None] | None) -> int | None:
        """The folder `loc` found, opened from its base by real names; None when one changed meanwhile."""
        spot, rel = loc.spot, loc.res.rel
        if not spot.exists:
            raise self.missing_at(loc)
        if spot.st is None or not stat.S_ISDIR(spot.st.st_mode):
            raise io_error(rel, OSError(errno.ENOTDIR, os.strerror(errno.ENOTDIR)), "listed")
        names = (*spot.parts, spot.name) if spot.name is not None else spot.parts
        fds = [spot.base_fd]  # loc's: closed with it
        try:
            for name in names:
                try:
                    fds.append(os.open(name, beneath.DIR_FLAGS, dir_fd=fds[-1]))
                except OSError as exc:
                    if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.ENOENT):
                        return None
                    raise io_error(rel, exc, "opened") from exc
            if visit is not None:
                shown = "" if segs[0] != SKILLS_ROOT else "/".join(segs[:2])  # the base's workspace path
                visit(fds[0], shown)
                for fd, name in zip(fds[1:], names, strict=True):
                    shown = f"{shown}/{name}" if shown else name
                    visit(fd, shown)
            return fds.pop() if len(fds) > 1 else os.dup(spot.base_fd)
        finally:
            for fd in fds[1:]:
                os.close(fd)

    def resolve(self, raw: object, *, field: str = "path", write: bool = False) -> Resolved:
        """Confine `raw` to the workspace (it may not exist); raise a workspace.* ToolError when it cannot be.

        `write`: refuse a read-only root, or a walk into one, before looking further (path_not_writable)."""
        segs = split_path(raw, field=field, host_prefix=str(self.base))
        if not segs:
            return Resolved("", self.base, None, False)
        with self._locate(segs, raw, field, write=write) as loc:
            return loc.res

    def existing(self, raw: object, *, field: str = "path", write: bool = False) -> Resolved:
        """Like `resolve`, but the path must exist (file_not_found with did-you-mean names)."""
        segs = split_path(raw, field=field, host_prefix=str(self.base))
        if not segs:
            return Resolved("", self.base, None, False)
        with self._locate(segs, raw, field, write=write) as loc:
            if not loc.spot.exists:
                raise self.missing_at(loc)
            return loc.res

    def file(self, raw: object, *, field: str = "path", write: bool = False) -> Resolved:
        """An existing regular file (not a folder, FIFO or device)."""
        with self.locate(raw, field=field, write=write) as loc:
            self.check_file(loc)
            return loc.res

    def check_file(self, loc: Located) -> None:
        """Refuse a located path that is missing, a folder, or not a regular file."""
        st = loc.spot.st
        if not loc.spot.exists or st is None:
            raise self.missing_at(loc)
        if stat.S_ISDIR(st.st_mode):
            raise is_folder(loc.res.display)
        if not stat.S_ISREG(st.st_mode):
            raise not_regular(loc.res.display)

    # checks -------------------------------------------------------------------------------
    def _check_visible(self, root: str, raw: object, field: str, *, via_link: bool = False) -> None:
        if root in RUNTIME_DIRS or root not in self.settings.visible_roots:
            how = "leads through a link into" if via_link else "is in"
            raise ToolError("workspace.path_not_visible",
                            f"`{field}` {str(raw)!r} {how} `{root}/`, which tools cannot see. Visible roots: "
                            + ", ".join(f"`{r}/`" for r in self.settings.visible_roots) + ".",
                            structured={"path": str(raw), "visibleRoots": list(self.settings.visible_roots)})

    def not_found(self, rel: str, missing: str, siblings: list[str]) -> ToolError:
        close = did_you_mean(missing, siblings)
        parent = rel.rsplit("/", 1)[0] if "/" in rel else "."
        hint = (" Did you mean " + ", ".join(f"`{c}`" for c in close) + "?") if close else (
            f" List `{parent}` to see what is there.")
        return ToolError("workspace.file_not_found", f"`{rel}` does not exist.{hint}",
                         structured={"path": rel, "didYouMean": close})

    def missing_at(self, loc: Located) -> ToolError:
        """file_not_found for a located path, with did-you-mean names from the siblings of its
        first missing part (listed through the descriptor the walk holds)."""
        spot, rel = loc.spot, loc.res.rel
        if spot.st is not None:  # a file where a folder was needed: nothing beneath it
            return self.not_found(rel, spot.rest[0] if spot.rest else spot.name or rel, [])
        names = beneath.names(spot.dir_fd)
        if not spot.parts and loc.res.root != SKILLS_ROOT:
            names = [n for n in names if n in self.settings.visible_roots]
        return self.not_found(rel, spot.name or rel, names)

    def writable(self, res: Resolved) -> Resolved:
        if not res.writable:
            raise ToolError("workspace.path_not_writable",
                            f"`{res.display}` is read-only to tools. Write under "
                            + ", ".join(f"`{r}/`" for r in self.settings.writable_roots) + " instead.",
                            structured={"path": res.display, "writableRoots": list(self.settings.writable_roots)})
        return res


def did_you_mean(name: str, siblings: list[str], n: int = 5) -> list[str]:
    """Up to `n` sibling names close to `name` (case-insensitive equal first, then difflib)."""
    lower = name.lower()
    exact = [s for s in siblings if s.lower() == lower and s != name]
    contains = [s for s in siblings if s not in exact and s != name and (lower in s.lower() or s.lower() in lower)]
    close = difflib.get_close_matches(name, [s for s in siblings if s not in exact and s not in contains],
                                      n=n, cutoff=0.6)
    return (exact + sorted(contains) + close)[:n]


def find_skills(skills_dir: Path) -> dict[str, Path]:
    """Name -> real folder of every direct subfolder of `skills_dir` that holds a SKILL.md."""
    out: dict[str, Path] = {}
    try:
        entries = sorted(os.scandir(skills_dir), key=lambda e: e.name)
    except OSError:
        return out
    for entry in entries:
        if entry.is_dir() and not entry.name.startswith(".") and os.path.isfile(os.path.join(entry.path, SKILL_FILE)):
            out[entry.name] = Path(os.path.realpath(entry.path))
    return out
