"""The SQLite index of the memory files: a cache, reconciled with the files whenever it opens.

Tables (reference §5.4): `memory_meta` (one row per file), `memory_fts` (FTS5, unicode61 with
diacritics removed), `memory_fts_tri` (FTS5 trigram: substrings, CJK), `memory_audit_log`, and
`memory_schema_version`. The FTS rows share the meta row's id as their rowid.

Opening compares each file's (mtime, size) with its row and re-reads only the files that
changed, so a store of 10,000 entries opens in a stat pass; a schema change, or a database
that cannot be read, is dropped and rebuilt from the files. A file that cannot be read as an
entry (`files.read_entry` refuses it) gets no row and lands in `problems` instead, which
`list` reports; the file itself is never touched.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Final

from ...core.errors import ToolError
from .files import Entry, Layout, read_entry

SCHEMA_VERSION: Final = 5  # upstream's 4, plus the covering index memory_meta_listing
FTS_LIMIT: Final = 32

_SCHEMA = """
CREATE TABLE memory_schema_version (version INTEGER NOT NULL);
CREATE TABLE memory_meta (
    id INTEGER PRIMARY KEY,
    scope TEXT NOT NULL CHECK (scope IN ('global', 'project')),
    workdir_hash TEXT NOT NULL,
    slug TEXT NOT NULL,
    type TEXT NOT NULL CHECK (type IN ('user', 'feedback', 'project', 'reference', 'daily')),
    description TEXT NOT NULL,
    headline TEXT NOT NULL,
    date_local TEXT,
    archived INTEGER NOT NULL DEFAULT 0,
    unreviewed INTEGER NOT NULL DEFAULT 0,
    risk_flag TEXT NOT NULL DEFAULT 'none',
    confidence TEXT,
    append_count INTEGER NOT NULL DEFAULT 0,
    body TEXT NOT NULL,
    haystack TEXT NOT NULL,
    body_hash TEXT NOT NULL,
    path TEXT NOT NULL UNIQUE,
    file_mtime INTEGER NOT NULL,
    file_size INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    source_json TEXT NOT NULL,
    links_json TEXT NOT NULL,
    UNIQUE (scope, workdir_hash, slug),
    CHECK (type != 'daily' OR (scope = 'global' AND date_local IS NOT NULL))
);
-- Covers MEMORY.md, the list and the quota count without reading the rows (bodies are large).
CREATE INDEX memory_meta_listing ON memory_meta (
    scope, workdir_hash, updated_at DESC, slug DESC, type, unreviewed, description);
CREATE INDEX memory_meta_type ON memory_meta (type);
CREATE INDEX memory_meta_daily ON memory_meta (date_local) WHERE type = 'daily';
CREATE VIRTUAL TABLE memory_fts USING fts5(
    slug UNINDEXED, scope UNINDEXED, workdir_hash UNINDEXED, type, description, headline, body,
    tokenize = 'unicode61 remove_diacritics 2');
CREATE VIRTUAL TABLE memory_fts_tri USING fts5(slug, description, headline, body, tokenize = 'trigram');
CREATE TABLE memory_audit_log (
    id INTEGER PRIMARY KEY, at TEXT NOT NULL, op TEXT NOT NULL, actor TEXT NOT NULL, scope TEXT, slug TEXT,
    conversation TEXT, trigger TEXT, model TEXT, detail_json TEXT NOT NULL DEFAULT '{}');
