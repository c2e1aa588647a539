"""`workspace.read_file`: numbered lines of a text file, paged by line and within long lines.

A page holds at most the profile's `max_read_chars` characters of file text (each line's text
and its line break; the number column is not counted) and at most `line_count` (else
`max_read_lines`) lines. Lines are whole whenever they can be: a line that does not fit in
what is left of the page, but would fit in a page of its own, starts the next page. Only a
line longer than a whole page is split: the page is filled with as much of it as fits and ends
inside it, at a character boundary (a code point, never part of one; the cut moves back a few
characters rather than split a grapheme cluster such as an emoji sequence or a letter and its
accents), and the result names the line and the character where the page ended and gives the
`start_line` and `char_offset` that continue it. A page that continues inside a line shows the
rest of that line (up to the budget), then further lines; its first row carries that line's
number, like every other row, and the header says from which character it starts.

Read state (`files.note_read`): a line shown in part is not read; it counts as read once its
last character was shown by pages that continue one another from its start, so the edit tools'
full-read rule covers every character of every line.

The file text is decoded once per call and only the page is sliced out of it; the start of a
line is found by counting line breaks in chunks (no list of lines, no copy of the file).

By extension, as upstream dispatches: an image (`.png`, `.jpg`/`.jpeg`, `.gif`, `.webp`) comes
back as an attachment (`media.py`), a `.pdf` as the text of a window of pages, `page_start` and
`page_limit` (`pdf.py`); every other file is text, as above. The line arguments are refused on
an image or a PDF and the page arguments on anything but a PDF (`tool.invalid_arguments`), so a
model learns which ones apply instead of having some silently ignored. Images and PDFs leave the
read state alone: the edit tools only take text files.
"""

from __future__ import annotations

import unicodedata
from typing import Any, Final, Literal

from ...core.arguments import quote
from ...core.descriptors import ToolDescriptor
from ...core.errors import ToolError
from ...core.ids import ToolId
from ...core.results import ToolOutput
from ..base import BuiltinTool, ToolContext
from .files import call_name, count_lines, decode, note_read, open_file, version_json
from .media import image_kind, read_image
from .paths import Workspace
from .pdf import DEFAULT_PAGE_LIMIT, read_pdf

END_MARKER = "[end of file]"
NUMBER_WIDTH: Final = 6
_CHUNK: Final = 4096  # characters per count() when skipping to a line
_CLUSTER_BACKOFF: Final = 32  # at most this many characters given back to keep a grapheme cluster whole

DESCRIPTOR = ToolDescriptor(
    id=ToolId.builtin("workspace.read_file"),
    description=(
        "Read a UTF-8 text file of the workspace as numbered lines (`   12\\tline`). Without `start_line` it "
        "starts at line 1. A large file comes back in parts: the result says which line to pass as "
        "`start_line` next. A line too long for one part is split: the result says where the part ends "
        "inside it and gives the `start_line` and `char_offset` to read on. Read a file to its end (every "
        "part of every line) before replacing it with write_file or editing it with apply_patch. Paths are "
        "workspace-relative, e.g. `work/notes.md` or `tool-results/...`. A PNG, JPEG, GIF or WebP file comes back "
        "as the image itself, with its size in pixels; a PDF as the text of its pages: pass `page_start` and "
        "`page_limit` to choose them."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Workspace-relative file path, e.g. `work/notes.md`."},
            "start_line": {"type": "integer", "minimum": 1, "description": "First line to return (1-based)."},
            "line_count": {"type": "integer", "minimum": 1, "description": "How many lines to return at most."},
            "char_offset": {
                "type": "integer", "minimum": 0,
                "description": "Characters of line `start_line` to skip (default 0, the line's start): to read "
                               "on inside a long line, pass the value a split result gives. Needs `start_line`; "
                               "must be below that line's length.",
            },
            "page_start": {"type": "integer", "minimum": 1, "description": "PDF only: first page to read (1-based, "
                                                                             "default 1)."},
            "page_limit": {"type": "integer", "minimum": 1,
                           "description": f"PDF only: how many pages to read at most (default {DEFAULT_PAGE_LIMIT})."},
        },
        "required": ["path"],
        "additionalProperties": False,
    },
    read_only=True,
    example={"path": "work/notes.md"},
)


