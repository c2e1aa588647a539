"""The skills folder's rules and writes, for `builtin:skills.manage` (LiveAgent's
`services/skills/*`: `paths.rs`, `validate.rs`, `sources.rs`, `install.rs`).

Every write into the live skills root is stage-then-swap: the new skill is built completely
in `<root>/.staging/<name>-<uuid>` (same file system, a dot folder that discovery skips),
checked there, then moved into place with one `os.rename` under a lock. Readers see the old
folder or the new one, never a half-written one; a failed install leaves the old one as it was.
Conflicts follow upstream: `fail`, `overwrite` (the old folder is renamed aside first, then
removed) or `backup` (renamed to `<root>/.backups/<name>-<stamp>-<uuid>`).

Archives (`.zip`, `.skill`) are extracted by `skills_archive`. The staging folder is the
install's own: a call that made `.staging` (or the root) removes it again when it is left empty,
so a refused install leaves the root exactly as it was.

Every SKILL.md is read through one door, `front_matter_of`: the bytes come from a regular-file,
size-capped open (a FIFO, a device or a link is refused before a byte is read, never waited on)
and the front matter from `core.front_matter` (no anchors or aliases, bounded depth and size).
A refusal is skills.file_unreadable or skills.front_matter_invalid naming the file as the model
knows it (its workspace path, or the archive path and entry), never a host path.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import threading
import time
import uuid
import zipfile
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any, Final

from ..core.errors import ToolError
from ..core.fileio import REFUSED, read_regular_file
from ..core.front_matter import FrontMatter, FrontMatterError, parse
from .base import check_deadline
from .skills_archive import MAX_INSTALL_BYTES, MAX_INSTALL_FILES

SKILL_FILE: Final = "SKILL.md"
MAX_NAME_CHARS: Final = 64
MAX_DESCRIPTION_CHARS: Final = 1024
MAX_FILE_BYTES: Final = 10 * 1024 * 1024
CONFLICTS: Final = ("backup", "fail", "overwrite")
ALLOWED_KEYS: Final = frozenset({"name", "description", "license", "allowed-tools", "metadata"})
FORBIDDEN_DOCS: Final = frozenset({"README.md", "INSTALLATION_GUIDE.md", "QUICK_REFERENCE.md", "CHANGELOG.md"})
_RESERVED: Final = frozenset({"CON", "PRN", "AUX", "NUL"})
STAGING: Final = ".staging"
BACKUPS: Final = ".backups"
PACKAGES: Final = ".packages"

# One writer at a time swaps into a root (upstream's skills_write_guard); staging runs unlocked.
_SWAP_LOCK = threading.Lock()


def _reserved(part: str) -> bool:
    stem = part.split(".", 1)[0].strip(" .").upper()
    return stem in _RESERVED or (len(stem) == 4 and stem[:3] in ("COM", "LPT") and stem[3] in "123456789")


def check_name(raw: object) -> str:
    """A skill name as upstream's `sanitize_skill_name` takes it (trimmed), or skills.name_invalid."""
    name = raw.strip() if isinstance(raw, str) else ""
    problem = None
    if not name:
        problem = "a skill name cannot be empty"
    elif len(name) > MAX_NAME_CHARS:
        problem = f"a skill name has at most {MAX_NAME_CHARS} characters"
    elif not all(c in "abcdefghijklmnopqrstuvwxyz0123456789-" for c in name):
        problem = "a skill name uses lowercase letters, digits and hyphens only"
    elif name.startswith("-") or name.endswith("-") or "--" in name:
        problem = "a skill name cannot start or end with a hyphen or hold two in a row"
    elif _reserved(name):
        problem = "a skill name cannot be a reserved device name"
    if problem:
        raise ToolError("skills.name_invalid", f"{problem}: `{str(raw)[:80]}`.", structured={"name": str(raw)[:200]})
    return name


