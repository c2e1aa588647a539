"""McpPanel: the bench's MCP servers (add one from a pasted mcp.json entry, restart, switch,
remove) and, for the one selected, its tools and their permissions, diagnostics, stderr log and
protocol trace, as MCP Inspector shows them."""

from __future__ import annotations

import asyncio
import html
import json
import time
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any, TypeVar

import ipywidgets as w  # type: ignore[import-untyped]

from .. import Invocation, ToolbenchError, Workbench
from ..mcp import McpServerInfo, McpToolInfo, TraceMessage
from ._base import Panel, bar, pre, pretty, scroll, table
from ._mcp_features import FeatureViews
from ._state import WorkbenchState
from ._style import add_panel_css

T = TypeVar("T")
TRACE_LIMIT = 50  # messages listed; the manager keeps more
PERMISSIONS = ("on", "off", "ask")
# The tools table: each column's head and width, one cell per column in each row.
TOOL_COLUMNS = (("tool", "minmax(0, 1fr)"), ("ToolId", "minmax(0, 1.6fr)"), ("permission", "96px"),
                ("offer", "48px"), ("in the snapshot", "max-content"), ("problem", "minmax(0, 1.2fr)"))
TABS = ("tools", "resources", "prompts", "diagnostics", "stderr", "protocol", "logs")
SIGN_IN_CODES = ("mcp.sign_in_required", "mcp.sign_in_failed")  # a card with these offers "sign in"
SHAPES = ('paste {"mcpServers": {"name": {...}}}, {"name": {"command": ..., "args": [...]}}, '
          'or {"command": ..., "args": [...]} with a name')
PLACEHOLDER = '{"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"]}'

CSS = """
.tb-mcp .tb-mcp-state { font-weight: 600; }
.tb-mcp .tb-mcp-state-active { color: var(--jp-success-color1); }
.tb-mcp .tb-mcp-state-pending { color: var(--jp-warn-color1); }
.tb-mcp .tb-mcp-state-failed { color: var(--jp-error-color1); }
.tb-mcp .tb-mcp-state-disabled { color: var(--jp-ui-font-color2); }
.tb-mcp .tb-mcp-config textarea, .tb-mcp .tb-trace select { font-family: var(--jp-code-font-family);
  font-size: var(--jp-code-font-size); }
"""
add_panel_css("mcp", CSS)


def parse_config(text: str, name: str = "") -> dict[str, Any]:
    """The `{"mcpServers": {...}}` mapping of a pasted document, named entry, or bare entry (named by `name`)."""
    if not text.strip():
        raise ToolbenchError("mcp.config_invalid", f"the box is empty: {SHAPES}")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ToolbenchError("mcp.config_invalid", f"the JSON breaks at line {exc.lineno}, column {exc.colno}: "
                             f"{exc.msg} (near `{near(text, exc.lineno, exc.colno)}`)") from None
    if not isinstance(data, dict) or not data:
        raise ToolbenchError("mcp.config_invalid", f"not an object: {SHAPES}")
    if "mcpServers" in data:
        return data
    if "command" in data or "url" in data:
        if not name.strip():
            raise ToolbenchError("mcp.config_invalid", "a bare server entry needs a name: fill in the name box")
        return {"mcpServers": {name.strip(): data}}
    if all(isinstance(entry, dict) for entry in data.values()):
        return {"mcpServers": data}
    raise ToolbenchError("mcp.config_invalid", SHAPES)


def near(text: str, line: int, column: int, *, span: int = 30) -> str:
    """The text around `column` of `line` (1-based), `…` where it is cut: the place itself, on a
    line of any length."""
    lines = text.splitlines() or [""]
    row = lines[min(line, len(lines)) - 1]
    start = max(0, column - 1 - span)
    window = row[start:column - 1 + span].strip()
    return ("…" if start > 0 else "") + window + ("…" if column - 1 + span < len(row) else "")


def trace_line(message: TraceMessage, answers: str = "") -> str:
    """`12:03:04.120  → request tools/call #3`, or `← response #3 (tools/call)` when `answers`
    names the request a response answers: one message of the protocol trace."""
    clock = time.strftime("%H:%M:%S", time.localtime(message.at)) + f".{int(message.at % 1 * 1000):03d}"
    arrow = "→" if message.direction == "sent" else "←"
    parts = [arrow, message.kind, message.method, f"#{message.id}" if message.id else "",
             f"({answers})" if answers and not message.method else ""]
    return f"{clock}  " + " ".join(p for p in parts if p)


