"""Results and the projection of long results into a notice plus files (reference §5.3-5.4,
table 9.9)."""

from __future__ import annotations

import json
import os
import stat

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolbench import ToolOutput, ToolResult
from toolbench.core.results import call_file_stem, error_result, project, wrap_long_lines

READABLE = "tool-results/inv_root/round-001-call_fe79da5f09df9787.txt"
AUDIT = "tool-results/inv_root/round-001-call_fe79da5f09df9787.json"


def long_result(text: str, refs: tuple[str, ...] = ()) -> ToolResult:
    return ToolResult(call_id="call_mcp", tool_id="extension/e:long", content=text,
                      structured={"issueId": 42}, resource_refs=refs)


def test_call_file_stem_follows_the_reference_naming():
    assert call_file_stem("inv_root", 1, "call_mcp") == "inv_root/round-001-call_fe79da5f09df9787"
    assert call_file_stem("inv", 12, "x").startswith("inv/round-012-call_")
    assert call_file_stem("inv", 1000, "x").startswith("inv/round-1000-call_")


def test_result_wire_form_is_camel_case_and_reads_back():
    result = error_result("c1", "builtin:x", "tool.invalid_arguments", "bad")
    wire = result.to_json()
    assert wire == {"callId": "c1", "toolId": "builtin:x", "content": "bad",
                    "structured": {"error": {"code": "tool.invalid_arguments", "message": "bad"}},
                    "isError": True, "errorCode": "tool.invalid_arguments", "resourceRefs": []}
    assert ToolResult.model_validate(wire) == result


def test_results_are_frozen():
    with pytest.raises(ValueError):
        long_result("x").content = "y"  # type: ignore[misc]


@pytest.mark.parametrize("length", [0, 9_999, 10_000])
def test_results_up_to_the_limit_stay_inline(length):
    assert project(long_result("界" * length), limit=10_000, invocation_id="inv_root", round_no=1,
                   read_call_name="read", search_call_name="search") is None


def test_projection_of_60000_chars_with_a_10000_limit():
    text = "界" * 60_000
    out = project(long_result(text), limit=10_000, invocation_id="inv_root", round_no=1,
                  read_call_name="workspace_read_file", search_call_name="workspace_search_files")
    assert out is not None
    assert (out.readable_path, out.audit_path) == (READABLE, AUDIT)
    content = out.result.content
    assert content.count("界") == 3_000
    assert len(content) < 10_000
    assert "(60000 characters)" in content
    assert f"`{READABLE}`" in content and AUDIT not in content
    assert "preview" in content.lower()
    assert "`workspace_read_file`" in content and "`workspace_search_files`" in content
    assert content.endswith("界" * 3_000)
    assert out.result.structured == {"externalized": True, "path": READABLE, "auditPath": AUDIT,
                                     "charCount": 60_000, "charLimit": 10_000}
    assert out.result.resource_refs == (READABLE, AUDIT)
    assert (out.result.call_id, out.result.tool_id, out.result.is_error) == ("call_mcp", "extension/e:long", False)
    lines = out.readable_text.split("\n")
    assert len(lines) == 20 and all(len(line) <= 3_000 for line in lines)
    assert "".join(lines) == text
    audit = json.loads(out.audit_text)
    assert audit["content"] == text
    assert audit["structured"] == {"issueId": 42}


def test_read_and_search_hints_appear_only_for_tools_in_the_snapshot():
    def head_lines(read: str | None, search: str | None) -> list[str]:
        out = project(long_result("y" * 50), limit=10, invocation_id="i", round_no=1,
                      read_call_name=read, search_call_name=search)
        assert out is not None
        head, _, preview = out.result.content.partition("\n\n## Prefix preview\n\n")
        assert preview.endswith("y" * 50)
        return head.split("\n")

    assert len(head_lines(None, None)) == 1
    read_only = head_lines("rf", None)
    assert len(read_only) == 2 and "`rf`" in read_only[1]
    search_only = head_lines(None, "sf")
    assert len(search_only) == 2 and "`sf`" in search_only[1]
    both = head_lines("rf", "sf")
    assert len(both) == 3 and "`rf`" in both[1] and "`sf`" in both[2]


