"""Reopening an invocation after the bench closed: same snapshot, records and budget counters,
and counting goes on (reference §3.2: continuations reuse the frozen snapshot and the gate)."""

from __future__ import annotations

import json

import pytest

from toolbench import Profile, ToolbenchError, Workbench
from toolbench.core.results import call_file_stem


def build(tmp_path, **tools) -> Workbench:
    bench = Workbench(tmp_path / "ws", profile=Profile.default().edit(allow=["builtin:dice.roll"]), seed=3)
    bench.enable(bench.register_tool("t", lambda **kw: kw, name="echo", input_schema={"type": "object"}))
    if tools:
        bench.profile = bench.profile.edit(**tools)
    return bench


def test_reopened_invocation_has_the_same_records_and_counters(tmp_path):
    with build(tmp_path, max_calls_per_run=6, max_calls_per_tool={"extension/t:echo": 3}) as bench:
        inv = bench.invocation(id="inv_keep")
        inv.call("echo", {"n": 1})
        inv.call("echo", "{broken")
        inv.turn([("dice_roll", {"formula": "2d6"}), ("ghost", {})])
        records, budget, snapshot = inv.records, inv.budget(), inv.snapshot
        frame = inv.to_dataframe()
    assert budget == {"total": 2, "per_tool": {"echo": 1}}

    with Workbench(tmp_path / "ws", profile=Profile.default().edit(allow=["builtin:dice.roll"])) as again:
        reopened = again.open_invocation("inv_keep")
        assert reopened.id == "inv_keep"
        assert reopened.snapshot == snapshot
        assert reopened.records == records
        assert reopened.budget() == budget
        assert reopened.to_dataframe().drop(columns="elapsed_ms").equals(frame.drop(columns="elapsed_ms"))
        # Counting goes on: rounds, call ids and both budgets.
        reopened.call("echo", {"n": 2}, call_id="call_next")
        assert reopened.records[-1].round == 4
        assert reopened.budget() == {"total": 1, "per_tool": {"echo": 0}}
        assert reopened.call("echo", {"n": 3}).error_code == "agent.tool_budget_exhausted"
        assert reopened.call("dice_roll", {"formula": "d6"}).error_code is None
        assert reopened.call("dice_roll", {"formula": "d6"}).error_code == "agent.tool_budget_exhausted"
        assert len({(r.round, r.call_id) for r in reopened.records}) == len(reopened.records) == 8
        again.flush()
        args_file = again.workspace / "tool-args" / f"{call_file_stem('inv_keep', 4, 'call_next')}.json"
        assert json.loads(args_file.read_text(encoding="utf-8")) == {"n": 2}


def test_reopen_uses_the_frozen_snapshot_not_the_current_profile(tmp_path):
    with build(tmp_path) as bench:
        bench.invocation(id="inv_frozen").call("echo", {})
    with Workbench(tmp_path / "ws", profile=Profile.default().edit(allow=["builtin:dice.roll"])) as again:
        reopened = again.open_invocation("inv_frozen")
        assert "echo" in reopened.snapshot.call_names
        result = reopened.call("echo", {})  # offered, but no longer registered on this bench
        assert result.error_code == "extension.tool_unavailable"
        assert reopened.call("dice_roll", {"formula": "d4"}).error_code is None


def test_a_reopened_invocation_survives_a_second_reopen(tmp_path):
    with build(tmp_path) as bench:
        bench.invocation(id="inv_twice").call("echo", {"n": 1})
    for expected in (2, 3):
        with build(tmp_path) as bench:
            inv = bench.open_invocation("inv_twice")
            inv.call("echo", {"n": expected})
            assert [r.round for r in inv.records] == list(range(1, expected + 1))


def test_reopen_within_the_same_bench_sees_the_calls_made(tmp_path):
    with build(tmp_path) as bench:
        inv = bench.invocation(id="inv_live")
        inv.call("echo", {"n": 1})
        assert bench.open_invocation("inv_live").records == inv.records


def test_opening_an_unknown_invocation_is_refused(tmp_path):
    with build(tmp_path) as bench:
        with pytest.raises(ToolbenchError) as info:
            bench.open_invocation("inv_never")
        assert info.value.code == "bench.misuse"


def test_a_closed_bench_opens_nothing(tmp_path):
    bench = build(tmp_path)
    bench.invocation(id="inv_x")
    bench.close()
    bench.close()  # closing twice is fine
    with pytest.raises(ToolbenchError) as info:
        bench.open_invocation("inv_x")
    assert info.value.code == "bench.closed"


def test_async_context_manager_closes_the_bench(tmp_path):
    import asyncio

    async def use() -> Workbench:
        async with build(tmp_path) as bench:
            bench.invocation(id="inv_async").call("echo", {})
        return bench

    bench = asyncio.run(use())
    with pytest.raises(ToolbenchError) as info:
        bench.invocation()
    assert info.value.code == "bench.closed"
    with build(tmp_path) as again:
        assert len(again.open_invocation("inv_async").records) == 1
