"""Helpers of the memory tests: the fixed clock and a note builder."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

NOW = datetime(2026, 3, 10, 12, 0, tzinfo=timezone(timedelta(hours=2)))


def note(slug="prefers-tabs", scope="global", type="user", **fields):
    return {"slug": slug, "scope": scope, "type": type, "description": fields.pop("description", f"about {slug}"),
            "body": fields.pop("body", f"The body of {slug}."), **fields}
