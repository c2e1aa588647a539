"""An image's format and declared pixel size, read from its header without decoding it.

Pure and bounded: each parser reads a fixed number of bytes (PNG IHDR, GIF logical screen,
WebP VP8/VP8L/VP8X) or walks JPEG segments to the first frame header (SOF), at most
`MAX_JPEG_SEGMENTS` of them, each step O(1); every read is length-checked, so bytes that lie
(cut short, a zero side, a marker walk with no frame) raise `HeaderError`, never an IndexError.
The size is what the header declares: a 74-byte PNG may declare 50000x50000 pixels, which is
exactly what a provider's limit must be checked against (`protocols._media`).

Used by `workspace.read_file` (`tools/workspace/media.py`) and by the protocols when they
decide which attachments a provider's API would take.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

# A real JPEG has its frame header within a few dozen segments (APPn, DQT, DHT, COM); a walk
# past this many is a file built to make the reader loop.
MAX_JPEG_SEGMENTS: Final = 1024

# MIME type -> the format `sniff` names; the image types the providers take in tool results
MIME_FORMATS: Final[dict[str, str]] = {
    "image/png": "PNG", "image/jpeg": "JPEG", "image/gif": "GIF", "image/webp": "WebP"}


@dataclass(frozen=True, slots=True)
class ImageInfo:
    """What an image's header says: its format name and its size in pixels."""

    format: str
    width: int
    height: int


class HeaderError(ValueError):
    """The header is cut short or does not hold a size."""


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


def image_info(data: bytes, expected: str) -> ImageInfo:
    """The format and pixel size of `data`, which its name says is an `expected` image.

    Raises LookupError holding the format the bytes are instead (None when unknown), or
    HeaderError when the header is broken, cut short or declares a zero side."""
    found = sniff(data)
    if found != expected:
        raise LookupError(found)
    width, height = _PARSERS[expected](data)
    if width <= 0 or height <= 0:
        raise HeaderError(f"a size of {width}x{height} pixels")
    return ImageInfo(expected, width, height)


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
    for _ in range(MAX_JPEG_SEGMENTS):
        if pos >= n:
            break
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
    else:
        raise HeaderError(f"no frame header (SOF) in the first {MAX_JPEG_SEGMENTS} segments")
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
