"""The memory store: the Markdown files, their index, and the seven actions over them.

Every mutation writes its file first (atomically: temp file, fsync, rename), then updates the
index in one transaction, then audits and refreshes the scope's MEMORY.md. A failure while the
file is written leaves the old file whole and the index untouched; a failure after it leaves an
index the next open reconciles with the files.
"""

from __future__ import annotations

import contextlib
import difflib
import os
from collections.abc import Callable, Iterable
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any, Final

from ...core.errors import ToolbenchError, ToolError
from ...core.fileio import write_atomic
from ...core.memory_settings import MemorySettings
from .evidence import apply_evidence, merge_with_evidence, with_evidence
from .files import INDEX_FILE, Entry, Layout, read_entry, render_entry, render_index, workdir_hash
from .index import MemoryIndex
from .rules import FILTER_TYPES, SCOPES, TYPES, check_risk, daily_date_of, local_day, normalize_slug
from .search import search_index

Clock = Callable[[], datetime]
# Who makes a change (upstream's actors): the chat tool's writes are reviewed, the extractor's
# are not until accepted, and a user-directed change reviews what it touches.
ACTORS: Final = ("tool", "extractor", "user")
LIST_DEFAULT_LIMIT: Final = 200
READ_MAX_LINES: Final = 500


def local_now() -> datetime:
    return datetime.now().astimezone()


def _stamp(now: datetime) -> str:
    return now.isoformat(timespec="seconds")


