"""An extension tool that never returns ends its call with `extension.tool_timeout` in bounded
time: async tools by the profile's `tools.extension_timeout_seconds` (or their own `timeout`),
sync tools only when registered with `timeout=` (they then run on a worker thread)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time

import pytest

from toolbench import Profile, ToolbenchError

TIMEOUT = 0.2


@pytest.fixture
def released():
    """Set at teardown, so a stuck worker thread ends with the test."""
    event = threading.Event()
    yield event
    event.set()


def _bench(make_bench, profile_with):
    return make_bench(profile=profile_with(extension_timeout_seconds=TIMEOUT), seed=1)


def _assert_timeout(result, started: float) -> None:
    assert result.is_error
    assert result.error_code == "extension.tool_timeout"
    assert time.monotonic() - started < 5  # bounded: well under the 60 s default


def _assert_records_reload(make_bench, bench, inv, codes: list[str | None]) -> None:
    """The records, the run log and tool-results/ agree, and a fresh bench reopens them."""
    assert [r.result.error_code for r in inv.records] == codes
    bench.flush()
    for record in inv.records:
        stem = f"{inv.id}/round-{record.round:03d}-call_"
        audits = list((bench.workspace / "tool-results").glob(f"{stem}*.json"))
        assert len(audits) == 1
        assert json.loads(audits[0].read_text())["isError"] is record.result.is_error
    reopened = bench.open_invocation(inv.id)
    assert [r.to_json() for r in reopened.records] == [r.to_json() for r in inv.records]
    fresh = make_bench("ws", profile=bench.profile)
    again = fresh.open_invocation(inv.id)
    assert [r.result.error_code for r in again.records] == codes
    assert again.budget() == inv.budget()


def test_profile_timeout_defaults_to_60_and_must_be_positive():
    assert Profile.default().tools.extension_timeout_seconds == 60
    for bad in (0, -1, float("inf"), "soon"):
        with pytest.raises(ToolbenchError) as info:
            Profile.default().edit(extension_timeout_seconds=bad)
        assert info.value.code == "agent.profile_invalid"


@pytest.mark.parametrize("bad", [0, -1.5, float("nan"), True, "1"])
def test_a_per_tool_timeout_must_be_positive(bench, bad):
    with pytest.raises(ToolbenchError) as info:
        bench.register_tool("e", lambda: 1, name="x", timeout=bad)
    assert info.value.code == "bench.misuse"


def test_async_tool_that_never_returns_times_out_and_the_invocation_goes_on(make_bench, profile_with):
    bench = _bench(make_bench, profile_with)

    async def hang() -> str:
        await asyncio.Event().wait()
        return "never"

    async def ok() -> str:
        return "fine"

    bench.enable(bench.register_tool("slow", hang))
    bench.enable(bench.register_tool("slow", ok))
    inv = bench.invocation("session")
    started = time.monotonic()
    result = inv.call("hang", {})
    _assert_timeout(result, started)
    assert inv.call("ok", {}).content == "fine"
    assert inv.call("dice_roll", {"formula": "d6"}).is_error is False
    _assert_records_reload(make_bench, bench, inv, ["extension.tool_timeout", None, None])


def test_async_tool_that_ignores_cancellation_still_times_out(make_bench, profile_with, released):
    bench = _bench(make_bench, profile_with)

    async def stubborn() -> str:
        while not released.is_set():
            with contextlib.suppress(asyncio.CancelledError):  # keeps running: the call must end anyway
                await asyncio.sleep(0.01)
        return "late"

    bench.enable(bench.register_tool("slow", stubborn))
    inv = bench.invocation("session")
    started = time.monotonic()
    _assert_timeout(inv.call("stubborn", {}), started)


def test_acall_of_a_hanging_async_tool_times_out(make_bench, profile_with):
    bench = _bench(make_bench, profile_with)

    async def hang() -> str:
        await asyncio.Event().wait()
        return "never"

    bench.enable(bench.register_tool("slow", hang))
    inv = bench.invocation("session")
    started = time.monotonic()
    _assert_timeout(asyncio.run(inv.acall("hang", {})), started)


def test_a_per_tool_timeout_wins_over_the_profile_for_async_tools(make_bench, profile_with):
    bench = make_bench(profile=profile_with(extension_timeout_seconds=60), seed=1)

    async def hang() -> str:
        await asyncio.Event().wait()
        return "never"

    bench.enable(bench.register_tool("slow", hang, timeout=TIMEOUT))
    started = time.monotonic()
    _assert_timeout(bench.invocation("session").call("hang", {}), started)


def test_sync_tool_with_a_timeout_runs_on_a_thread_and_times_out(make_bench, profile_with, released):
    bench = _bench(make_bench, profile_with)
    calls: list[str] = []

    @bench.tool("slow", timeout=TIMEOUT)
    def block(tag: str) -> str:
        calls.append(threading.current_thread().name)
        released.wait()
        return tag

    @bench.tool("slow", timeout=5)
    def quick(tag: str) -> dict:
        return {"tag": tag}

    @bench.tool("slow", timeout=5)
    def broken() -> str:
        raise ValueError("bad input")

    for name in ("block", "quick", "broken"):
        bench.enable(f"extension/slow:{name}")
    inv = bench.invocation("session")
    started = time.monotonic()
    result = inv.call("block", {"tag": "a"})
    _assert_timeout(result, started)
    assert calls and calls[0] != threading.main_thread().name
    assert inv.call("quick", {"tag": "b"}).structured == {"tag": "b"}
    assert inv.call("broken", {}).error_code == "extension.tool_error"
    assert inv.call("block", {"tag": 1}).error_code == "tool.invalid_arguments"  # checked before the thread
    _assert_records_reload(make_bench, bench, inv,
                           ["extension.tool_timeout", None, "extension.tool_error", "tool.invalid_arguments"])


def test_sync_tool_without_a_timeout_runs_inline(bench):
    seen: list[threading.Thread] = []
    bench.enable(bench.register_tool("e", lambda: seen.append(threading.current_thread()) or "ok", name="here"))
    assert bench.invocation("session").call("here", {}).content == "ok"
    assert seen == [threading.current_thread()]
