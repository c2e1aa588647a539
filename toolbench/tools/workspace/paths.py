"""The one path resolver of the workspace tools.

A model's path goes through two steps. `split_path` is pure: it refuses NUL, `..`, drive
letters, `:` in a segment, UNC forms and over-long names, and gives the workspace-relative
segments (`/work/a.md` and `work/a.md` are the same path). `Workspace.resolve` then maps the
segments to the disk, resolves symlinks with `os.path.realpath` and confines the result: the
real path must lie inside the workspace (or inside the skill's folder for `skills/<name>/`),
and visibility and writability are judged on the root the *real* path lands in, so a link
from `work/` into `tool-results/` or `/etc` can be neither read nor written through.

Skills are resolved through the skills directory instead of being copied: `skills/<name>/x`
is `<skills_dir>/<name>/x` when `<skills_dir>/<name>/SKILL.md` exists. Nothing is copied, so
the view is never stale and a skill can never be modified through the workspace.
"""

from __future__ import annotations

import difflib
import os
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

from ...core.errors import ToolError
from ...core.workspace_settings import READ_ONLY_ROOTS, RUNTIME_DIRS, WorkspaceSettings

if TYPE_CHECKING:
    from ..base import ToolContext

MAX_PATH_CHARS: Final = 1024
MAX_SEGMENT_BYTES: Final = 255
SKILLS_ROOT: Final = "skills"
SKILL_FILE: Final = "SKILL.md"


def _invalid(raw: str, why: str, field: str) -> ToolError:
    shown = raw if len(raw) <= 120 else raw[:120] + "…"
    return ToolError("workspace.invalid_path",
                     f"`{field}` {shown!r} {why}. Use a workspace-relative path such as `work/notes.md`.",
                     structured={"path": shown})


def split_path(raw: object, *, field: str = "path", host_prefix: str | None = None) -> tuple[str, ...]:
    """The workspace-relative segments of `raw`, or ToolError(workspace.invalid_path). Pure.

    `host_prefix` is the workspace's absolute host path: a path under it is taken as the
    workspace-relative rest (a model that copied an absolute path gets what it meant)."""
    if not isinstance(raw, str):
        raise ToolError("workspace.invalid_path", f"`{field}` must be a string path such as `work/notes.md`.")
    if "\x00" in raw:
        raise _invalid(raw.replace("\x00", "\\0"), "contains a NUL byte", field)
    if len(raw) > MAX_PATH_CHARS:
        raise _invalid(raw, f"is longer than {MAX_PATH_CHARS} characters", field)
    text = unicodedata.normalize("NFC", raw.strip()).replace("\\", "/")
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
        if len(seg.encode("utf-8", "surrogatepass")) > MAX_SEGMENT_BYTES:
            raise _invalid(raw, f"has a name longer than {MAX_SEGMENT_BYTES} bytes", field)
        segments.append(seg)
    return tuple(segments)


