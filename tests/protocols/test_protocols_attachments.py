"""Attachments in tool results, per provider: sent as that API takes them, or listed as left out.

Each encoding is checked against the provider SDK's request types (`protocol_sdk`); Gemini's
bytes are base64 in the REST JSON, so its parts are validated from JSON."""

from __future__ import annotations

import base64
import json
import struct
import zlib

import pytest
from google.genai import types as genai_types
from protocol_sdk import validate_history

from toolbench.protocols import PROTOCOLS, AttachmentView, Exchange, ResultView, abridge, encode_history, encode_result


def png(w: int, h: int, pad: int = 0) -> bytes:
    """A PNG whose IHDR declares w x h pixels (no real pixel data; `pad` bytes of padding after)."""
    ihdr = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + ihdr
            + struct.pack(">I", zlib.crc32(b"IHDR" + ihdr)) + bytes(pad))


def jpeg(w: int, h: int) -> bytes:
    return b"\xff\xd8\xff\xc0" + struct.pack(">HBHHB", 11, 8, h, w, 1) + b"\x01\x11\x00\xff\xd9"


PNG = png(2, 2, 19)
PDF = b"%PDF-1.4\n%%EOF\n"
WAV = b"RIFF" + bytes(40)
ROOT = "tool-results/inv_a/round-001-call_0123456789abcdef"


def view(kind: str, mime: str, data: bytes | None, n: int, suffix: str) -> AttachmentView:
    return AttachmentView(kind=kind, mime_type=mime, path=f"{ROOT}-{n}{suffix}", size=len(data or b"x"), data=data)


IMAGE = view("image", "image/png", PNG, 1, ".png")
AUDIO = view("audio", "audio/wav", WAV, 2, ".wav")
DOC = view("blob", "application/pdf", PDF, 3, ".pdf")
TEXT = view("blob", "text/plain", b"plain words", 4, ".txt")


def exchange(*attachments: AttachmentView, content: str = "Here it is.") -> Exchange:
    return Exchange("call_1", "snap", {}, ResultView(content, attachments=attachments))


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def test_anthropic_sends_images_and_documents_as_blocks_after_the_text() -> None:
    block = encode_result("anthropic", exchange(IMAGE, AUDIO, DOC, TEXT))
    text, *rest = block["content"]
    assert rest == [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": b64(PNG)}},
        {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": b64(PDF)}},
        {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "plain words"}},
    ]
    assert text["type"] == "text" and text["text"].startswith("Here it is.\n\n## Attachments\n\n- attachment 1 ")
    lines = text["text"].split("## Attachments\n\n")[1].splitlines()
    assert [line.rsplit(": ", 1)[-1] if "left out" not in line else "left out" for line in lines] == [
        "attached", "left out", "attached", "attached"]
    assert f"`{AUDIO.path}`" in lines[1] and "audio/wav" in lines[1]


def test_responses_sends_a_list_of_input_items() -> None:
    item = encode_result("openai-responses", exchange(IMAGE, AUDIO, DOC))
    text, *rest = item["output"]
    assert text["type"] == "input_text" and "## Attachments" in text["text"]
    assert rest == [
        {"type": "input_image", "image_url": "data:image/png;base64," + b64(PNG)},
        {"type": "input_file", "filename": "round-001-call_0123456789abcdef-3.pdf",
         "file_data": "data:application/pdf;base64," + b64(PDF)},
    ]


def test_chat_completions_takes_text_only_and_says_where_each_attachment_is() -> None:
    message = encode_result("openai", exchange(IMAGE, AUDIO))
    assert isinstance(message["content"], str)
    assert b64(PNG) not in message["content"]
    section = message["content"].split("## Attachments\n\n")[1].splitlines()
    assert len(section) == 2 and all("left out" in line for line in section)
    assert f"`{IMAGE.path}`" in section[0] and f"`{AUDIO.path}`" in section[1]


