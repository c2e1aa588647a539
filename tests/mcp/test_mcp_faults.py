"""Misbehaving stdio servers: each becomes a diagnostic or an error result within its timeout,
the manager keeps working, and no child process is left behind."""

from __future__ import annotations

import io
import sys
import time
from collections.abc import Callable

import pytest
from mcp_support import child_pids, fault_server, no_new_children, wait_until

from toolbench.core.errors import OutcomeUnknown, ToolError
from toolbench.core.ids import ToolId
from toolbench.core.results import ToolOutput
from toolbench.examples.demo_mcp import build_server
from toolbench.mcp import McpManager
from toolbench.mcp._procs import is_alive

Call = Callable[..., ToolOutput]


@pytest.fixture
def baseline() -> set[int]:
    """The children before the test (the `manager` fixture checks none is left after it closes)."""
    return child_pids()


def timed(fn: Callable[[], object]) -> tuple[object, float]:
    started = time.monotonic()
    return fn(), time.monotonic() - started


def test_garbage_on_stdout_times_out_with_the_lines_in_the_diagnostic(manager: McpManager, baseline: set[int]) -> None:
    info, elapsed = timed(lambda: manager.add("garbage", command=fault_server("garbage"), timeout=1.5))
    assert elapsed < 1.5 + 2
    assert (info.state, info.diagnostic_code) == ("failed", "mcp.server_timeout")  # type: ignore[attr-defined]
    assert "not JSON-RPC" in info.diagnostic and "<<garbage>>" in info.diagnostic  # type: ignore[attr-defined]
    assert no_new_children(baseline)
    assert manager.add("demo", server=build_server()).state == "active"


def test_a_server_that_exits_at_start_fails_with_its_stderr(manager: McpManager, baseline: set[int]) -> None:
    info, elapsed = timed(lambda: manager.add("exits", command=fault_server("exits_at_start"), timeout=10))
    assert elapsed < 10
    assert (info.state, info.diagnostic_code) == ("failed", "mcp.server_start_failed")  # type: ignore[attr-defined]
    assert info.stderr_tail == ("fatal: the demo configuration file is missing",)  # type: ignore[attr-defined]
    assert "configuration file is missing" in manager.diagnostics[0].message


def test_a_server_that_hangs_in_initialise_is_stopped(manager: McpManager, baseline: set[int]) -> None:
    info, elapsed = timed(lambda: manager.add("hangs", command=fault_server("hangs_in_init"), timeout=1.0))
    assert (info.state, info.diagnostic_code) == ("failed", "mcp.server_timeout")  # type: ignore[attr-defined]
    assert elapsed < 1.0 + 2  # the diagnostic comes at the deadline ...
    assert no_new_children(baseline)  # ... and the stuck process is stopped in the background


def test_a_missing_executable_fails_at_once(manager: McpManager) -> None:
    info = manager.add("missing", command=["/nonexistent/toolbench-server"])
    assert (info.state, info.diagnostic_code) == ("failed", "mcp.server_start_failed")
    assert "No such file" in (info.diagnostic or "")


def test_broken_tools_become_diagnostics_and_good_ones_stay(manager: McpManager, call: Call) -> None:
    info = manager.add("bad", command=fault_server("bad_tools"))
    assert info.state == "active"
    long_name = "mcp/bad:" + "x" * 200  # over the spec's 128: offered, with a warning
    assert [str(d.id) for d in manager.descriptors()] == ["mcp/bad:echo", "mcp/bad:issue.create", long_name,
                                                         "mcp/bad:last"]
    problems = {(str(d.subject), d.code) for d in manager.diagnostics}
    assert problems == {
        ("mcp/bad:bad\nname", "mcp.tool_name_invalid"),
        ("bad", "mcp.tool_name_invalid"),  # the empty name has no ToolId: the server is the subject
        ("mcp/bad:string_schema", "mcp.tool_schema_invalid"),
        ("mcp/bad:no_schema", "mcp.tool_schema_invalid"),
        ("mcp/bad:bad_property", "mcp.tool_schema_invalid"),
        ("mcp/bad:echo", "mcp.tool_duplicate"),
    }
    assert (long_name, "mcp.tool_name_long") in {(str(w.subject), w.code) for w in manager.warnings}
    assert len(info.tools) == 10  # five pages of two, every one accounted for
    assert call("mcp/bad:last", text="hi").content == "last: hi"
    with pytest.raises(ToolError) as caught:
        call("mcp/bad:string_schema")
    assert caught.value.code == "mcp.tool_unknown"


def test_a_ten_megabyte_answer_is_an_unknown_outcome_and_the_server_stays(manager: McpManager, call: Call) -> None:
    manager.add("big", command=fault_server("big_answer"), timeout=30)
    started = time.monotonic()
    with pytest.raises(OutcomeUnknown) as caught:
        call("mcp/big:big")
    assert time.monotonic() - started < 30
    assert caught.value.code == "mcp.call_outcome_unknown"
    assert caught.value.structured["outcomeUnknown"]["reason"] == "mcp.response_too_large"
    assert call("mcp/big:echo", text="small").content == "small"


def test_a_server_that_dies_mid_call_blocks_nothing_but_that_call(
    manager: McpManager, call: Call, baseline: set[int]
) -> None:
    first = manager.add("dies", command=fault_server("dies_mid_call"))
    assert first.pid is not None and is_alive(first.pid)
    with pytest.raises(OutcomeUnknown) as caught:
        call("mcp/dies:crash")
    assert caught.value.code == "mcp.call_outcome_unknown"
    assert "may have run" in caught.value.message and "before repeating" in caught.value.message
    assert caught.value.structured["outcomeUnknown"]["reason"] == "mcp.connection_lost"
    info = manager.info("dies")
    assert (info.state, info.diagnostic_code) == ("failed", "mcp.server_exited")
    assert wait_until(lambda: "crash: giving up in the middle of the call" in manager.info("dies").stderr_tail)
    with pytest.raises(ToolError) as not_sent:
        call("mcp/dies:echo", text="x")
    assert not_sent.value.code == "mcp.server_unavailable" and not isinstance(not_sent.value, OutcomeUnknown)
    assert wait_until(lambda: not is_alive(first.pid))  # type: ignore[arg-type]
    again = manager.refresh("dies")[0]
    assert again.state == "active" and again.pid not in (None, first.pid)
    assert call("mcp/dies:echo", text="back").content == "back"


def test_disable_stops_the_process_and_enable_starts_another(manager: McpManager, call: Call) -> None:
    pid = manager.add("srv", command=fault_server("dies_mid_call")).pid
    assert pid is not None and pid in child_pids()
    assert manager.disable("srv").state == "disabled"
    assert wait_until(lambda: not is_alive(pid))
    info = manager.enable("srv")
    assert info.state == "active" and info.pid not in (None, pid)
    assert call("mcp/srv:echo", text="on").content == "on"


def test_stdio_works_when_stderr_has_no_file_descriptor(
    manager: McpManager, call: Call, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stderr", io.StringIO())  # what ipykernel gives a kernel
    info = manager.add("bad", command=fault_server("bad_tools"))
    assert info.state == "active"
    assert info.log_path is not None and info.log_path.name == "bad.stderr.log"
    assert wait_until(lambda: manager.info("bad").stderr_tail == ("bad_tools ready",))
    assert call(str(ToolId.mcp("bad", "echo")), text="ok").content == "echo: ok"
