"""ChatPanel: a model's run from the app, its rounds in the transcript, its calls in the history,
the console and the result viewer as calls fired by hand; a provider error, a stop, no model.

The run goes to the bench loop: each test waits on the run's future with a deadline (the future
completes once the panel has drawn the end), never on a sleep."""

from __future__ import annotations

import asyncio
import html
import threading
from typing import Any

import pytest
from widget_support import call

from toolbench import ToolbenchError, Workbench
from toolbench.models import ModelError
from toolbench.testing import ScriptedModel
from toolbench.widgets import ChatPanel, WorkbenchApp

DEADLINE_S = 20  # a run of a scripted model takes milliseconds; this only bounds a regression


def text_of(widget: Any) -> str:
    return html.unescape(widget.value)


def roll_then_answer() -> ScriptedModel:
    return ScriptedModel([[("dice_roll", {"formula": "2d6"})], "You rolled twice."])


def send(app: WorkbenchApp, prompt: str, model: str | None = None) -> Any:
    """Type the prompt, click send, wait for the run to end; the state's run."""
    if model is not None:
        app.chat.model.value = model
    app.chat.prompt.value = prompt
    app.chat.send.click()
    chat = app.state.chat
    assert chat is not None and chat.future is not None, app.chat.error_code
    chat.future.result(timeout=DEADLINE_S)
    return chat


class RateLimited(ScriptedModel):
    """A provider that answers 429 to every request."""

    async def send(self, body: dict[str, Any]) -> dict[str, Any]:
        raise ModelError("model.provider_rate_limited", "Rate limit reached for requests", status=429)


class Stuck(ScriptedModel):
    """A provider that never answers: `entered` is set once the request is out."""

    def __init__(self) -> None:
        super().__init__(["never"])
        self.entered = threading.Event()

    async def send(self, body: dict[str, Any]) -> dict[str, Any]:
        self.entered.set()
        await asyncio.Event().wait()  # only a cancel ends this
        raise AssertionError("unreachable")


@pytest.fixture
def model() -> ScriptedModel:
    return roll_then_answer()


@pytest.fixture
def app(bench: Workbench, model: ScriptedModel) -> WorkbenchApp:
    return WorkbenchApp(bench, bench.invocation("chat", id="inv_chat"), models={"scripted": model})


def test_send_shows_each_round_and_the_final_text(app: WorkbenchApp, model: ScriptedModel) -> None:
    chat = send(app, "Roll 2d6 for me")
    assert chat.outcome == "final" and chat.error is None and app.chat.transcript_box.layout.display is None
    transcript = text_of(app.chat.transcript)
    assert "round 1" in transcript and "round 2" in transcript
    assert '→ <code>dice_roll</code> {"formula":"2d6"}' in transcript
    result = app.state.records[-1].result
    assert f"← {result.content[:20]}" in transcript
    status = text_of(app.chat.status)
    assert "final" in status and "You rolled twice." in status
    assert len(model.bodies) == 2  # the result went back to the model
    assert app.chat.error_code is None


def test_a_runs_calls_reach_the_history_the_console_and_the_result_as_if_fired_by_hand(app: WorkbenchApp) -> None:
    send(app, "Roll 2d6 for me")
    records = app.state.records
    assert [r.call_name for r in records] == ["dice_roll"]
    assert app.history.rows and "dice_roll" in text_of(app.history.rows[0].cells)
    assert app.state.record is records[-1]  # the result viewer shows the run's last call
    assert records[-1].result.content[:20] in text_of(app.result.content)
    total = app.state.invocation.snapshot.max_calls_per_invocation
    assert f"calls left: <b>{total - 1}</b>" in app.console.budget.value
    assert not app.console.call_button.disabled and not app.chat.send.disabled and app.chat.stop.disabled


def test_a_run_and_calls_by_hand_share_the_invocation(app: WorkbenchApp) -> None:
    call(app, "dice_roll", '{"formula": "1d4"}')
    chat = send(app, "Roll 2d6 for me")
    assert chat.invocation is app.state.invocation
    assert [r.round for r in app.state.records] == [1, 2]
    assert [r.stop_reason for r in app.state.invocation.runs] == ["final"]