def read_file(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    media = _media(args)  # first: a line argument on an image or a PDF is refused as such
    if "char_offset" in args and "start_line" not in args:
        raise ToolError("tool.invalid_arguments",
                        "`char_offset` counts within the line `start_line` names; add `start_line` (the line the "
                        "earlier result gave).")
    ws = Workspace.of(ctx)
    if media == "pdf":
        return read_pdf(ctx, ws, args["path"], _whole(args, "page_start", 1), _whole(args, "page_limit", 0) or None)
    if media is not None:
        return read_image(ws, args["path"], *media)
    with open_file(ws, args["path"]) as f:
        data = f.read(ws)
    res, version = f.res, f.version(data)
    text = decode(res, data)
    del data
    total = count_lines(text)
    start = _whole(args, "start_line", 1)
    if total and start > total:
        raise ToolError("workspace.line_out_of_range",
                        f"`{res.display}` has {total} lines; `start_line` {start} is past the end. "
                        f"Use a start_line from 1 to {total}.", structured={"path": res.display, "totalLines": total})
    skip = _whole(args, "char_offset", 0)
    want = _whole(args, "line_count", 0) or ws.settings.max_read_lines
    budget = ws.settings.max_read_chars
    line_at = _line_start(text, start)
    first_len = _line_end(text, line_at) - line_at
    if skip and skip >= first_len:
        has = f"has {first_len:,} character{'' if first_len == 1 else 's'}" if first_len else "is empty"
        valid = f"from 0 to {first_len - 1}" if first_len > 1 else "of 0"
        nxt = f", or start_line={start + 1} for the next line" if start < total else ""
        raise ToolError("tool.invalid_arguments",
                        f"Line {start} of `{res.display}` {has}; `char_offset` {skip} is past its end. "
                        f"Use a char_offset {valid}{nxt}.",
                        structured={"path": res.display, "line": start, "lineChars": first_len, "charOffset": skip})

    out: list[str] = []
    used = 0
    end = start - 1  # last line shown, in whole or in part
    end_len = 0  # its length
    cut: int | None = None  # characters of line `end` shown, when the page ends inside it
    pos, ls = line_at + skip, line_at
    number, last = start, min(total, start - 1 + want)
    while number <= last:
        eol = _line_end(text, pos)
        rest = eol - pos
        if used + rest <= budget:
            out.append(_row(number, text[pos:eol]))
            used += rest + 1
            end, end_len = number, eol - ls
            number, pos = number + 1, eol + 1
            ls = pos
            continue
        left = budget - used
        if (out and rest <= budget) or left <= 0:
            break  # no room left, or the line fits a page of its own: the next page starts with it
        stop = _boundary(text, pos, pos + left)
        out.append(_row(number, text[pos:stop]))
        used += stop - pos
        end, end_len, cut = number, eol - ls, stop - ls
        break

    state = note_read(ctx, res, version, start, end, total, start_char=skip, end_char=cut)
    at_end = end >= total and cut is None
    call = call_name(ctx, "workspace.read_file")
    header = f"Read: {res.display}\n" + (f"lines={start}-{end} / {total}" if total else "lines=empty (0 lines)")
    if skip or cut is not None:
        header += "; " + _span(start, end, skip, first_len, cut, end_len)
    body = "\n".join(out) if out else "(empty file)"
    if at_end:
        trailer = END_MARKER
    elif cut is not None:
        trailer = (f"[partial view: line {end} is {end_len:,} characters long and this page ends at character "
                   f"{cut:,} of it; continue with `{call}` path `{res.display}` start_line={end} char_offset={cut}]")
    else:
        trailer = (f"[partial view: lines {start}-{end} of {total}; continue with "
                   f"`{call}` path `{res.display}` start_line={end + 1}]")
    next_line = None if at_end else end if cut is not None else end + 1
    structured = {
        "path": res.display, "startLine": start, "startChar": skip, "endLine": end,
        "endChar": end_len if cut is None else cut, "endLineChars": end_len, "totalLines": total,
        "nextLine": next_line, "nextChar": None if at_end else cut or 0, "truncated": not at_end,
        "fullRead": state.full, **version_json(version),
    }
    return ToolOutput(content=f"{header}\n\n{body}\n{trailer}", structured=structured)


_LINE_ARGS: Final = ("start_line", "line_count", "char_offset")
_PAGE_ARGS: Final = ("page_start", "page_limit")


def _media(args: dict[str, Any]) -> Literal["pdf"] | tuple[str, str] | None:
    """"pdf", an image's (format, MIME type), or None for text, by the path's extension; refuses
    (tool.invalid_arguments) arguments that do not apply to that kind of file."""
    path = args["path"]
    name = path if isinstance(path, str) else ""
    image = image_kind(name)
    pdf = name.lower().endswith(".pdf")
    refused, what = ((_LINE_ARGS, "a PDF; choose its pages with `page_start` and `page_limit`") if pdf
                     else (_LINE_ARGS + _PAGE_ARGS, "an image; it is read whole") if image
                     else (_PAGE_ARGS, "not a PDF"))
    wrong = [k for k in refused if k in args]
    if wrong:
        raise ToolError("tool.invalid_arguments",
                        f"{', '.join(f'`{k}`' for k in wrong)} cannot be used here: `{quote(name)}` is {what}.",
                        structured={"path": quote(name), "arguments": wrong})
    return "pdf" if pdf else image


def _whole(args: dict[str, Any], key: str, default: int) -> int:
    """An integer argument (the schema checked it; JSON may carry `2.0` for 2)."""
    value = args.get(key, default)
    return int(value)


def _row(number: int, text: str) -> str:
    return f"{number:>{NUMBER_WIDTH}}\t{text}"


def _span(start: int, end: int, skip: int, first_len: int, cut: int | None, end_len: int) -> str:
    """Which characters of the first and last line the page shows, when not all of them (1-based)."""
    if start == end:
        shown_to = end_len if cut is None else cut
        return f"line {start}: characters {skip + 1:,}-{shown_to:,} of {first_len:,}"
    parts = []
    if skip:
        parts.append(f"line {start} from character {skip + 1:,} of {first_len:,}")
    if cut is not None:
        parts.append(f"line {end} to character {cut:,} of {end_len:,}")
    return "; ".join(parts)


def _line_end(text: str, pos: int) -> int:
    """Offset of the line break ending the line that holds `pos` (len(text) for the last line)."""
    eol = text.find("\n", pos)
    return len(text) if eol < 0 else eol


def _line_start(text: str, line: int) -> int:
    """Offset where line `line` (1-based, at most the line count) starts; linear, no copies."""
    need = line - 1  # line breaks to pass
    pos, n = 0, len(text)
    while need:
        stop = min(pos + _CHUNK, n)
        found = text.count("\n", pos, stop)
        if found < need:
            need -= found
            pos = stop
            if pos >= n:
                return n
            continue
        for _ in range(need):
            pos = text.find("\n", pos, stop) + 1
        need = 0
    return pos


_RI_FIRST, _RI_LAST = 0x1F1E6, 0x1F1FF  # regional indicators: a flag is a pair of them


def _extends(ch: str) -> bool:
    """Whether `ch` belongs to the grapheme cluster before it (a cheap part of UAX #29)."""
    code = ord(ch)
    if code < 0x300:
        return False
    return (unicodedata.category(ch) in ("Mn", "Me", "Mc") or code == 0x200D  # marks, zero-width joiner
            or 0x1F3FB <= code <= 0x1F3FF or 0xE0020 <= code <= 0xE007F  # skin tones, emoji tags
            or 0x1160 <= code <= 0x11FF or 0xD7B0 <= code <= 0xD7FF)  # Hangul vowel and final jamo


def _joined(text: str, at: int) -> bool:
    """Whether offset `at` (between text[at-1] and text[at]) lies inside a grapheme cluster."""
    before, after = text[at - 1], text[at]
    if after == "\n" or before in "\r\n":
        return False
    if _extends(after) or before == "\u200d":
        return True
    if _RI_FIRST <= ord(before) <= _RI_LAST and _RI_FIRST <= ord(after) <= _RI_LAST:
        run = 0  # regional indicators just before `at`: an odd run means `at` splits a flag
        while run < _CLUSTER_BACKOFF and at - run > 0 and _RI_FIRST <= ord(text[at - run - 1]) <= _RI_LAST:
            run += 1
        return run % 2 == 1
    return False


def _boundary(text: str, lo: int, cut: int) -> int:
    """`cut` (lo < cut < len(text)), moved back a little if it would split a grapheme cluster;
    `cut` itself when the cluster is longer than the page's piece or the back-off limit."""
    at = cut
    for _ in range(_CLUSTER_BACKOFF):
        if at <= lo:
            return cut
        if not _joined(text, at):
            return at
        at -= 1
    return cut


TOOLS = (BuiltinTool(DESCRIPTOR, read_file),)
