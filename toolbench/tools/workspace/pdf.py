"""`workspace.read_file` on a PDF: the text of a window of pages, each under a page marker.

A file named `*.pdf` (any case) whose bytes start with `%PDF-` is read with pypdf. The window
is upstream's (LiveAgent's Read): `page_start` (1-based, default 1) and `page_limit` (default
`DEFAULT_PAGE_LIMIT`, 5 pages). Each page's text comes under a `--- page N ---` line; the
window ends early, at a page boundary, when the next page would pass the profile's
`max_read_chars` (a single page longer than that is cut and says so), and the trailer gives the
`page_start` to read on. The header follows upstream: `Read PDF: <path>` then
`pages=<first>-<last>/<total>`.

Coded refusals: `workspace.pdf_encrypted` (a password is needed; a PDF encrypted with an empty
user password, as many "protected" ones are, is opened), `workspace.pdf_no_text` (no page of
the window has extractable text: scanned or image-only pages), `workspace.pdf_unreadable`
(pypdf cannot parse it), `workspace.page_out_of_range` (page_start past the last page).
pypdf is imported on the first PDF read, so `import toolbench` does not pay for it.

Bounded time: the deadline is checked between pages; within a page, pypdf's own limits end a
hostile content stream (a zlib bomb reaches its token limit after a few seconds and becomes
`workspace.pdf_unreadable`), and cyclic page trees are refused by pypdf.
"""

from __future__ import annotations

import io
import logging
from typing import TYPE_CHECKING, Any, Final

from ...core.errors import ToolError
from ...core.images import sniff
from ...core.results import ToolOutput
from ..base import ToolContext, check_deadline
from .files import call_name, open_file, version_json
from .media import mismatch
from .paths import Workspace

if TYPE_CHECKING:
    from pypdf import PdfReader

DEFAULT_PAGE_LIMIT: Final = 5
END_MARKER: Final = "[end of document]"
NO_TEXT: Final = "(no extractable text on this page)"


def read_pdf(ctx: ToolContext, ws: Workspace, path: object, page_start: int, page_limit: int | None) -> ToolOutput:
    """Pages `page_start`.. (at most `page_limit`, else 5) of the PDF `path` names, as text."""
    with open_file(ws, path) as f:
        display = f.res.display
        data = f.read(ws)
        version = f.version(data)
    found = sniff(data)
    if found != "PDF":
        raise mismatch(display, "PDF", found)
    reader = _open(display, data)
    total = _page_count(display, reader)
    if total and page_start > total:
        raise ToolError("workspace.page_out_of_range",
                        f"`{display}` has {total} page{'' if total == 1 else 's'}; `page_start` {page_start} is past "
                        f"the end. Use a page_start from 1 to {total}.",
                        structured={"path": display, "totalPages": total})
    want = page_limit or DEFAULT_PAGE_LIMIT
    budget = ws.settings.max_read_chars
    parts: list[str] = []
    used, last, cut = 0, page_start - 1, None  # chars used, last page shown, chars of it shown when cut
    texts = 0  # pages of the window with text
    for number in range(page_start, min(total, page_start - 1 + want) + 1):
        check_deadline()  # a hostile PDF can make each page slow to extract
        text = _page_text(display, reader, number).rstrip()  # pypdf ends some pages with line breaks
        texts += bool(text)
        body = text or NO_TEXT
        if used + len(body) > budget:
            if parts:
                break  # the page fits a window of its own: the next read starts with it
            cut, body = len(body), body[:budget]
        parts.append(f"--- page {number} ---\n{body}")
        used += len(body)
        last = number
        if cut is not None:
            break
    if total and not texts:
        raise ToolError("workspace.pdf_no_text",
                        f"Pages {page_start}-{last} of `{display}` have no extractable text: they are likely scanned "
                        "or image-only (text would need OCR, which read_file does not do)."
                        + (f" Other pages may have text: {total} in all." if total > last - page_start + 1 else ""),
                        structured={"path": display, "pageStart": page_start, "pageEnd": last, "totalPages": total})
    at_end = last >= total
    call = call_name(ctx, "workspace.read_file")
    span = f"{page_start}-{last}/{total}" if total else "empty/0"
    if not total:
        trailer = "(no pages)\n" + END_MARKER
    elif cut is not None:
        trailer = (f"[page {last} has {cut:,} characters of text; only the first {budget:,} are shown, the rest of "
                   "that page is left out]" + ("" if at_end else
                                               f"\n[continue with `{call}` path `{display}` page_start={last + 1}]"))
    elif at_end:
        trailer = END_MARKER
    else:
        trailer = (f"[partial view: pages {page_start}-{last} of {total}; continue with `{call}` path `{display}` "
                   f"page_start={last + 1}]")
    body = "\n".join(parts)
    content = f"Read PDF: {display}\npages={span}\n\n" + (f"{body}\n{trailer}" if body else trailer)
    structured: dict[str, Any] = {
        "path": display, "kind": "pdf", "pageStart": page_start, "numPages": max(0, last - page_start + 1),
        "totalPages": total, "nextPage": None if at_end else last + 1, "truncated": not at_end or cut is not None,
        "sizeBytes": len(data), **version_json(version),
    }
    return ToolOutput(content, structured=structured)


def _unreadable(display: str, exc: Exception) -> ToolError:
    return ToolError("workspace.pdf_unreadable",
                     f"`{display}` starts like a PDF, but it could not be parsed ({type(exc).__name__}: "
                     f"{str(exc)[:200]}).", structured={"path": display})


# pypdf raises many kinds of exception on a malformed file (its own PdfReadError, but also
# ValueError, KeyError, TypeError, RecursionError from deep structures): a model can hand any
# file over, so every one of them becomes the coded result, here at the boundary.
def _open(display: str, data: bytes) -> PdfReader:
    from pypdf import PdfReader
    from pypdf.errors import DependencyError

    pypdf_log = logging.getLogger("pypdf")
    if not pypdf_log.handlers:
        # pypdf logs every repaired flaw as a warning; with no handler, Python's last-resort
        # handler would print them into the notebook. A NullHandler keeps them off stderr and
        # still lets them reach handlers the user configured on the root logger.
        pypdf_log.addHandler(logging.NullHandler())
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            try:
                opened = reader.decrypt("")
            except DependencyError:
                opened = None  # AES needs the cryptography package: it counts as not openable here
            if not opened:
                raise ToolError("workspace.pdf_encrypted",
                                f"`{display}` is encrypted with a password, so its text cannot be read. Ask the "
                                "user for an unencrypted copy.", structured={"path": display})
    except ToolError:
        raise
    except Exception as exc:  # see above
        raise _unreadable(display, exc) from None
    return reader


def _page_count(display: str, reader: PdfReader) -> int:
    try:
        return len(reader.pages)
    except Exception as exc:  # see _open
        raise _unreadable(display, exc) from None


def _page_text(display: str, reader: PdfReader, number: int) -> str:
    try:
        return reader.pages[number - 1].extract_text()
    except Exception as exc:  # see _open
        raise _unreadable(display, exc) from None
