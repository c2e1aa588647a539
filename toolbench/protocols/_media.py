"""Which image attachments a provider's API would refuse, and why, read from their headers.

One check for every provider: `_results.result_parts` asks `refusal` about each image a
provider takes, and `BaseProvider.encode_history` runs `crowd` over the whole request. An
image is sent only when its header (read without decoding, `core.images`) names the format its
MIME type says and a size in pixels, and that size and its bytes are within the provider's
`ImageLimits`. Otherwise the result's `## Attachments` line says it was left out and why (its
size against the limit), and every provider whose limits it meets still gets it. A header that
is cut short, broken, declares a zero side or is another format than its MIME type is left out
for every provider with limits: the API would refuse the whole request, and every later
request of the conversation would carry it again.

The limits, as each provider documents them (sizes in bytes; "MB" read as 10^6 where the
docs do not say which, the stricter reading):

- anthropic, https://platform.claude.com/docs/en/build-with-claude/vision ("General limits"):
  an image over 8000 px a side is refused, over 2000 px a side when the request holds more
  than 20 images; at most 5 MB per image on the API, counted on the base64 text (the API's
  error: "image exceeds 5 MB maximum: 5404560 bytes > 5242880 bytes").
- openai-responses, https://platform.openai.com/docs/guides/images-vision ("Image input
  requirements"): at most 20 MB per image (and 500 images, 50 MB of images per request). No
  pixel limit: a large image is scaled down (the detail levels' 512 px / 768x2000 px), not refused.
- gemini, https://ai.google.dev/gemini-api/docs/image-understanding: inline image data while the
  whole request stays under 20 MB, so one image's base64 text must fit in that. No pixel
  limit ("There isn't a specific limit to the number of pixels in an image. However, larger
  images are scaled down", the Gemini API's input-file requirements).

Not checked here: the totals per request (Anthropic 32 MB, OpenAI 50 MB and 500 images, Gemini
20 MB), which depend on everything else the request carries.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from ..core.images import MIME_FORMATS, HeaderError, image_info
from .types import AttachmentView, Exchange, Round


@dataclass(frozen=True, slots=True)
class ImageLimits:
    """What a provider's API refuses of an image in a tool result (None: nothing documented).

    `max_side`: the most pixels a side may have; `max_bytes`: the most bytes one image may have,
    counted on its base64 text when `count_base64`; in a request of more than `crowd` images,
    a side may have at most `crowded_side` pixels."""

    max_side: int | None = None
    max_bytes: int | None = None
    count_base64: bool = False
    crowd: int | None = None
    crowded_side: int | None = None


ANTHROPIC_IMAGES: Final = ImageLimits(max_side=8000, max_bytes=5 * 1024 * 1024, count_base64=True,
                                      crowd=20, crowded_side=2000)
RESPONSES_IMAGES: Final = ImageLimits(max_bytes=20_000_000)
GEMINI_IMAGES: Final = ImageLimits(max_bytes=20_000_000, count_base64=True)


def _base64_size(size: int) -> int:
    return 4 * ((size + 2) // 3)


def pixel_size(mime_type: str, data: bytes) -> tuple[int, int] | None:
    """(width, height) as the image's header declares it, as the limits below read it; None for
    no image type, bytes of another format, or a header that gives no size."""
    fmt = MIME_FORMATS.get(base_type(mime_type))
    if fmt is None:
        return None
    try:
        info = image_info(data, fmt)
    except (LookupError, HeaderError):
        return None
    return info.width, info.height


def refusal(item: AttachmentView, limits: ImageLimits, api: str, *, crowded: bool = False) -> str | None:
    """Why `api` would refuse the image `item` (its bytes present), or None; `crowded`: the
    request holds more than `limits.crowd` images. A MIME type that is no image: None."""
    mime = _mime(item)
    fmt = MIME_FORMATS.get(mime)
    if fmt is None or item.data is None:
        return None
    try:
        info = image_info(item.data, fmt)
    except LookupError as exc:
        what = f"a {exc.args[0]} file" if exc.args[0] else "no image format"
        return f"its bytes are {what}, not {mime}, and {api} would refuse the request"
    except HeaderError as exc:
        return f"its {fmt} header gives no size in pixels ({exc}), and {api} would refuse the request"
    smaller = "(a smaller copy would be sent)"
    if limits.max_bytes is not None:
        counted = _base64_size(len(item.data)) if limits.count_base64 else len(item.data)
        if counted > limits.max_bytes:
            what = f"{counted:,} bytes of base64" if limits.count_base64 else f"{counted:,} bytes"
            return f"it is {what}; {api} takes at most {limits.max_bytes:,} per image {smaller}"
    side, size = max(info.width, info.height), f"{info.width}x{info.height} px"
    if limits.max_side is not None and side > limits.max_side:
        return f"it is {size}; {api} takes at most {limits.max_side} px a side {smaller}"
    if crowded and limits.crowded_side is not None and side > limits.crowded_side:
        return (f"it is {size}; in a request of more than {limits.crowd} images {api} takes at most "
                f"{limits.crowded_side} px a side {smaller}")
    return None


def crowd(rounds: Sequence[Round], limits: ImageLimits | None, api: str) -> Sequence[Round]:
    """`rounds` with each image a request of them would refuse for being one of too many
    marked `left_out`; `rounds` itself when the request holds few enough images."""
    if limits is None or limits.crowd is None or limits.crowded_side is None:
        return rounds
    images = sum(1 for exchanges in rounds for ex in exchanges for item in _attachments(ex)
                 if _sendable(item) and refusal(item, limits, api) is None)
    if images <= limits.crowd:
        return rounds
    return [[_mark(ex, limits, api) for ex in exchanges] for exchanges in rounds]


def _attachments(ex: Exchange) -> tuple[AttachmentView, ...]:
    return ex.result.attachments if ex.result is not None else ()


def base_type(mime_type: str) -> str:
    """`image/png` of `IMAGE/PNG; x=1`."""
    return mime_type.split(";", 1)[0].strip().lower()


def _mime(item: AttachmentView) -> str:
    return base_type(item.mime_type)


def _sendable(item: AttachmentView) -> bool:
    """An image with bytes that nothing has left out yet."""
    return item.data is not None and item.left_out is None and _mime(item) in MIME_FORMATS


def _mark(ex: Exchange, limits: ImageLimits, api: str) -> Exchange:
    if ex.result is None or not ex.result.attachments:
        return ex
    marked = tuple(dataclasses.replace(item, left_out=why)
                   if _sendable(item) and (why := refusal(item, limits, api, crowded=True)) is not None else item
                   for item in ex.result.attachments)
    return dataclasses.replace(ex, result=dataclasses.replace(ex.result, attachments=marked))
