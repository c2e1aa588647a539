"""The result mapping (reference §5.4 step 1, table 9.11; issue 13) as tables over wire JSON.

The shapes below are what the reference servers send (`tests/mcp/test_real_servers.py` calls
the servers themselves): the filesystem server repeats its text and its media blocks in
`structuredContent`, the memory server's text is the JSON of a field, the time server's the JSON
of the whole value, server-everything embeds resources and links them."""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any

import pytest

from toolbench.mcp import EMPTY_RESULT
from toolbench.mcp._mapping import map_server_error, map_tool_result, render_markdown, response_chars

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4  # long enough for every binary rule
PNG_B64 = base64.b64encode(PNG).decode()
WAV = b"RIFF" + bytes(300)
WAV_B64 = base64.b64encode(WAV).decode()
IMAGE = {"type": "image", "data": PNG_B64, "mimeType": "image/png"}
AUDIO = {"type": "audio", "data": WAV_B64, "mimeType": "audio/wav"}


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def test_text_structured_and_image_give_text_details_and_the_image_as_an_attachment() -> None:
    mapped = map_tool_result(
        {"content": [text("Created issue."), IMAGE], "structuredContent": {"issueId": 42}, "_meta": {"trace": 1}}
    )
    assert mapped.content == "Created issue.\n\n## Details\n\n- issueId: 42"
    assert "mcp.call_" not in mapped.content and "Result metadata" not in mapped.content
    assert [(a.kind, a.mime_type, a.data) for a in mapped.attachments] == [("image", "image/png", PNG)]
    assert [d["code"] for d in mapped.structured["diagnostics"]] == ["mcp.call_metadata_unsupported"]
    assert mapped.structured["structuredContent"] == {"issueId": 42}
    assert mapped.is_error is False


@pytest.mark.parametrize(
    "wire_text",
    ['{"issueId":42}', '{\n  "issueId": 42\n}', '  {"issueId": 42}  '],
    ids=["compact", "pretty", "padded"],
)
def test_text_that_is_the_json_of_structured_content_appears_once_as_the_server_wrote_it(wire_text: str) -> None:
    mapped = map_tool_result({"content": [text(wire_text)], "structuredContent": {"issueId": 42}})
    assert mapped.content == wire_text.strip()


@pytest.mark.parametrize(
    ("result", "expected"),
    [
        ({}, EMPTY_RESULT),
        ({"content": []}, EMPTY_RESULT),
        ({"content": [text("   ")]}, EMPTY_RESULT),
        ({"content": [text("a"), text(" b ")]}, "a\n\nb"),
        ({"content": [text("done")], "structuredContent": None}, "done"),
        ({"content": [text("5")], "structuredContent": {"result": 5}}, "5"),
        ({"content": [text("5")], "structuredContent": {"result": 5, "unit": "m"}}, "5\n\n## Details\n\n- result: 5\n"
         "- unit: m"),
        ({"content": [text("true")], "structuredContent": {"result": 1}}, "true\n\n## Details\n\n- result: 1"),
        ({"content": [text("long text")], "structuredContent": {"result": "long text"}}, "long text"),
        ({"content": [], "structuredContent": {"a": [1, {"b": None}]}},
         "## Details\n\n- a:\n  - 1\n  - [1]\n    - b: null"),
        ({"content": [text("ok")], "structuredContent": {}}, "ok"),
    ],
    ids=["nothing", "empty-list", "blank-text", "two-blocks", "null-structured", "wrapped-number",
         "number-beside-a-field", "bool-is-not-a-number", "wrapped-text", "nested-details", "empty-structured"],
)
def test_content_table(result: dict[str, Any], expected: str) -> None:
    assert map_tool_result(result).content == expected


def test_empty_result_is_the_fixed_sentence() -> None:
    assert "completed without content" in EMPTY_RESULT


# --- nothing is said twice ----------------------------------------------------------------

FILE = "line one\nline two\n" * 20
ENTITIES = [{"name": "Ada", "entityType": "person", "observations": ["wrote the first program", "liked maths"]}]
TIME = {"timezone": "UTC", "datetime": "2026-12-01T12:00:00+00:00", "day_of_week": "Tuesday", "is_dst": False}


