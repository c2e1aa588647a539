"""Attachments in tool results, per provider: sent as that API takes them, or listed as left out.

Each encoding is checked against the provider SDK's request types (`protocol_sdk`); Gemini's
bytes are base64 in the REST JSON, so its parts are validated from JSON."""

from __future__ import annotations

import base64
import json

import pytest
from google.genai import types as genai_types
from protocol_sdk import validate_history

from toolbench.protocols import PROTOCOLS, AttachmentView, Exchange, ResultView, abridge, encode_history, encode_result

PNG = b"\x89PNG\r\n\x1a\n" + bytes(40)
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
