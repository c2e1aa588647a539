"""The MCP tab's views of a server beyond its tools, as MCP Inspector has them: resources (list,
templates, read, subscribe), prompts (arguments with completion, get), and logs (ping, level).

`FeatureViews` holds the three tabs' widgets and draws what the manager answers; the panel
gives it `run(doing, now, later, done)` (its `_run`: async on the notebook's loop) and `guard`
(its error wrapper), so every call is coded and none blocks the kernel. A tab loads when it is
opened or its server changes; what the server does not offer is a muted line, not an error.
"""

from __future__ import annotations

import base64
import html
import time
from collections import deque
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

import ipywidgets as w  # type: ignore[import-untyped]

from .. import Attachment, ToolbenchError, Workbench
from ..mcp import LOG_LEVELS, McpPrompt, McpResourceTemplate, PromptResult, ResourceRead, ResourceUpdate
from ._base import bar, pre, scroll, table

Run = Callable[..., None]
UPDATES_SHOWN = 20
LOGS_SHOWN = 50
TEXT_PREVIEW = 4000  # bytes of a text blob shown
_NOT_OFFERED = ("mcp.capability_missing", "mcp.not_in_protocol")
# A text box that takes the row's free width and leaves its buttons beside it (100% pushed them below).
_FILL = {"flex": "1 1 auto", "width": "auto", "min_width": "160px"}


def _muted(text: str) -> str:
    return f"<span class='tb-muted'>{text}</span>"


def attachment_html(attachment: Attachment) -> str:
    """An image as a preview (at most 320 px wide, its own size when smaller), a text blob as its
    start, anything else as its type and size."""
    facts = f"{html.escape(attachment.mime_type)}, {len(attachment.data):,} bytes"
    if attachment.mime_type.startswith("image/"):  # a blob resource of an image type too
        data = base64.b64encode(attachment.data).decode()
        return (f"<div class='tb-result-attachment'><img src='data:{html.escape(attachment.mime_type)};base64,"
                f"{data}' style='max-width:min(320px, 100%); image-rendering:pixelated'>"
                f"<div>{_muted(facts)}</div></div>")
    text = ""
    if attachment.mime_type.startswith("text/"):  # a text blob reads as its text (the start of it)
        text = pre(attachment.data[:TEXT_PREVIEW].decode("utf-8", errors="replace"))
    return f"<div class='tb-result-attachment'>{_muted(attachment.kind + ': ' + facts)}{text}</div>"


def _template_uri(template: McpResourceTemplate) -> str:
    return template.uri_template


