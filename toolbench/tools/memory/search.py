"""Memory search (reference §5.5): FTS5 phrase queries, weights, a substring fallback, shadowing.

1. Terms: the query, plus fixed expansions for "who am I / my name" and preference questions
   (English and Chinese), sorted and deduplicated.
2. Each term is a quoted phrase on the unicode61 table (32 hits at most), and on the trigram
   table too when it has CJK or the first gave fewer than 8 hits. Raw score: -bm25 when
   bm25 <= 0, else 1/(1+bm25); weighted by kind; dailies decay by exp(-age_days/30).
3. Fewer hits than `limit`: a substring pass over slug, description, headline and body
   (score len(term)/10 + 1, weighted the same) marks `usedFallback`.
4. Deduplicated by (scope, type, slug); a project entry shadows a global non-daily one of the
   same slug; ordered by score, raw score, then slug, descending; cut to `limit`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from datetime import date, datetime
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from .index import MemoryIndex

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
_WHO = re.compile(r"who am i|my name|what(?:'s| is) my name|我是谁|我叫什么|我的名字", re.I)
_PREF = re.compile(r"prefer|preference|habit|\blike\b|喜欢|偏好|习惯", re.I)
WHO_TERMS: Final = ("name", "user", "名字", "称呼")
PREF_TERMS: Final = ("prefer", "preference", "habit", "偏好", "习惯", "喜欢")
TRIGRAM_BELOW: Final = 8


def terms_of(query: str) -> list[str]:
    terms = {query}
    if _WHO.search(query):
        terms.update(WHO_TERMS)
    if _PREF.search(query):
        terms.update(PREF_TERMS)
    return sorted(terms)


def weight(scope: str, kind: str) -> float:
    if kind == "daily":
        return 0.35
    if scope == "project":
        return 1.4
    return {"user": 1.3, "feedback": 1.25}.get(kind, 1.0)


def raw_score(bm25: float) -> float:
    return -bm25 if bm25 <= 0 else 1 / (1 + bm25)


def age_days(now: datetime, today: date, updated_at: str, date_local: str | None) -> float:
    """Days since the entry's anchor: its journal date for dailies, its last update otherwise."""
    if date_local:
        return float((today - date.fromisoformat(date_local)).days)
    try:
        then = datetime.fromisoformat(updated_at)
    except ValueError:
        return 0.0
    if then.tzinfo is None:
        then = then.astimezone()
    return max(0.0, round((now - then).total_seconds() / 86400, 2))


def _snippet(text: str, term: str) -> str:
    at = text.lower().find(term.lower())
    if at < 0:
        return text[:240]
    start = max(0, at - 80)
    return ("..." if start else "") + text[start: at + len(term) + 160] + \
        ("..." if at + len(term) + 160 < len(text) else "")


def search_index(index: MemoryIndex, query: str, *, scope: str, types: Iterable[str], limit: int,
                 now: datetime, today: date) -> dict[str, Any]:
    kinds = tuple(types)
    best: dict[tuple[str, str, str], dict[str, Any]] = {}

    def consider(row: Any, raw: float, source: str | None, term: str) -> None:
        score = raw * weight(row["scope"], row["type"])
        if row["type"] == "daily":
            score *= math.exp(-age_days(now, today, row["updated_at"], row["date_local"]) / 30)
        key = (row["scope"], row["type"], row["slug"])
        if key not in best or (score, raw) > (best[key]["score"], best[key]["rawScore"]):
            best[key] = {"slug": row["slug"], "scope": row["scope"], "type": row["type"], "id": row["id"],
                         "score": round(score, 6), "rawScore": round(raw, 6), "source": source, "term": term,
                         "anchor": (row["updated_at"], row["date_local"])}

    terms = terms_of(query)
    trigram_done: set[str] = set()
    for term in terms:
        rows = index.fts("memory_fts", term, scope, kinds)
        for row in rows:
            consider(row, raw_score(row["bm25"]), "memory_fts", term)
        if _CJK.search(term) or len(rows) < TRIGRAM_BELOW:
            trigram_done.add(term)
            for row in index.fts("memory_fts_tri", term, scope, kinds):
                consider(row, raw_score(row["bm25"]), "memory_fts_tri", term)
    used_fallback = len(best) < limit
    if used_fallback:
        for term in terms:
            # A trigram pass of a 3+ character term found every substring hit already (fewer than
            # 32, or the total would not be short); only the others need the scan.
            if term in trigram_done and len(term) >= 3:
                continue
            # Shadowed global entries may drop out after, so take a margin beyond `limit`.
            for row in index.substring(term, scope, kinds, cap=2 * limit + 32):
                consider(row, len(term) / 10 + 1, None, term)
    # A project entry shadows a global non-daily entry of the same slug.
    project_slugs = {k[2] for k in best if k[0] == "project"}
    hits = [h for k, h in best.items() if not (k[0] == "global" and k[1] != "daily" and k[2] in project_slugs)]
    hits.sort(key=lambda h: (h["score"], h["rawScore"], h["slug"]), reverse=True)
    hits = hits[:limit]
    details = index.details([h["id"] for h in hits])
    snippets: dict[tuple[str, str], dict[int, str]] = {}
    for h in hits:  # snippets and ages for the final hits only
        if h["source"] and (h["source"], h["term"]) not in snippets:
            ids = [x["id"] for x in hits if (x["source"], x["term"]) == (h["source"], h["term"])]
            snippets[(h["source"], h["term"])] = index.snippets(h["source"], h["term"], ids)
    for h in hits:
        row_id, term, source = h.pop("id"), h.pop("term"), h.pop("source")
        h["ageDays"] = age_days(now, today, *h.pop("anchor"))
        d = details.get(row_id, {})
        h["description"] = d.get("description", "")
        h["unreviewed"] = bool(d.get("unreviewed"))
        h["snippet"] = snippets.get((source, term), {}).get(row_id) if source else None
        if h["snippet"] is None:
            body = d.get("body", "")
            h["snippet"] = _snippet(body, term) if term.lower() in body.lower() else \
                _snippet(d.get("description", ""), term)
    return {"query": query, "terms": terms, "usedFallback": used_fallback, "matches": hits}
