"""`workspace.read_file` on an image: the file as an attachment, its format and size in the text.

A file whose name ends in `.png`, `.jpg`/`.jpeg`, `.gif` or `.webp` (any case) is read as an
image: the bytes must be that format (the magic number is checked, so a renamed file gets
`workspace.media_mismatch` saying what the bytes are), its pixel size is read from the header
(PNG IHDR, JPEG SOF, GIF logical screen, WebP VP8/VP8L/VP8X; `workspace.media_unreadable` when
the header is cut or broken), and the result carries the bytes as one `Attachment("image", ...)`
that each provider renders as its API takes images in tool results.

Size cap: `MAX_IMAGE_BYTES`, 5 MiB. Upstream (LiveAgent) caps reads at 25 MB, but Anthropic, the
strictest of the providers toolbench renders for, refuses an image over 5 MB, so a larger file
is refused here (`workspace.image_too_large`) with the remedy (a smaller copy made with
the shell). Each provider's own limits (Anthropic counts its 5 MB on the base64 text, about
3.75 MiB of image, and refuses a side over 8000 px) are checked where its request is built
(`protocols._media`): an image read here may still be left out for one provider, and the text
that provider's model reads says so and why.

Decoding is bounded: headers are parsed from the bytes already read (`core.images`: the JPEG
marker walk stops at a cap and never decodes pixel data).
"""

from __future__ import annotations

from typing import Final

from ...core.errors import ToolError
from ...core.images import HeaderError, image_info
from ...core.results import Attachment, ToolOutput
from .files import open_file, version_json
from .paths import Workspace

MAX_IMAGE_BYTES: Final = 5 * 1024 * 1024

# extension -> (format, MIME type); the one list of what read_file treats as an image
IMAGE_EXTENSIONS: Final[dict[str, tuple[str, str]]] = {
    ".png": ("PNG", "image/png"),
    ".jpg": ("JPEG", "image/jpeg"),
    ".jpeg": ("JPEG", "image/jpeg"),
    ".gif": ("GIF", "image/gif"),
    ".webp": ("WebP", "image/webp"),
}


def image_kind(path: str) -> tuple[str, str] | None:
    """(format, MIME type) when `path`'s extension names an image read_file takes, else None."""
    dot = path.rfind(".")
    if dot < 0 or "/" in path[dot:]:
        return None
    return IMAGE_EXTENSIONS.get(path[dot:].lower())


def mismatch(display: str, named: str, found: str | None) -> ToolError:
    """`workspace.media_mismatch`: the bytes are not the format the file's extension names."""
    what = f"a {found} file" if found else "no image or PDF format read_file knows"
    return ToolError("workspace.media_mismatch",
                     f"`{display}` is named as {named}, but its bytes are {what}. Rename it to match its "
                     "content, or check what it is with the shell (`file`, `head -c 16 | xxd`).",
                     structured={"path": display, "expected": named, "found": found})


def read_image(ws: Workspace, path: object, fmt: str, mime: str) -> ToolOutput:
    """The image `path` names as an attachment, with its format, size and pixel size in the text."""
    with open_file(ws, path) as f:
        assert f.st is not None
        display = f.res.display
        if f.st.st_size > MAX_IMAGE_BYTES:
            raise _too_large(display, f.st.st_size)
        data = f.read(ws)
        version = f.version(data)
    if len(data) > MAX_IMAGE_BYTES:  # it grew between the stat and the read
        raise _too_large(display, len(data))
    try:
        info = image_info(data, fmt)
    except LookupError as exc:
        raise mismatch(display, fmt, exc.args[0]) from None
    except HeaderError as exc:
        raise ToolError("workspace.media_unreadable",
                        f"`{display}` starts like a {fmt} image, but its header is broken or cut short ({exc}); "
                        "no size could be read, so it is not sent.", structured={"path": display}) from None
    text = (f"Read image: {display}\nmime={mime}\nsizeBytes={len(data)}\n"
            f"dimensions={info.width}x{info.height} pixels")
    structured = {"path": display, "kind": "image", "mimeType": mime, "format": info.format,
                  "sizeBytes": len(data), "width": info.width, "height": info.height, **version_json(version)}
    return ToolOutput(text, structured=structured, attachments=[Attachment("image", mime, data)])


def _too_large(display: str, size: int) -> ToolError:
    return ToolError("workspace.image_too_large",
                     f"`{display}` has {size:,} bytes; read_file sends images of at most {MAX_IMAGE_BYTES:,} bytes "
                     "(the providers refuse larger ones). Make a smaller copy with the shell and read that.",
                     structured={"path": display, "sizeBytes": size, "limitBytes": MAX_IMAGE_BYTES})
