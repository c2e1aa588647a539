"""The controller behind every panel: one call at a time, approvals it does not own passed on,
and a bench closed while a call waits for approval."""

from __future__ import annotations

import asyncio
import threading

import pytest

from toolbench import ApprovalRequest, ToolbenchError, Workbench
from toolbench.widgets import ApprovalPanel, CallConsole, WorkbenchApp, WorkbenchState


@pytest.fixture
def shop() -> Workbench:
    bench = Workbench.demo(seed=7)
    bought: list[str] = []
    bench.register_tool("shop", lambda item: bought.append(item) or f"bought {item}", name="buy",
                        input_schema={"type": "object", "properties": {"item": {"type": "string"}},
                                      "required": ["item"]})
    bench.enable("extension/shop:buy")
    bench.set_permission("extension/shop:buy", "ask")
    bench.bought = bought  # type: ignore[attr-defined]
    return bench


async def _until(predicate, steps: int = 500) -> None:  # type: ignore[no-untyped-def]
    for _ in range(steps):
        if predicate():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the condition did not come true")


def test_a_bench_closed_while_a_call_waits_for_approval_ends_the_call_and_writes_nothing(shop: Workbench) -> None:
    app = WorkbenchApp(shop)
    workspace = shop.workspace
    threads = {t.name for t in threading.enumerate()}

    async def scenario() -> None:
        app.state.submit("buy", '{"item": "milk"}')
        await _until(lambda: bool(app.state.approvals))
        shop.close()
        await _until(lambda: not app.state.busy)

    asyncio.run(scenario())
    assert [r.result.error_code for r in app.state.invocation.records] == ["tool.approval_denied"]
    assert shop.bought == []  # type: ignore[attr-defined]
    assert not workspace.exists()  # the demo workspace is gone, and no late record brought it back
    assert "tb-closed" in app._dom_classes
    assert {t.name for t in threading.enumerate()} - threads <= {"asyncio_0"}  # no new loop or writer


def test_the_app_passes_on_approvals_it_did_not_ask_for(shop: Workbench) -> None:
    seen: list[ApprovalRequest] = []
    shop.on_approval(lambda request: seen.append(request) or True, timeout=30)
    WorkbenchApp(shop)
    # A cell's own call is decided by the handler set before the app, as before the app.
    assert shop.invocation().call("buy", '{"item": "tea"}').content == "bought tea"
    assert [r.arguments for r in seen] == [{"item": "tea"}]


def test_a_panel_that_shows_no_approvals_does_not_wait_for_one(shop: Workbench) -> None:
    console = CallConsole(shop)  # alone: no card can appear, so no call may wait for one

    async def scenario() -> None:
        console.call_name.value = "buy"
        console.arguments.value = '{"item": "milk"}'
        console.call_button.click()
        await _until(lambda: not console.state.busy)

    asyncio.run(scenario())
    assert console.state.invocation.records[-1].result.error_code == "tool.approval_required"


def test_the_approval_panel_decides_a_call_fired_from_the_app(shop: Workbench) -> None:
    state = WorkbenchState(shop)
    panel = ApprovalPanel(state)

    async def scenario() -> None:
        state.submit("buy", '{"item": "milk"}')
        await _until(lambda: bool(panel.approve_buttons))
        panel.approve_buttons[0].click()
        await _until(lambda: not state.busy)

    asyncio.run(scenario())
    assert state.invocation.records[-1].result.content == "bought milk"


def test_one_call_at_a_time(shop: Workbench) -> None:
    state = WorkbenchState(shop)
    ApprovalPanel(state)

    async def scenario() -> None:
        state.submit("buy", '{"item": "milk"}')
        await _until(lambda: bool(state.approvals))
        with pytest.raises(ToolbenchError) as busy:
            state.submit("dice_roll", '{"formula": "d6"}')
        assert busy.value.code == "bench.misuse"
        state.approvals[0].decide(False)
        await _until(lambda: not state.busy)

    asyncio.run(scenario())
    assert [r.call_name for r in state.invocation.records] == ["buy"]


def test_an_error_shown_after_a_call_stays_shown(shop: Workbench) -> None:
    console = CallConsole(shop)

    async def scenario() -> None:
        console.state.invocation.close()
        console.call_name.value = "dice_roll"
        console.arguments.value = '{"formula": "d6"}'
        console.call_button.click()
        await _until(lambda: not console.state.busy)
        await asyncio.sleep(0.3)  # past a redraw tick of the elapsed time

    asyncio.run(scenario())
    assert "bench.closed" in console.error_view.value


@pytest.mark.parametrize("in_a_loop", [True, False])
def test_a_new_result_is_never_drawn_under_calling(shop: Workbench, in_a_loop: bool) -> None:
    """The result viewer dims what it shows while a call runs: the call's own result arrives
    after the pending state is gone, or it would be drawn dimmed under "calling ... 0.0 s"."""
    state = WorkbenchState(shop)
    seen: list[tuple[str | None, bool]] = []
    state.observe("result", lambda: seen.append((state.record.call_id if state.record else None, state.busy)))

    async def scenario() -> None:
        state.submit("dice_roll", '{"formula": "d6"}')
        await _until(lambda: not state.busy)

    if in_a_loop:  # a notebook's kernel: the call is a task
        asyncio.run(scenario())
    else:
        state.submit("dice_roll", '{"formula": "d6"}')
    assert seen == [("call_0001", False)]
