"""The pure rules of the memory store (reference §5.2, §5.6): slugs, risk, merge, days (the
evidence contract and its block are `evidence.py`'s).

Nothing here touches the disk or the clock; every function is a plain value in, value out.
"""

from __future__ import annotations

import difflib
import re
from datetime import date, datetime, timedelta
from typing import Final

from ...core.errors import ToolError

SCOPES: Final = ("global", "project")
TYPES: Final = ("user", "feedback", "project", "reference")
FILTER_TYPES: Final = (*TYPES, "daily")

_SLUG = re.compile(r"^[a-z0-9][a-z0-9-]{1,62}[a-z0-9]$")
_DAILY_SLUG = re.compile(r"^daily-(\d{4}-\d{2}-\d{2})$")

# Secret-like patterns: a body that has one is refused outright (`memory.risk_hard_blocked`).
HARD_PATTERNS: Final = (
    ("private key", re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----")),
    ("AWS access key", re.compile(r"\bAKIA[0-9A-Z]{16}\b")),
    ("Anthropic API key", re.compile(r"sk-ant-api03-[A-Za-z0-9_-]{8,}")),
    ("GitHub token", re.compile(r"\bghp_[A-Za-z0-9]{20,}|\bgithub_pat_[A-Za-z0-9_]{20,}")),
    ("Slack bot token", re.compile(r"\bxoxb-[A-Za-z0-9-]{8,}")),
)
# Risky instructions: stored, but unreviewed with risk_flag=low.
SOFT_PATTERNS: Final = (
    re.compile(r"bypass auth", re.I),
    re.compile(r"disable validation", re.I),
    re.compile(r"override safety", re.I),
    re.compile(r"ignore previous instructions", re.I),
    re.compile(r"\bsudo\b", re.I),
    re.compile(r"\bexec\("),
    re.compile(r"\beval\("),
    re.compile(r"--no-verify"),
)


# slugs ---------------------------------------------------------------------------------------
def suggest_slug(raw: str) -> str:
    """A kebab-case slug made from any text (for error hints)."""
    text = re.sub(r"[^a-z0-9]+", "-", raw.lower()).strip("-")[:64].strip("-")
    return text if len(text) >= 3 else (text + "-note").strip("-")


def normalize_slug(raw: str) -> str:
    """Lowercased, `_` -> `-`, then checked: 3-64 chars, alphanumeric ends, kebab-case inside."""
    slug = raw.strip().lower().replace("_", "-")
    if not _SLUG.match(slug):
        hint = suggest_slug(raw)
        raise ToolError("memory.slug_invalid",
                        f"`slug` {raw!r} is not a memory slug: use 3-64 lowercase letters, digits and `-`, "
                        f"starting and ending with a letter or digit, e.g. `{hint}`.",
                        structured={"suggested_slug": hint})
    return slug


def daily_date_of(slug: str) -> date | None:
    """The date a `daily-YYYY-MM-DD` slug names, None for another slug; a bad date is refused."""
    match = _DAILY_SLUG.match(slug)
    if not match:
        return None
    try:
        return date.fromisoformat(match.group(1))
    except ValueError as exc:
        raise ToolError("memory.slug_invalid", f"`{slug}` names no calendar date; use daily-YYYY-MM-DD.") from exc


def daily_slug(day: date) -> str:
    return f"daily-{day.isoformat()}"


def local_day(now: datetime, rollover_hour: int = 4) -> date:
    """The journal day of a local time: a day starts at `rollover_hour` (04:00), not midnight."""
    return (now - timedelta(hours=rollover_hour)).date()


# risk ----------------------------------------------------------------------------------------
def check_risk(*texts: str) -> str:
    """`none` or `low` (a soft pattern); a secret-like pattern is refused (memory.risk_hard_blocked)."""
    joined = "\n".join(texts)
    for name, pattern in HARD_PATTERNS:
        if pattern.search(joined):
            raise ToolError("memory.risk_hard_blocked",
                            f"The memory looks like it contains a secret ({name}); secrets are never stored. "
                            "Remove it and describe the fact without the secret.", structured={"pattern": name})
    return "low" if any(p.search(joined) for p in SOFT_PATTERNS) else "none"


# merge ---------------------------------------------------------------------------------------
_FENCE = re.compile(r"^\s*(```|~~~)")
_LINE_UNIT = re.compile(r"^\s*(?:[-*+]\s|\d+[.)]\s|#{1,6}\s|>|\|)")
_SENTENCE_END = re.compile(r"(?<=[.!?。！？；;])\s*")
MERGE_MATCH_RATIO: Final = 0.6


def split_units(body: str) -> list[str]:
    """Merge units: fenced code blocks whole; list, heading, quote and table lines one each;
    other lines split into sentences on ASCII and CJK terminators."""
    units: list[str] = []
    fence: list[str] | None = None
    for line in body.replace("\r\n", "\n").split("\n"):
        if fence is not None:
            fence.append(line)
            if _FENCE.match(line):
                units.append("\n".join(fence))
                fence = None
            continue
        if _FENCE.match(line):
            fence = [line]
        elif not line.strip():
            continue
        elif _LINE_UNIT.match(line):
            units.append(line.rstrip())
        else:
            units += [s.strip() for s in _SENTENCE_END.split(line.strip()) if s.strip()]
    if fence is not None:  # an unclosed fence runs to the end
        units.append("\n".join(fence))
    return units


def _key(unit: str) -> str:
    return re.sub(r"\s+", " ", unit).strip().lower()


def merge_bodies(old: str, new: str) -> str:
    """Each incoming unit replaces its best-matching old unit (ratio >= 0.6), or is appended;
    the result is deduplicated and joined with blank lines. A blank side leaves the other as it is."""
    if not old.strip() or not new.strip():
        return (new if old.strip() == "" else old).strip()
    units = split_units(old)
    replaced: set[int] = set()
    for unit in split_units(new):
        best, best_ratio = -1, 0.0
        for i, existing in enumerate(units):
            if i in replaced:
                continue
            ratio = difflib.SequenceMatcher(None, _key(existing), _key(unit)).ratio()
            if ratio > best_ratio:
                best, best_ratio = i, ratio
        if best >= 0 and best_ratio >= MERGE_MATCH_RATIO:
            units[best] = unit
            replaced.add(best)
        else:
            units.append(unit)
            replaced.add(len(units) - 1)
    seen: set[str] = set()
    out = []
    for unit in units:
        if _key(unit) not in seen:
            seen.add(_key(unit))
            out.append(unit)
    return "\n\n".join(out)
