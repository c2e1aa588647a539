"""ChatPanel with a streamed run: the round streaming now grows under the transcript (text,
thinking, each call's arguments), throttled, and is replaced by the round once it ends; a cut
stream keeps what came before the cut with no call run; stop mid-stream; the stream toggle.

The model streams Chat Completions chunks and can pause between two of them (it says so on a
threading.Event and waits on an asyncio.Event of the bench loop), so a test looks mid-stream.
Every wait is bounded: on an Event or on the live view's text, never a sleep."""

from __future__ import annotations

import asyncio
import html
import re
import threading
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest

from toolbench import Workbench
from toolbench.models import ModelError, OpenAIChat, StreamingModel
from toolbench.testing import ScriptedModel
from toolbench.widgets import WorkbenchApp
from toolbench.widgets._chat_run import REDRAW_S

DEADLINE_S = 20  # a streamed run of prepared chunks takes milliseconds; this only bounds a regression
PAUSE = object()  # in a round's chunks: stop there until the test resumes the stream
END = object()  # in a round's chunks: the stream stops there, as a closed connection would


def text_of(widget: Any) -> str:
    """What the widget's HTML reads as: its tags dropped, its entities unescaped."""
    return html.unescape(re.sub(r"<[^>]*>", "", widget.value))


def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 0, "model": "streamed",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def text_chunks(*pieces: Any) -> list[Any]:
    """An answer's text in pieces (PAUSE and END pass through), then its finish."""
    return [chunk({"role": "assistant", "content": ""}),
            *(p if p is PAUSE or p is END else chunk({"content": p}) for p in pieces), chunk({}, "stop")]


def call_chunks(name: str, *fragments: Any, call_id: str = "call_1") -> list[Any]:
    """One call: its id and name first, then its arguments in fragments, then its finish."""
    return [chunk({"role": "assistant", "content": None}),
            chunk({"tool_calls": [{"index": 0, "id": call_id, "type": "function",
                                   "function": {"name": name, "arguments": ""}}]}),
            *(f if f is PAUSE or f is END else chunk({"tool_calls": [{"index": 0, "function": {"arguments": f}}]})
              for f in fragments),
            chunk({}, "tool_calls")]


def until_end(chunks: list[Any]) -> list[Any]:
    """The chunks up to END (where the stream is cut)."""
    return chunks[:chunks.index(END)] if END in chunks else chunks