def test_existing_resource_refs_are_kept_and_not_repeated():
    out = project(long_result("z" * 20, refs=("work/a.md", READABLE)), limit=10, invocation_id="inv_root",
                  round_no=1, read_call_name=None, search_call_name=None)
    assert out is not None
    assert out.result.resource_refs == ("work/a.md", READABLE, AUDIT)


def test_long_lines_are_wrapped_and_newlines_reset_the_count():
    text = "a" * 7_000 + "\n" + "b" * 2_999 + "\n" + "c" * 3_001
    lines = wrap_long_lines(text).split("\n")
    assert [len(line) for line in lines] == [3_000, 3_000, 1_000, 2_999, 3_000, 1]


@given(text=st.text(alphabet="ab\n界", max_size=60), width=st.integers(1, 7))
def test_wrapping_only_inserts_newlines_and_bounds_every_line(text, width):
    wrapped = wrap_long_lines(text, width)
    assert all(len(line) <= width for line in wrapped.split("\n"))
    assert wrapped.replace("\n", "") == text.replace("\n", "")
    assert wrapped.count("\n") >= text.count("\n")


@given(text=st.text(alphabet="ab\n", max_size=80), width=st.integers(1, 9))
def test_the_long_line_check_agrees_with_the_longest_line(text, width):
    from toolbench.core.results import _has_line_longer_than

    assert _has_line_longer_than(text, width) == (max(map(len, text.split("\n"))) > width)


# --- through the bench: an extension tool returning 60,000 '界' (table 9.9) ----------------


def test_extension_result_over_the_limit_is_externalised(make_bench, profile_with):
    profile = profile_with("builtin:workspace.read_file", "builtin:workspace.search_files", "extension/e:long",
                           external_result_inline_char_limit=10_000)
    bench = make_bench()
    bench.register_tool("e", lambda: ToolOutput(content="界" * 60_000, structured={"issueId": 42}), name="long")
    bench.profile = profile
    inv = bench.invocation(id="inv_root")
    result = inv.call("long", {}, call_id="call_mcp")

    assert not result.is_error
    content = result.content
    assert content.count("界") == 3_000
    assert len(content) < 10_000
    assert f"`{READABLE}`" in content and AUDIT not in content and "auditPath" not in content
    assert "preview" in content.lower()
    for hint in ("workspace_read_file", "workspace_search_files"):  # hinted when the snapshot offers it
        assert (f"`{hint}`" in content) == (hint in inv.snapshot.call_names)
    assert result.structured == {"externalized": True, "path": READABLE, "auditPath": AUDIT,
                                 "charCount": 60_000, "charLimit": 10_000}
    assert result.resource_refs == (READABLE, AUDIT)

    readable = bench.workspace / READABLE
    lines = readable.read_text(encoding="utf-8").split("\n")
    assert all(len(line) <= 3_000 for line in lines)
    assert "".join(lines) == "界" * 60_000
    audit = json.loads((bench.workspace / AUDIT).read_text(encoding="utf-8"))
    assert audit["content"] == "界" * 60_000
    assert audit["structured"] == {"issueId": 42}
    assert audit["callId"] == "call_mcp" and audit["isError"] is False
    for path in (readable, bench.workspace / AUDIT):
        assert stat.S_IMODE(os.stat(path).st_mode) & 0o222 == 0  # read-only

    (record,) = inv.records
    assert record.externalized and record.result == result
    row = inv.to_dataframe().iloc[0]
    assert bool(row["externalized"]) and row["content_chars"] == len(content)
    bench.flush()  # the audit file is not written twice
    assert json.loads((bench.workspace / AUDIT).read_text(encoding="utf-8"))["content"] == "界" * 60_000


def test_extension_result_at_the_limit_stays_inline(bench):
    bench.register_tool("e", lambda: "x" * 500, name="exact")
    bench.enable("extension/e:exact")
    bench.profile = bench.profile.edit(external_result_inline_char_limit=500)
    inv = bench.invocation()
    result = inv.call("exact", {})
    assert result.content == "x" * 500
    assert not inv.records[0].externalized
    assert list((bench.workspace / "tool-results").rglob("*.txt")) == []


def test_builtin_results_are_never_projected_by_default(bench):
    bench.profile = bench.profile.edit(external_result_inline_char_limit=1)
    inv = bench.invocation()
    result = inv.call("dice_roll", {"formula": "3d6"})
    assert not result.is_error and len(result.content) > 1
    assert not inv.records[0].externalized