def normalize_name(raw: str) -> str:
    """create's name as upstream takes it from a person: lowercase, each run of spaces one `-`
    ("My Skill" -> `my-skill`). Nothing else is rewritten: `check_name` then refuses
    `../escape` or `skills/nested` instead of turning them into other names."""
    return "-".join(raw.lower().split())


def check_child_path(raw: object) -> PurePosixPath:
    """A file path inside a skill: relative, no `..`, no hidden parts, no `:`; skills.path_invalid."""
    text = raw.strip() if isinstance(raw, str) else ""
    path = PurePosixPath(text.replace("\\", "/"))
    parts = [p for p in path.parts if p != "."]
    bad = (not parts or path.is_absolute() or any(p == ".." or p.startswith(".") or ":" in p or _reserved(p)
                                                  for p in parts))
    if bad:
        raise ToolError("skills.path_invalid", f"`{str(raw)[:80]}` is not a relative path inside a skill "
                        "(no `..`, no hidden folders).", structured={"path": str(raw)[:200]})
    return PurePosixPath(*parts)


def front_matter_of(data: bytes, display: str) -> FrontMatter:
    """SKILL.md's front matter from its bytes; `display` names the file in the error:
    skills.file_unreadable (not UTF-8), skills.front_matter_invalid."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ToolError("skills.file_unreadable", f"`{display}` is not UTF-8 text; a SKILL.md is UTF-8 Markdown.",
                        structured={"path": display}) from None
    try:
        return parse(text)
    except FrontMatterError as exc:
        raise ToolError("skills.front_matter_invalid", f"`{display}`: {exc.reason}. Write its front matter as plain "
                        "`key: value` lines (name, description) and try again.", structured={"path": display}) from None


def load_metadata(skill_dir: Path, display: str) -> FrontMatter:
    """The front matter of `<skill_dir>/SKILL.md` (see `front_matter_of`); skills.file_unreadable
    when the file is missing, a link, not a regular file or over MAX_FILE_BYTES."""
    try:
        data = read_regular_file(skill_dir / SKILL_FILE, MAX_FILE_BYTES, follow_links=False)
    except FileNotFoundError:
        why = "does not exist"
    except OSError as exc:  # a link, not a regular file, too large: strerror says which
        why = f"is {exc.strerror}" if exc.errno in REFUSED else f"cannot be read ({exc.strerror})"
    else:
        return front_matter_of(data, display)
    raise ToolError("skills.file_unreadable", f"`{display}` {why}; a SKILL.md is a regular file of at most "
                    f"{MAX_FILE_BYTES} bytes.", structured={"path": display})


def read_metadata(skill_dir: Path, display: str = SKILL_FILE) -> tuple[dict[str, Any], list[str]]:
    """SKILL.md's front matter and the problems found reading it (empty when it parsed)."""
    try:
        fm = load_metadata(skill_dir, display)
    except ToolError as exc:
        return {}, [exc.message]
    return (fm.metadata, []) if fm.present else ({}, [f"{SKILL_FILE} has no front matter"])


def validate_dir(skill_dir: Path) -> list[str]:
    """Upstream's `validate_skill_dir` problems for one skill folder (empty: valid)."""
    if not skill_dir.is_dir() or skill_dir.is_symlink():
        return [f"skill folder not found: {skill_dir.name}"]
    meta, errors = read_metadata(skill_dir)
    if not errors:
        unexpected = sorted(set(map(str, meta)) - ALLOWED_KEYS)
        if unexpected:
            errors.append(f"unexpected key(s) in front matter: {', '.join(unexpected)}")
        name, description = meta.get("name"), meta.get("description")
        if not isinstance(name, str) or not name.strip():
            errors.append("missing 'name' in front matter")
        else:
            try:
                check_name(name)
            except ToolError as exc:
                errors.append(exc.message)
            if skill_dir.name != name.strip():
                errors.append(f"folder name '{skill_dir.name}' must match front matter name '{name.strip()}'")
        if not isinstance(description, str) or not description.strip():
            errors.append("missing 'description' in front matter")
        else:
            if "<" in description or ">" in description:
                errors.append("description cannot contain angle brackets (< or >)")
            if len(description.encode()) > MAX_DESCRIPTION_CHARS:
                errors.append(f"description is too long; maximum is {MAX_DESCRIPTION_CHARS}")
    for path in sorted(skill_dir.rglob("*")):
        check_deadline()
        rel = path.relative_to(skill_dir).as_posix()
        if path.is_symlink():
            errors.append(f"link not allowed inside a skill: {rel}")
        elif path.is_file():
            if path.name in FORBIDDEN_DOCS:
                errors.append(f"forbidden documentation file: {rel}")
            if path.suffix.lower() in (".py", ".sh", ".bash") and not _has_shebang(path):
                errors.append(f"script file lacks a shebang: {rel}")
    return errors