@pytest.mark.parametrize(
    ("result", "expected"),
    [
        ({"content": [text(FILE)], "structuredContent": {"content": FILE}}, FILE.strip()),
        ({"content": [text(json.dumps(ENTITIES, indent=2))], "structuredContent": {"entities": ENTITIES}},
         json.dumps(ENTITIES, indent=2)),
        ({"content": [text(json.dumps(TIME, indent=2))], "structuredContent": TIME}, json.dumps(TIME, indent=2)),
        ({"content": [text("Observations deleted successfully")],
          "structuredContent": {"success": True, "message": "Observations deleted successfully"}},
         "Observations deleted successfully\n\n## Details\n\n- success: true"),
        ({"content": [text("a"), text("b")], "structuredContent": {"all": "a\n\nb", "n": 2}},
         "a\n\nb\n\n## Details\n\n- n: 2"),
        ({"content": [text("summary"), text(json.dumps({"rows": [1, 2]}))],
          "structuredContent": {"rows": [1, 2], "more": {"rows": [1, 2]}}},
         'summary\n\n{"rows": [1, 2]}\n\n## Details\n\n- rows:\n  - 1\n  - 2'),
        ({"content": [text("Here it is")], "structuredContent": {"content": [text("Here it is")]}}, "Here it is"),
    ],
    ids=["filesystem-read", "memory-create", "time-json", "memory-delete", "joined-text", "nested-json",
         "text-block-copy"],
)
def test_details_never_repeat_what_the_text_says(result: dict[str, Any], expected: str) -> None:
    assert map_tool_result(result).content == expected


def test_a_filesystem_read_is_as_long_as_the_file() -> None:
    big = "The quick brown fox jumps over the lazy dog, again and again. " * 500
    mapped = map_tool_result({"content": [text(big)], "structuredContent": {"content": big}})
    assert len(mapped.content) == len(big.strip())


# --- binary content is kept, never inlined --------------------------------------------------

DATA_URL = "data:image/png;base64," + PNG_B64


@pytest.mark.parametrize(
    ("result", "kinds"),
    [
        ({"content": [IMAGE]}, [("image", "image/png", PNG)]),
        ({"content": [AUDIO]}, [("audio", "audio/wav", WAV)]),
        ({"content": [IMAGE], "structuredContent": {"content": [IMAGE]}}, [("image", "image/png", PNG)]),
        ({"content": [AUDIO], "structuredContent": {"content": [AUDIO]}}, [("audio", "audio/wav", WAV)]),
        ({"content": [{"type": "resource", "resource": {"uri": "demo://b/2", "mimeType": "application/gzip",
                                                         "blob": PNG_B64}}]}, [("blob", "application/gzip", PNG)]),
        ({"content": [text("see")], "structuredContent": {"thumbnail": DATA_URL}}, [("image", "image/png", PNG)]),
        ({"content": [text("see")], "structuredContent": {"raw": PNG_B64}},
         [("blob", "application/octet-stream", PNG)]),
        ({"content": [text("see")], "structuredContent": {"pic": {"type": "image", "data": PNG_B64,
                                                                   "mimeType": "image/png"}}},
         [("image", "image/png", PNG)]),
        ({"content": [IMAGE, AUDIO, IMAGE], "structuredContent": {"a": PNG_B64, "b": {"blob": WAV_B64, "uri": "u"}}},
         [("image", "image/png", PNG), ("audio", "audio/wav", WAV)]),
    ],
    ids=["image", "audio", "media-read-image", "media-read-audio", "blob-resource", "data-url-field",
         "base64-field", "block-in-structured", "same-payload-once"],
)
def test_binary_content_becomes_attachments_and_never_text(result: dict[str, Any], kinds: list[Any]) -> None:
    mapped = map_tool_result(result)
    assert [(a.kind, a.mime_type, a.data) for a in mapped.attachments] == kinds
    recorded = json.dumps(mapped.structured)
    for payload in (PNG_B64, WAV_B64, PNG_B64[:64], WAV_B64[:64]):
        assert payload not in mapped.content
        assert payload not in recorded  # the records hold a reference; the bytes are in the file
    assert "## Notes" not in mapped.content


@pytest.mark.parametrize(
    ("block_text", "kind"),
    [(json.dumps({"name": "logo", "png": PNG_B64}, indent=2), "blob"), (DATA_URL, "image"),
     (json.dumps({"png": DATA_URL}), "image")],
    ids=["json-with-base64", "data-url", "json-with-data-url"],
)
def test_a_text_block_holding_binary_shows_a_reference(block_text: str, kind: str) -> None:
    structured = json.loads(block_text) if block_text.startswith("{") else None  # as the Python SDK sends it
    mapped = map_tool_result({"content": [text(block_text)], "structuredContent": structured})
    assert [(a.kind, a.data) for a in mapped.attachments] == [(kind, PNG)]
    assert PNG_B64[:64] not in mapped.content and "attachment 1]" in mapped.content
    assert "## Details" not in mapped.content  # the structured copy says nothing more


def test_a_copy_of_the_media_block_leaves_no_details_and_no_text() -> None:
    mapped = map_tool_result({"content": [IMAGE], "structuredContent": {"content": [IMAGE]}})
    assert mapped.content == ""  # the attachment is the whole result
    assert mapped.structured["structuredContent"]["content"][0]["data"].startswith("[image image/png")


