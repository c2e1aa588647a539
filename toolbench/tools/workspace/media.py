"""`workspace.read_file` on an image: the file as an attachment, its format and size in the text.

A file whose name ends in `.png`, `.jpg`/`.jpeg`, `.gif` or `.webp` (any case) is read as an
image: the bytes must be that format (the magic number is checked, so a renamed file gets
`workspace.media_mismatch` saying what the bytes are), its pixel size is read from the header
(PNG IHDR, JPEG SOF, GIF logical screen, WebP VP8/VP8L/VP8X; `workspace.media_unreadable` when
the header is cut or broken), and the result carries the bytes as one `Attachment("image", ...)`
that each provider renders as its API takes images in tool results.

Size cap: `MAX_IMAGE_BYTES`, 5 MiB. Upstream (LiveAgent) caps reads at 25 MB, but the strictest
of the providers toolbench renders for (Anthropic) refuses an image over 5 MB in a request; a
larger file would fail the next model request rather than this call, so it is refused here
(`workspace.image_too_large`) with the remedy (a smaller copy made with the shell).

Decoding is bounded: headers are parsed from the bytes already read, the JPEG marker walk is
linear in the file and never decodes pixel data.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from ...core.errors import ToolError
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


@dataclass(frozen=True, slots=True)
class ImageInfo:
    """What an image's header says: its format name and its size in pixels."""

    format: str
    width: int
    height: int


def image_kind(path: str) -> tuple[str, str] | None:
    """(format, MIME type) when `path`'s extension names an image read_file takes, else None."""
    dot = path.rfind(".")
    if dot < 0 or "/" in path[dot:]:
        return None
    return IMAGE_EXTENSIONS.get(path[dot:].lower())


def sniff(data: bytes) -> str | None:
    """The format the magic number names (PNG, JPEG, GIF, WebP, PDF), or None."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "PNG"
    if data.startswith(b"\xff\xd8\xff"):
        return "JPEG"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "GIF"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "WebP"
    if data.startswith(b"%PDF-"):
        return "PDF"
    return None


class HeaderError(ValueError):
    """The header is cut short or does not hold a size."""


def _png(data: bytes) -> tuple[int, int]:
    if len(data) < 24 or data[12:16] != b"IHDR":
        raise HeaderError("no IHDR chunk after the signature")
    w, h = struct.unpack(">II", data[16:24])
    return int(w), int(h)


def _gif(data: bytes) -> tuple[int, int]:
    if len(data) < 10:
        raise HeaderError("the logical screen descriptor is cut short")
    w, h = struct.unpack("<HH", data[6:10])
    return int(w), int(h)


# SOF markers carry the frame size; C4 (DHT), C8 (JPG extension) and CC (DAC) share the range but do not
_SOF: Final = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}
_STANDALONE: Final = frozenset(range(0xD0, 0xD8)) | {0x01}  # RSTn and TEM have no length


def _jpeg(data: bytes) -> tuple[int, int]:
    pos, n = 2, len(data)
    while pos < n:
        if data[pos] != 0xFF:
            raise HeaderError(f"no marker at byte {pos}")
        while pos < n and data[pos] == 0xFF:  # fill bytes
            pos += 1
        if pos >= n:
            break
        marker = data[pos]
        pos += 1
        if marker in _STANDALONE:
            continue
        if marker in (0xD9, 0xDA):  # end of image, or scan data before any frame header
            break
        if pos + 2 > n:
            break
        (length,) = struct.unpack(">H", data[pos:pos + 2])
        if length < 2:
            raise HeaderError(f"segment length {length} at byte {pos}")
        if marker in _SOF:
            if pos + 7 > n:
                break
            h, w = struct.unpack(">HH", data[pos + 3:pos + 7])
            return int(w), int(h)
        pos += length
    raise HeaderError("no frame header (SOF) before the image data")


def _webp(data: bytes) -> tuple[int, int]:
    chunk = data[12:16]
    if chunk == b"VP8X" and len(data) >= 30:
        w = int.from_bytes(data[24:27], "little") + 1
        h = int.from_bytes(data[27:30], "little") + 1
        return w, h
    if chunk == b"VP8L" and len(data) >= 25 and data[20] == 0x2F:
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8 " and len(data) >= 30 and data[23:26] == b"\x9d\x01\x2a":
        w, h = struct.unpack("<HH", data[26:30])
        return int(w) & 0x3FFF, int(h) & 0x3FFF
    raise HeaderError(f"no VP8, VP8L or VP8X header (first chunk {chunk!r})")


_PARSERS: Final[dict[str, Callable[[bytes], tuple[int, int]]]] = {
    "PNG": _png, "JPEG": _jpeg, "GIF": _gif, "WebP": _webp}


def image_info(data: bytes, expected: str) -> ImageInfo:
    """The format and pixel size of `data`, which its name says is an `expected` image.

    Raises LookupError holding the format the bytes are instead (None when unknown), or
    HeaderError when the header is broken or cut short (every read is length-checked)."""
    found = sniff(data)
    if found != expected:
        raise LookupError(found)
    width, height = _PARSERS[expected](data)
    if width <= 0 or height <= 0:
        raise HeaderError(f"a size of {width}x{height} pixels")
    return ImageInfo(expected, width, height)


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