def _has_shebang(path: Path) -> bool:
    try:
        return read_regular_file(path, MAX_FILE_BYTES, follow_links=False).startswith(b"#!")
    except OSError:
        return False


def discover(root: Path) -> list[Path]:
    """Skill folders in an install source (upstream's `discover_skill_dirs`): the folder itself
    when it holds SKILL.md, else the skills in its `skills/` folder, else its child skills."""
    # A SKILL.md that is there but no regular file counts, so reading it can say what is wrong.
    if os.path.lexists(root / SKILL_FILE):
        return [root]
    for folder in (root / "skills", root):
        if folder.is_dir() and not folder.is_symlink():
            found = sorted(p for p in folder.iterdir() if not p.name.startswith(".") and ".backup-" not in p.name
                           and p.is_dir() and not p.is_symlink() and os.path.lexists(p / SKILL_FILE))
            if found:
                return found
    return []


def _copy_tree(source: Path, target: Path) -> None:
    """Copy a skill folder file by file into the staging folder, refusing links and huge files."""
    count = total = 0
    for path in sorted(source.rglob("*")):
        check_deadline()
        rel = path.relative_to(source)
        if path.is_symlink():
            raise ToolError("skills.source_unsafe", f"the source holds a link (`{rel.as_posix()[:120]}`); "
                            "skills may not contain links.", structured={"entry": rel.as_posix()[:200]})
        if path.is_dir():
            (target / rel).mkdir(parents=True, exist_ok=True)
        elif path.is_file():
            size = path.stat().st_size
            count, total = count + 1, total + size
            if size > MAX_FILE_BYTES or total > MAX_INSTALL_BYTES or count > MAX_INSTALL_FILES:
                raise ToolError("skills.source_too_large", f"the source is past the install caps at "
                                f"`{rel.as_posix()[:120]}` ({MAX_FILE_BYTES} bytes a file, {MAX_INSTALL_BYTES} "
                                f"in all, {MAX_INSTALL_FILES} files).")
            (target / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target / rel)


def remove(path: Path) -> None:
    """Best-effort removal of a staged or trashed folder."""
    shutil.rmtree(path, ignore_errors=True)


@contextlib.contextmanager
def staging_area(root: Path) -> Iterator[None]:
    """Around one write into `root`: makes the root when missing, and afterwards removes the
    `.staging` folder when it is empty, and the root too when this call made it and it is empty,
    so a refused install or create leaves the root exactly as it was."""
    made_root = not os.path.lexists(root)
    root.mkdir(parents=True, exist_ok=True)
    try:
        yield
    finally:
        with contextlib.suppress(OSError):  # not empty: another install is staging there
            (root / STAGING).rmdir()
        if made_root:
            with contextlib.suppress(OSError):
                root.rmdir()


def staging_dir(root: Path, label: str) -> Path:
    """A fresh private folder under `<root>/.staging/` (made when missing)."""
    folder = root / STAGING / f"{label}-{uuid.uuid4().hex[:12]}"
    for _ in range(3):  # another call's `staging_area` may remove an empty .staging in between
        try:
            folder.mkdir(parents=True)
            return folder
        except FileNotFoundError:
            continue
    folder.mkdir(parents=True)
    return folder