@dataclass(frozen=True, slots=True)
class Resolved:
    """A confined workspace path: `rel` as the model names it ("" is the workspace root)."""

    rel: str
    real: Path  # absolute, symlinks resolved (the part that exists)
    root: str | None  # the top-level root the real path lies in; None for the workspace root
    writable: bool

    @property
    def display(self) -> str:
        return self.rel or "."

    @property
    def is_root(self) -> bool:
        """The workspace root or one of its top-level roots (never deleted, never a file)."""
        return "/" not in self.rel


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
    def resolve(self, raw: object, *, field: str = "path", write: bool = False) -> Resolved:
        """Confine `raw` to the workspace; raise a workspace.* ToolError when it cannot be.

        `write`: refuse a read-only root before looking at the disk (path_not_writable)."""
        segs = split_path(raw, field=field, host_prefix=str(self.base))
        if not segs:
            return Resolved("", self.base, None, False)
        root = segs[0]
        self._check_visible(root, raw, field)
        rel = "/".join(segs)
        if write and len(segs) > 1 and not self.is_writable_root(root):
            self.writable(Resolved(rel, self.base, root, False))
        if root == SKILLS_ROOT:
            return self._resolve_skill(segs, rel)
        try:
            real = Path(os.path.realpath(self.base.joinpath(*segs)))
        except (OSError, ValueError) as exc:
            raise _invalid(str(raw), f"cannot be resolved ({exc})", field) from exc
        real_root = self._real_root(real, rel)
        if real_root != root:
            self._check_visible(real_root, raw, field, via_link=True)
        return Resolved(rel, real, real_root, self.is_writable_root(real_root))

    def _check_visible(self, root: str, raw: object, field: str, *, via_link: bool = False) -> None:
        if root in RUNTIME_DIRS or root not in self.settings.visible_roots:
            how = "leads through a link into" if via_link else "is in"
            raise ToolError("workspace.path_not_visible",
                            f"`{field}` {str(raw)!r} {how} `{root}/`, which tools cannot see. Visible roots: "
                            + ", ".join(f"`{r}/`" for r in self.settings.visible_roots) + ".",
                            structured={"path": str(raw), "visibleRoots": list(self.settings.visible_roots)})

    def _real_root(self, real: Path, rel: str) -> str:
        try:
            inside = os.path.commonpath([self.base, real]) == str(self.base)
        except ValueError:
            inside = False
        if not inside or real == self.base:
            raise ToolError("workspace.path_not_visible",
                            f"`{rel}` is a link that points outside the workspace; it cannot be read or written.",
                            structured={"path": rel})
        return real.relative_to(self.base).parts[0]

    def _resolve_skill(self, segs: tuple[str, ...], rel: str) -> Resolved:
        if len(segs) == 1:
            return Resolved(rel, self.root_dir(SKILLS_ROOT), SKILLS_ROOT, False)
        skills = self.skills()
        folder = skills.get(segs[1])
        if folder is None:
            raise self.not_found(rel, segs[1], sorted(skills))
        real = Path(os.path.realpath(folder.joinpath(*segs[2:])))
        try:
            inside = os.path.commonpath([folder, real]) == str(folder)
        except ValueError:
            inside = False
        if not inside:
            raise ToolError("workspace.path_not_visible",
                            f"`{rel}` is a link that points outside its skill folder; it cannot be read.",
                            structured={"path": rel})
        return Resolved(rel, real, SKILLS_ROOT, False)

    # checks -------------------------------------------------------------------------------
    def not_found(self, rel: str, missing: str, siblings: list[str]) -> ToolError:
        close = did_you_mean(missing, siblings)
        parent = rel.rsplit("/", 1)[0] if "/" in rel else "."
        hint = (" Did you mean " + ", ".join(f"`{c}`" for c in close) + "?") if close else (
            f" List `{parent}` to see what is there.")
        return ToolError("workspace.file_not_found", f"`{rel}` does not exist.{hint}",
                         structured={"path": rel, "didYouMean": close})

    def missing(self, res: Resolved) -> ToolError:
        """file_not_found for `res`, with did-you-mean names from the first missing part's siblings."""
        parts = res.rel.split("/")
        if parts[0] == SKILLS_ROOT and len(parts) > 1:
            cur, rest, top = self.skills()[parts[1]], parts[2:], False
        else:
            cur, rest, top = self.base, parts, True
        for i, part in enumerate(rest):
            nxt = cur / part
            if not os.path.lexists(nxt) or not os.path.exists(nxt):
                try:
                    names = os.listdir(cur)
                except OSError:
                    names = []
                if top and i == 0:
                    names = [n for n in names if n in self.settings.visible_roots]
                return self.not_found(res.rel, part, names)
            cur = Path(os.path.realpath(nxt))
        return self.not_found(res.rel, parts[-1], [])

    def existing(self, raw: object, *, field: str = "path", write: bool = False) -> Resolved:
        res = self.resolve(raw, field=field, write=write)
        if not res.real.exists():
            raise self.missing(res)
        return res

    def file(self, raw: object, *, field: str = "path", write: bool = False) -> Resolved:
        """An existing regular file (not a folder)."""
        res = self.existing(raw, field=field, write=write)
        if res.real.is_dir():
            raise ToolError("workspace.path_is_directory",
                            f"`{res.display}` is a folder, not a file; list it to see its files.",
                            structured={"path": res.display})
        return res

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
