"""The Markdown source of truth: where each entry's file lives, and its front-matter format.

Layout (reference §5.3), with `<global>` from `profile.memory.global_dir` and the project scope
in the workspace's runtime folder (never visible to the file tools):

    <global>/<slug>.md                         project and reference entries
    <global>/user/<slug>.md                    user and feedback entries
    <global>/daily/<YYYY-MM-DD>.md             daily journals
    <global>/daily/.archive/<YYYY>/<date>.md   dailies past retention (read-only)
    <workspace>/.toolbench/memory/project/<slug>.md
    <scope dir>/.trash/<slug>.<ms>.md          soft-deleted
    <scope dir>/MEMORY.md                      generated list of the non-daily entries

Front matter is YAML, read and written by `core.front_matter` (no anchors or aliases, bounded
depth and size); the file's path gives its identity (scope, slug). Evidence is not in it: it
heads the body as its own block (`evidence.py`).

Files are read through `read_entry` only: `fileio.read_regular_file` (no link followed, a FIFO
or device refused before a byte is read), capped at `Layout.max_file_bytes`. A file refused
there or by its front matter is a ToolError (memory.file_unreadable, memory.front_matter_invalid)
naming it as `Layout.display` shows it: workspace-relative, or under `<global memory>/` for a
global folder outside the workspace.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from datetime import date, datetime
from pathlib import Path
from typing import Any, Final

from ...core import front_matter
from ...core.errors import ToolError
from ...core.fileio import REFUSED, read_regular_file
from ...core.memory_settings import MemorySettings
from .evidence import confidence_of, legacy_evidence, split_evidence, with_evidence
from .rules import TYPES, daily_slug

INDEX_FILE: Final = "MEMORY.md"


@dataclass(frozen=True, slots=True)
class Entry:
    """One memory as its file says. `date` is set for dailies only."""

    slug: str
    scope: str
    type: str
    description: str
    body: str
    created_at: str
    updated_at: str
    date: str | None = None
    archived: bool = False
    source: dict[str, Any] = field(default_factory=dict)
    sources: tuple[dict[str, Any], ...] = ()
    append_count: int = 0
    links: tuple[Any, ...] = ()

    @property
    def is_daily(self) -> bool:
        return self.type == "daily"

    @property
    def headline(self) -> str:
        return self.date if self.date else self.description

    @property
    def unreviewed(self) -> bool:
        return bool(self.source.get("unreviewed"))

    @property
    def risk_flag(self) -> str:
        return str(self.source.get("risk_flag") or "none")

    @property
    def confidence(self) -> str | None:
        return confidence_of(self.body)

    @property
    def text(self) -> str:
        """The body without its evidence block."""
        return split_evidence(self.body)[1]

    def with_(self, **changes: Any) -> Entry:
        return replace(self, **changes)


def workdir_hash(workspace: Path) -> str:
    """The project identity: the first 16 hex characters of SHA-256 of the workspace's real path."""
    return hashlib.sha256(str(workspace.resolve()).encode()).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class Layout:
    """The folders of one workspace's memory store."""

    global_dir: Path
    project_dir: Path
    index_path: Path
    workspace: Path
    max_file_bytes: int

    @classmethod
    def of(cls, workspace: Path, settings: MemorySettings) -> Layout:
        base = workspace / ".toolbench" / "memory"
        configured = Path(settings.global_dir).expanduser()
        global_dir = configured if configured.is_absolute() else workspace / configured
        # The largest file this store writes, in UTF-8 at 4 bytes a character: body plus front matter.
        chars = max(settings.max_body_chars, settings.max_daily_body_chars) + front_matter.MAX_CHARS
        return cls(global_dir=global_dir, project_dir=base / "project", index_path=base / "index.sqlite3",
                   workspace=workspace, max_file_bytes=4 * chars)

    def display(self, path: Path) -> str:
        """`path` as the model may see it: workspace-relative, else under `<global memory>/`."""
        for base, prefix in ((self.workspace, ""), (self.global_dir, "<global memory>/")):
            if path.is_relative_to(base):
                return prefix + path.relative_to(base).as_posix()
        return path.name

    def within(self, folder: Path) -> Path:
        """`folder`, refused (memory.folder_outside_workspace) when it lies in the workspace by name
        but a link on its way leads out: a planted `.toolbench/memory/project` link would have
        the host folder's notes indexed and read, and new notes written there."""
        if folder.is_relative_to(self.workspace) and not Path(os.path.realpath(folder)).is_relative_to(
                os.path.realpath(self.workspace)):
            raise ToolError("memory.folder_outside_workspace", f"`{self.display(folder)}` leads out of the "
                            "workspace through a link; the memory store does not read or write there.",
                            structured={"path": self.display(folder)})
        return folder

    def scope_dir(self, scope: str) -> Path:
        return self.global_dir if scope == "global" else self.project_dir

    def path_for(self, entry: Entry) -> Path:
        return self.checked(self._path_for(entry))

    def _path_for(self, entry: Entry) -> Path:
        if entry.is_daily:
            assert entry.date is not None
            daily = self.global_dir / "daily"
            return daily / ".archive" / entry.date[:4] / f"{entry.date}.md" if entry.archived \
                else daily / f"{entry.date}.md"
        if entry.scope == "global" and entry.type in ("user", "feedback"):
            return self.global_dir / "user" / f"{entry.slug}.md"
        return self.scope_dir(entry.scope) / f"{entry.slug}.md"

    def trash_path(self, entry: Entry, ms: int) -> Path:
        return self.checked(self.scope_dir(entry.scope) / ".trash" / f"{entry.slug}.{ms}.md")

    def checked(self, path: Path) -> Path:
        """`path`, its folder checked by `within`."""
        return self.within(path.parent) / path.name

    def scan(self) -> Iterator[tuple[str, Path, bool]]:
        """(scope, path, archived) of every entry file, in a stable order. Every `*.md` name counts,
        whatever it is on the disk: `read_entry` refuses (and the index reports) what is no file."""
        spots = [("project", self.project_dir, False), ("global", self.global_dir, False),
                 ("global", self.global_dir / "user", False), ("global", self.global_dir / "daily", False)]
        for scope, folder, archived in spots:
            with contextlib.suppress(ToolError):  # a folder that leads out is left out, the others listed
                if self.within(folder).is_dir():
                    yield from ((scope, path, archived) for path in sorted(folder.glob("*.md"))
                                if path.name != INDEX_FILE)
        archive = self.global_dir / "daily" / ".archive"
        with contextlib.suppress(ToolError):
            if self.within(archive).is_dir():
                yield from (("global", path, True) for path in sorted(archive.glob("*/*.md")))


