"""ChatPanel: pick a model adapter the notebook built, type a prompt, watch the run's rounds.

    app = WorkbenchApp(bench, models={"gpt": OpenAIChat(AsyncOpenAI(), "gpt-4.1")})
    app.chat.models = {**app.chat.models, "local": OpenAIChat(local_client, "qwen3")}

The models are given by the notebook (`models=` or `chat.models`): the panel never builds a
client, so keys and base URLs stay the notebook's. With none given, a bench whose
`bench.agents.model` is a `toolbench.models.Model` (a `ScriptedModel`, an adapter) offers that
one, so `display(bench)` has a model to pick when the bench has one.

The run drives the app's current invocation (the console's): its calls are that invocation's
rounds, so they show in the history and the result viewer as calls fired by hand do.

`stream` (on by default) streams the answers of a model that can (`toolbench.models.
StreamingModel`): the round streaming now shows under the transcript as it grows (its text, its
thinking dimmed, each call's name and arguments so far), redrawn at most every `REDRAW_S`, and
is replaced by the round once it ends. A stream cut mid-answer leaves what came before the cut
in its round, marked cut, with none of its calls run. For a model that cannot stream the box is
unticked and greyed out; the choice comes back with a model that can.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

import ipywidgets as w  # type: ignore[import-untyped]

from .. import CallRecord, Invocation, ToolbenchError, Workbench
from ..models import Model
from ._base import Panel, bar, pre, scroll
from ._chat_run import ChatRun, LiveRound, can_stream
from ._state import WorkbenchState
from ._style import add_panel_css

AGENTS_MODEL = "bench.agents.model"
SHOWN_CHARS = 600  # of a result's content and a call's arguments in the transcript (the result viewer has it all)

CSS = """
.tb-chat .tb-chat-box { min-height: 60px; }
.tb-chat .tb-chat-round { border-left: 3px solid var(--jp-border-color2); padding: 2px 8px; margin: 2px 0; }
.tb-chat .tb-chat-call { font-family: var(--jp-code-font-family); font-size: var(--jp-code-font-size); }
.tb-chat .tb-chat-result-error { color: var(--jp-error-color1); }
.tb-chat .tb-chat-end { font-weight: 600; }
.tb-chat .tb-chat-streaming { border-left-style: dashed; }
.tb-chat .tb-chat-thinking { color: var(--jp-ui-font-color2); font-style: italic; }
.tb-chat .tb-chat-cut { color: var(--jp-warn-color1); }
"""
add_panel_css("chat", CSS)


def _cut(text: str, limit: int = SHOWN_CHARS) -> str:
    return text if len(text) <= limit else text[:limit] + f"… ({len(text):,} characters)"


def _tail(text: str, limit: int = SHOWN_CHARS) -> str:
    """The end of a text that is still growing (or was cut): what came last is what matters."""
    return text if len(text) <= limit else f"… ({len(text):,} characters) " + text[-limit:]


def _code(text: str) -> str:
    return f"<code>{html.escape(text)}</code>"


def streamed_html(live: LiveRound, *, ended: str | None = None) -> list[str]:
    """What a round streamed so far: its thinking (dimmed), its text, and each call's name and
    arguments as they grew. `ended` ("cut", "stopped") says the stream ended there: each call is
    then shown as not run."""
    parts = []
    if live.thinking:
        parts.append(f'<pre class="tb-pre tb-chat-thinking">{html.escape(_tail(live.thinking, 4 * SHOWN_CHARS))}</pre>')
    if live.text:
        parts.append(pre(_tail(live.text, 4 * SHOWN_CHARS)))
    for call in live.calls:
        arguments = html.escape(_tail(call.arguments))
        if ended is None:
            parts.append(f"<div class='tb-chat-call tb-chat-call-live'>→ {_code(call.name)} {arguments}</div>")
        else:
            parts.append(f"<div class='tb-chat-call tb-chat-cut'>✂ {_code(call.name)} {arguments} "
                         "<span class='tb-muted'>(not run)</span></div>")
    return parts


def live_html(live: LiveRound, *, ended: str | None = None) -> str:
    """The round streaming now (`ended`: the run stopped in the middle of it), as a round block."""
    head = (f"<div class='tb-muted'>round {live.index} · streaming · {live.deltas} deltas</div>" if ended is None
            else f"<div class='tb-chat-cut'>round {live.index} · {html.escape(ended)}: what came before it; "
                 "none of its calls ran</div>")
    return f"<div class='tb-chat-round tb-chat-streaming'>{head}{''.join(streamed_html(live, ended=ended))}</div>"


def round_html(r: Any, records: Mapping[tuple[Any, str], CallRecord], *, cut: LiveRound | None = None) -> str:
    """One round: the model's text, then each call (name and arguments as sent) with its
    result; `records` are the invocation's records by (round, call id). `cut` is what a round
    whose stream broke off had sent: shown in place of its text, marked cut, its calls not run."""
    parts = [f"<div class='tb-muted'>round {r.index}"
             + (f" · {html.escape(str(r.finish))}" if r.finish else "") + f" · {r.elapsed_ms:.0f} ms</div>"]
    if cut is not None:
        parts.append("<div class='tb-chat-cut'>cut: what came before the cut</div>")
        parts += streamed_html(cut, ended="cut")
    elif r.text:
        parts.append(pre(_cut(r.text, 4 * SHOWN_CHARS)))
    for result in r.results:
        record = records.get((r.invocation_round, result.call_id))
        name = record.call_name if record else (result.tool_id or "?")
        sent = "" if record is None else (record.arguments.replay_text() if record.arguments.is_valid
                                          else record.arguments.raw)
        parts.append(f"<div class='tb-chat-call'>→ {_code(name)} {html.escape(_cut(sent))}</div>")
        if result.is_error:
            parts.append(f"<div class='tb-chat-result-error'>← <b>{_code(result.error_code or 'error')}</b> "
                         f"{html.escape(_cut(result.content))}</div>")
        else:
            parts.append(f"<div class='tb-chat-result'>← {html.escape(_cut(result.content))}</div>")
    if r.error is not None:
        parts.append(f"<div class='tb-error-line'><b>{_code(r.error.code)}</b> {html.escape(r.error.message)}</div>")
    return f"<div class='tb-chat-round'>{''.join(parts)}</div>"


class ChatPanel(Panel):
    """A model dropdown (`model`), the prompt (`prompt`, `tb-chat-input`), `send`
    (`tb-chat-send`), `stop` (`tb-chat-stop`), the transcript of the last run (`transcript`,
    `tb-chat-transcript`: a block per round as it comes), the round streaming now under it
    (`live`, `tb-chat-live`), and the run's end (`status`, `tb-chat-status`: the stop reason, the
    final text, a coded error). `stream` (`tb-chat-stream`) streams the run when the model can.
    `state.chat` is the run; `chat.future` completes once the panel has been told the run ended."""

    css_class = "tb-chat"

    def __init__(self, source: Workbench | WorkbenchState, invocation: Invocation | None = None, *,
                 models: Mapping[str, Model] | None = None) -> None:
        state = WorkbenchState.of(source, invocation)
        self.model = w.Dropdown(options=[], description="model", layout=w.Layout(width="300px"))
        self.model.add_class("tb-chat-model")
        self.prompt = w.Textarea(value="", placeholder="a prompt for the model (it may call this invocation's tools)",
                                 layout=w.Layout(width="100%", height="72px"))
        self.prompt.add_class("tb-chat-input")
        self.send = w.Button(description="send", button_style="primary", icon="paper-plane",
                             layout=w.Layout(width="90px"))
        self.send.add_class("tb-chat-send")
        self.stop = w.Button(description="stop", button_style="warning", icon="stop", disabled=True,
                             layout=w.Layout(width="80px"))
        self.stop.add_class("tb-chat-stop")
        self.stream = w.Checkbox(value=True, description="stream", indent=False, layout=w.Layout(width="90px"))
        self.stream.add_class("tb-chat-stream")
        self.transcript = w.HTML("")
        self.transcript.add_class("tb-chat-transcript")
        self.live = w.HTML("")
        self.live.add_class("tb-chat-live")
        self.status = w.HTML("")
        self.status.add_class("tb-chat-status")
        self.transcript_box = scroll([self.transcript, self.live], size="tb-short")
        self.transcript_box.add_class("tb-chat-box")
        self._models: dict[str, Model] = {}
        self._wants_stream = True  # the box's last value while it could be ticked
        super().__init__(state, [
            w.HTML("<span class='tb-title'>Chat</span>"),
            bar([self.model, self.stream, self.send, self.stop]), self.prompt, self.transcript_box, self.status,
        ])
        self.models = dict(models) if models is not None else self._bench_models()
        self._wire()
        self.refresh()

    # the models ---------------------------------------------------------------------------
    @property
    def models(self) -> dict[str, Model]:
        """The adapters to pick from, by name (a copy: assign a new dict to change them)."""
        return dict(self._models)

    @models.setter
    def models(self, models: Mapping[str, Model]) -> None:
        for name, model in models.items():
            if not isinstance(name, str) or not isinstance(model, Model):
                raise ToolbenchError("bench.misuse", f"chat models are {{name: toolbench.models adapter}}; "
                                     f"{name!r} is a {type(model).__name__}")
        self._models = dict(models)
        previous = self.model.value
        self.model.options = list(self._models)
        if self._models:
            self.model.value = previous if previous in self._models else next(iter(self._models))
        self._show_idle()
        self._show_stream()

    def _bench_models(self) -> dict[str, Model]:
        agents_model = getattr(self.state.bench.agents, "model", None)
        return {AGENTS_MODEL: agents_model} if isinstance(agents_model, Model) else {}

    def _wire(self) -> None:
        self.on_click(self.send, self.submit)
        self.on_click(self.stop, self.state.stop_run)
        # Not a user's action that clears the error line: the closed banner must stay when
        # `models` are given after a close.
        self.model.observe(self.guard(lambda _change: self._show_stream(), clear=False), names="value")
        self.stream.observe(self.guard(lambda change: self._stream_picked(change["new"]), clear=False),
                            names="value")
        self.on_state("run", self.refresh)
        self.on_state("stream", self._show_live)
        self.on_state("busy", self._show_buttons)

    # views --------------------------------------------------------------------------------
    def refresh(self) -> None:
        chat = self.state.chat
        self.transcript_box.layout.display = "none" if chat is None else None  # no blank box before a run
        if chat is None:
            self.transcript.value = self.live.value = ""
            self._show_idle()
        else:
            records = {(rec.round, rec.call_id): rec for rec in chat.invocation.records}
            head = (f"<div class='tb-muted'>{_code(chat.model_name)} on invocation {_code(chat.invocation.id)}: "
                    f"{html.escape(_cut(chat.prompt, 200))}</div>")
            live = chat.live
            self.transcript.value = head + "".join(round_html(r, records, cut=_cut_part(r, live))
                                                   for r in chat.rounds)
            self.live.value = _live_html(chat, live)
            self.status.value = _status_html(chat)
        self._show_buttons()

    def _show_live(self) -> None:
        """The round streaming now (the `stream` event: throttled, never once per delta)."""
        if self.state.chat is not None:
            self.live.value = _live_html(self.state.chat, self.state.chat.live)

    def _show_stream(self) -> None:
        """The stream box: ticked as last chosen for a model that can stream, else unticked and greyed."""
        if self.state.closed:
            return
        model = self._models.get(self.model.value)
        able = model is not None and can_stream(model)
        self.stream.disabled = not able  # first: a greyed box's value is not the user's choice
        self.stream.value = self._wants_stream if able else False
        self.stream.tooltip = ("stream the answers: text and call arguments show as they arrive" if able
                               else "this model cannot stream (toolbench.models.StreamingModel)")

    def _stream_picked(self, value: bool) -> None:
        if not self.stream.disabled:
            self._wants_stream = bool(value)

    def _show_idle(self) -> None:
        if self.state.chat is None:
            self.status.value = ("" if self._models else
                                 "<span class='tb-muted'>no model to pick: give the app models "
                                 "(<code>WorkbenchApp(bench, models={\"name\": adapter})</code> or "
                                 "<code>app.chat.models = {...}</code>)</span>")

    def _show_buttons(self) -> None:
        if self.state.closed:
            return
        running = self.state.chat is not None and self.state.chat.running
        self.send.disabled = self.state.busy
        self.stop.disabled = not running

    # actions ------------------------------------------------------------------------------
    def submit(self) -> ChatRun:
        """Send the prompt to the picked model (the send button)."""
        prompt = self.prompt.value
        if not self._models:
            raise ToolbenchError("app.no_model", "there is no model to pick: give the app models "
                                 "(WorkbenchApp(bench, models={...}) or app.chat.models = {...})")
        name = self.model.value
        if name not in self._models:
            raise ToolbenchError("app.no_model", "pick a model first")
        if not prompt.strip():
            raise ToolbenchError("app.empty_prompt", "type a prompt first")
        model = self._models[name]
        stream = bool(self.stream.value) and not self.stream.disabled and can_stream(model)
        return self.state.start_run(model, prompt, name=name, stream=stream)


def _cut_part(r: Any, live: LiveRound | None) -> LiveRound | None:
    """What round `r` streamed, when its stream broke off (the round erred after deltas came)."""
    return live if live is not None and live.index == r.index and r.error is not None else None


def _live_html(chat: ChatRun, live: LiveRound | None) -> str:
    """The streamed round not yet in the transcript: growing while the run runs; once the run
    stopped (or failed) in the middle of it, what came before, with none of its calls run."""
    if live is None or live.index <= len(chat.rounds):  # none, or its round is shown (a cut one too)
        return ""
    return live_html(live) if chat.running else live_html(live, ended=str(chat.outcome))


def _status_html(chat: ChatRun) -> str:
    if chat.running:
        return (f"<span class='tb-pending'>running {_code(chat.model_name)} … round {len(chat.rounds) + 1}"
                + (" · streaming" if chat.stream else "") + (" (stopping)" if chat.stop_requested else "")
                + "</span>")
    parts = [f"<span class='tb-chat-end'>{html.escape(str(chat.outcome))}</span>"]
    if chat.outcome == "stopped":
        parts.append(f"<span class='tb-muted'> during round {len(chat.rounds) + 1}: the calls it ran (a "
                     "cancelled one too) are in the history</span>")
    if chat.final_text:
        parts.append(f"<div class='tb-chat-final'>{html.escape(chat.final_text)}</div>")
    if chat.error is not None:
        code, message = chat.error
        parts.append(f"<div class='tb-error-line'><b>{_code(code)}</b> {html.escape(message)}</div>")
    return "".join(parts)