def test_a_provider_error_shows_its_code_and_message_not_a_traceback(bench: Workbench) -> None:
    app = WorkbenchApp(bench, models={"limited": RateLimited([])})
    chat = send(app, "hello")
    assert chat.outcome == "provider_error"
    assert chat.error == ("model.provider_rate_limited", "Rate limit reached for requests")
    status = text_of(app.chat.status)
    assert "provider_error" in status and "model.provider_rate_limited" in status
    assert "Rate limit reached for requests" in status and "Traceback" not in status
    assert "model.provider_rate_limited" in text_of(app.chat.transcript)  # the round that erred
    assert app.chat.error_code is None and not app.state.busy


def test_stop_ends_a_run_whose_provider_never_answers(bench: Workbench) -> None:
    stuck = Stuck()
    app = WorkbenchApp(bench, models={"stuck": stuck, "scripted": roll_then_answer()})
    app.chat.model.value = "stuck"
    app.chat.prompt.value = "hello"
    app.chat.send.click()
    chat = app.state.chat
    assert chat is not None and chat.future is not None
    assert stuck.entered.wait(DEADLINE_S)
    assert chat.running and not app.chat.stop.disabled
    assert app.chat.send.disabled and app.console.call_button.disabled  # one driver at a time
    assert "running" in text_of(app.chat.status)
    app.chat.stop.click()
    chat.future.result(timeout=DEADLINE_S)
    assert chat.outcome == "stopped" and "stopped" in text_of(app.chat.status)
    assert not app.state.busy and app.chat.stop.disabled and not app.console.call_button.disabled
    assert [r.stop_reason for r in app.state.invocation.runs] == ["stopped"]
    assert send(app, "Roll 2d6", model="scripted").outcome == "final"  # the app goes on


def test_stop_when_nothing_runs_does_nothing(app: WorkbenchApp) -> None:
    app.state.stop_run()
    chat = send(app, "Roll 2d6 for me")
    chat.stop()
    assert chat.outcome == "final" and not chat.stop_requested


def test_an_empty_prompt_sends_nothing(app: WorkbenchApp, model: ScriptedModel) -> None:
    app.chat.prompt.value = "   \n"
    app.chat.send.click()
    assert app.chat.error_code == "app.empty_prompt"
    assert app.state.chat is None and model.bodies == [] and not app.state.busy


def test_no_model_says_how_to_give_one_and_sends_nothing(bench: Workbench) -> None:
    app = WorkbenchApp(bench)
    assert app.chat.models == {}
    assert "models=" in text_of(app.chat.status) and app.chat.transcript_box.layout.display == "none"
    app.chat.prompt.value = "hello"
    app.chat.send.click()
    assert app.chat.error_code == "app.no_model" and app.state.chat is None


def test_models_can_be_given_later_and_must_be_adapters(bench: Workbench) -> None:
    app = WorkbenchApp(bench)
    app.chat.models = {"scripted": roll_then_answer()}
    assert app.chat.model.options == ("scripted",) and app.chat.model.value == "scripted"
    assert text_of(app.chat.status) == ""
    with pytest.raises(ToolbenchError) as caught:
        app.chat.models = {"not a model": lambda messages, tools: "hi"}
    assert caught.value.code == "bench.misuse"


def test_display_offers_the_benchs_agents_model_when_it_is_a_model(bench: Workbench) -> None:
    bench.agents.model = roll_then_answer()
    app = WorkbenchApp(bench)
    assert list(app.chat.models) == ["bench.agents.model"]
    assert send(app, "Roll 2d6").outcome == "final"


def test_a_panel_stands_alone(bench: Workbench) -> None:
    panel = ChatPanel(bench, models={"scripted": roll_then_answer()})
    panel.prompt.value = "Roll 2d6"
    run = panel.submit()
    assert run.future is not None
    run.future.result(timeout=DEADLINE_S)
    assert "tb-chat" in panel._dom_classes and "You rolled twice." in text_of(panel.status)


