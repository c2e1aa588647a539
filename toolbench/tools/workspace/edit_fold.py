"""The characters the edit matcher treats specially: whitespace, and the Unicode punctuation fold.

`WS` is Rust's `char::is_whitespace` (Unicode White_Space), what upstream trims with; Python's
`str.isspace` also takes \\x1c-\\x1f, so the matcher never calls it.

`fold` maps typographic punctuation to ASCII one code point for one (so every offset of the
folded text is the offset of the same character in the original): the set of Codex's
`seek_sequence.rs` `normalise`, its last and most lenient seek pass.

    dashes         U+2010-U+2015, U+2212                              -> "-"
    single quotes  U+2018-U+201B                                      -> "'"
    double quotes  U+201C-U+201F                                      -> '"'
    spaces         U+00A0, U+2002-U+200A, U+202F, U+205F, U+3000      -> " "
"""

from __future__ import annotations

__all__ = ["BOM", "FOLDED", "WS", "fold", "has_foldable"]

BOM = "\ufeff"
WS = "\t\n\x0b\x0c\r \x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000" + "".join(map(chr, range(0x2000, 0x200B)))

FOLDED: dict[str, str] = {
    **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "-"),
    **dict.fromkeys("\u2018\u2019\u201a\u201b", "'"),
    **dict.fromkeys("\u201c\u201d\u201e\u201f", '"'),
    **dict.fromkeys("\u00a0\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000", " "),
}


def has_foldable(text: str) -> bool:
    """Whether `fold` would change `text` (O(1) for ASCII text, else one scan per folded char)."""
    return not text.isascii() and any(ch in text for ch in FOLDED)


def fold(text: str) -> str:
    """`text` with each folded character replaced by its ASCII stand-in; the same length.

    One `str.replace` per folded character that occurs (a 1 MB text costs a few ms; the
    equivalent `str.translate` walks the text character by character, ten times slower)."""
    if text.isascii():
        return text
    for ch, ascii_ch in FOLDED.items():
        if ch in text:
            text = text.replace(ch, ascii_ch)
    return text