"""
_TABLES = ("memory_schema_version", "memory_meta", "memory_fts", "memory_fts_tri", "memory_audit_log")
# The kind weights of search (search.weight), for ordering fallback hits in SQL.
_WEIGHT_SQL: Final = ("CASE WHEN m.type = 'daily' THEN 0.35 WHEN m.scope = 'project' THEN 1.4 "
                      "WHEN m.type = 'user' THEN 1.3 WHEN m.type = 'feedback' THEN 1.25 ELSE 1.0 END")
META_COLUMNS: Final = ("id", "scope", "slug", "type", "description", "headline", "date_local", "archived",
                       "unreviewed", "risk_flag", "confidence", "updated_at", "created_at", "path")


class MemoryIndex:
    """One connection to the index of one workspace's memory (thread-safe through a lock)."""

    def __init__(self, layout: Layout, workdir_hash: str) -> None:
        self.layout = layout
        self.workdir_hash = workdir_hash
        self.lock = threading.RLock()
        self.problems: dict[str, dict[str, str]] = {}  # path -> {scope, path (shown), code, message}
        layout.checked(layout.index_path).parent.mkdir(parents=True, exist_ok=True)
        self.db = self._connect()
        self.reconcile()

    # opening ------------------------------------------------------------------------------
    def _connect(self) -> sqlite3.Connection:
        path = self.layout.index_path
        try:
            db = self._open(path)
            version = db.execute("SELECT version FROM memory_schema_version").fetchone()
            if version is None or version[0] != SCHEMA_VERSION:
                raise sqlite3.DatabaseError("schema version")
            return db
        except sqlite3.DatabaseError:
            with contextlib.suppress(NameError, sqlite3.Error):
                db.close()
            for suffix in ("", "-wal", "-shm"):  # a cache that cannot be read is rebuilt whole
                Path(f"{path}{suffix}").unlink(missing_ok=True)
            db = self._open(path)
            with db:
                db.executescript(_SCHEMA)
                db.execute("INSERT INTO memory_schema_version VALUES (?)", (SCHEMA_VERSION,))
            return db

    @staticmethod
    def _open(path: Path) -> sqlite3.Connection:
        db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        db.row_factory = sqlite3.Row
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        return db

    def reconcile(self) -> None:
        """Bring the rows in line with the files: re-read changed files, drop rows of gone ones."""
        with self.lock:
            known = {r["path"]: (r["id"], r["file_mtime"], r["file_size"])
                     for r in self.db.execute("SELECT id, path, file_mtime, file_size FROM memory_meta")}
            seen: set[str] = set()
            problems: dict[str, dict[str, str]] = {}
            self.db.execute("BEGIN")
            try:
                for scope, path, archived in self.layout.scan():
                    key = str(path)
                    try:
                        st = os.lstat(path)  # a link is refused by read_entry, so it never has a row
                    except OSError:
                        continue  # gone since the scan
                    row = known.get(key)
                    if row is None or row[1:] != (st.st_mtime_ns, st.st_size):
                        try:
                            entry = read_entry(self.layout, scope, path, archived=archived)
                        except FileNotFoundError:
                            continue
                        except ToolError as exc:  # left out (its old row too) and reported, never rewritten
                            problems[key] = {"scope": scope, "path": self.layout.display(path), "code": exc.code,
                                             "message": exc.message}
                            continue
                        self._upsert(entry, path)
                    seen.add(key)
                for key, (row_id, _, _) in known.items():
                    if key not in seen:
                        self._delete_id(row_id)
                self.db.execute("COMMIT")
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
            self.problems = problems

    def close(self) -> None:
        with self.lock:
            self.db.close()

    # writing ------------------------------------------------------------------------------
    def put(self, entry: Entry, path: Path) -> None:
        with self.lock:
            self.db.execute("BEGIN")
            try:
                self._upsert(entry, path)
                self.db.execute("COMMIT")
            except BaseException:
                self.db.execute("ROLLBACK")
                raise

    def remove(self, path: Path) -> None:
        with self.lock:
            row = self.db.execute("SELECT id FROM memory_meta WHERE path = ?", (str(path),)).fetchone()
            if row is not None:
                self.db.execute("BEGIN")
                try:
                    self._delete_id(row["id"])
                    self.db.execute("COMMIT")
                except BaseException:
                    self.db.execute("ROLLBACK")
                    raise

    def _upsert(self, entry: Entry, path: Path) -> None:
        hash_ = self.workdir_hash if entry.scope == "project" else ""
        st = path.stat()
        same_path = self.db.execute("SELECT id FROM memory_meta WHERE path = ?", (str(path),)).fetchone()
        same_slug = self.db.execute("SELECT id, path FROM memory_meta WHERE scope = ? AND workdir_hash = ? AND "
                                    "slug = ?", (entry.scope, hash_, entry.slug)).fetchone()
        if same_slug is not None and same_slug["path"] != str(path) and Path(same_slug["path"]).exists():
            return  # two files claim one slug (hand-made): the first one indexed wins
        for row in {r["id"] for r in (same_path, same_slug) if r is not None}:
            self._delete_id(row)
        text = entry.text  # search reads the text, not the evidence block (every note would match `confidence`)
        haystack = "\n".join((entry.slug, entry.description, entry.headline, text)).lower()
        cur = self.db.execute(
            "INSERT INTO memory_meta (scope, workdir_hash, slug, type, description, headline, date_local, "
            "archived, unreviewed, risk_flag, confidence, append_count, body, haystack, body_hash, path, "
            "file_mtime, file_size, created_at, updated_at, source_json, links_json) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (entry.scope, hash_, entry.slug, entry.type, entry.description, entry.headline, entry.date,
             int(entry.archived), int(entry.unreviewed), entry.risk_flag, entry.confidence, entry.append_count,
             text, haystack, hashlib.sha256(entry.body.encode()).hexdigest(), str(path), st.st_mtime_ns,
             st.st_size, entry.created_at, entry.updated_at,
             json.dumps(entry.source if not entry.is_daily else list(entry.sources), default=str),
             json.dumps(list(entry.links), default=str)))
        row_id = cur.lastrowid
        self.db.execute("INSERT INTO memory_fts (rowid, slug, scope, workdir_hash, type, description, headline, "
                        "body) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                        (row_id, entry.slug, entry.scope, hash_, entry.type, entry.description, entry.headline,
                         text))
        self.db.execute("INSERT INTO memory_fts_tri (rowid, slug, description, headline, body) VALUES (?, ?, ?, ?, ?)",
                        (row_id, entry.slug, entry.description, entry.headline, text))

    def _delete_id(self, row_id: int) -> None:
        self.db.execute("DELETE FROM memory_fts WHERE rowid = ?", (row_id,))
        self.db.execute("DELETE FROM memory_fts_tri WHERE rowid = ?", (row_id,))
        self.db.execute("DELETE FROM memory_meta WHERE id = ?", (row_id,))

    def audit(self, at: str, op: str, actor: str, entry: Entry, conversation: str | None,
              detail: dict[str, Any] | None = None) -> None:
        with self.lock:
            self.db.execute("INSERT INTO memory_audit_log (at, op, actor, scope, slug, conversation, trigger, model, "
                            "detail_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                            (at, op, actor, entry.scope, entry.slug, conversation, "tool", None,
                             json.dumps(detail or {}, default=str)))

    # reading ------------------------------------------------------------------------------
    def _scope_clause(self, scope: str) -> tuple[str, list[Any]]:
        # Global rows carry an empty workdir_hash (put); saying so lets memory_meta_listing order them.
        if scope == "global":
            return "(m.scope = 'global' AND m.workdir_hash = '')", []
        if scope == "project":
            return "(m.scope = 'project' AND m.workdir_hash = ?)", [self.workdir_hash]
        return ("((m.scope = 'global' AND m.workdir_hash = '') OR (m.scope = 'project' AND m.workdir_hash = ?))",
                [self.workdir_hash])

    def _filters(self, scope: str, types: Iterable[str]) -> tuple[str, list[Any]]:
        clause, params = self._scope_clause(scope)
        kinds = list(types)
        clause += f" AND m.type IN ({', '.join('?' * len(kinds))})"
        return clause, params + kinds

    def rows(self, scope: str, types: Iterable[str], limit: int) -> list[sqlite3.Row]:
        """Entries newest first (list)."""
        clause, params = self._filters(scope, types)
        cols = ", ".join(f"m.{c}" for c in META_COLUMNS)
        with self.lock:
            return self.db.execute(f"SELECT {cols} FROM memory_meta m WHERE {clause} "
                                   "ORDER BY m.updated_at DESC, m.slug DESC LIMIT ?", [*params, limit]).fetchall()

    def headlines(self, scope: str, types: Iterable[str]) -> list[tuple[str, str, int, str]]:
        """(slug, type, unreviewed, description) of the entries, newest first (MEMORY.md): plain
        tuples, since every write reads them all and a `sqlite3.Row` costs more per row."""
        clause, params = self._filters(scope, types)
        with self.lock:
            cursor = self.db.cursor()
            cursor.row_factory = None
            return cursor.execute(f"SELECT m.slug, m.type, m.unreviewed, m.description FROM memory_meta m "
                                  f"WHERE {clause} ORDER BY m.updated_at DESC, m.slug DESC", params).fetchall()

    def find(self, slug: str) -> list[sqlite3.Row]:
        """Rows of this slug in global and the current project."""
        clause, params = self._scope_clause("auto")
        cols = ", ".join(f"m.{c}" for c in META_COLUMNS)
        with self.lock:
            return self.db.execute(f"SELECT {cols} FROM memory_meta m WHERE m.slug = ? AND {clause}",
                                   [slug, *params]).fetchall()

    def slugs(self) -> list[str]:
        clause, params = self._scope_clause("auto")
        with self.lock:
            return [r[0] for r in self.db.execute(f"SELECT DISTINCT m.slug FROM memory_meta m WHERE {clause}", params)]

    def count(self, scope: str) -> int:
        """Non-daily entries in a scope (the quota's `used`)."""
        clause, params = self._scope_clause(scope)
        with self.lock:
            return int(self.db.execute(f"SELECT count(*) FROM memory_meta m WHERE {clause} AND m.type != 'daily'",
                                       params).fetchone()[0])

    def review_stats(self, scope: str) -> tuple[int, list[str]]:
        """(archived entries, `created_at` of each unreviewed non-daily entry) of a scope, for the
        quota summary; stamps are returned whole because their UTC offsets may differ."""
        clause, params = self._scope_clause(scope)
        with self.lock:
            archived = self.db.execute(f"SELECT count(*) FROM memory_meta m WHERE {clause} AND m.archived = 1",
                                       params).fetchone()[0]
            stamps = [r[0] for r in self.db.execute(
                f"SELECT m.created_at FROM memory_meta m WHERE {clause} AND m.type != 'daily' "
                "AND m.unreviewed = 1", params)]
        return int(archived), stamps

    def fts(self, table: str, term: str, scope: str, types: Iterable[str]) -> list[sqlite3.Row]:
        """Up to 32 phrase matches of `term` in one FTS table, best bm25 first."""
        clause, params = self._filters(scope, types)
        phrase = '"' + term.replace('"', '""') + '"'
        sql = (f"SELECT m.id, m.scope, m.slug, m.type, m.date_local, m.updated_at, bm25({table}) AS bm25 "
               f"FROM {table} JOIN memory_meta m ON m.id = {table}.rowid WHERE {table} MATCH ? AND {clause} "
               "ORDER BY rank LIMIT ?")
        with self.lock:
            try:
                return self.db.execute(sql, [phrase, *params, FTS_LIMIT]).fetchall()
            except sqlite3.OperationalError:
                return []  # a phrase FTS cannot take (nothing but separators): no hits

    def snippets(self, table: str, term: str, ids: list[int]) -> dict[int, str]:
        """FTS snippets (`[hit]`, `...`, about 12 tokens) of some rows, computed for the final hits only."""
        phrase = '"' + term.replace('"', '""') + '"'
        sql = (f"SELECT rowid, snippet({table}, -1, '[', ']', '...', 12) FROM {table} WHERE {table} MATCH ? "
               f"AND rowid IN ({', '.join('?' * len(ids))})")
        with self.lock:
            try:
                return {r[0]: r[1] for r in self.db.execute(sql, [phrase, *ids])}
            except sqlite3.OperationalError:
                return {}

    def substring(self, term: str, scope: str, types: Iterable[str], cap: int) -> list[sqlite3.Row]:
        """Entries whose slug, description, headline or body holds `term` (any case), the `cap`
        best by kind weight (every fallback hit of one term has the same raw score)."""
        clause, params = self._filters(scope, types)
        needle = term.lower()
        cols = "m.id, m.scope, m.slug, m.type, m.date_local, m.updated_at"
        order = (f"ORDER BY {_WEIGHT_SQL} DESC, m.date_local DESC, m.slug DESC LIMIT ?")
        with self.lock:
            if len(needle) >= 3:  # the trigram index finds substrings without a scan
                sql = (f"SELECT {cols} FROM memory_fts_tri JOIN memory_meta m ON m.id = memory_fts_tri.rowid "
                       f"WHERE memory_fts_tri MATCH ? AND instr(m.haystack, ?) > 0 AND {clause} {order}")
                try:
                    return self.db.execute(sql, ['"' + needle.replace('"', '""') + '"', needle, *params,
                                                 cap]).fetchall()
                except sqlite3.OperationalError:
                    return []
            return self.db.execute(f"SELECT {cols} FROM memory_meta m WHERE instr(m.haystack, ?) > 0 AND "
                                   f"{clause} {order}", [needle, *params, cap]).fetchall()

    def details(self, ids: list[int]) -> dict[int, dict[str, Any]]:
        """description, body and unreviewed of some rows, by id."""
        if not ids:
            return {}
        with self.lock:
            rows = self.db.execute(f"SELECT id, description, body, unreviewed FROM memory_meta WHERE id IN "
                                   f"({', '.join('?' * len(ids))})", ids).fetchall()
        return {r["id"]: dict(r) for r in rows}