class FeatureViews:
    """Resources, prompts and logs of the selected server (see the module docstring)."""

    def __init__(self, bench: Workbench, run: Run, guard: Callable[..., Any]) -> None:
        self._bench = bench
        self._run = run
        self._guard = guard
        self.server: str | None = None
        self._prompts: dict[str, McpPrompt] = {}
        self._updates: deque[str] = deque(maxlen=UPDATES_SHOWN)
        self._subscribed: set[tuple[str, str]] = set()
        # resources
        self.resource_list = w.HTML("")
        self.uri = w.Combobox(placeholder="a resource URI, or a template filled in", ensure_option=False,
                              layout=_FILL)
        self.uri.add_class("tb-mcp-resource-uri")
        self.read_button = w.Button(description="read", icon="eye", layout=w.Layout(width="auto"))
        self.read_button.add_class("tb-mcp-resource-read")
        self.subscribe_button = w.Button(description="subscribe", icon="bell", layout=w.Layout(width="auto"))
        self.subscribe_button.add_class("tb-mcp-resource-subscribe")
        self.reload_resources = w.Button(description="reload", icon="refresh", layout=w.Layout(width="auto"))
        self.resource_view = w.HTML("")
        self.resource_view.add_class("tb-mcp-resource-content")
        self.updates_view = w.HTML("")
        self.resources = w.VBox([
            bar([self.reload_resources]), scroll([self.resource_list], size="tb-short"),
            bar([self.uri, self.read_button, self.subscribe_button]),
            scroll([self.resource_view], size="tb-short"), self.updates_view])
        self.resources.add_class("tb-mcp-resources")
        # prompts
        self.prompt = w.Dropdown(description="prompt", options=[], layout=w.Layout(width="auto"))
        self.prompt.add_class("tb-mcp-prompt-pick")
        self.prompt_about = w.HTML("")
        self.arguments = w.VBox([])
        self.get_button = w.Button(description="get", icon="play", button_style="primary",
                                   layout=w.Layout(width="auto"))
        self.get_button.add_class("tb-mcp-prompt-get")
        self.prompt_view = w.HTML("")
        self.prompt_view.add_class("tb-mcp-prompt-messages")
        self.argument_boxes: dict[str, w.Combobox] = {}
        self.prompts = w.VBox([bar([self.prompt, self.get_button]), self.prompt_about, self.arguments,
                               scroll([self.prompt_view], size="tb-short")])
        self.prompts.add_class("tb-mcp-prompts")
        # logs
        self.ping_button = w.Button(description="ping", icon="exchange", layout=w.Layout(width="auto"))
        self.ping_button.add_class("tb-mcp-ping")
        self.ping_view = w.HTML("")
        self.level = w.Dropdown(description="log level", options=["(server's)", *LOG_LEVELS],
                                layout=w.Layout(width="auto"))
        self.level.add_class("tb-mcp-log-level")
        self.logs_view = w.HTML("")
        self.logs = w.VBox([bar([self.ping_button, self.ping_view, self.level]),
                            scroll([self.logs_view], size="tb-short")])
        self.logs.add_class("tb-mcp-logs")
        self._wire()

    def _wire(self) -> None:
        for button, fn in ((self.reload_resources, self.load_resources), (self.read_button, self.read),
                           (self.subscribe_button, self.toggle_subscription), (self.get_button, self.get_prompt),
                           (self.ping_button, self.ping)):
            button.on_click(self._guard(lambda _b, fn=fn: fn()))
        self.prompt.observe(self._guard(lambda _c: self._show_prompt()), names="value")
        self.level.observe(self._guard(lambda c: self.set_level(c["new"])), names="value")
        previous = self._bench.mcp.on_resource_updated(None)

        def updated(update: ResourceUpdate) -> None:  # on the bench loop: note it, redraw later
            self._updates.appendleft(f"{time.strftime('%H:%M:%S')} {update.server}: {update.uri}")
            self._show_updates()
            if previous is not None:
                previous(update)

        self._bench.mcp.on_resource_updated(updated)

    # -- what the panel calls -------------------------------------------------------------------

    def select(self, server: str | None) -> None:
        if server == self.server:
            return
        self.server = server
        for view in (self.resource_list, self.resource_view, self.prompt_view, self.prompt_about, self.ping_view):
            view.value = ""
        self._prompts, self.prompt.options, self.arguments.children = {}, [], []
        self.uri.options, self.uri.value = [], ""
        self._show_logs()
        self._show_updates()

    def opened(self, tab: str) -> None:
        """A tab was opened (or its server changed while open): load what it lists."""
        if self.server is None:
            return
        if tab == "resources":
            self.load_resources()
        elif tab == "prompts":
            self.load_prompts()
        elif tab == "logs":
            self._show_logs()

    # -- resources --------------------------------------------------------------------------

    def load_resources(self) -> None:
        server, mcp = self._server(), self._bench.mcp

        async def both() -> tuple[Any, Any]:
            return await self._offered(mcp.aresources(server)), await self._offered(mcp.aresource_templates(server))

        def now() -> tuple[Any, Any]:
            return (self._offered_now(partial(mcp.resources, server)),
                    self._offered_now(partial(mcp.resource_templates, server)))

        self._run(f"listing the resources of {server}", now, both, self._show_resources)

    def _show_resources(self, found: tuple[Any, Any]) -> None:
        resources, templates = found
        if isinstance(resources, str) and isinstance(templates, str):
            self.resource_list.value = _muted(html.escape(resources))
            return
        rows = [[r.title or r.name, r.uri, r.mime_type or "", " ".join(p for p in (r.problem_code, r.problem) if p)]
                for r in (resources if isinstance(resources, list) else [])]
        rows += [[t.title or t.name, t.uri_template, t.mime_type or "", "template: fill in its {fields}"]
                 for t in (templates if isinstance(templates, list) else [])]
        self.resource_list.value = (table(["name", "URI", "type", "note"], rows) if rows
                                    else _muted("the server lists no resources"))
        uris = [r.uri for r in resources] if isinstance(resources, list) else []
        uris += [_template_uri(t) for t in templates] if isinstance(templates, list) else []
        self.uri.options = uris
        if not self.uri.value and uris:
            self.uri.value = uris[0]

    def read(self) -> None:
        server, uri = self._server(), self.uri.value.strip()
        if not uri:
            raise ToolbenchError("bench.misuse", "type or pick a resource URI to read")
        mcp = self._bench.mcp
        self._run(f"reading {uri}", partial(mcp.read_resource, server, uri), partial(mcp.aread_resource, server, uri),
                  self._show_read)

    def _show_read(self, read: ResourceRead) -> None:
        parts = []
        for item in read.contents:
            head = _muted(html.escape(f"{item.uri} · {item.mime_type or 'no type'}"))
            body = pre(item.text) if item.text else ""
            shown = attachment_html(item.attachment) if item.attachment is not None else ""
            problem = f"<div><code>{html.escape(item.problem)}</code></div>" if item.problem else ""
            parts.append(f"<div>{head}{body}{shown}{problem}</div>")
        self.resource_view.value = "".join(parts) or _muted("the resource has no contents")

    def toggle_subscription(self) -> None:
        server, uri = self._server(), self.uri.value.strip()
        if not uri:
            raise ToolbenchError("bench.misuse", "type or pick a resource URI to follow")
        mcp, key = self._bench.mcp, (server, uri)
        following = key in self._subscribed
        now, later = ((mcp.unsubscribe, mcp.aunsubscribe) if following else (mcp.subscribe, mcp.asubscribe))

        def done(_result: Any) -> None:
            (self._subscribed.discard if following else self._subscribed.add)(key)
            self._show_updates()

        self._run(f"{'un' if following else ''}subscribing {uri}", partial(now, server, uri),
                  partial(later, server, uri), done)

    def _show_updates(self) -> None:
        followed = sorted(uri for server, uri in self._subscribed if server == self.server)
        self.subscribe_button.description = "unsubscribe" if (self.server, self.uri.value.strip()) in \
            self._subscribed else "subscribe"
        head = _muted("following: " + ", ".join(html.escape(u) for u in followed)) if followed else ""
        self.updates_view.value = head + (pre("\n".join(self._updates)) if self._updates else "")

    # -- prompts ----------------------------------------------------------------------------

    def load_prompts(self) -> None:
        server, mcp = self._server(), self._bench.mcp
        self._run(f"listing the prompts of {server}", lambda: self._offered_now(partial(mcp.prompts, server)),
                  lambda: self._offered(mcp.aprompts(server)), self._show_prompts)

    def _show_prompts(self, prompts: Any) -> None:
        if isinstance(prompts, str):
            self.prompt_about.value, self.prompt.options = _muted(html.escape(prompts)), []
            return
        self._prompts = {p.name: p for p in prompts}
        self.prompt.options = list(self._prompts)
        if not prompts:
            self.prompt_about.value = _muted("the server lists no prompts")
        self._show_prompt()

    def _show_prompt(self) -> None:
        prompt = self._prompts.get(self.prompt.value or "")
        self.argument_boxes = {}
        if prompt is None:
            self.arguments.children = []
            return
        self.prompt_about.value = _muted(html.escape(prompt.description or prompt.title or ""))
        rows = []
        for argument in prompt.arguments:
            box = w.Combobox(description=argument.name + (" *" if argument.required else ""),
                             placeholder=argument.description or "", ensure_option=False,
                             layout=_FILL, style={"description_width": "120px"})
            box.add_class("tb-mcp-prompt-argument")
            suggest = w.Button(description="suggest", tooltip="ask the server to complete this value",
                               layout=w.Layout(width="auto"))
            suggest.add_class("tb-mcp-prompt-suggest")
            suggest.on_click(self._guard(lambda _b, name=argument.name: self.suggest(name)))
            self.argument_boxes[argument.name] = box
            rows.append(bar([box, suggest]))
        self.arguments.children = rows

    def suggest(self, argument: str) -> None:
        server, prompt = self._server(), self._prompts[self.prompt.value]
        box, mcp = self.argument_boxes[argument], self._bench.mcp
        context = {k: b.value for k, b in self.argument_boxes.items() if k != argument and b.value}
        call = partial(mcp.complete, server, prompt, (argument, box.value), context=context or None)
        later = partial(mcp.acomplete, server, prompt, (argument, box.value), context=context or None)

        def show(completion: Any) -> None:
            box.options = list(completion.values)

        self._run(f"completing {argument}", call, later, show)

    def get_prompt(self) -> None:
        server = self._server()
        prompt = self._prompts.get(self.prompt.value or "")
        if prompt is None:
            raise ToolbenchError("bench.misuse", "pick a prompt first (the server may list none)")
        arguments = {k: b.value for k, b in self.argument_boxes.items() if b.value}
        mcp = self._bench.mcp
        self._run(f"getting {prompt.name}", partial(mcp.get_prompt, server, prompt, arguments),
                  partial(mcp.aget_prompt, server, prompt, arguments), self._show_messages)

    def _show_messages(self, result: PromptResult) -> None:
        parts = [_muted(html.escape(result.description))] if result.description else []
        for message in result.messages:
            shown = "".join(attachment_html(a) for a in message.attachments)
            parts.append(f"<div class='tb-card'><b>{html.escape(message.role)}</b>{pre(message.text)}{shown}</div>")
        self.prompt_view.value = "".join(parts) or _muted("the prompt has no messages")

    # -- logs -------------------------------------------------------------------------------

    def ping(self) -> None:
        server, mcp = self._server(), self._bench.mcp
        self._run(f"pinging {server}", lambda: self._offered_now(partial(mcp.ping, server)),
                  lambda: self._offered(mcp.aping(server)), self._show_ping)

    def _show_ping(self, seconds: Any) -> None:
        self.ping_view.value = _muted(html.escape(seconds)) if isinstance(seconds, str) else \
            f"answered in {seconds * 1000:.0f} ms"

    def set_level(self, level: str) -> None:
        if level not in LOG_LEVELS or self.server is None:
            return
        server, mcp = self.server, self._bench.mcp
        self._run(f"setting the log level of {server}", lambda: self._offered_now(partial(
            mcp.set_log_level, server, level)), lambda: self._offered(mcp.aset_log_level(server, level)),
            self._level_set)

    def _level_set(self, answer: Any) -> None:
        if isinstance(answer, str):
            self.ping_view.value = _muted(html.escape(answer))
        self._show_logs()

    def _show_logs(self) -> None:
        messages = self._bench.mcp.logs(self.server)[::-1][:LOGS_SHOWN] if self.server else []
        rows = [[time.strftime("%H:%M:%S", time.localtime(m.time)), m.level, m.logger or "",
                 m.data if isinstance(m.data, str) else repr(m.data)] for m in messages]
        self.logs_view.value = table(["time", "level", "logger", "message"], rows) if rows else _muted(
            "no log messages yet (set a level to ask the server for them)")

    # -- helpers ----------------------------------------------------------------------------

    def _server(self) -> str:
        if self.server is None:
            raise ToolbenchError("bench.misuse", "select a server first")
        return self.server

    @staticmethod
    def _offered_now(call: Callable[[], Any]) -> Any:
        """The answer, or why the server does not offer it (a muted line, not an error)."""
        try:
            return call()
        except ToolbenchError as exc:
            if exc.code in _NOT_OFFERED:
                return exc.message
            raise

    @staticmethod
    async def _offered(awaitable: Awaitable[Any]) -> Any:
        try:
            return await awaitable
        except ToolbenchError as exc:
            if exc.code in _NOT_OFFERED:
                return exc.message
            raise