class Streamed:
    """A streaming Model (toolbench.models.StreamingModel) over prepared rounds of chunks.

    `stream` yields a round's chunks; at a PAUSE it sets `paused` and waits for `resume()`; at an
    END it stops (the stream ends before its finish), or raises `fault` when one is given. `send`
    (an unstreamed request) answers the same round assembled, so the toggle can be tried."""

    protocol, model = "openai", "streamed"

    def __init__(self, rounds: list[list[Any]], *, fault: BaseException | None = None) -> None:
        shape = OpenAIChat(None, "streamed")
        self.read, self.user_message, self.request = shape.read, shape.user_message, shape.request
        self._rounds, self._fault = rounds, fault
        self.streamed = self.sent = 0
        self.paused = threading.Event()
        self._go: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def resume(self) -> None:
        """Let the stream go on past its pause (from the test's thread)."""
        self.paused.clear()
        assert self._loop is not None and self._go is not None
        self._loop.call_soon_threadsafe(self._go.set)

    async def stream(self, body: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
        chunks = self._rounds[self.streamed + self.sent]
        self.streamed += 1
        for item in chunks:
            if item is PAUSE:
                self._loop, self._go = asyncio.get_running_loop(), asyncio.Event()
                self.paused.set()
                await self._go.wait()
            elif item is END:
                if self._fault is not None:
                    raise self._fault
                return
            else:
                yield item

    async def send(self, body: dict[str, Any]) -> dict[str, Any]:
        chunks = [c for c in self._rounds[self.streamed + self.sent] if c is not PAUSE]
        self.sent += 1
        message: dict[str, Any] = {"role": "assistant", "content": "".join(
            c["choices"][0]["delta"].get("content") or "" for c in chunks) or None}
        calls = [tc for c in chunks for tc in c["choices"][0]["delta"].get("tool_calls") or ()]
        if calls:
            message["tool_calls"] = [{"id": calls[0]["id"], "type": "function", "function": {
                "name": calls[0]["function"]["name"],
                "arguments": "".join(tc["function"]["arguments"] for tc in calls)}}]
        return {"id": "chatcmpl-1", "object": "chat.completion", "choices": [
            {"index": 0, "message": message, "finish_reason": chunks[-1]["choices"][0]["finish_reason"]}]}


def wait_for_text(widget: Any, *texts: str) -> str:
    """The widget's text once it holds every one of `texts` (bounded: it is redrawn by the run)."""
    seen = threading.Event()

    def check(_change: Any = None) -> None:
        if all(t in text_of(widget) for t in texts):
            seen.set()

    widget.observe(check, "value")
    try:
        check()
        assert seen.wait(DEADLINE_S), (texts, text_of(widget))
    finally:
        widget.unobserve(check, "value")
    return text_of(widget)


def start(app: WorkbenchApp, prompt: str, model: str = "streamed") -> Any:
    app.chat.model.value = model
    app.chat.prompt.value = prompt
    app.chat.send.click()
    chat = app.state.chat
    assert chat is not None and chat.future is not None, app.chat.error_code
    return chat


class Unstreamed:
    """A model with no `stream(body)`: it answers whole."""

    def __init__(self, turns: list[str]) -> None:
        self._scripted = ScriptedModel(turns)
        self.protocol, self.model = "openai", "unstreamed"
        self.user_message, self.request, self.read = (self._scripted.user_message, self._scripted.request,
                                                      self._scripted.read)

    async def send(self, body: dict[str, Any]) -> dict[str, Any]:
        return await self._scripted.send(body)


def streamed_app(bench: Workbench, model: Streamed) -> WorkbenchApp:
    return WorkbenchApp(bench, bench.invocation("chat", id="inv_stream"),
                        models={"streamed": model, "scripted": Unstreamed(["Not streamed."])})


def test_the_live_text_grows_across_deltas_then_the_round_replaces_it(bench: Workbench) -> None:
    model = Streamed([text_chunks("Hello ", "there, ", PAUSE, "general ", "<Kenobi>", PAUSE, ".")])
    assert isinstance(model, StreamingModel)
    app = streamed_app(bench, model)
    chat = start(app, "Say hello")
    assert model.paused.wait(DEADLINE_S)
    first = wait_for_text(app.chat.live, "Hello there, ")
    assert "general" not in first and "round 1 · streaming" in first
    assert chat.running and chat.stream and not app.chat.stop.disabled and app.chat.send.disabled
    assert "round 1" not in text_of(app.chat.transcript)  # the live part is not a round yet
    assert "round 1 · streaming" in text_of(app.chat.status)
    model.resume()
    assert model.paused.wait(DEADLINE_S)
    second = wait_for_text(app.chat.live, "Hello there, general <Kenobi>")
    assert "<Kenobi>" not in app.chat.live.value  # escaped in the HTML
    live = chat.live
    assert live is not None and live.index == 1 and live.text == "Hello there, general <Kenobi>"
    assert "Hello there, general <Kenobi>" in second
    model.resume()
    chat.future.result(timeout=DEADLINE_S)
    assert chat.outcome == "final" and chat.final_text == "Hello there, general <Kenobi>."
    assert app.chat.live.value == ""  # replaced by the round
    transcript = text_of(app.chat.transcript)
    assert "round 1" in transcript and "Hello there, general <Kenobi>." in transcript
    assert "Hello there, general <Kenobi>." in text_of(app.chat.status)
    assert model.streamed == 1 and model.sent == 0
    assert app.state.invocation.runs[-1].stop_reason == "final"


def test_thinking_shows_dimmed_before_the_text(bench: Workbench) -> None:
    model = Streamed([[chunk({"role": "assistant", "content": ""}), chunk({"reasoning_content": "Let me think."}),
                       chunk({"content": "Done."}), PAUSE, chunk({}, "stop")]])
    app = streamed_app(bench, model)
    chat = start(app, "Think")
    assert model.paused.wait(DEADLINE_S)
    wait_for_text(app.chat.live, "Let me think.", "Done.")
    value = app.chat.live.value
    assert 'class="tb-pre tb-chat-thinking">Let me think.' in value
    assert value.index("Let me think.") < value.index("Done.")
    model.resume()
    chat.future.result(timeout=DEADLINE_S)
    assert chat.outcome == "final" and app.chat.live.value == ""


def test_a_calls_name_and_arguments_show_as_they_grow_and_it_runs_once_complete(bench: Workbench) -> None:
    model = Streamed([call_chunks("dice_roll", '{"form', PAUSE, 'ula": "2', PAUSE, 'd6"}'),
                      text_chunks("You rolled twice.")])
    app = streamed_app(bench, model)
    chat = start(app, "Roll 2d6")
    assert model.paused.wait(DEADLINE_S)
    first = wait_for_text(app.chat.live, '→ dice_roll {"form')
    assert "ula" not in first and "←" not in first
    assert app.state.records == []  # nothing runs while the answer streams
    model.resume()
    assert model.paused.wait(DEADLINE_S)
    wait_for_text(app.chat.live, '→ dice_roll {"formula": "2')
    live = chat.live
    assert live is not None and [(c.name, c.call_id, c.arguments) for c in live.calls] == [
        ("dice_roll", "call_1", '{"formula": "2')]
    model.resume()
    chat.future.result(timeout=DEADLINE_S)
    assert chat.outcome == "final" and chat.final_text == "You rolled twice."
    records = app.state.records
    assert [(r.call_name, r.arguments.value) for r in records] == [("dice_roll", {"formula": "2d6"})]
    transcript = text_of(app.chat.transcript)
    assert '→ dice_roll {"formula":"2d6"}' in transcript and f"← {records[0].result.content[:20]}" in transcript
    assert "round 2" in transcript and app.chat.live.value == ""


def test_many_deltas_make_few_redraws_and_the_last_one_is_drawn(bench: Workbench) -> None:
    n = 300
    words = [f"w{i} " for i in range(n)]
    model = Streamed([text_chunks(*words, PAUSE)])
    app = streamed_app(bench, model)
    redraws: list[str] = []
    events: list[int] = []
    app.chat.live.observe(lambda change: redraws.append(change["new"]), "value")
    app.state.observe("stream", lambda: events.append(1))
    started = time.monotonic()
    chat = start(app, "Count")
    assert model.paused.wait(DEADLINE_S)
    wait_for_text(app.chat.live, f"w{n - 1} ")  # the last delta is drawn (a trailing redraw)
    took = time.monotonic() - started
    live = chat.live
    assert live is not None and live.deltas == n and live.text == "".join(words)
    # At most one redraw per REDRAW_S, the first at once and the last one trailing: prepared
    # chunks stream in a few ms, so that is a couple of redraws for n deltas.
    assert 1 <= len(events) <= took / REDRAW_S + 2 and len(events) < n // 10, (len(events), took)
    assert len(redraws) <= len(events)  # the view redraws on the throttled event only
    model.resume()
    chat.future.result(timeout=DEADLINE_S)
    assert chat.outcome == "final" and app.chat.live.value == ""


@pytest.mark.parametrize(("fault", "code"), [
    (None, "model.stream_interrupted"),  # the stream just ends before its finish
    (ModelError("model.stream_stalled", "the stream sent nothing for 30 s"), "model.stream_stalled"),
])
def test_a_cut_stream_shows_its_code_and_what_came_before_the_cut_with_no_call_run(
        bench: Workbench, fault: BaseException | None, code: str) -> None:
    model = Streamed([[chunk({"role": "assistant", "content": ""}), chunk({"content": "Rolling the <dice> "}),
                       chunk({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                                              "function": {"name": "dice_roll", "arguments": '{"for'}}]}),
                       END]], fault=fault)
    app = streamed_app(bench, model)
    chat = start(app, "Roll 2d6")
    chat.future.result(timeout=DEADLINE_S)
    assert chat.outcome == "provider_error" and chat.error is not None and chat.error[0] == code
    status = text_of(app.chat.status)
    assert "provider_error" in status and code in status and "Traceback" not in status
    transcript = text_of(app.chat.transcript)
    assert "round 1" in transcript and code in transcript  # the round that erred, as other provider errors
    assert "cut: what came before the cut" in transcript and "Rolling the <dice> " in transcript
    assert '✂ dice_roll {"for (not run)' in transcript and "←" not in transcript and "→" not in transcript
    assert "<dice>" not in app.chat.transcript.value  # escaped
    assert app.chat.live.value == ""  # the cut round is in the transcript, not twice
    assert app.state.records == [] and not app.state.busy and app.chat.error_code is None
    assert app.state.invocation.runs[-1].stop_reason == "provider_error"


