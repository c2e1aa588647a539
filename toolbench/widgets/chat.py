"""ChatPanel: pick a model adapter the notebook built, type a prompt, watch the run's rounds.

    app = WorkbenchApp(bench, models={"gpt": OpenAIChat(AsyncOpenAI(), "gpt-4.1")})
    app.chat.models = {**app.chat.models, "local": OpenAIChat(local_client, "qwen3")}

The models are given by the notebook (`models=` or `chat.models`): the panel never builds a
client, so keys and base URLs stay the notebook's. With none given, a bench whose
`bench.agents.model` is a `toolbench.models.Model` (a `ScriptedModel`, an adapter) offers that
one, so `display(bench)` has a model to pick when the bench has one.

The run drives the app's current invocation (the console's): its calls are that invocation's
rounds, so they show in the history and the result viewer as calls fired by hand do.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

import ipywidgets as w  # type: ignore[import-untyped]

from .. import CallRecord, Invocation, ToolbenchError, Workbench
from ..models import Model
from ._base import Panel, bar, pre, scroll
from ._chat_run import ChatRun
from ._state import WorkbenchState

AGENTS_MODEL = "bench.agents.model"
SHOWN_CHARS = 600  # of a result's content and a call's arguments in the transcript (the result viewer has it all)

CSS = """
.tb-chat .tb-chat-transcript { min-height: 60px; }
.tb-chat .tb-chat-round { border-left: 3px solid var(--jp-border-color2); padding: 2px 8px; margin: 2px 0; }
.tb-chat .tb-chat-call { font-family: var(--jp-code-font-family); font-size: var(--jp-code-font-size); }
.tb-chat .tb-chat-result-error { color: var(--jp-error-color1); }
.tb-chat .tb-chat-end { font-weight: 600; }
"""


def _cut(text: str, limit: int = SHOWN_CHARS) -> str:
    return text if len(text) <= limit else text[:limit] + f"… ({len(text):,} characters)"


def _code(text: str) -> str:
    return f"<code>{html.escape(text)}</code>"


def round_html(r: Any, records: Mapping[tuple[Any, str], CallRecord]) -> str:
    """One round: the model's text, then each call (name and arguments as sent) with its
    result; `records` are the invocation's records by (round, call id)."""
    parts = [f"<div class='tb-muted'>round {r.index}"
             + (f" · {html.escape(str(r.finish))}" if r.finish else "") + f" · {r.elapsed_ms:.0f} ms</div>"]
    if r.text:
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
    `tb-chat-transcript`: a block per round as it comes) and its end (`status`,
    `tb-chat-status`: the stop reason, the final text, a coded error). `state.chat` is the run;
    `chat.future` completes once the panel has been told the run ended."""

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
        self.transcript = w.HTML("")
        self.transcript.add_class("tb-chat-transcript")
        self.status = w.HTML("")
        self.status.add_class("tb-chat-status")
        self.transcript_box = scroll([self.transcript], size="tb-short")
        self._models: dict[str, Model] = {}
        super().__init__(state, [
            w.HTML("<span class='tb-title'>Chat</span>"),
            bar([self.model, self.send, self.stop]), self.prompt, self.transcript_box, self.status,
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

    def _bench_models(self) -> dict[str, Model]:
        agents_model = getattr(self.state.bench.agents, "model", None)
        return {AGENTS_MODEL: agents_model} if isinstance(agents_model, Model) else {}

    def _wire(self) -> None:
        self.on_click(self.send, self.submit)
        self.on_click(self.stop, self.state.stop_run)
        self.on_state("run", self.refresh)
        self.on_state("busy", self._show_buttons)

    # views --------------------------------------------------------------------------------
    def refresh(self) -> None:
        chat = self.state.chat
        self.transcript_box.layout.display = "none" if chat is None else None  # no blank box before a run
        if chat is None:
            self.transcript.value = ""
            self._show_idle()
        else:
            records = {(rec.round, rec.call_id): rec for rec in chat.invocation.records}
            head = (f"<div class='tb-muted'>{_code(chat.model_name)} on invocation {_code(chat.invocation.id)}: "
                    f"{html.escape(_cut(chat.prompt, 200))}</div>")
            self.transcript.value = head + "".join(round_html(r, records) for r in chat.rounds)
            self.status.value = _status_html(chat)
        self._show_buttons()

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
        return self.state.start_run(self._models[name], prompt, name=name)


def _status_html(chat: ChatRun) -> str:
    if chat.running:
        return (f"<span class='tb-pending'>running {_code(chat.model_name)} … round {len(chat.rounds) + 1}"
                + (" (stopping)" if chat.stop_requested else "") + "</span>")
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
