"""`structuredContent` without what the text already says, and binary data as attachments.

Servers repeat themselves: the filesystem server puts each file's text in a text block and
again in `structuredContent.content`, and its media reads copy the image block, base64 and
all, into `structuredContent`; the memory server's text is the JSON of a field; the SDK wraps a
plain return value as `{"result": X}` beside X's text. `clean` walks the value once and gives
two forms of it:

- `recorded`, kept in the records: the value with every binary payload replaced by a
  reference to its attachment (the bytes are in the attachment's file, once);
- `shown`, rendered under `## Details`: `recorded` less what the model reads already, namely
  a string equal to a text block (trimmed, or to all of them joined), a part equal to the JSON
  a text block holds (a scalar only as the whole value or a lone field), and a copy of a
  content block or of the whole content list. `GONE` when nothing is left.

Binary payloads are: `data` of an image or audio block, `blob` of a resource, a `data:` URL
with `;base64,`, and a long base64 string: 256 characters or more with no space, upper- and
lower-case letters, digits and a `+` or `/` (base64 of that much data all but always has them;
a hex digest, a DNA sequence or a long word does not), that decodes. The same payload is one
attachment however often it appears. `scrub_text` applies the same rules to a text block: one
that is a payload, or JSON holding payloads (the Python SDK writes a structured return value as
JSON text), shows references instead.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Mapping
from typing import Any, Final

from ..core.results import Attachment, AttachmentKind

GONE: Final = object()
MIN_BASE64: Final = 256
_BASE64: Final = re.compile(r"[A-Za-z0-9+/]+={0,2}")
_BASE64_CLASSES: Final = (re.compile(r"[0-9]"), re.compile(r"[a-z]"), re.compile(r"[A-Z]"))
_DATA_URL: Final = re.compile(r"data:([\w.+-]+/[\w.+-]+)((?:;[\w.+-]+=[^;,]*)*);base64,(.*)", re.DOTALL)
_MAX_DEPTH: Final = 64
_BLOCK_TYPES: Final = frozenset({"text", "image", "audio", "resource", "resource_link"})
OCTET_STREAM: Final = "application/octet-stream"


def decode_base64(data: str) -> bytes | None:
    """The bytes of standard base64 (whitespace tolerated), or None when it is not base64."""
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        pass
    try:
        return base64.b64decode("".join(data.split()), validate=True)
    except (binascii.Error, ValueError):
        return None


def kind_of(mime_type: str) -> AttachmentKind:
    major = mime_type.split("/", 1)[0].lower()
    return "image" if major == "image" else "audio" if major == "audio" else "blob"


class Binaries:
    """The attachments found in one result, numbered from 1 in the order they were found.

    `keep=False` (an error result, whose attachments are not kept) still numbers and notes
    them, but references read "left out"."""

    def __init__(self, *, keep: bool) -> None:
        self.keep = keep
        self.items: list[Attachment] = []
        self._by_payload: dict[str, int] = {}

    def add(self, kind: AttachmentKind, mime_type: Any, payload: str, uri: Any = None) -> int | None:
        """The number of the attachment holding `payload` (base64), or None when it is not base64."""
        number = self._by_payload.get(payload)
        if number is not None:
            return number
        data = decode_base64(payload)
        if data is None:
            return None
        mime = mime_type if isinstance(mime_type, str) and "/" in mime_type else OCTET_STREAM
        self.items.append(Attachment(kind, mime, data, uri if isinstance(uri, str) else None))
        self._by_payload[payload] = number = len(self.items)
        return number

    def known(self, payload: str) -> int | None:
        return self._by_payload.get(payload)

    def reference(self, number: int) -> str:
        item = self.items[number - 1]
        where = f"attachment {number}" if self.keep else "left out"
        return f"[{item.kind} {item.mime_type}, {len(item.data):,} bytes: {where}]"


def clean(value: Any, *, said: set[str], said_json: list[Any], blocks: list[Any],
          binaries: Binaries) -> tuple[Any, Any]:
    """`(recorded, shown)` of a `structuredContent` value (see the module doc)."""
    walk = _Walk(said, said_json, blocks, binaries)
    recorded, shown = walk.node(value, 0, hidden=False, scalar_said=True)
    if isinstance(shown, Mapping | list) and not shown:
        shown = GONE  # an empty object has nothing to tell
    return recorded, shown


NOT_JSON: Final = object()


def scrub_text(text: str, parsed: Any, binaries: Binaries) -> str:
    """A text block as the model reads it: `text` itself, unless it is a binary payload or
    JSON (`parsed`, or `NOT_JSON`) holding payloads; those become attachment references."""
    walk = _Walk(set(), [], [], binaries)
    if isinstance(parsed, Mapping | list):
        recorded, _ = walk.node(parsed, 0, hidden=True, scalar_said=False)
        return text if recorded == parsed else json.dumps(recorded, ensure_ascii=False, indent=2)
    number = walk.binary_string(parsed if isinstance(parsed, str) else text)
    return text if number is None else binaries.reference(number)


class _Walk:
    def __init__(self, said: set[str], said_json: list[Any], blocks: list[Any], binaries: Binaries) -> None:
        self.said = said
        self.said_json = said_json
        self.blocks = blocks
        self.binaries = binaries

    def node(self, value: Any, depth: int, *, hidden: bool, scalar_said: bool) -> tuple[Any, Any]:
        if depth > _MAX_DEPTH:
            return value, GONE if hidden else value
        if isinstance(value, Mapping):
            return self._mapping(value, depth, hidden)
        if isinstance(value, list):
            hidden = hidden or (len(value) == len(self.blocks) and value == self.blocks) or self._is_said(value)
            pairs = [self.node(v, depth + 1, hidden=hidden, scalar_said=False) for v in value]
            shown_items = [s for _, s in pairs if s is not GONE]
            shown: Any = GONE if hidden or (value and not shown_items) else shown_items
            return [r for r, _ in pairs], shown
        if isinstance(value, str):
            return self._string(value, hidden)
        if hidden or (scalar_said and self._is_said(value)):
            return value, GONE
        return value, value

    def _mapping(self, value: Mapping[str, Any], depth: int, hidden: bool) -> tuple[Any, Any]:
        kind = value.get("type")
        if kind in _BLOCK_TYPES:
            hidden = hidden or value in self.blocks  # a copy of a content block
        hidden = hidden or self._is_said(value)
        key = self._payload_key(value)
        if key is None:
            return self._fields(value, depth, hidden, lone=depth == 0 and len(value) == 1)
        reference = self._payload(value, key)
        recorded, shown = self._fields({k: v for k, v in value.items() if k != key}, depth, hidden, lone=False)
        if hidden:
            return {**recorded, key: reference}, GONE
        return {**recorded, key: reference}, {**(shown if shown is not GONE else {}), key: reference}

    def _fields(self, value: Mapping[str, Any], depth: int, hidden: bool, *, lone: bool) -> tuple[Any, Any]:
        recorded: dict[str, Any] = {}
        shown: dict[str, Any] = {}
        for key, item in value.items():
            rec, sho = self.node(item, depth + 1, hidden=hidden, scalar_said=lone)
            recorded[key] = rec
            if sho is not GONE:
                shown[key] = sho
        return recorded, GONE if hidden or (value and not shown) else shown

    @staticmethod
    def _payload_key(value: Mapping[str, Any]) -> str | None:
        """Which field of a block- or resource-shaped object is a binary payload."""
        if value.get("type") in ("image", "audio") and isinstance(value.get("data"), str):
            return "data"
        if isinstance(value.get("blob"), str) and ("uri" in value or "mimeType" in value):
            return "blob"
        return None

    def _payload(self, value: Mapping[str, Any], key: str) -> str:
        """What stands in the payload's place, in the records and the details."""
        payload = value[key]
        kind: AttachmentKind = value["type"] if key == "data" else "blob"
        number = self.binaries.add(kind, value.get("mimeType"), payload, value.get("uri"))
        if number is None:
            return f"[{len(payload):,} characters that are not base64: left out]"
        return self.binaries.reference(number)

    def _string(self, value: str, hidden: bool) -> tuple[Any, Any]:
        said = hidden or value.strip() in self.said  # first: a copy of the text is no payload
        number = None if said and not hidden else self.binary_string(value)
        if number is not None:
            reference = self.binaries.reference(number)
            return reference, GONE if hidden else reference
        return value, GONE if said else value

    def binary_string(self, value: str) -> int | None:
        known = self.binaries.known(value)
        if known is not None:
            return known
        if value.startswith("data:"):
            match = _DATA_URL.fullmatch(value)
            if match is not None:
                mime = match.group(1)
                return self.binaries.add(kind_of(mime), mime, match.group(3))
            return None
        # Cheapest tests first: `in` runs in C, and prose fails the full match at its first space.
        if len(value) >= MIN_BASE64 and len(value) % 4 == 0 and ("+" in value or "/" in value) \
                and _BASE64.fullmatch(value) and all(c.search(value) for c in _BASE64_CLASSES):
            return self.binaries.add("blob", OCTET_STREAM, value)
        return None

    def _is_said(self, value: Any) -> bool:
        """Whether a text block holds exactly this value as JSON (bool and number told apart)."""
        return any(_same(value, known) for known in self.said_json)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, Mapping | list) or isinstance(b, Mapping | list):
        return bool(a == b)
    return type(a) is type(b) and a == b
