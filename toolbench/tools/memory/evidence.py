"""The memory evidence contract and its block, the one place that writes or reads it (reference
§5.2; LiveAgent services/memory/mutations/evidence.rs and content.rs).

Evidence lives in the body, as a canonical front-matter block at its head:

    ---
    confidence: medium
    auto_downgraded: true          (only when the contract lowered the level)
    source_quote: "..."            (at most 80 characters)
    reasoning: "..."               (240)
    aliases: ["...", ...]          (8 items of 240)
    conflicts_with: [...]
    supersedes: "..."              (toolbench's slug list, joined with ", ")
    override_reject: "..."
    ---

    the text

New evidence replaces the block a body brings; a merge keeps the existing block whole unless
the incoming body has one; the confidence is read back from the block (its first 20 lines).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final

from ...core.errors import ToolError
from .rules import merge_bodies, normalize_slug

CONFIDENCE_LEVELS: Final = ("high", "medium", "low")
MAX_ALIASES: Final = 8
EVIDENCE_FIELDS: Final = ("confidence", "source_quote", "reasoning", "aliases", "supersedes", "conflicts_with",
                          "override_reject")
_FENCE: Final = "---"
_QUOTE_CHARS: Final = 80
_FIELD_CHARS: Final = 240
_CONFIDENCE_LINES: Final = 20  # upstream reads the confidence from the block's first 20 lines


@dataclass(frozen=True, slots=True)
class Evidence:
    """The evidence of a write or update after the confidence contract was applied."""

    confidence: str
    auto_downgraded: bool
    fields: dict[str, Any]

    def block(self) -> str:
        """The canonical block's lines, without the `---` fences (module doc)."""
        f = self.fields
        lines = [f"confidence: {self.confidence}"]
        if self.auto_downgraded:
            lines.append("auto_downgraded: true")
        lines += [
            f"source_quote: {_string(f.get('source_quote'), _QUOTE_CHARS)}",
            f"reasoning: {_string(f.get('reasoning'), _FIELD_CHARS)}",
            f"aliases: {_array(f.get('aliases'))}",
            f"conflicts_with: {_array(f.get('conflicts_with'))}",
            f"supersedes: {_string(', '.join(f.get('supersedes') or []), _FIELD_CHARS)}",
            f"override_reject: {_string(f.get('override_reject'), _FIELD_CHARS)}",
        ]
        return "\n".join(lines)


def parse_aliases(value: Any) -> list[str]:
    items = value.split(",") if isinstance(value, str) else list(value or [])
    out = [s.strip() for s in items if isinstance(s, str) and s.strip()]
    if len(out) > MAX_ALIASES:
        raise ToolError("tool.invalid_arguments", f"`aliases` has {len(out)} items; give at most {MAX_ALIASES}.")
    return list(dict.fromkeys(out))


def apply_evidence(args: dict[str, Any]) -> Evidence | None:
    """None when no evidence field was given; else the confidence contract of reference §5.2.

    An absent or unknown level is low; high needs a source_quote of >= 5 characters or drops to
    medium; medium needs a non-empty quote or drops to low."""
    if not any(args.get(k) not in (None, "", []) for k in EVIDENCE_FIELDS):
        return None
    raw = str(args.get("confidence") or "").strip().lower()
    asked = raw if raw in CONFIDENCE_LEVELS else "low"
    quote = str(args.get("source_quote") or "").strip()
    level = asked
    if level == "high" and len(quote) < 5:
        level = "medium"
    if level == "medium" and not quote:
        level = "low"
    fields = {
        "source_quote": quote,
        "reasoning": str(args.get("reasoning") or "").strip(),
        "aliases": parse_aliases(args.get("aliases")),
        "supersedes": [normalize_slug(s) for s in args.get("supersedes") or []],
        "conflicts_with": [normalize_slug(s) for s in args.get("conflicts_with") or []],
        "override_reject": str(args.get("override_reject") or "").strip(),
    }
    return Evidence(confidence=level, auto_downgraded=level != asked, fields=fields)


def legacy_evidence(value: Any) -> Evidence | None:
    """The evidence of a file written before it moved into the body (an `evidence:` front-matter map)."""
    if not isinstance(value, dict):
        return None
    level = str(value.get("confidence") or "").strip().lower()
    lists = ("aliases", "supersedes", "conflicts_with")
    fields = {k: (v if isinstance(v, list) else []) if k in lists else str(v or "")
              for k, v in ((k, value.get(k)) for k in EVIDENCE_FIELDS[1:])}
    return Evidence(confidence=level if level in CONFIDENCE_LEVELS else "low", auto_downgraded=False, fields=fields)


# the block -----------------------------------------------------------------------------------
def split_evidence(body: str) -> tuple[str, str]:
    """(block, text): the block's lines without its fences ("" when the body has none) and the rest.

    A block opens with a `---` first line and closes at the next line that is `---`; unlike
    upstream, an unclosed one is no block (the text stays the body's, not swallowed)."""
    text = body.removeprefix("\ufeff")
    lines = text.split("\n")
    if lines[0].rstrip("\r") != _FENCE:
        return "", text
    for n, line in enumerate(lines[1:], 1):
        if line.strip() == _FENCE:
            block = "\n".join(x.rstrip("\r") for x in lines[1:n])
            return block, "\n".join(lines[n + 1:]).lstrip("\n")
    return "", text


def join_evidence(block: str, text: str) -> str:
    """A body from a block's lines and the text (upstream render_evidence_body)."""
    if not block.strip():
        return text.strip()
    return f"{_FENCE}\n{block.strip()}\n{_FENCE}" + (f"\n\n{text.strip()}" if text.strip() else "")


def with_evidence(body: str, evidence: Evidence) -> str:
    """The body with `evidence`'s canonical block, replacing any block it brought."""
    return join_evidence(evidence.block(), split_evidence(body)[1])


def merge_with_evidence(old: str, new: str) -> str:
    """A merge update: the texts merged unit by unit; the incoming block if it has one, else the
    existing block whole."""
    old_block, old_text = split_evidence(old)
    new_block, new_text = split_evidence(new)
    return join_evidence(new_block if new_block.strip() else old_block, merge_bodies(old_text, new_text))


def confidence_of(body: str) -> str | None:
    """high, medium or low as the body's block says; None without a block or a known level."""
    block, _ = split_evidence(body)
    for line in block.split("\n")[:_CONFIDENCE_LINES]:
        key, sep, value = line.partition(":")
        if sep and key.strip() == "confidence":
            level = value.strip().strip("\"'").lower()
            return level if level in CONFIDENCE_LEVELS else None
    return None


def _string(value: Any, limit: int) -> str:
    """A double-quoted block value: backslashes and quotes escaped, line breaks as spaces, cut to `limit`."""
    text = str(value or "").strip().replace("\\", "\\\\").replace('"', '\\"')
    text = text.replace("\r\n", " ").replace("\r", " ").replace("\n", " ")
    return f'"{text[:limit]}"'


def _array(values: Iterable[Any] | None) -> str:
    items = [str(v).strip() for v in values or [] if str(v).strip()][:MAX_ALIASES]
    return "[" + ", ".join(_string(v, _FIELD_CHARS) for v in items) + "]"