def test_gemini_sends_inline_data_parts() -> None:
    part = encode_result("gemini", exchange(IMAGE, AUDIO, TEXT))["functionResponse"]
    assert part["parts"] == [
        {"inlineData": {"mimeType": "image/png", "data": b64(PNG),
                        "displayName": "round-001-call_0123456789abcdef-1.png"}},
        {"inlineData": {"mimeType": "text/plain", "data": b64(b"plain words"),
                        "displayName": "round-001-call_0123456789abcdef-4.txt"}},
    ]
    assert "## Attachments" in part["response"]["output"]
    genai_types.FunctionResponse.model_validate_json(json.dumps(part))  # base64 bytes, as REST sends them


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_histories_with_attachments_validate_with_the_provider_sdk(protocol: str) -> None:
    rounds = [[exchange(IMAGE, AUDIO, DOC, TEXT), Exchange("call_2", "echo", {}, ResultView("plain"))]]
    history = encode_history(protocol, rounds)
    if protocol == "gemini":
        for content in history:
            genai_types.Content.model_validate_json(json.dumps(content))
    else:
        validate_history(protocol, history)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_result_without_attachments_is_encoded_as_before(protocol: str) -> None:
    plain = Exchange("call_1", "snap", {}, ResultView("Here it is."))
    encoded = encode_result(protocol, plain)
    assert "## Attachments" not in json.dumps(encoded)
    assert encoded == encode_result(protocol, Exchange("call_1", "snap", {}, ResultView("Here it is.", attachments=())))


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_an_attachment_whose_file_is_gone_is_left_out_everywhere(protocol: str) -> None:
    gone = AttachmentView(kind="image", mime_type="image/png", path=f"{ROOT}-1.png", size=10, data=None)
    encoded = json.dumps(encode_result(protocol, exchange(gone)))
    assert "cannot be read" in encoded
    assert '"image_url"' not in encoded and '"inlineData"' not in encoded and '"source"' not in encoded


def test_an_image_only_result_still_names_its_attachment() -> None:
    block = encode_result("anthropic", exchange(IMAGE, content=""))
    assert block["content"][0]["text"].startswith("## Attachments\n\n- attachment 1 (image, image/png")
    assert block["content"][1]["type"] == "image"


def test_abridge_cuts_base64_and_keeps_text() -> None:
    item = encode_result("openai-responses", exchange(IMAGE))
    short = abridge(item)
    assert short["output"][0] == item["output"][0]  # text has spaces: kept whole
    assert short["output"][1]["image_url"].startswith("data:image/png;base64,")
    assert short["output"][1]["image_url"].endswith(f"<{len(item['output'][1]['image_url'])} chars>")
    assert len(short["output"][1]["image_url"]) < 80


def sent(protocol: str, encoded: dict) -> int:
    """How many image attachments `encoded` (one result) sends."""
    if protocol == "anthropic":
        return sum(b["type"] == "image" for b in encoded["content"]) if isinstance(encoded["content"], list) else 0
    if protocol == "openai-responses":
        output = encoded["output"]
        return sum(i["type"] == "input_image" for i in output) if isinstance(output, list) else 0
    return len(encoded["functionResponse"].get("parts", []))


def text_of(protocol: str, encoded: dict) -> str:
    if protocol == "anthropic":
        content = encoded["content"]
        return content if isinstance(content, str) else content[0]["text"]
    if protocol == "openai-responses":
        output = encoded["output"]
        return output if isinstance(output, str) else output[0]["text"]
    return encoded["functionResponse"]["response"]["output"]


IMAGE_TAKERS = ("anthropic", "openai-responses", "gemini")


