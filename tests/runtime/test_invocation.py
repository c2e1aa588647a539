"""Invocations through the public API: the gate, argument checks, completion tools, records
on disk, concurrency, and the sync facade inside a running loop (reference §1.5, §4, §5.3)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from toolbench import (
    MISSING,
    Invocation,
    Profile,
    ToolArguments,
    ToolbenchError,
    ToolResult,
    Workbench,
)
from toolbench.core.fileio import write_once
from toolbench.core.results import call_file_stem
from toolbench.core.snapshot import prepare
from toolbench.tools.state import InvocationState

COLUMNS = ["round", "call_id", "call_name", "tool_id", "arguments", "is_error", "error_code", "elapsed_ms",
           "content_chars", "externalized", "via"]


class Counter:
    """An extension tool that counts its calls and echoes its arguments."""

    def __init__(self) -> None:
        self.calls: list[dict] = []
        self._lock = threading.Lock()

    def __call__(self, **arguments):
        with self._lock:
            self.calls.append(arguments)
        return {"echo": arguments}


def with_echo(bench: Workbench, *, name: str = "echo", **tools) -> Counter:
    """Register an open-schema `extension/t:<name>` counting tool, allow it, apply `tools` settings."""
    counter = Counter()
    tool_id = bench.register_tool("t", counter, name=name, input_schema={"type": "object"})
    bench.enable(tool_id)
    if tools:
        bench.profile = bench.profile.edit(**tools)
    return counter


def stem_files(bench: Workbench, inv_id: str, round_no: int, call_id: str) -> tuple:
    stem = call_file_stem(inv_id, round_no, call_id)
    return bench.workspace / "tool-args" / f"{stem}.json", bench.workspace / "tool-results" / f"{stem}.json"


# --- plain calls --------------------------------------------------------------------------


def test_a_call_returns_its_result_and_is_recorded(bench):
    inv = bench.invocation()
    result = inv.call("dice_roll", {"formula": "2d6"}, call_id="call_a")
    assert isinstance(result, ToolResult)
    assert (result.call_id, result.tool_id, result.is_error, result.error_code) == (
        "call_a", "builtin:dice.roll", False, None)
    (record,) = inv.records
    assert (record.round, record.call_id, record.call_name, record.tool_id) == (1, "call_a", "dice_roll",
                                                                               "builtin:dice.roll")
    assert record.arguments == ToolArguments.decode({"formula": "2d6"})
    assert record.result == result and not record.externalized and record.elapsed_ms >= 0


def test_each_call_is_its_own_round_and_a_turn_shares_one(bench):
    counter = with_echo(bench)
    inv = bench.invocation()
    inv.call("echo", {})
    inv.call("echo", {})
    results = inv.turn([("echo", {"i": 1}), ("echo", '{"i":2}'), ("echo",)])
    assert [r.is_error for r in results] == [False, False, False]
    assert [r.round for r in inv.records] == [1, 2, 3, 3, 3]
    assert len({r.call_id for r in inv.records}) == 5
    assert counter.calls[-3:] == [{"i": 1}, {"i": 2}, {}]


def test_arguments_may_be_sent_in_any_wire_form(bench):
    counter = with_echo(bench)
    inv = bench.invocation()
    for wire in (MISSING, None, "", "  ", "null", "{}", {}, '{"a": 1}', {"a": 1}, ToolArguments.decode({"a": 1})):
        assert not inv.call("echo", wire).is_error
    assert counter.calls == [{}] * 7 + [{"a": 1}] * 3


def test_unknown_call_names_are_charged_and_list_the_names(bench):
    with_echo(bench, max_calls_per_run=3)
    inv = bench.invocation()
    result = inv.call("workspace.read_file", {})
    assert result.is_error and result.error_code == "model.unknown_tool_call"
    assert result.tool_id is None and inv.records[0].tool_id is None
    assert result.structured["available"] == ["dice_roll", "echo"]
    assert "`dice_roll`" in result.content and "`echo`" in result.content
    assert inv.budget()["total"] == 2
    inv.call("nope", {})
    inv.call("echo", {})
    assert inv.call("nope", {}).error_code == "agent.tool_budget_exhausted"
    assert inv.call("echo", {}).error_code == "agent.tool_budget_exhausted"


def test_malformed_arguments_are_charged_before_they_are_rejected(bench):
    counter = with_echo(bench, max_calls_per_run=5, max_calls_per_tool={"extension/t:echo": 1})
    inv = bench.invocation(id="inv_bad")
    raw = '{"query": "' + "q" * 300
    result = inv.call("echo", raw, call_id="call_bad")
    assert result.is_error and result.error_code == "tool.invalid_arguments"
    assert result.structured["error"]["code"] == "tool.invalid_arguments"
    assert raw[:200] + "…" in result.content and raw[:201] not in result.content
    assert counter.calls == []  # never dispatched
    assert inv.budget() == {"total": 4, "per_tool": {"echo": 0}}
    assert inv.call("echo", {}).error_code == "agent.tool_budget_exhausted"  # the per-tool unit is spent
    bench.flush()
    args_file, _ = stem_files(bench, "inv_bad", 1, "call_bad")
    assert json.loads(args_file.read_text(encoding="utf-8")) == raw  # stored as sent, a JSON string


def test_schema_breaking_arguments_are_charged_and_rejected(bench):
    inv = bench.invocation()
    for wire in ({}, {"formula": 3}, {"formula": "d6", "extra": 1}):
        assert inv.call("dice_roll", wire).error_code == "tool.invalid_arguments"
    assert inv.budget()["total"] == bench.profile.tools.max_calls_per_run - 3


def test_total_budget_is_exhausted_after_max_calls_per_run(bench):
    counter = with_echo(bench, max_calls_per_run=2)
    inv = bench.invocation()
    results = [inv.call("echo", {"n": n}) for n in range(4)]
    assert [r.error_code for r in results] == [None, None, "agent.tool_budget_exhausted",
                                               "agent.tool_budget_exhausted"]
    assert results[2].structured["max"] == 2 and results[2].structured["scope"] == "invocation"
    assert len(counter.calls) == 2
    assert inv.budget()["total"] == 0


def test_per_tool_budget_leaves_other_tools_callable(bench):
    counter = with_echo(bench, max_calls_per_tool={"extension/t:echo": 1})
    inv = bench.invocation()
    assert inv.snapshot.binding_for("echo").max_calls == 1
    assert not inv.call("echo", {}).is_error
    refused = inv.call("echo", {})
    assert refused.error_code == "agent.tool_budget_exhausted"
    assert refused.structured["scope"] == "tool" and refused.structured["max"] == 1
    assert not inv.call("dice_roll", {"formula": "d6"}).is_error
    assert len(counter.calls) == 1


def test_a_call_id_used_twice_in_one_round_is_refused_and_not_overwritten(bench):
    with_echo(bench)
    inv = bench.invocation(id="inv_dup")
    first, second = inv.turn([("echo", {"n": 1}, "call_x"), ("echo", {"n": 2}, "call_x")])
    assert not first.is_error
    assert second.error_code == "model.invalid_tool_call"
    bench.flush()
    args_file, result_file = stem_files(bench, "inv_dup", 1, "call_x")
    assert json.loads(args_file.read_text(encoding="utf-8")) == {"n": 1}
    assert json.loads(result_file.read_text(encoding="utf-8"))["isError"] is False


def test_turn_items_must_be_tuples(bench):
    inv = bench.invocation()
    with pytest.raises(ToolbenchError) as info:
        inv.turn([["dice_roll", {"formula": "d6"}]])
    assert info.value.code == "bench.misuse"


# --- completion tools ---------------------------------------------------------------------


def test_finish_that_is_not_last_in_its_round_is_refused(make_bench):
    bench = make_bench(profile=Profile.default().edit(allow=["builtin:dice.roll", "builtin:workspace.finish"]))
    inv = bench.invocation()
    assert inv.snapshot.binding_for("workspace_finish").descriptor.completes_round
    finish, roll = inv.turn([("workspace_finish", {}), ("dice_roll", {"formula": "d6"})])
    assert finish.is_error and finish.error_code == "agent.tool_after_finish"
    assert not roll.is_error
    results = inv.turn([("dice_roll", {"formula": "d6"}), ("workspace_finish", {})])
    assert results[1].error_code != "agent.tool_after_finish"


def test_any_completion_tool_must_come_last(bench):
    """Extension tools cannot be completion tools through the public API; a snapshot prepared
    from a catalog whose descriptor says `completes_round` stands in for one."""
    done = Counter()
    tool_id = bench.register_tool("t", done, name="done", input_schema={"type": "object"})
    bench.enable(tool_id)
    catalog = {d.id: d for d in bench.catalog()}
    catalog[tool_id] = catalog[tool_id].model_copy(update={"completes_round": True})
    inv = Invocation(bench._kernel.call_services, prepare(bench.profile, catalog, snapshot_id="inv_done"),
                     bench.profile, InvocationState())
    try:
        early, roll = inv.turn([("done", {}), ("dice_roll", {"formula": "d6"})])
        assert early.error_code == "agent.tool_after_finish" and not roll.is_error
        assert done.calls == []
        assert [r.is_error for r in inv.turn([("dice_roll", {"formula": "d6"}), ("done", {})])] == [False, False]
        assert not inv.call("done", {}).is_error  # alone in its round
        assert len(done.calls) == 2
    finally:
        inv.close()


# --- never raising ------------------------------------------------------------------------

json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | \
    st.text(max_size=10)
json_values = st.recursive(json_scalars, lambda inner: st.lists(inner, max_size=4) |
                           st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=10)
wire_values = json_values | st.text(max_size=40) | st.just(MISSING)
call_names = st.sampled_from(["echo", "dice_roll", "echo ", "", "Echo", "mcp__x__y"]) | st.text(max_size=10)


def test_call_never_raises_for_any_wire_value(bench):
    counter = with_echo(bench, max_calls_per_run=100_000, max_rounds=100_000)
    inv = bench.invocation()
    made = 0

    @settings(max_examples=120)
    @given(name=call_names, wire=wire_values)
    @example(name="echo", wire='{"text": "\\ud83d"}')  # half an emoji: a lone surrogate
    @example(name="echo", wire={"\udc00": "\ud800"})
    @example(name="echo", wire='{"deep": ' + "[" * 900 + "]" * 900 + "}")
    @example(name="echo", wire="[" * 50_000)
    @example(name="dice_roll", wire={"formula": "\ud800"})
    def check(name, wire):
        nonlocal made
        result = inv.call(name, wire)
        made += 1
        assert isinstance(result, ToolResult)
        assert result.is_error == (result.error_code is not None)
        if name == "echo" and isinstance(wire, dict):
            assert not result.is_error

    check()
    bench.flush()  # every record file was written
    assert len(inv.records) == made
    # "echo " and "Echo" reach echo too (the registry's trimmed, lowercased fallback)
    echo_id = str(inv.snapshot.binding_for("echo").tool_id)
    assert len(counter.calls) == sum(1 for r in inv.records if r.result.tool_id == echo_id and not r.result.is_error)


def test_lone_surrogates_and_deep_nesting_are_recorded_and_read_back(bench):
    with_echo(bench)
    inv = bench.invocation(id="inv_odd")
    deep = '{"deep": ' + "[" * 600 + "]" * 600 + "}"
    inv.call("echo", '{"text": "\\ud83d"}', call_id="call_s")
    # Past 128 levels the arguments are invalid (core/arguments.py), and recorded as sent.
    assert inv.call("echo", deep, call_id="call_d").error_code == "tool.invalid_arguments"
    bench.flush()
    args_file, result_file = stem_files(bench, "inv_odd", 1, "call_s")
    assert json.loads(args_file.read_text(encoding="utf-8")) == {"text": "\ud83d"}
    assert json.loads(result_file.read_text(encoding="utf-8"))["structured"] == {"echo": {"text": "\ud83d"}}
    args_file, _ = stem_files(bench, "inv_odd", 2, "call_d")
    assert json.loads(args_file.read_text(encoding="utf-8")) == deep
    reopened = bench.open_invocation("inv_odd")
    assert [r.arguments for r in reopened.records] == [r.arguments for r in inv.records]


# --- records ------------------------------------------------------------------------------


def test_dataframe_has_one_row_per_call_with_the_documented_columns(bench):
    with_echo(bench)
    inv = bench.invocation()
    assert list(inv.to_dataframe().columns) == COLUMNS
    inv.call("echo", {"b": 1, "a": "é"}, call_id="c1")
    inv.call("echo", "[1, 2]", call_id="c2")
    inv.call("nope", {}, call_id="c3")
    frame = inv.to_dataframe()
    assert list(frame.columns) == COLUMNS
    assert frame["call_id"].tolist() == ["c1", "c2", "c3"]
    assert frame["round"].tolist() == [1, 2, 3]
    assert frame["call_name"].tolist() == ["echo", "echo", "nope"]
    assert frame["tool_id"].tolist()[:2] == ["extension/t:echo"] * 2 and frame["tool_id"].isna().tolist()[2]
    assert frame["arguments"].tolist() == ['{"b":1,"a":"é"}', "[1, 2]", "{}"]
    assert frame["is_error"].tolist() == [False, True, True]
    assert frame["error_code"].tolist()[1:] == ["tool.invalid_arguments", "model.unknown_tool_call"]
    assert frame["content_chars"].tolist() == [len(r.result.content) for r in inv.records]
    assert frame["externalized"].tolist() == [False, False, False]
    assert frame["via"].isna().all()  # the model made every call
    assert (frame["elapsed_ms"] >= 0).all()


def test_record_files_exist_after_flush_read_only_and_write_once(bench):
    with_echo(bench)
    inv = bench.invocation(id="inv_files")
    ok = inv.call("echo", {"a": 1}, call_id="call_ok")
    bad = inv.call("echo", "{oops", call_id="call_bad")
    unknown = inv.call("ghost", {}, call_id="call_ghost")
    bench.flush()
    for round_no, call_id, result, stored in [(1, "call_ok", ok, {"a": 1}), (2, "call_bad", bad, "{oops"),
                                              (3, "call_ghost", unknown, {})]:
        args_file, result_file = stem_files(bench, "inv_files", round_no, call_id)
        assert args_file.name == result_file.name
        assert args_file.name.startswith(f"round-{round_no:03d}-call_") and len(args_file.stem) == 31
        assert json.loads(args_file.read_text(encoding="utf-8")) == stored
        assert ToolResult.model_validate(json.loads(result_file.read_text(encoding="utf-8"))) == result
        for path in (args_file, result_file):
            assert stat.S_IMODE(os.stat(path).st_mode) & 0o222 == 0
            with pytest.raises(ToolbenchError) as info:
                write_once(path, "{}")
            assert info.value.code == "storage.already_exists"
        assert json.loads(args_file.read_text(encoding="utf-8")) == stored


def test_a_second_invocation_with_a_used_id_is_refused(bench):
    bench.invocation(id="inv_once")
    with pytest.raises(ToolbenchError) as info:
        bench.invocation(id="inv_once")
    assert info.value.code == "bench.misuse"


def test_scene_must_be_chat_or_session(bench):
    with pytest.raises(ToolbenchError) as info:
        bench.invocation("group")  # type: ignore[arg-type]
    assert info.value.code == "bench.misuse"


def test_a_closed_bench_starts_no_invocation(make_bench):
    bench = make_bench()
    bench.close()
    with pytest.raises(ToolbenchError) as info:
        bench.invocation()
    assert info.value.code == "bench.closed"


def test_calls_on_a_closed_bench_are_refused_and_touch_nothing(make_bench):
    bench = make_bench()
    inv = bench.invocation()
    inv.call("dice_roll", '{"formula": "1d6"}')
    bench.close()
    for attempt in (lambda: inv.call("dice_roll", '{"formula": "1d6"}'),
                    lambda: inv.turn([("dice_roll", "{}")]),
                    lambda: asyncio.run(inv.acall("dice_roll", "{}")),
                    lambda: inv.respond("openai", {"choices": []})):
        with pytest.raises(ToolbenchError) as info:
            attempt()
        assert info.value.code == "bench.closed"
    assert len(inv.records) == 1


def test_calls_on_a_closed_invocation_are_refused(make_bench):
    bench = make_bench()
    inv = bench.invocation()
    inv.close()
    with pytest.raises(ToolbenchError) as info:
        inv.call("dice_roll", '{"formula": "1d6"}')
    assert info.value.code == "bench.closed"
    assert bench.invocation().call("dice_roll", '{"formula": "1d6"}').is_error is False


def test_close_listeners_run_once_when_the_bench_closes(make_bench):
    bench = make_bench()
    heard: list[bool] = []
    bench.on_close(lambda: heard.append(bench.closed))
    bench.close()
    bench.close()
    assert heard == [True]


# --- async and concurrency ----------------------------------------------------------------


def test_acall_gives_the_same_outcomes_as_call(bench):
    with_echo(bench)
    inv = bench.invocation()

    async def run():
        return [await inv.acall("echo", {"a": 1}), await inv.acall("echo", "[1]"), await inv.acall("ghost")]

    results = asyncio.run(run())
    assert [r.error_code for r in results] == [None, "tool.invalid_arguments", "model.unknown_tool_call"]
    assert [r.round for r in inv.records] == [1, 2, 3]


def test_a_thousand_concurrent_acalls_dispatch_exactly_the_budget(bench):
    dispatched = []

    async def work(n: int) -> int:
        dispatched.append(n)
        await asyncio.sleep(0)
        return n

    tool_id = bench.register_tool("t", work)
    bench.enable(tool_id)
    bench.profile = bench.profile.edit(max_calls_per_run=80, max_rounds=10_000)
    inv = bench.invocation()

    async def storm():
        return await asyncio.gather(*(inv.acall("work", {"n": n}) for n in range(1000)))

    results = asyncio.run(storm())
    assert len(dispatched) == 80
    assert sum(not r.is_error for r in results) == 80
    assert {r.error_code for r in results if r.is_error} == {"agent.tool_budget_exhausted"}
    assert inv.budget()["total"] == 0
    assert len(inv.records) == 1000
    reopened = bench.open_invocation(inv.id)  # the run log kept every call and the final counters
    assert len(reopened.records) == 1000 and reopened.budget()["total"] == 0


def test_sync_call_works_inside_a_running_event_loop(bench):
    async def fetch(key: str) -> dict:
        await asyncio.sleep(0)
        return {"key": key}

    bench.enable(bench.register_tool("t", fetch))
    inv = bench.invocation()

    async def notebook_cell():
        asyncio.get_running_loop()  # a loop is running, as in Jupyter
        return inv.call("fetch", {"key": "k"}), inv.call("dice_roll", {"formula": "d6"})

    fetched, rolled = asyncio.run(notebook_cell())
    assert not fetched.is_error and fetched.structured == {"key": "k"}
    assert not rolled.is_error


def test_ctrl_c_during_a_sync_call_of_an_async_tool_records_its_result_and_interrupts(bench):
    """Ctrl-C in a notebook while `inv.call` waits for an async tool: the tool is cancelled on
    the bench loop (its clean-up runs), the call keeps its paired result, the interrupt goes on."""
    started, cleaned = threading.Event(), []

    async def slow() -> str:
        started.set()
        try:
            await asyncio.Event().wait()  # until cancelled
        finally:
            cleaned.append(True)
        return "never"

    bench.enable(bench.register_tool("t", slow))
    inv = bench.invocation()
    interrupt = threading.Thread(target=lambda: started.wait(10) and os.kill(os.getpid(), signal.SIGINT))
    interrupt.start()
    with pytest.raises(KeyboardInterrupt):
        inv.call("slow", {})
    interrupt.join()
    assert cleaned == [True]
    assert [(r.call_name, r.result.error_code) for r in inv.records] == [("slow", "tool.cancelled")]
    assert not inv.call("dice_roll", {"formula": "d6"}).is_error  # the invocation goes on


def test_a_tool_ignoring_its_cancellation_holds_the_caller_only_for_the_grace(bench, monkeypatch):
    import toolbench.runtime.extensions as extensions

    monkeypatch.setattr(extensions, "CANCEL_GRACE_SECONDS", 0.2)
    started, release = threading.Event(), threading.Event()

    async def stubborn() -> str:
        started.set()
        while not release.is_set():
            try:
                await asyncio.sleep(0.05)
            except asyncio.CancelledError:
                continue  # ignores it
        return "late"

    bench.enable(bench.register_tool("t", stubborn))
    inv = bench.invocation()

    async def cancel_it() -> float:
        task = asyncio.create_task(inv.acall("stubborn", {}))
        assert await asyncio.to_thread(started.wait, 10)
        began = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return time.monotonic() - began

    try:
        assert 0.15 < asyncio.run(cancel_it()) < 2  # it waited for the clean-up, then gave up
    finally:
        release.set()
    assert [r.result.error_code for r in inv.records] == ["tool.cancelled"]


def test_cancelling_a_turn_records_the_cancelled_call_and_stops_the_turn(bench):
    """Reference table 9.8: cancel during an extension call -> the call's result is recorded,
    the caller is cancelled, and the later calls of the turn never run."""
    started = threading.Event()
    ran = []

    async def slow() -> str:
        ran.append("slow")
        started.set()
        await asyncio.Event().wait()  # until cancelled
        return "never"

    def after() -> str:
        ran.append("after")
        return "ran"

    bench.enable(bench.register_tool("t", slow))
    bench.enable(bench.register_tool("t", after))
    inv = bench.invocation()

    async def cancel_mid_turn():
        task = asyncio.create_task(inv.aturn([("slow", {}), ("after", {})]))
        assert await asyncio.to_thread(started.wait, 10)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancel_mid_turn())
    assert ran == ["slow"]
    assert [(r.call_name, r.result.error_code) for r in inv.records] == [("slow", "tool.cancelled")]
    assert not inv.call("after", {}).is_error  # the invocation itself goes on


def test_an_invocation_keeps_the_profile_it_was_made_with(tmp_path) -> None:
    from toolbench import Profile, Workbench

    with Workbench(tmp_path / "ws", seed=1) as bench:
        inv = bench.invocation("chat", id="inv_frozen")
        bench.profile = Profile.default().edit(
            workspace={"visible_roots": ["work", "output", "tool-results"], "writable_roots": ["output"]},
            shell={"max_stdout_chars": 5},
        )
        written = inv.call("workspace_write_file", {"path": "work/new.md", "content": "x"})
        assert not written.is_error
        assert inv.call("workspace_shell", {"command": "echo hello world"}).content == "Exit code: 0\nhello world\n"
        later = bench.invocation("chat", id="inv_later")
        assert later.call("workspace_write_file", {"path": "work/b.md", "content": "x"}).error_code == (
            "workspace.path_not_writable")
    with Workbench(tmp_path / "ws") as bench:
        reopened = bench.open_invocation("inv_frozen")
        assert reopened.profile.workspace.writable_roots == inv.profile.workspace.writable_roots


def test_a_demo_workspace_left_open_is_removed_when_the_process_exits(tmp_path):
    code = ("from toolbench import Workbench; b = Workbench.demo(); "
            "b.invocation().call('dice_roll', '{\"formula\": \"d6\"}'); print(b.workspace)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    workspace = Path(out.stdout.strip())
    assert workspace.name.startswith("toolbench-") and not workspace.exists()
