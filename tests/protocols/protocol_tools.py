"""Tools for the protocol tests: plain frozen records that fit `RenderableTool`."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "protocols"


@dataclass(frozen=True)
class Descriptor:
    description: str
    input_schema: dict[str, Any]


@dataclass(frozen=True)
class Tool:
    call_name: str
    descriptor: Descriptor
    tool_id: str | None = field(default=None)


def tool(
    call_name: str, schema: dict[str, Any] | None = None, description: str = "A tool.", tool_id: str | None = None
):
    return Tool(call_name, Descriptor(description, schema if schema is not None else {"type": "object"}), tool_id)


READ_FILE = tool(
    "workspace_read_file",
    {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Workspace path to read."},
            "offset": {"type": "integer", "minimum": 1, "description": "First line, 1-based."},
        },
        "required": ["path"],
        "additionalProperties": False,
    },
    "Read a text file from the workspace.",
    "builtin:workspace.read_file",
)
DICE_ROLL = tool(
    "dice_roll",
    {"type": "object", "properties": {"formula": {"type": "string"}}, "required": ["formula"]},
    "Roll dice, e.g. 3d6+4.",
    "builtin:dice.roll",
)
# What pydantic and zod emit for an MCP tool: $schema, $defs/$ref, nullable anyOf, bounds.
ISSUE_CREATE = tool(
    "mcp__my_server__issue_create",
    {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "$id": "https://example.test/issue-create",
        "title": "IssueCreate",
        "type": "object",
        "properties": {
            "title": {"type": "string", "title": "Title", "minLength": 1},
            "priority": {"type": "integer", "exclusiveMinimum": 0, "default": 3},
            "labels": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
            "assignee": {"anyOf": [{"$ref": "#/$defs/User"}, {"type": "null"}], "default": None},
            "metadata": {"type": "object", "additionalProperties": {"type": "string"}},
        },
        "required": ["title", "missing"],
        "additionalProperties": False,
        "$defs": {
            "User": {"type": "object", "properties": {"login": {"type": "string"}}, "required": ["login"]},
        },
    },
    "Create an issue in the tracker.",
    "mcp/0f3c:issue.create",
)
FINISH = tool(
    "workspace_finish",
    {"type": "object", "properties": {}, "additionalProperties": False},
    "Finish the run.",
    "builtin:workspace.finish",
)
TOOLS = (READ_FILE, DICE_ROLL, ISSUE_CREATE, FINISH)

RESPONSE_FIXTURES = {
    "openai": "openai_chat_response.json",
    "openai-responses": "openai_responses_response.json",
    "anthropic": "anthropic_messages_response.json",
    "gemini": "gemini_generate_content_response.json",
}


def load_response(protocol: str) -> dict[str, Any]:
    return json.loads((FIXTURES / RESPONSE_FIXTURES[protocol]).read_text(encoding="utf-8"))


def load_fixture(name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))