def _text(value: Any) -> str:
    if isinstance(value, datetime | date):
        return value.isoformat()
    return "" if value is None else str(value)


def _count(value: Any) -> int:
    try:
        return max(0, int(value or 0))
    except (TypeError, ValueError):
        return 0


def read_entry(layout: Layout, scope: str, path: Path, *, archived: bool = False) -> Entry:
    """The entry in the file `path`: FileNotFoundError when it is gone, else memory.file_unreadable
    or memory.front_matter_invalid for a file that cannot be one (see the module docstring)."""
    shown = layout.display(path)
    try:
        return parse_entry(scope, path, _read_text(layout.checked(path), layout.max_file_bytes, shown),
                           archived=archived)
    except front_matter.FrontMatterError as exc:
        raise ToolError("memory.front_matter_invalid", f"`{shown}`: {exc.reason}; the file is left out of the "
                        "memory index and not changed.", structured={"path": shown}) from None
    except ValueError:  # a daily journal's name that is no date
        raise _unreadable(shown, "is in a daily folder but is not named YYYY-MM-DD.md") from None


def _read_text(path: Path, limit: int, shown: str) -> str:
    try:
        return read_regular_file(path, limit, follow_links=False).decode("utf-8")
    except FileNotFoundError:
        raise
    except OSError as exc:  # a link, not a regular file, too large: strerror says which
        raise _unreadable(shown, f"is {exc.strerror}" if exc.errno in REFUSED else
                          f"cannot be read ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise _unreadable(shown, "is not UTF-8 text") from None


def _unreadable(shown: str, why: str) -> ToolError:
    return ToolError("memory.file_unreadable", f"`{shown}` {why}; it is left out of the memory index and not read.",
                     structured={"path": shown})


def parse_entry(scope: str, path: Path, text: str, *, archived: bool = False) -> Entry:
    """An entry from its file's text; the path decides scope and slug, front matter the rest.
    FrontMatterError for refused front matter, ValueError for a daily file not named by a date."""
    parsed = front_matter.parse(text)
    meta, body = parsed.metadata, parsed.body
    in_daily = path.parent.name == "daily" or archived
    kind = "daily" if in_daily else str(meta.get("type") or "")
    if kind not in (*TYPES, "daily"):
        kind = "user" if path.parent.name == "user" else "reference"
    day = path.stem if in_daily else None
    source = meta.get("source")
    sources = meta.get("sources")
    legacy = legacy_evidence(meta.get("evidence"))
    if legacy is not None and not split_evidence(body)[0]:  # written before evidence moved into the body
        body = with_evidence(body, legacy)
    links = meta.get("links")
    return Entry(
        slug=daily_slug(date.fromisoformat(day)) if day else path.stem,
        scope="global" if in_daily else scope,
        type=kind,
        description=_text(meta.get("description")),
        body=body,
        created_at=_text(meta.get("createdAt")),
        updated_at=_text(meta.get("updatedAt")),
        date=day,
        archived=archived,
        source=dict(source) if isinstance(source, dict) else {},
        sources=tuple(s for s in sources if isinstance(s, dict)) if isinstance(sources, list) else (),
        append_count=_count(meta.get("appendCount")),
        links=tuple(links) if isinstance(links, list) else (),
    )


def render_entry(entry: Entry) -> str:
    """The file text: front matter, a blank line, the trimmed body."""
    meta: dict[str, Any] = {"name": entry.slug}
    if entry.description:
        meta["description"] = entry.description
    meta |= {"type": entry.type, "scope": entry.scope, "headline": entry.headline}
    if entry.is_daily:
        meta["date"] = entry.date
    meta |= {"createdAt": entry.created_at, "updatedAt": entry.updated_at}
    if entry.is_daily:
        meta |= {"appendCount": entry.append_count, "sources": [dict(s) for s in entry.sources]}
    else:
        meta["source"] = dict(entry.source)
    meta["links"] = list(entry.links)
    return front_matter.render(meta, entry.body.strip()) + "\n"


def render_index(rows: list[tuple[str, str, int, str]]) -> str:
    """MEMORY.md from (slug, type, unreviewed, description) rows, newest first."""
    lines = [f"- [{slug}] type={kind}{' (unreviewed)' if unreviewed else ''} — {description}\n"
             for slug, kind, unreviewed, description in rows]
    return "# Memory\n\n" + "".join(lines)
