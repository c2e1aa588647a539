"""SnapshotPanel: what the current invocation offers, and how each provider would receive it."""

from __future__ import annotations

import html
from typing import Any

import ipywidgets as w  # type: ignore[import-untyped]

from .. import Invocation, Workbench
from ..protocols import get_provider, names, render
from ._base import Panel, bar, pre, pretty, scroll, table
from ._state import WorkbenchState

UNAVAILABLE = "protocols not available"


def rendered(snapshot: Any, protocol: str, call_name: str = "") -> str:
    """The rendered tool list as JSON text (only `call_name`'s entry when given, as the whole
    list renders it), or why it cannot be rendered yet."""
    try:
        if not call_name:
            return pretty(snapshot.render(protocol))
        picked = [b for b in snapshot.bindings if b.call_name == call_name]
        return pretty(render(protocol, picked, strict=snapshot.strict_for(get_provider(protocol).name)))
    except ImportError:
        return UNAVAILABLE
    except Exception as exc:  # the protocols package may be half landed
        return f"{UNAVAILABLE}: {type(exc).__name__}: {exc}"


def check_rows(snapshot: Any) -> list[list[str]] | None:
    """The per-provider check results, or None when the checks cannot run."""
    try:
        problems = snapshot.check()  # each provider with the strict mode the profile asks for it
    except Exception:  # the panel shows no checks rather than a traceback
        return None
    return [[p.protocol, p.call_name, p.rule, "fatal" if p.fatal else "warning",
             "repaired" if p.repaired else "", p.path, p.message] for p in problems]


class SnapshotPanel(Panel):
    """Scene and protocol selectors; the bindings; the rendered provider JSON; the diagnostics;
    the per-provider checks. A new scene freezes a new invocation."""

    css_class = "tb-snapshot"

    def __init__(self, source: Workbench | WorkbenchState, invocation: Invocation | None = None) -> None:
        state = WorkbenchState.of(source, invocation)
        self.scene = w.ToggleButtons(options=["chat", "session"], description="scene",
                                     style={"button_width": "80px"})
        self.protocol = w.Dropdown(options=list(names()), value="openai", description="protocol")
        self.tool = w.Dropdown(options=[("all tools", "")], value="", description="tool",
                               layout=w.Layout(width="auto", min_width="260px"))
        self.tool.add_class("tb-snapshot-tool")
        self.title = w.HTML("")
        self.bindings = w.HTML("")
        self.bindings.add_class("tb-snapshot-bindings")
        self.rendered = w.HTML("")
        self.rendered.add_class("tb-snapshot-rendered")
        self.diagnostics = w.HTML("")
        self.diagnostics.add_class("tb-snapshot-diagnostics")
        self.checks = w.HTML("")
        self.checks.add_class("tb-snapshot-checks")
        self.sections = w.Tab(children=[scroll([self.bindings]), scroll([self.rendered], size="tb-tall"),
                                        scroll([self.diagnostics]), scroll([self.checks])],
                              titles=("tools", "provider JSON", "left out", "provider checks"))
        super().__init__(state, [self.title, bar([self.scene, self.protocol, self.tool]), self.sections])
        self._syncing = False
        self._wire()
        self.refresh()

    def _wire(self) -> None:
        self.on_change(self.scene, self._change_scene)
        self.on_change(self.protocol, lambda _v: self._show_rendered())
        self.on_change(self.tool, lambda _v: None if self._syncing else self._show_rendered())
        self.on_state("invocation", self.refresh)

    def _change_scene(self, scene: str) -> None:
        if not self._syncing and scene != self.state.invocation.snapshot.scene:
            self.state.new_invocation(scene)

    def refresh(self) -> None:
        snapshot = self.state.invocation.snapshot
        self._syncing = True
        try:
            self.scene.value = snapshot.scene
            names_now = [b.call_name for b in snapshot.bindings]
            kept = self.tool.value if self.tool.value in names_now else ""
            self.tool.options = [("all tools", ""), *((n, n) for n in names_now)]
            self.tool.value = kept
        finally:
            self._syncing = False
        self.title.value = (f"<span class='tb-title'>Snapshot</span> <span class='tb-muted'>invocation "
                            f"<code>{html.escape(snapshot.id)}</code>, {len(snapshot.bindings)} tools, "
                            f"{snapshot.max_calls_per_invocation} calls per invocation</span>")
        self.bindings.value = table(
            ["call name", "ToolId", "kind", "budget", "description"],
            [[b.call_name, str(b.tool_id), b.tool_id.kind, "" if b.max_calls is None else str(b.max_calls),
              _first_line(b.descriptor.description)] for b in snapshot.bindings])
        self.diagnostics.value = table(["ToolId", "code", "why"],
                                       [[d.tool_id, d.code, d.message] for d in snapshot.diagnostics]) \
            if snapshot.diagnostics else "<i class='tb-muted'>nothing left out</i>"
        rows = check_rows(snapshot)
        if rows is None:
            self.checks.value = f"<i>{UNAVAILABLE}</i>"
        elif not rows:
            self.checks.value = "<i>no problems for any provider</i>"
        else:
            self.checks.value = table(["protocol", "call name", "rule", "level", "", "path", "message"], rows)
        self._show_rendered()

    def _show_rendered(self) -> None:
        self.rendered.value = pre(rendered(self.state.invocation.snapshot, self.protocol.value, self.tool.value))


def _first_line(text: str, limit: int = 120) -> str:
    line = text.strip().split("\n", 1)[0]
    return line if len(line) <= limit else line[:limit - 1] + "…"
