"""A tool's own schema that cannot be compiled: refused where the developer can fix it, coded
where a model meets it, and never fetched over the network."""

from __future__ import annotations

from collections.abc import Awaitable, Sequence
from pathlib import Path
from typing import Any

import pytest

from toolbench import Profile, ToolbenchError, ToolContext, ToolDescriptor, ToolId, ToolOutput, ToolSource, Workbench
from toolbench.core.schema_check import SchemaInvalid, compile_schema

# A $ref to a host that cannot exist: fetching it would hang on DNS in an offline CI, or fail slowly.
REMOTE = {"type": "object", "properties": {"x": {"$ref": "https://example.invalid/x.json"}}}
BROKEN = [
    (REMOTE, "has a \\$ref that does not resolve"),
    ({"type": "object", "properties": {"x": {"$ref": "#/defs/missing"}}}, "has a \\$ref that does not resolve"),
    ({"type": "object", "properties": {"x": {"type": "nonsense"}}}, "is not a valid JSON Schema at properties/x/type"),
]


@pytest.mark.parametrize(("schema", "why"), BROKEN)
def test_compile_schema_says_why_and_never_fetches(schema: dict[str, Any], why: str) -> None:
    with pytest.raises(SchemaInvalid, match=why) as info:
        compile_schema(schema)
    assert "error sending request" not in str(info.value)  # offline: no request was made


def test_an_unknown_dialect_is_checked_as_draft_2020_12() -> None:
    validator = compile_schema({"$schema": "https://example.invalid/dialect", "type": "object",
                                "required": ["x"]})
    assert not validator.is_valid({}) and validator.is_valid({"x": 1})


@pytest.mark.parametrize(("schema", "why"), BROKEN)
def test_register_tool_refuses_a_schema_that_cannot_compile(tmp_path: Path, schema: dict[str, Any],
                                                            why: str) -> None:
    with Workbench(tmp_path) as bench, pytest.raises(ToolbenchError, match=why) as info:
        bench.register_tool("e", lambda x=None: "ok", name="t", input_schema=schema)
    assert info.value.code == "bench.misuse"


class _Broken(ToolSource):
    """A source whose tool carries a schema that cannot compile (one the bench did not build)."""

    tool = ToolId.parse("extension/broken:t")

    def __init__(self) -> None:
        self.ran = False

    def descriptors(self) -> Sequence[ToolDescriptor]:
        return [ToolDescriptor(id=self.tool, description="Broken.", input_schema=REMOTE)]

    def call(self, tool_id: ToolId, arguments: dict[str, Any], ctx: ToolContext, *,
             blocking: bool) -> ToolOutput | Awaitable[ToolOutput]:
        self.ran = True
        return ToolOutput("ran")


def test_a_call_of_a_tool_whose_schema_cannot_compile_is_coded_and_not_run(tmp_path: Path) -> None:
    source = _Broken()
    with Workbench(tmp_path, Profile.default().edit(allow=[str(_Broken.tool)])) as bench:
        bench.add_source(source)
        result = bench.invocation().call("t", {"x": 1})
    assert (result.is_error, result.error_code, source.ran) == (True, "tool.schema_invalid", False)
    assert "has a $ref that does not resolve" in result.content and "do not retry" in result.content
