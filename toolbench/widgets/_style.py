"""The app's one stylesheet: layout, bounded scroll boxes and colours from JupyterLab's theme
variables (so the dark theme reads), keyed on the stable `tb-*` classes.

The rules shared by every panel are here; a panel's own rules sit in its module's `CSS`, next
to the markup they style, which the module hands in when it is imported (`add_panel_css`), and
`stylesheet()` puts them all in one `<style>`."""

from __future__ import annotations

from typing import Any

CSS = """
.tb-app { color: var(--jp-ui-font-color1); font-size: var(--jp-ui-font-size1); min-width: 0; }
.tb-app .tb-main { display: grid !important; grid-template-columns: minmax(170px, 250px) minmax(0, 1fr); gap: 10px;
  align-items: start; width: 100%; }
.tb-app .tb-side, .tb-app .tb-work { min-width: 0; }
.tb-app .widget-html-content, .tb-panel .widget-html-content { overflow-wrap: break-word; word-break: normal;
  line-height: 1.4; }
.tb-bar .widget-html-content { line-height: var(--jp-widgets-inline-height); }
.tb-tool-list .tb-tool-filter { width: auto !important; }
.tb-scroll { overflow: auto !important; min-height: 0; }
.tb-scroll { max-height: 420px; }
.tb-scroll.tb-tall { max-height: 560px; }
.tb-scroll.tb-short { max-height: 240px; }
.tb-bar { flex-shrink: 0 !important; flex-wrap: wrap; gap: 4px; align-items: center; }
.tb-app .widget-box > * { flex-shrink: 0; }
.tb-app .widget-box > .tb-scroll { flex-shrink: 1; }
/* JupyterLab breaks output <pre> text anywhere (word-break: break-all): ours wraps between words, and
   inside a token longer than the column (`anywhere`, unlike `break-word`, also lowers the block's
   min-content width, so a grid or flex column never grows to fit one). */
.tb-app .widget-html, .tb-app .widget-html-content { min-width: 0; max-width: 100%; }
.tb-pre { white-space: pre-wrap; overflow-wrap: anywhere; word-break: normal !important; margin: 0; min-width: 0;
  font-family: var(--jp-code-font-family); font-size: var(--jp-code-font-size); line-height: 1.35; }
.tb-muted { color: var(--jp-ui-font-color2); font-size: var(--jp-ui-font-size0); }
.tb-error-line { color: var(--jp-error-color1); border-left: 4px solid var(--jp-error-color1); padding: 2px 8px; }
.tb-ok-line { color: var(--jp-success-color1); }
.tb-card { border: 1px solid var(--jp-border-color2); border-radius: 4px; padding: 6px;
  background: var(--jp-layout-color1); min-width: 0; }
.tb-title { font-weight: 600; font-size: var(--jp-ui-font-size2); }
.tb-table { border-collapse: collapse; font-size: var(--jp-ui-font-size0); width: 100%; table-layout: auto; }
.tb-table th { position: sticky; top: 0; z-index: 1; text-align: left; padding: 3px 6px;
  background: var(--jp-layout-color2); border-bottom: 1px solid var(--jp-border-color1); }
.tb-table td { padding: 2px 6px; vertical-align: top; border-bottom: 1px solid var(--jp-border-color3);
  overflow-wrap: break-word; word-break: normal; }
.tb-table td:last-child { min-width: 14em; }
.tb-selected, .tb-selected > * { background: var(--jp-layout-color3) !important;
  box-shadow: inset 3px 0 0 var(--jp-brand-color1); }
/* Tints mixed from the theme's strong colours: the themes' own pale ones (-color3) stay light in the dark theme. */
.tb-result-error { background: color-mix(in srgb, var(--jp-error-color1) 14%, transparent);
  color: var(--jp-error-color1); padding: 4px 8px;
  font-size: var(--jp-ui-font-size2); }
.tb-pending { color: var(--jp-warn-color1); }
.tb-app.tb-closed { opacity: 0.75; }
.tb-closed-banner { background: color-mix(in srgb, var(--jp-warn-color1) 22%, transparent);
  color: var(--jp-ui-font-color0); border-left: 4px solid var(--jp-warn-color1); padding: 4px 8px; }
.tb-tool-list .tb-scroll { max-height: 360px; }
.tb-tool-list .tb-tool-item { justify-content: flex-start; text-align: left; height: 26px; padding: 0 6px;
  overflow: hidden; text-overflow: ellipsis; }
.tb-tool-list .tb-tool-info { font-size: var(--jp-ui-font-size0); color: var(--jp-ui-font-color2); padding: 0 6px;
  white-space: nowrap; overflow: hidden; text-overflow: ellipsis; line-height: 1.3; }
.tb-tool-list .tb-tool-info code { font-size: var(--jp-ui-font-size0); }
"""


PANELS = ("history", "result", "mcp", "approval", "chat")  # the modules with a `CSS` of their own, in order
_panel_css: dict[str, str] = {}


def add_panel_css(panel: str, css: str) -> None:
    """A panel module's own rules (one of PANELS), given when it is imported."""
    _panel_css[panel] = css
    if _widget is not None:  # shown before the module came: the one stylesheet takes it too
        _widget.value = stylesheet()


def stylesheet() -> str:
    """The `<style>` element's HTML: the shared rules, then each panel's."""
    return "<style>" + CSS + "".join(_panel_css.get(name, "") for name in PANELS) + "</style>"


_widget: Any = None


def style_widget() -> Any:
    """One HTML widget holding the stylesheet, shared by every panel (a widget may be shown in
    many places), so a panel shown alone is styled as it is in the app."""
    global _widget
    if _widget is None:
        import ipywidgets as w  # type: ignore[import-untyped]

        _widget = w.HTML(stylesheet())
        _widget.add_class("tb-style")
        _widget.layout.display = "none"
    return _widget
