"""Extracting a skill archive (`.zip`, `.skill`) for `skills.manage install` (upstream's
`install.rs` caps), split from `skills_store`.

The member list is checked whole before a byte is written, so a refused archive writes nothing:
each entry must name a safe relative path (no absolute name, no `..`, no `:`, no NUL, no link),
each name part at most 255 bytes (a file system's limit), and each path one thing (no
duplicate entry, no file that is also a folder of another entry, no `.` entry naming a file);
encrypted entries and compression methods zipfile cannot read are refused. Sizes are counted
while inflating (a header's size is not trusted), and a bad CRC or a broken stream found then
is refused too. Every refusal is `skills.archive_*` and names archive entries only, never a
host path.
"""

from __future__ import annotations

import lzma
import stat
import struct
import zipfile
import zlib
from pathlib import Path, PurePosixPath
from typing import IO, Final

from ..core.errors import ToolError
from .base import check_deadline

MAX_INSTALL_FILES: Final = 2000
MAX_INSTALL_BYTES: Final = 50 * 1024 * 1024
MAX_PART_BYTES: Final = 255
_METHODS: Final = frozenset({zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA})
_ENCRYPTED: Final = 0x1  # general-purpose flag bit 0
# What zipfile and its decompressors raise on corrupt bytes (an OSError is bz2's broken stream).
_CORRUPT: Final = (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, NotImplementedError, RuntimeError,
                   ValueError, struct.error, zlib.error, lzma.LZMAError, OSError)


def extract_archive(archive: Path, dest: Path) -> None:
    """Extract a .zip/.skill into the empty folder `dest`; skills.archive_* when refused."""
    try:
        zf = zipfile.ZipFile(archive)
    except _CORRUPT as exc:
        raise _invalid(f"`{archive.name}` is not a readable zip archive.") from exc
    with zf:
        members = zf.infolist()
        if len(members) > MAX_INSTALL_FILES:
            raise ToolError("skills.archive_too_large", f"the archive holds {len(members)} entries; "
                            f"at most {MAX_INSTALL_FILES} are installed.")
        plan = _plan(members)
        total = 0
        for info, parts in plan:
            check_deadline()
            out = dest.joinpath(*parts)
            if info.is_dir():
                out.mkdir(parents=True, exist_ok=True)
                continue
            out.parent.mkdir(parents=True, exist_ok=True)
            try:
                with zf.open(info) as src, open(out, "xb") as dst:
                    # Count what really inflates: a forged header size cannot slip a bomb past the cap.
                    while chunk := _read(src, info):
                        total += len(chunk)
                        if total > MAX_INSTALL_BYTES:
                            raise ToolError("skills.archive_too_large", "the archive inflates past "
                                            f"{MAX_INSTALL_BYTES} bytes; it is not installed.")
                        dst.write(chunk)
            except OSError as exc:  # writing the staged copy (reading errors are _read's)
                raise ToolError("storage.write_failed", f"archive entry `{_shown(info.filename)}` could not be "
                                f"extracted: {exc.strerror or type(exc).__name__}.") from exc


def _read(src: IO[bytes], info: zipfile.ZipInfo) -> bytes:
    try:
        return src.read(1 << 16)
    except _CORRUPT as exc:  # a bad CRC shows at the entry's end, a broken stream anywhere
        raise _invalid(f"archive entry `{_shown(info.filename)}` is corrupt ({type(exc).__name__}).",
                       info.filename) from exc


def _plan(members: list[zipfile.ZipInfo]) -> list[tuple[zipfile.ZipInfo, tuple[str, ...]]]:
    """Each member with its path parts, after checking the whole list (see the module docstring)."""
    kinds: dict[tuple[str, ...], bool] = {}  # path parts -> is a folder
    plan = []
    for info in members:
        name = info.filename.replace("\\", "/")
        parts = PurePosixPath(name).parts
        if name.startswith("/") or ".." in parts or any(":" in p for p in parts):
            raise ToolError("skills.archive_unsafe", f"archive entry `{_shown(name)}` escapes the extraction folder.",
                            structured={"entry": name[:200]})
        if stat.S_ISLNK(info.external_attr >> 16):
            raise ToolError("skills.archive_unsafe", f"archive entry `{_shown(name)}` is a link.",
                            structured={"entry": name[:200]})
        is_dir = info.is_dir()
        problem = None
        if "\0" in name:
            problem = "holds a NUL character"
        elif not parts and not is_dir:
            problem = "names no file (a `.` entry)"
        elif any(len(p.encode("utf-8", "surrogatepass")) > MAX_PART_BYTES for p in parts):
            problem = f"has a name part over {MAX_PART_BYTES} bytes"
        elif info.flag_bits & _ENCRYPTED:
            problem = "is encrypted"
        elif info.compress_type not in _METHODS:
            problem = f"uses compression method {info.compress_type}, which cannot be read"
        elif any(kinds.get(parts[:i]) is False for i in range(1, len(parts))):
            problem = "lies inside an entry that is a file"
        elif parts in kinds and not (kinds[parts] and is_dir):
            problem = "names a path another entry names too"
        if problem:
            raise _invalid(f"archive entry `{_shown(name)}` {problem}; the archive is not installed.", name)
        if not parts:
            continue  # `./`: the extraction folder itself
        for i in range(1, len(parts)):
            kinds.setdefault(parts[:i], True)
        kinds[parts] = is_dir
        plan.append((info, parts))
    return plan


def _shown(name: str) -> str:
    return name.replace("\0", "\\0")[:120]


def _invalid(message: str, entry: str | None = None) -> ToolError:
    return ToolError("skills.archive_invalid", message, structured={"entry": entry[:200]} if entry else None)