def trace_json(message: TraceMessage) -> str:
    """A message's JSON pretty-printed (as sent when it was cut or is not JSON)."""
    if message.cut:
        return f"(cut at {len(message.text):,} characters: the message was longer)\n{message.text}"
    try:
        return pretty(json.loads(message.text))
    except ValueError:
        return message.text


def state_badge(state: str) -> str:
    return f"<span class='tb-mcp-state tb-mcp-state-{html.escape(state)}'>{html.escape(state)}</span>"


def muted(text: str) -> str:
    return f"<span class='tb-muted'>{text}</span>"


class McpPanel(Panel):
    """MCP servers: the add box (`config`, `name`, `add_button`), a card per server (buttons in
    `row_buttons[name]`: `select`, `restart`, `toggle`, `remove`), the `server` dropdown and the
    details tabs: tools (`permission_controls[tool_id]`), resources, prompts (`features`, see
    `_mcp_features`), diagnostics, stderr log, `trace`, logs. A
    server that needs an OAuth sign-in gets a `signin` button; the page to open shows in
    `signin_link` while toolbench waits for the redirect."""

    css_class = "tb-mcp"

    def __init__(self, source: Workbench | WorkbenchState, invocation: Invocation | None = None) -> None:
        state = WorkbenchState.of(source, invocation)
        self.title = w.HTML("")
        self.status = w.HTML("")  # what runs now: connecting, restarting...
        self.signin_link = w.HTML("")  # the authorization URL to open while a sign-in waits
        self.signin_link.add_class("tb-mcp-signin-link")
        self.server_list = scroll([], size="tb-short")
        self.server = w.Dropdown(description="server", options=[])
        self.server.add_class("tb-mcp-server")
        self.refresh_button = w.Button(description="refresh", icon="refresh", tooltip="redraw from the manager",
                                       layout=w.Layout(width="auto"))
        self.refresh_button.add_class("tb-mcp-refresh-view")
        self.tools_view = w.HTML("")
        self.tools_grid = w.GridBox([], layout=w.Layout(  # inline: the grid holds without the stylesheet
            grid_template_columns=" ".join(width for _head, width in TOOL_COLUMNS),
            grid_gap="2px 8px", align_items="center"))
        self.tools_grid.add_class("tb-mcp-tools")
        self.diagnostics_view = w.HTML("")
        self.log_view = w.HTML("")
        self.log_path = w.HTML("")
        self.trace = w.Select(options=[], rows=12, layout=w.Layout(width="100%"))
        self.trace.add_class("tb-trace")
        self.trace_count = w.HTML("")
        self.trace_detail = w.HTML("")
        self.features = FeatureViews(state.bench, self._run, self.guard)
        self.tabs = w.Tab(children=[
            w.VBox([self.tools_view, scroll([self.tools_grid], size="tb-short")]),
            self.features.resources, self.features.prompts,
            scroll([self.diagnostics_view], size="tb-short"),
            w.VBox([self.log_path, scroll([self.log_view], size="tb-short")]),
            w.VBox([self.trace_count, self.trace, scroll([self.trace_detail], size="tb-short")]),
            self.features.logs,
        ], titles=TABS)
        self.name = w.Text(placeholder="name (for a bare entry)", layout=w.Layout(width="240px"))
        self.name.add_class("tb-mcp-name")
        self.config = w.Textarea(placeholder=PLACEHOLDER, layout=w.Layout(width="100%", height="110px"))
        self.config.add_class("tb-mcp-config")
        self.add_button = w.Button(description="add server", button_style="primary", icon="plus")
        self.add_button.add_class("tb-mcp-add")
        self.add_box = w.Accordion(children=[w.VBox([
            w.HTML(muted("Paste an mcp.json document, one named entry, or a bare entry with a name.")),
            bar([self.name]), self.config, bar([self.add_button]),
        ])], titles=("add a server",))
        self.row_buttons: dict[str, dict[str, w.Button]] = {}
        self._cards: dict[str, w.VBox] = {}
        self.permission_controls: dict[str, w.Dropdown] = {}
        self.servers: dict[str, McpServerInfo] = {}
        self._messages: list[TraceMessage] = []  # newest first, as listed
        self._doing: list[str] = []
        self._drawn = self._redrawing = False
        self._tasks: set[asyncio.Task[Any]] = set()
        super().__init__(state, [bar([self.title, self.status]), self.signin_link, self.server_list,
                                 bar([self.server, self.refresh_button]), self.tabs, self.add_box])
        self._wire()
        self.refresh()
        self.add_box.selected_index = None if self.servers else 0  # open while there is nothing else

    def _wire(self) -> None:
        self.on_click(self.add_button, self._add)
        self.on_click(self.refresh_button, partial(self.refresh, True))
        self.on_change(self.server, lambda _v: None if self._redrawing else self._select())
        self.on_change(self.trace, lambda _v: self._show_message())
        self.on_change(self.tabs, lambda index: self.features.opened(TABS[index]) if index is not None else None,
                       name="selected_index")
        self.on_state("mcp", self.refresh)
        self.on_state("result", self.refresh)  # a call adds trace messages
        self.on_state("invocation", partial(self.refresh, True))  # what is in the snapshot changed

    # views --------------------------------------------------------------------------------
    def refresh(self, force: bool = False) -> None:
        """Redraw from `bench.mcp` (the manager is made lazily; reading it starts nothing). When
        no server changed (a call ended) only the trace is redrawn: fewer widgets to replace."""
        servers = {info.name: info for info in self.state.bench.mcp.servers}
        if not force and self._drawn and servers == self.servers:
            self._show_trace(servers.get(self.server.value or ""))
            return
        self.servers, self._drawn = servers, True
        count = len(self.servers)
        self.title.value = f"<b>MCP servers</b> {muted(f'{count} registered' if count else 'no servers yet')}"
        self.row_buttons, self._cards = {}, {}
        self.server_list.children = [self._card(info) for info in self.servers.values()] or [
            w.HTML(muted("no servers yet: add one below"))]
        names = list(self.servers)
        if list(self.server.options) != names:
            keep = self.server.value if self.server.value in names else (names[0] if names else None)
            self._redrawing = True  # one redraw of the details below, not one per change
            try:
                self.server.options = names
                self.server.value = keep
            finally:
                self._redrawing = False
        self._select()

    def _card(self, info: McpServerInfo) -> w.VBox:
        facts = [info.transport, f"pid {info.pid}" if info.pid else "",
                 " ".join(str(info.server_info.get(k) or "") for k in ("name", "version")).strip()
                 if info.server_info else "",
                 f"{len(info.tools)} tools, {sum(self._in_snapshot(t) for t in info.tools)} "
                 "in the snapshot"]
        head = (f"<span class='tb-title'>{html.escape(info.name)}</span> {state_badge(info.state)} "
                + muted(html.escape(" · ".join(f for f in facts if f))))
        lines = [w.HTML(head)]
        if info.diagnostic_code:
            lines.append(w.HTML(f"<code>{html.escape(info.diagnostic_code)}</code> "
                                f"{html.escape(info.diagnostic or '')}"))
        buttons = {
            "select": w.Button(description="details", tooltip="show its tools, log and trace below"),
            **({"signin": w.Button(description="sign in", icon="sign-in", button_style="info",
                                   tooltip="sign in with OAuth: the page to open appears above")}
               if info.diagnostic_code in SIGN_IN_CODES else {}),
            "restart": w.Button(description="restart", icon="refresh", tooltip="reconnect and list the tools"),
            "toggle": w.Button(description="enable" if info.state == "disabled" else "disable"),
            "remove": w.Button(description="remove", icon="trash", button_style="danger"),
        }
        name = info.name
        mcp = self.state.bench.mcp
        self.on_click(buttons["select"], partial(setattr, self.server, "value", name))
        if "signin" in buttons:
            self.on_click(buttons["signin"], partial(self._sign_in, name))
        self.on_click(buttons["restart"], partial(self._run, f"restarting {name}", partial(
            mcp.refresh, name, restart=True), partial(mcp.arefresh, name, restart=True)))
        switch = (mcp.enable, mcp.aenable) if info.state == "disabled" else (mcp.disable, mcp.adisable)
        self.on_click(buttons["toggle"], partial(self._run, f"switching {name}", partial(switch[0], name),
                                                 partial(switch[1], name)))
        self.on_click(buttons["remove"], partial(self._run, f"removing {name}", partial(mcp.remove, name),
                                                 partial(mcp.aremove, name)))
        for kind, button in buttons.items():
            button.add_class(f"tb-mcp-{kind}")
            button.disabled = self.state.closed
            button.layout.width = "auto"  # a row of four fits a narrow column
        self.row_buttons[name] = buttons
        card = self._cards[name] = w.VBox([*lines, bar(list(buttons.values()))])
        card.add_class("tb-card")
        return card

    def _select(self) -> None:
        for name, card in self._cards.items():
            (card.add_class if name == self.server.value else card.remove_class)("tb-selected")
        self._show_detail()

    def _show_detail(self) -> None:
        info = self.servers.get(self.server.value or "")
        changed = self.features.server != (info.name if info else None)
        self.features.select(info.name if info is not None and info.state == "active" else None)
        if changed and self.tabs.selected_index is not None:
            self.features.opened(TABS[self.tabs.selected_index])
        self._show_tools(info)
        self._show_diagnostics(info)
        if info is None:
            self.log_view.value = self.log_path.value = ""
        else:
            tail = "\n".join(info.stderr_tail)
            self.log_view.value = pre(tail) if tail else muted("nothing on stderr")
            self.log_path.value = muted(f"full log: <code>{html.escape(str(info.log_path))}</code>"
                                        if info.log_path else f"a {info.transport} server has no stderr log")
        self._show_trace(info)

    def _show_tools(self, info: McpServerInfo | None) -> None:
        self.permission_controls = {}
        if info is None or not info.tools:
            self.tools_view.value = muted("no server selected" if info is None else "this server lists no tools")
            self.tools_grid.children = []
            return
        self.tools_view.value = muted(
            f"<i>offer</i> adds a tool to the profile and freezes a new snapshot; a permission applies to calls "
            f"from now on, <code>off</code> from the next invocation. In the snapshot: what <code>"
            f"{html.escape(self.state.invocation.id)}</code> shows the model")
        cells: list[w.Widget] = [w.HTML(f"<b>{head}</b>") for head, _width in TOOL_COLUMNS]
        for tool in info.tools:
            cells += [w.HTML(html.escape(tool.title or tool.name or "")),
                      w.HTML(f"<code>{html.escape(str(tool.tool_id or '—'))}</code>"),
                      self._permission(tool),
                      self._offer(tool),
                      w.HTML("yes" if self._in_snapshot(tool) else muted("no")),
                      w.HTML(html.escape(" ".join(p for p in (tool.problem_code, tool.problem) if p)))]
        self.tools_grid.children = cells

    def _in_snapshot(self, tool: McpToolInfo) -> bool:
        """Listed and in the current snapshot (a record with a problem, e.g. a duplicate name, is not)."""
        return tool.problem_code is None and self.state.in_snapshot(tool.tool_id)

    def _offer(self, tool: McpToolInfo) -> w.Widget:
        """The tool in the profile's allow list, as a checkbox (ticking it freezes a new snapshot)."""
        if tool.tool_id is None:
            return w.HTML(muted("—"))
        tool_id = tool.tool_id
        control = w.Checkbox(value=tool_id in self.state.bench.profile.tools.active(), indent=False,
                             disabled=self.state.closed, layout=w.Layout(width="auto"))
        control.add_class("tb-mcp-offer")
        self.on_change(control, lambda on: self.state.offer([tool_id], why=f"`{tool_id}` offered") if on
                       else self.state.withdraw(tool_id))
        return control

    def _permission(self, tool: McpToolInfo) -> w.Widget:
        if tool.tool_id is None:
            return w.HTML(muted("—"))
        control = w.Dropdown(options=PERMISSIONS, value=tool.permission, layout=w.Layout(width="76px"),
                             disabled=self.state.closed)
        control.add_class("tb-mcp-permission")
        self.on_change(control, partial(self._set_permission, tool.tool_id))
        self.permission_controls[str(tool.tool_id)] = control
        return control

    def _show_diagnostics(self, info: McpServerInfo | None) -> None:
        if info is None:
            self.diagnostics_view.value = ""
            return
        mine = [d for d in [*self.state.bench.mcp.diagnostics, *info.warnings]
                if str(d.subject) == info.name or str(d.subject).startswith(f"{info.provider}:")]
        rows = [[str(d.subject), d.code, d.message] for d in dict.fromkeys(mine)]
        head = (f"<div><code>{html.escape(info.diagnostic_code)}</code> {html.escape(info.diagnostic or '')}</div>"
                if info.diagnostic_code else muted("the server reports no problem"))
        self.diagnostics_view.value = head + (table(["subject", "code", "message"], rows) if rows else "")

    def _show_trace(self, info: McpServerInfo | None) -> None:
        shown = self._messages[self.trace.value] if self.trace.value is not None else None
        self._messages = [] if info is None else self.state.bench.mcp.trace(info.name, limit=TRACE_LIMIT)[::-1]
        asked = {(m.direction, m.id): m.method for m in self._messages if m.kind == "request"}
        self.trace.options = [(trace_line(m, asked.get(("received" if m.direction == "sent" else "sent", m.id), "")), i)
                              for i, m in enumerate(self._messages)]
        self.trace.value = self._messages.index(shown) if shown in self._messages else None
        self.trace_count.value = muted(f"the last {len(self._messages)} JSON-RPC messages, newest first"
                                       if self._messages else "no messages yet")
        self._show_message()

    def _show_message(self) -> None:
        index = self.trace.value
        self.trace_detail.value = (pre(trace_json(self._messages[index])) if index is not None
                                   else muted("choose a message to see its JSON"))

    def _show_status(self) -> None:
        self.status.value = (f"<span class='tb-pending'>{html.escape(', '.join(self._doing))}…</span>"
                             if self._doing else "")

    # actions ------------------------------------------------------------------------------
    def _add(self) -> None:
        config = parse_config(self.config.value, self.name.value)
        mcp = self.state.bench.mcp
        self._run(f"connecting {', '.join(config['mcpServers'])}", partial(mcp.load_config, config),
                  partial(mcp.aload_config, config), self._added)

    def _added(self, added: list[McpServerInfo]) -> None:
        """A server added here is for calling now (as in MCP Inspector): its offered tools join the
        profile's allow list and a new snapshot is frozen with them."""
        self.config.value = self.name.value = ""
        if added:
            tools = [t.tool_id for info in added for t in info.tools if t.offered and t.tool_id is not None]
            self.state.offer(tools, why=f"the tools of {', '.join(f'`{i.name}`' for i in added)} offered")
            self.server.value = added[0].name

    def _sign_in(self, name: str) -> None:
        """Connect again with the app as the person's side: the URL shows here as a link."""
        mcp = self.state.bench.mcp
        mcp.on_authorize(self._show_authorization)
        self._run(f"signing in to {name}", partial(mcp.refresh, name, restart=True),
                  partial(mcp.arefresh, name, restart=True), lambda _infos: self._clear_authorization())

    def _show_authorization(self, url: str) -> None:
        self.signin_link.value = (
            f"<div class='tb-card'>Sign in: <a href='{html.escape(url, quote=True)}' target='_blank' "
            "rel='noopener noreferrer'>open the authorization page</a> "
            + muted("(toolbench waits for its redirect on 127.0.0.1, so open it on this machine)") + "</div>")

    def _clear_authorization(self) -> None:
        self.signin_link.value = ""

    def _set_permission(self, tool_id: Any, value: str) -> None:
        self.state.bench.mcp.set_permission(tool_id, value)  # type: ignore[arg-type]
        self.state.mcp_changed()

    def _run(self, doing: str, now: Callable[[], T], later: Callable[[], Awaitable[T]],
             done: Callable[[T], None] | None = None) -> None:
        """Run a manager action: a task on the notebook's loop when one runs (a stdio server
        takes seconds to start and the kernel must keep answering), else now."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        if loop is None:
            try:
                result = now()
            finally:
                self.state.mcp_changed()
            if done is not None:
                done(result)
            return
        self._doing.append(doing)
        self._show_status()

        async def run() -> None:
            error: BaseException | None = None
            try:
                result = await later()
            except Exception as exc:  # shown below, after the redraw (which clears the error line)
                error = exc
            self._doing.remove(doing)
            self._show_status()
            try:
                self.state.mcp_changed()
                if error is None and done is not None:
                    done(result)
            except Exception as exc:
                error = error or exc
            if error is not None:
                self.show_error(error)

        task = loop.create_task(run())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