def test_a_binary_field_is_shown_as_a_reference_to_its_attachment() -> None:
    mapped = map_tool_result({"content": [text("Rendered.")], "structuredContent": {"png": DATA_URL, "w": 64}})
    reference = f"[image image/png, {len(PNG):,} bytes: attachment 1]"
    assert mapped.content == f"Rendered.\n\n## Details\n\n- png: {reference}\n- w: 64"


@pytest.mark.parametrize(
    "value",
    [hashlib.sha512(b"x").hexdigest() * 3, "ACGT" * 100, "x" * 30_000, "QUJD", "Supercalifragilistic" * 16],
    ids=["hex-digest", "dna", "one-letter", "short", "long-word"],
)
def test_long_text_without_spaces_stays_text(value: str) -> None:
    mapped = map_tool_result({"content": [text(value)], "structuredContent": {"v": value, "w": 1}})
    assert mapped.attachments == ()
    assert mapped.content == f"{value}\n\n## Details\n\n- w: 1"
    alone = map_tool_result({"content": [text("ok")], "structuredContent": {"v": value}})
    assert alone.attachments == () and alone.content == f"ok\n\n## Details\n\n- v: {value}"


def test_data_that_is_not_base64_is_noted_not_shown() -> None:
    bad = {"type": "image", "data": "not base64!", "mimeType": "image/png"}
    mapped = map_tool_result({"content": [text("ok"), bad]})
    assert mapped.attachments == ()
    assert mapped.content.startswith("ok\n\n## Notes\n\n- Image content (image/png) is not valid base64")
    assert "not base64!" not in mapped.content


def test_an_error_result_keeps_no_attachment_and_says_so() -> None:
    mapped = map_tool_result({"content": [text("Render failed"), IMAGE], "isError": True})
    assert mapped.is_error and mapped.attachments == ()
    assert mapped.content.startswith("Render failed\n\n## Notes\n\n- Image content (image/png, ")
    assert PNG_B64[:64] not in mapped.content


# --- resources reach the model ----------------------------------------------------------------

def test_an_embedded_text_resource_reaches_the_model_with_its_uri() -> None:
    resource = {"type": "resource", "resource": {"uri": "demo://text/1", "mimeType": "text/plain", "text": "Hello.\n"}}
    mapped = map_tool_result({"content": [text("Here:"), resource, text("Done.")]})
    assert mapped.content == "Here:\n\nResource `demo://text/1` (text/plain):\n\nHello.\n\nDone."
    assert mapped.attachments == ()


def test_a_resource_link_is_a_line_with_its_uri() -> None:
    link = {"type": "resource_link", "uri": "demo://blob/1", "name": "Blob 1", "mimeType": "text/plain",
            "description": "A plaintext resource"}
    mapped = map_tool_result({"content": [link]})
    assert mapped.content == "Resource link `demo://blob/1` (Blob 1, text/plain): A plaintext resource"


@pytest.mark.parametrize(
    ("block", "note"),
    [
        ({"type": "hologram"}, "Content of type `hologram` is not supported"),
        ({"type": "resource", "resource": {"uri": "file:///b"}}, "Resource `file:///b` has neither text nor a blob"),
        ("just a string", "A content block that is not an object"),
    ],
    ids=["unknown-type", "empty-resource", "not-an-object"],
)
def test_unusable_blocks_become_notes(block: Any, note: str) -> None:
    mapped = map_tool_result({"content": [text("ok"), block]})
    assert mapped.content.startswith("ok\n\n## Notes\n\n- " + note)
    assert [d["contentIndex"] for d in mapped.structured["diagnostics"]] == [1]


def test_is_error_keeps_the_text_and_flags_it() -> None:
    mapped = map_tool_result({"content": [text("Repository not found")], "isError": True})
    assert mapped.is_error and mapped.content == "Repository not found"


def test_protocol_error_gives_message_and_error_details() -> None:
    mapped = map_server_error(-32602, "Invalid params", {"field": "title", "reason": "missing"})
    assert mapped.content.startswith("Invalid params\n\n## Error details\n\n")
    assert "- field: title" in mapped.content
    assert mapped.structured == {
        "serverError": {"code": -32602, "message": "Invalid params", "data": {"field": "title", "reason": "missing"}}
    }
    assert map_server_error(-1, "boom").content == "boom"


def test_markdown_rendering_of_scalars_and_multiline_strings() -> None:
    assert render_markdown(42) == "42"
    assert render_markdown({"ok": True, "none": None, "empty": {}, "list": []}) == (
        "- ok: true\n- none: null\n- empty: {}\n- list: []"
    )
    assert render_markdown({"note": "line 1\nline 2"}) == "- note: line 1\n  line 2"


def test_response_chars_counts_text_data_resources_and_json() -> None:
    small = {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}
    result = {
        "content": [text("abc"), small, {"type": "resource", "resource": {"uri": "u", "blob": "QUJD"}}],
        "structuredContent": {"k": "界"},
    }
    assert response_chars(result) == 3 + len(small["data"]) + 4 + len('{"k": "界"}')