def test_stop_in_the_middle_of_a_stream_cancels_the_run(bench: Workbench) -> None:
    model = Streamed([call_chunks("dice_roll", '{"formula"', PAUSE, ': "2d6"}')])
    app = streamed_app(bench, model)
    chat = start(app, "Roll 2d6")
    assert model.paused.wait(DEADLINE_S)
    wait_for_text(app.chat.live, '→ dice_roll {"formula"')
    assert not app.chat.stop.disabled
    app.chat.stop.click()
    chat.future.result(timeout=DEADLINE_S)
    assert chat.outcome == "stopped" and "stopped" in text_of(app.chat.status)
    live = text_of(app.chat.live)  # what came before the stop stays, as not run
    assert "round 1 · stopped" in live and '✂ dice_roll {"formula" (not run)' in live and "←" not in live
    assert app.state.records == [] and not app.state.busy and app.chat.stop.disabled
    assert [r.stop_reason for r in app.state.invocation.runs] == ["stopped"]
    again = start(app, "again", model="scripted")  # the app goes on
    again.future.result(timeout=DEADLINE_S)
    assert again.outcome == "final" and app.chat.live.value == ""


def test_the_toggle_off_runs_unstreamed_and_is_greyed_for_a_model_that_cannot_stream(bench: Workbench) -> None:
    model = Streamed([text_chunks("Streamed once."), text_chunks("Sent whole.")])
    app = streamed_app(bench, model)
    redraws: list[str] = []
    app.chat.live.observe(lambda change: redraws.append(change["new"]), "value")
    assert app.chat.model.value == "streamed" and app.chat.stream.value and not app.chat.stream.disabled
    app.chat.model.value = "scripted"  # a model with no stream(body)
    assert app.chat.stream.disabled and not app.chat.stream.value
    app.chat.model.value = "streamed"  # the choice comes back
    assert app.chat.stream.value and not app.chat.stream.disabled
    chat = start(app, "stream it")
    chat.future.result(timeout=DEADLINE_S)
    assert chat.stream and model.streamed == 1 and redraws
    redraws.clear()
    app.chat.stream.value = False
    app.chat.model.value = "scripted"
    app.chat.model.value = "streamed"
    assert not app.chat.stream.value  # unticked by the user: it stays so
    chat = start(app, "send it whole")
    chat.future.result(timeout=DEADLINE_S)
    assert chat.outcome == "final" and chat.final_text == "Sent whole." and not chat.stream
    assert (model.streamed, model.sent) == (1, 1) and chat.live is None
    assert all(r == "" for r in redraws)  # the live part was only cleared, never drawn
    assert "Sent whole." in text_of(app.chat.transcript)
    scripted = start(app, "hello", model="scripted")
    scripted.future.result(timeout=DEADLINE_S)
    assert scripted.outcome == "final" and not scripted.stream


def test_a_closed_bench_greys_the_toggle(tmp_path: Any) -> None:
    bench = Workbench(tmp_path)
    app = streamed_app(bench, Streamed([text_chunks("hi")]))
    bench.close()
    app.chat.model.value = "scripted"
    app.chat.model.value = "streamed"
    assert app.chat.stream.disabled and app.chat.error_code == "bench.closed"
    app.chat.models = {"streamed": Streamed([text_chunks("hi")])}
    assert app.chat.stream.disabled and "bench.closed" in app.chat.error_view.value


def test_in_a_notebooks_loop_the_live_part_changes_on_that_loop(bench: Workbench) -> None:
    model = Streamed([text_chunks("Hello ", "from ", "the ", "loop.")])
    app = streamed_app(bench, model)
    seen: list[int] = []
    app.state.observe("stream", lambda: seen.append(threading.get_ident()))

    async def main() -> Any:
        chat = start(app, "hello")
        await asyncio.wait_for(asyncio.wrap_future(chat.future), DEADLINE_S)
        return chat

    chat = asyncio.run(main())
    assert chat.outcome == "final" and chat.final_text == "Hello from the loop."
    assert seen and set(seen) == {threading.get_ident()}  # never the bench loop's thread