class MemoryStore:
    """One workspace's memory: global and project scope, Markdown files plus their index."""

    def __init__(self, workspace: Path, settings: MemorySettings, *, clock: Clock = local_now,
                 conversation: str | None = None) -> None:
        self.settings = settings
        self.clock = clock
        self.conversation = conversation
        self.layout = Layout.of(Path(workspace), settings)
        self._archive_old_dailies()
        self.index = MemoryIndex(self.layout, workdir_hash(Path(workspace)))

    def close(self) -> None:
        self.index.close()

    def today(self) -> date:
        return local_day(self.clock(), self.settings.day_rollover_hour)

    # reading ------------------------------------------------------------------------------
    def list(self, *, scope: str = "auto", filter_type: str | None = None, include_daily: bool = False,
             limit: int = LIST_DEFAULT_LIMIT) -> dict[str, Any]:
        rows = self.index.rows(scope, _types(filter_type, include_daily), limit)
        quotas = {s: {"used": self.index.count(s), "limit": self.settings.quota_per_scope} for s in SCOPES}
        # Each scope has its own quota, so the headline is the fullest applicable one, not a sum (upstream).
        used = max(q["used"] for s, q in quotas.items() if scope in ("auto", s))
        # Files left out of the index (refused by read_entry) are named, so one bad file is seen, not silent.
        problems = [{k: v for k, v in p.items() if k != "scope"} for p in self.index.problems.values()
                    if scope in ("auto", p["scope"])]
        return {"count": len(rows), "quota": {"used": used, "limit": self.settings.quota_per_scope}, "quotas": quotas,
                "entries": [_row_summary(r) for r in rows], "problems": problems}

    def read(self, slug: str, *, scope: str = "auto", offset: int = 1, length: int = READ_MAX_LINES) -> dict[str, Any]:
        entry, _ = self._resolve(normalize_slug(slug), scope, prefer_project=True)
        lines = entry.body.split("\n") if entry.body else []
        if lines and offset > len(lines):
            raise ToolError("memory.line_out_of_range",
                            f"`offset` {offset} is past the end: `{entry.slug}` has {len(lines)} lines.",
                            structured={"lines": len(lines)})
        window = lines[offset - 1: offset - 1 + length]
        return {**_summary(entry), "body": "\n".join(window), "offset": offset,
                "lines": {"from": offset if window else 0, "to": offset - 1 + len(window), "total": len(lines)}}

    def quota_summary(self) -> dict[str, Any]:
        """Per scope (global, then this workspace's project): `used` (non-daily entries; dailies are
        outside the quota), `limit`, `headroom`, `archivedCount`, `unreviewedCount` and
        `oldestUnreviewedAgeDays` (None when nothing waits for review). Upstream's
        quota_summary, which its organizer reads; here `list` reports it too."""
        now = self.clock()
        scopes = []
        for scope in SCOPES:
            used = self.index.count(scope)
            archived, stamps = self.index.review_stats(scope)
            ages = [max(0.0, (now - datetime.fromisoformat(s)).total_seconds() / 86400) for s in stamps]
            scopes.append({"scope": scope, "workdirHash": self.index.workdir_hash if scope == "project" else "",
                           "used": used, "limit": self.settings.quota_per_scope,
                           "headroom": max(0, self.settings.quota_per_scope - used), "archivedCount": archived,
                           "unreviewedCount": len(stamps),
                           "oldestUnreviewedAgeDays": round(max(ages), 3) if ages else None})
        return {"scopes": scopes}

    def search(self, query: str, *, scope: str = "auto", filter_type: str | None = None,
               include_daily: bool = True, limit: int = 8) -> dict[str, Any]:
        if not query.strip():
            raise ToolError("tool.invalid_arguments", "`query` is empty; say what to look for.")
        return search_index(self.index, query.strip(), scope=scope, types=_types(filter_type, include_daily),
                            limit=max(1, min(limit, 32)), now=self.clock(), today=self.today())

    # writing ------------------------------------------------------------------------------
    def write(self, args: dict[str, Any], *, actor: str = "tool") -> dict[str, Any]:
        """Create a memory; `actor="extractor"` (a silent-extraction write) stores it unreviewed."""
        _check_actor(actor)
        slug = normalize_slug(_required(args, "slug"))
        scope = _stored_scope(args.get("scope"), "write")
        kind = args.get("type")
        if kind not in TYPES:
            raise ToolError("memory.type_invalid",
                            "`type` must be user, feedback, project or reference for a write; daily entries are "
                            "append-managed (update a `daily-YYYY-MM-DD` slug with mode `append`).")
        if daily_date_of(slug) is not None:
            raise ToolError("memory.slug_invalid", f"`{slug}` is reserved for daily journals; choose another slug.")
        description = self._description(_required(args, "description"))
        evidence = apply_evidence(args)
        body = _required(args, "body").strip()
        body = with_evidence(body, evidence) if evidence else body
        self._check_size(body, daily=False)
        risk = check_risk(body, description)
        if any(r["scope"] == scope for r in self.index.find(slug)):
            raise ToolError("memory.slug_exists", f"`{slug}` exists already in {scope} scope; update it instead.",
                            structured={"suggested_next_call": {"action": "update", "slug": slug, "scope": scope}})
        used = self.index.count(scope)
        if used >= self.settings.quota_per_scope:
            raise ToolError("memory.quota_exceeded",
                            f"The {scope} scope holds {used}/{self.settings.quota_per_scope} memories; delete or "
                            "update an old one first.",
                            structured={"used": used, "limit": self.settings.quota_per_scope})
        stamp = _stamp(self.clock())
        entry = Entry(slug=slug, scope=scope, type=kind, description=description, body=body, created_at=stamp,
                      updated_at=stamp,
                      source=self._source(actor, risk, unreviewed=risk == "low" or actor == "extractor"))
        if os.path.lexists(self.layout.path_for(entry)):  # a file the index left out: never written over
            raise ToolError("memory.slug_exists", f"`{slug}` names a file in {scope} scope that cannot be read as a "
                            "memory (see `list`); choose another slug.", structured={"slug": slug})
        path = self._save(entry)
        self._after(entry, "write", actor, path)
        return self._mutation("created", entry, evidence=evidence, risk=risk)

    def update(self, args: dict[str, Any], *, actor: str = "tool") -> dict[str, Any]:
        """Change a memory (or append to a daily journal). The review flag follows the actor:
        the extractor sets it (unless it only touched evidence), a user clears it, the chat
        tool leaves it; the extractor's mode defaults to merge, the tool's to replace."""
        _check_actor(actor)
        slug = normalize_slug(_required(args, "slug"))
        day = daily_date_of(slug)
        if day is not None:
            return self._append_daily(slug, day, args, actor)
        mode = args.get("mode") or ("merge" if actor == "extractor" else "replace")
        if mode == "append":
            raise ToolError("memory.mode_invalid", "Mode `append` is only for daily journals (`daily-YYYY-MM-DD`); "
                            "use `replace` or `merge`.")
        entry, old_path = self._resolve(slug, args.get("scope") or "auto", prefer_project=False)
        evidence = apply_evidence(args)
        changes = [k for k in ("body", "description", "type") if args.get(k) is not None]
        if not changes and evidence is None:
            raise ToolError("tool.invalid_arguments", "Nothing to update: give `body`, `description`, `type` or "
                            "evidence fields.")
        incoming = args.get("body")
        if evidence is not None:
            incoming = with_evidence(incoming or "", evidence)
        if incoming is None:
            body = entry.body
        elif mode == "merge" or args.get("body") is None:  # evidence alone keeps the text, whatever the mode
            body = merge_with_evidence(entry.body, incoming)
        else:
            body = incoming.strip()
        if not body:
            raise ToolError("tool.invalid_arguments", "`body` is empty; delete the memory instead.")
        description = self._description(args["description"]) if args.get("description") is not None \
            else entry.description
        kind = args.get("type") or entry.type
        if kind not in TYPES:
            raise ToolError("memory.type_invalid", "`type` must be user, feedback, project or reference.")
        self._check_size(body, daily=False)
        risk = check_risk(body, description)
        source = dict(entry.source) | {"risk_flag": risk if risk == "low" else entry.risk_flag}
        if actor == "extractor" and args.get("body") is not None:
            source["unreviewed"] = True
        elif actor == "user":
            source["unreviewed"] = False
        if actor != "tool":
            source["trigger"] = actor
        if risk == "low":
            source["unreviewed"] = True
        new = entry.with_(body=body, description=description, type=kind, source=source,
                          updated_at=_stamp(self.clock()))
        path = self._save(new)
        if path != old_path:  # a type change moved the file (global user/ <-> global)
            with contextlib.suppress(FileNotFoundError):
                old_path.unlink()
        self._after(new, "update", actor, path, {"mode": mode, "fields": changes})
        return self._mutation("updated", new, evidence=evidence, risk=risk, mode=mode)

    def delete(self, args: dict[str, Any]) -> dict[str, Any]:
        slug = normalize_slug(_required(args, "slug"))
        scope = _stored_scope(args.get("scope"), "delete")
        entry, path = self._resolve(slug, scope, prefer_project=False)
        if entry.archived:
            raise ToolError("memory.read_only", f"`{slug}` is an archived daily journal; it is read-only.")
        trash = self.layout.trash_path(entry, int(self.clock().timestamp() * 1000))
        trash.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.replace(path, trash)
        except OSError as exc:
            raise ToolError("storage.write_failed", f"cannot move {path.name} to the trash: {exc.strerror}") from exc
        self.index.remove(path)
        self.index.audit(_stamp(self.clock()), "delete", "user", entry, self.conversation)
        self._refresh_memory_md(entry.scope)
        return {"status": "deleted", **_summary(entry), "indexUpdated": True, "trash": trash.name}

    def accept(self, args: dict[str, Any]) -> dict[str, Any]:
        slug = normalize_slug(_required(args, "slug"))
        scope = _stored_scope(args.get("scope"), "accept")
        entry, _ = self._resolve(slug, scope, prefer_project=False)
        if entry.is_daily:
            raise ToolError("memory.action_not_allowed", "Daily journals have no review state to accept.")
        new = entry.with_(source=dict(entry.source) | {"unreviewed": False, "trigger": "user"},
                          updated_at=_stamp(self.clock()))
        path = self._save(new)
        self._after(new, "accept", "user", path)
        return {"status": "accepted", **_summary(new), "indexUpdated": True}

    # daily journals -----------------------------------------------------------------------
    def _append_daily(self, slug: str, day: date, args: dict[str, Any], actor: str) -> dict[str, Any]:
        if (args.get("mode") or "replace") != "append":
            raise ToolError("memory.mode_invalid", f"`{slug}` is a daily journal: update it with mode `append`.",
                            structured={"suggested_next_call": {"action": "update", "slug": slug, "mode": "append"}})
        if args.get("scope") not in (None, "auto", "global"):
            raise ToolError("memory.scope_invalid", "Daily journals are always global.")
        text = _required(args, "body").strip()
        if not text:
            raise ToolError("tool.invalid_arguments", "`body` is empty; give the line to append.")
        if self._is_archived(day):
            raise ToolError("memory.read_only", f"`{slug}` is past retention and archived; it is read-only.")
        stamp = _stamp(self.clock())
        path = self.layout.global_dir / "daily" / f"{day.isoformat()}.md"
        try:
            old = read_entry(self.layout, "global", path)
        except FileNotFoundError:
            old = Entry(slug=slug, scope="global", type="daily", description="", body="", created_at=stamp,
                        updated_at=stamp, date=day.isoformat())
        body = f"{old.body.strip()}\n\n{text}".strip()
        self._check_size(body, daily=True)
        risk = check_risk(text)
        warnings = []
        if len(body) >= self.settings.daily_warn_chars:
            warnings.append(f"The journal holds {len(body)} of {self.settings.max_daily_body_chars} characters.")
        if risk == "low":
            warnings.append("The line matches a risky-instruction pattern (risk_flag=low).")
        if apply_evidence(args) is not None:
            warnings.append("Evidence fields were ignored: daily journals carry no evidence.")
        source = {"conversationId": self.conversation, "appendedAt": stamp, "trigger": actor, "model": None}
        new = old.with_(body=body, updated_at=stamp, append_count=old.append_count + 1,
                        sources=(*old.sources, source))
        self._save(new)
        self._after(new, "update", actor, self.layout.path_for(new), {"mode": "append"}, refresh=False)
        return {"status": "created" if old.append_count == 0 and not old.body else "updated", **_summary(new),
                "appendCount": new.append_count, "mode": "append", "indexUpdated": True, "warnings": warnings}

    def _is_archived(self, day: date) -> bool:
        return day < self.today() - timedelta(days=self.settings.daily_retention_days) or \
            (self.layout.global_dir / "daily" / ".archive" / f"{day.year:04d}" / f"{day.isoformat()}.md").exists()

    def _archive_old_dailies(self) -> None:
        folder = self.layout.within(self.layout.global_dir / "daily")
        if not folder.is_dir():
            return
        cutoff = self.today() - timedelta(days=self.settings.daily_retention_days)
        for path in folder.glob("*.md"):
            try:
                day = date.fromisoformat(path.stem)
            except ValueError:
                continue
            if day < cutoff:
                target = folder / ".archive" / f"{day.year:04d}" / path.name
                target.parent.mkdir(parents=True, exist_ok=True)
                os.replace(path, target)

    # helpers ------------------------------------------------------------------------------
    def _resolve(self, slug: str, scope: str, *, prefer_project: bool) -> tuple[Entry, Path]:
        rows = [r for r in self.index.find(slug) if scope in ("auto", r["scope"])]
        if not rows:
            candidates = difflib.get_close_matches(slug, self.index.slugs(), n=5, cutoff=0.5)
            hint = f" Did you mean: {', '.join(candidates)}?" if candidates else ""
            day = daily_date_of(slug)
            # A missing journal day is looked for in the chat instead (upstream suggests a history search).
            suggested = {"action": "search", "query": day.isoformat(), "include_history": True} if day else \
                {"action": "search", "query": slug.replace("-", " ")}
            raise ToolError("memory.slug_not_found", f"No memory `{slug}` in {scope} scope.{hint} Search first.",
                            structured={"suggested_next_call": suggested, "candidates": candidates})
        if len(rows) > 1:
            if not prefer_project:
                raise ToolError("memory.scope_ambiguous",
                                f"`{slug}` exists in both global and project scope; give `scope`.",
                                structured={"candidates": [r["scope"] for r in rows]})
            rows = [r for r in rows if r["scope"] == "project"]  # a project entry shadows a global one
        path = Path(rows[0]["path"])
        try:
            return read_entry(self.layout, rows[0]["scope"], path, archived=bool(rows[0]["archived"])), path
        except FileNotFoundError:
            self.index.reconcile()  # the file went away behind the index's back
            raise ToolError("memory.slug_not_found", f"No memory `{slug}` in {scope} scope.") from None

    def _description(self, text: str) -> str:
        text = " ".join(str(text).split())
        if not text:
            raise ToolError("tool.invalid_arguments", "`description` is empty; give one line (at most 120 chars).")
        return text[: self.settings.max_description_chars]

    def _check_size(self, body: str, *, daily: bool) -> None:
        limit = self.settings.max_daily_body_chars if daily else self.settings.max_body_chars
        if len(body) > limit:
            kind = "A daily journal" if daily else "A memory body"
            raise ToolError("memory.body_too_large", f"{kind} holds at most {limit} characters; this one would "
                            f"hold {len(body)}. Shorten it or split it.",
                            structured={"chars": len(body), "limit": limit})

    def _source(self, trigger: str, risk: str, *, unreviewed: bool) -> dict[str, Any]:
        return {"trigger": trigger, "conversationId": self.conversation, "model": None, "risk_flag": risk,
                "unreviewed": unreviewed}

    def _save(self, entry: Entry) -> Path:
        path = self.layout.path_for(entry)
        try:
            write_atomic(path, render_entry(entry))
        except ToolbenchError as exc:  # the old file is whole: say so to the model, index untouched
            raise ToolError("storage.write_failed", f"The memory file could not be written ({exc.message}); "
                            "nothing changed.") from exc
        return path

    def _after(self, entry: Entry, op: str, actor: str, path: Path, detail: dict[str, Any] | None = None,
               *, refresh: bool = True) -> None:
        self.index.put(entry, path)
        self.index.audit(entry.updated_at, op, actor, entry, self.conversation, detail)
        if refresh:
            self._refresh_memory_md(entry.scope)

    def _refresh_memory_md(self, scope: str) -> None:
        rows = self.index.headlines(scope, TYPES)
        write_atomic(self.layout.checked(self.layout.scope_dir(scope) / INDEX_FILE), render_index(rows), durable=False)

    def _mutation(self, status: str, entry: Entry, *, evidence: Any, risk: str,
                  mode: str | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {"status": status, **_summary(entry), "indexUpdated": True, "riskFlag": risk}
        if mode:
            out["mode"] = mode
        if evidence is not None:
            out |= {"appliedConfidence": evidence.confidence, "autoDowngraded": evidence.auto_downgraded}
        out["warnings"] = ["Stored as unreviewed: the text matches a risky-instruction pattern."] if risk == "low" \
            else []
        return out


def _required(args: dict[str, Any], key: str) -> str:
    value = args.get(key)
    if not isinstance(value, str) or not value.strip():
        raise ToolError("tool.invalid_arguments", f"`{key}` is required for `{args.get('action', 'this')}`.")
    return value


def _check_actor(actor: str) -> None:
    if actor not in ACTORS:  # a developer's mistake, not the model's
        raise ToolbenchError("memory.actor_invalid", f"actor must be one of {', '.join(ACTORS)}, not {actor!r}")


def _stored_scope(scope: Any, action: str) -> str:
    if scope not in SCOPES:
        raise ToolError("memory.scope_required", f"`{action}` needs `scope` global or project, not {scope!r}.")
    return str(scope)


def _types(filter_type: str | None, include_daily: bool) -> Iterable[str]:
    if filter_type:
        return (filter_type,)
    return FILTER_TYPES if include_daily else TYPES


def _summary(entry: Entry) -> dict[str, Any]:
    return {"slug": entry.slug, "scope": entry.scope, "type": entry.type, "description": entry.description,
            "date": entry.date, "unreviewed": entry.unreviewed, "confidence": entry.confidence,
            "archived": entry.archived, "updatedAt": entry.updated_at}


def _row_summary(row: Any) -> dict[str, Any]:
    return {"slug": row["slug"], "scope": row["scope"], "type": row["type"], "description": row["description"],
            "date": row["date_local"], "unreviewed": bool(row["unreviewed"]), "confidence": row["confidence"],
            "archived": bool(row["archived"]), "updatedAt": row["updated_at"]}

