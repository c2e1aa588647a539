"""The result mapping (reference §5.4 step 1, table 9.11) as tables over wire JSON."""

from __future__ import annotations

from typing import Any

import pytest

from toolbench.mcp import EMPTY_RESULT
from toolbench.mcp._mapping import map_server_error, map_tool_result, render_markdown, response_chars

IMAGE = {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def test_text_structured_and_image_give_text_details_and_a_note_never_the_code() -> None:
    mapped = map_tool_result(
        {"content": [text("Created issue."), IMAGE], "structuredContent": {"issueId": 42}, "_meta": {"trace": 1}}
    )
    assert "Created issue." in mapped.content
    assert "issueId" in mapped.content and "42" in mapped.content
    assert "## Details" in mapped.content and "## Notes" in mapped.content
    assert "Image content is not supported" in mapped.content
    assert "mcp.call_content_unsupported" not in mapped.content
    assert "Result metadata" not in mapped.content  # metadata is recorded, not noted
    codes = [d["code"] for d in mapped.structured["diagnostics"]]
    assert codes == ["mcp.call_content_unsupported", "mcp.call_metadata_unsupported"]
    assert mapped.structured["diagnostics"][0]["contentIndex"] == 1
    assert mapped.structured["structuredContent"] == {"issueId": 42}
    assert mapped.is_error is False


@pytest.mark.parametrize(
    "wire_text",
    ['{"issueId":42}', '{\n  "issueId": 42\n}', '  {"issueId": 42}  '],
    ids=["compact", "pretty", "padded"],
)
def test_text_that_is_the_json_of_structured_content_appears_once(wire_text: str) -> None:
    mapped = map_tool_result({"content": [text(wire_text)], "structuredContent": {"issueId": 42}})
    assert mapped.content.count("issueId") == 1


@pytest.mark.parametrize(
    ("result", "expected"),
    [
        ({}, EMPTY_RESULT),
        ({"content": []}, EMPTY_RESULT),
        ({"content": [text("   ")]}, EMPTY_RESULT),
        ({"content": [text("a"), text(" b ")]}, "a\n\nb"),
        ({"content": [text("done")], "structuredContent": None}, "done"),
        ({"content": [text("5")], "structuredContent": {"result": 5}}, "5"),
        ({"content": [text("long text")], "structuredContent": {"result": "long text"}}, "long text"),
        ({"content": [], "structuredContent": {"a": [1, {"b": None}]}},
         "## Details\n\n- a:\n  - 1\n  - [1]\n    - b: null"),
    ],
    ids=["nothing", "empty-list", "blank-text", "two-blocks", "null-structured", "wrapped-number",
         "wrapped-text", "nested-details"],
)
def test_content_table(result: dict[str, Any], expected: str) -> None:
    assert map_tool_result(result).content == expected


def test_empty_result_is_the_fixed_sentence() -> None:
    assert "completed without content" in EMPTY_RESULT


@pytest.mark.parametrize(
    ("block", "note"),
    [
        ({"type": "audio", "data": "AAAA", "mimeType": "audio/wav"}, "Audio content is not supported (audio/wav)"),
        ({"type": "resource_link", "uri": "file:///a.txt", "name": "a"}, "Resource content is not supported"),
        ({"type": "resource", "resource": {"uri": "file:///b", "text": "x"}}, "embedded `file:///b`"),
        ({"type": "hologram"}, "Content of type `hologram` is not supported"),
    ],
    ids=["audio", "resource-link", "embedded-resource", "unknown-type"],
)
def test_unreadable_blocks_become_notes(block: dict[str, Any], note: str) -> None:
    mapped = map_tool_result({"content": [text("ok"), block]})
    assert mapped.content.startswith("ok\n\n## Notes\n\n- ")
    assert note in mapped.content


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
    result = {
        "content": [text("abc"), IMAGE, {"type": "resource", "resource": {"uri": "u", "blob": "QUJD"}}],
        "structuredContent": {"k": "界"},
    }
    assert response_chars(result) == 3 + len(IMAGE["data"]) + 4 + len('{"k": "界"}')