def test_in_a_notebooks_loop_the_panels_change_on_that_loop(bench: Workbench) -> None:
    app = WorkbenchApp(bench, models={"scripted": roll_then_answer()})
    seen: list[int] = []
    app.state.observe("run", lambda: seen.append(threading.get_ident()))

    async def main() -> Any:
        app.chat.prompt.value = "Roll 2d6"
        app.chat.send.click()  # a click reaches the kernel on its running loop
        chat = app.state.chat
        assert chat is not None and chat.future is not None
        await asyncio.wait_for(asyncio.wrap_future(chat.future), DEADLINE_S)
        return chat

    chat = asyncio.run(main())
    assert chat.outcome == "final" and "You rolled twice." in text_of(app.chat.status)
    assert set(seen) == {threading.get_ident()}  # never the bench loop's thread
    assert "dice_roll" in text_of(app.history.rows[0].cells)


def test_an_ask_tool_called_by_the_model_waits_for_approve_in_the_app(bench: Workbench) -> None:
    bench.set_permission("extension/demo:weather", "ask")
    model = ScriptedModel([[("weather", {"city": "Oslo"})], "Sunny, I guess."])
    app = WorkbenchApp(bench, models={"scripted": model})

    async def main() -> Any:
        waiting = asyncio.Event()
        app.state.observe("approval", lambda: waiting.set() if app.state.approvals else None)
        app.chat.prompt.value = "Weather in Oslo?"
        app.chat.send.click()
        chat = app.state.chat
        assert chat is not None and chat.future is not None
        await asyncio.wait_for(waiting.wait(), DEADLINE_S)
        assert app.state.approvals[0].request.call_name == "weather"
        app.approval.approve_buttons[0].click()
        await asyncio.wait_for(asyncio.wrap_future(chat.future), DEADLINE_S)
        return chat

    chat = asyncio.run(main())
    assert chat.outcome == "final"
    record = app.state.records[-1]
    assert record.call_name == "weather" and not record.result.is_error


def test_stop_while_a_tool_runs_cancels_the_call_and_the_run(tmp_path: Any) -> None:
    entered = threading.Event()

    async def hang() -> str:
        entered.set()
        await asyncio.Event().wait()  # only a cancel ends this
        return "unreachable"

    with Workbench(tmp_path) as bench:
        bench.enable(bench.register_tool("slow", hang, name="hang", description="Never ends."))
        model = ScriptedModel([[("hang", {})], "never asked"])
        app = WorkbenchApp(bench, models={"scripted": model})
        app.chat.prompt.value = "wait"
        app.chat.send.click()
        chat = app.state.chat
        assert chat is not None and chat.future is not None
        assert entered.wait(DEADLINE_S)
        app.chat.stop.click()
        chat.future.result(timeout=DEADLINE_S)
        assert chat.outcome == "stopped" and len(model.bodies) == 1
        records = app.state.records
        assert [r.call_name for r in records] == ["hang"] and records[0].result.error_code == "tool.cancelled"
        assert "hang" in text_of(app.history.rows[0].cells) and app.state.record is records[0]
        assert "during round 1" in text_of(app.chat.status)
        assert app.state.invocation.runs[-1].stop_reason == "stopped"


def test_closing_the_bench_mid_run_ends_the_run_and_greys_the_chat(tmp_path: Any) -> None:
    stuck = Stuck()
    bench = Workbench(tmp_path)
    app = WorkbenchApp(bench, models={"stuck": stuck})
    app.chat.prompt.value = "hello"
    app.chat.send.click()
    chat = app.state.chat
    assert chat is not None and chat.future is not None
    assert stuck.entered.wait(DEADLINE_S)
    bench.close()
    chat.future.result(timeout=DEADLINE_S)
    assert chat.outcome == "stopped"
    assert app.chat.send.disabled and app.chat.stop.disabled and app.chat.error_code == "bench.closed"


def test_a_closed_bench_runs_nothing(tmp_path: Any) -> None:
    model = roll_then_answer()
    bench = Workbench(tmp_path)
    app = WorkbenchApp(bench, models={"scripted": model})
    bench.close()
    assert app.chat.send.disabled and app.chat.prompt.disabled
    app.chat.prompt.value = "hello"
    with pytest.raises(ToolbenchError) as caught:
        app.chat.submit()  # a cell's call, past the greyed-out button
    assert caught.value.code == "bench.closed" and app.state.chat is None and model.bodies == []