@pytest.mark.parametrize(("data", "sent_to", "says"), [
    pytest.param(png(8000, 8000), IMAGE_TAKERS, "", id="8000px"),
    pytest.param(png(8001, 10), ("openai-responses", "gemini"), "8001x10", id="8001px"),  # Anthropic: 8000 a side
    pytest.param(png(10, 50_000), ("openai-responses", "gemini"), "10x50000", id="50000px-high"),
    pytest.param(jpeg(9000, 9000), ("openai-responses", "gemini"), "9000x9000", id="jpeg-9000px"),
    # Anthropic counts its 5 MB on the base64 text: 3,932,161 bytes are 5,242,884 base64 characters
    pytest.param(png(2, 2, 3_932_160 - 33), IMAGE_TAKERS, "", id="5MiB-base64"),
    pytest.param(png(2, 2, 3_932_161 - 33), ("openai-responses", "gemini"), "5,242,884", id="past-5MiB-base64"),
])
@pytest.mark.parametrize("protocol", IMAGE_TAKERS)
def test_an_image_past_a_providers_limit_is_left_out_for_that_provider_only(data, sent_to, says, protocol) -> None:
    mime = "image/jpeg" if data.startswith(b"\xff\xd8") else "image/png"
    item = AttachmentView(kind="image", mime_type=mime, path=f"{ROOT}-1.png", size=len(data), data=data)
    encoded = encode_result(protocol, exchange(item))
    line = text_of(protocol, encoded).split("## Attachments\n\n")[1]
    if protocol in sent_to:
        assert sent(protocol, encoded) == 1 and line.endswith(": attached")
    else:
        assert sent(protocol, encoded) == 0 and "left out" in line and protocol in line and says in line


@pytest.mark.parametrize(("mime", "data"), [
    pytest.param("image/png", b"\x89PNG\r\n\x1a\n" + bytes(40), id="no-IHDR"),
    pytest.param("image/png", png(0, 10), id="zero-side"),
    pytest.param("image/png", png(2, 2)[:20], id="cut-short"),
    pytest.param("image/png", jpeg(2, 2), id="a-jpeg-named-png"),
    pytest.param("image/jpeg", b"\xff\xd8" + b"\xff\xfe\x00\x02" * 100_000, id="jpeg-comments-no-frame"),
    pytest.param("image/webp", b"RIFF\x00\x00\x00\x00WEBPALPH" + bytes(20), id="webp-no-vp8"),
])
@pytest.mark.parametrize("protocol", IMAGE_TAKERS)
def test_an_image_whose_header_gives_no_size_is_sent_to_no_provider(mime, data, protocol) -> None:
    item = AttachmentView(kind="image", mime_type=mime, path=f"{ROOT}-1.img", size=len(data), data=data)
    encoded = encode_result(protocol, exchange(item))
    assert sent(protocol, encoded) == 0
    assert "left out" in text_of(protocol, encoded).split("## Attachments\n\n")[1]


def test_past_twenty_images_in_a_request_anthropic_takes_at_most_2000_px_a_side() -> None:
    def rounds(n: int, big: AttachmentView) -> list[list[Exchange]]:
        small = view("image", "image/png", png(100, 100), 1, ".png")
        return [[Exchange(f"call_{k}", "snap", {}, ResultView("x", attachments=(big if k == 0 else small,)))]
                for k in range(n)]

    big = view("image", "image/png", png(2001, 10), 1, ".png")
    for protocol in IMAGE_TAKERS:  # 20 images: all sent
        history = json.dumps(encode_history(protocol, rounds(20, big)))
        assert "left out" not in history
    history = encode_history("anthropic", rounds(21, big))
    first = history[1]["content"][0]  # the first round's tool_result
    assert isinstance(first["content"], str) and "2001x10" in first["content"] and "2000" in first["content"]
    assert json.dumps(history).count('"type": "image"') == 20  # the 20 small ones still go
    for protocol in ("openai-responses", "gemini"):  # no such rule documented
        assert "left out" not in json.dumps(encode_history(protocol, rounds(21, big)))
    assert sent("anthropic", encode_result("anthropic", rounds(21, big)[0][0])) == 1  # one result alone