def install_dir(root: Path, source: Path, name: str, conflict: str, *, display: str) -> tuple[Path, Path | None]:
    """Stage `source` as skill `name` under `root`, check it, swap it into place.

    Returns the live folder and the backup folder (conflict `backup` over an existing skill).
    The staged SKILL.md must read (skills.file_unreadable, skills.front_matter_invalid, naming
    it as `display`), the skill must validate and its front matter name must equal `name`
    (skills.invalid); an existing skill with conflict `fail` is skills.exists."""
    name = check_name(name)
    staged = staging_dir(root, name)
    try:
        _copy_tree(source, staged)
        meta = load_metadata(staged, display).metadata
        if str(meta.get("name", "")).strip() != name:
            raise ToolError("skills.invalid", f"the skill's front matter name `{str(meta.get('name'))[:80]}` "
                            f"does not match the target folder `{name}`.", structured={"name": name})
        problems = validate_dir_as(staged, name)
        if problems:
            raise ToolError("skills.invalid", f"skill `{name}` does not validate: " + "; ".join(problems),
                            structured={"name": name, "errors": problems})
        return _swap(root, staged, name, conflict)
    finally:
        if staged.exists():
            remove(staged)


def validate_dir_as(folder: Path, name: str) -> list[str]:
    """`validate_dir` for a staged folder that will be renamed to `name` (the caller checks the name)."""
    return [p for p in validate_dir(folder) if not p.startswith("folder name ")]


def _swap(root: Path, staged: Path, name: str, conflict: str) -> tuple[Path, Path | None]:
    target = root / name
    backup: Path | None = None
    with _SWAP_LOCK:
        if os.path.lexists(target):
            if conflict == "fail":
                raise ToolError("skills.exists", f"skill `{name}` already exists; pass conflict `backup` or "
                                "`overwrite` to replace it.", structured={"name": name})
            if conflict == "overwrite":
                # Renamed aside before it is deleted, so a failing delete never leaves a half-removed skill.
                trash = root / STAGING / f"trash-{uuid.uuid4().hex[:12]}"
                os.rename(target, trash)
                remove(trash)
            else:
                (root / BACKUPS).mkdir(exist_ok=True)
                backup = root / BACKUPS / f"{name}-{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:8]}"
                os.rename(target, backup)
        os.rename(staged, target)
    return target, backup


def delete(root: Path, name: str) -> Path:
    """Remove skill `name` (renamed aside first, so it disappears at once); skills.not_found."""
    name = check_name(name)
    target = root / name
    if not os.path.lexists(target):
        raise ToolError("skills.not_found", f"skill `{name}` does not exist.", structured={"name": name})
    if target.is_symlink() or not target.is_dir():
        raise ToolError("skills.not_found", f"`{name}` is not an installed skill folder.", structured={"name": name})
    with staging_area(root):
        with _SWAP_LOCK:
            (root / STAGING).mkdir(exist_ok=True)
            trash = root / STAGING / f"trash-{uuid.uuid4().hex[:12]}"
            os.rename(target, trash)
        remove(trash)
    return target


def package(root: Path, name: str) -> Path:
    """Zip a valid skill to `<root>/.packages/<name>.skill` (entries `<name>/...`), written
    to a staged file and renamed over the old package."""
    folder = root / check_name(name)
    files = sorted(p for p in folder.rglob("*") if p.is_file() and not p.is_symlink())
    out_dir = root / PACKAGES
    out_dir.mkdir(exist_ok=True)
    staged = out_dir / f".{name}-{uuid.uuid4().hex[:12]}.tmp"
    try:
        with zipfile.ZipFile(staged, "w", compression=zipfile.ZIP_DEFLATED) as zf:
            for path in files:
                check_deadline()
                zf.write(path, f"{name}/{path.relative_to(folder).as_posix()}")
        os.replace(staged, out_dir / f"{name}.skill")
    finally:
        if staged.exists():
            staged.unlink()
    return out_dir / f"{name}.skill"
