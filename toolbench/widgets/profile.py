"""ProfilePanel: load a profile, toggle allow/deny per tool, edit budgets, apply and save."""

from __future__ import annotations

import html
from dataclasses import dataclass
from pathlib import Path

import ipywidgets as w  # type: ignore[import-untyped]

from .. import Invocation, Profile, ToolbenchError, ToolId, Workbench
from ._base import Panel, bar, scroll
from ._state import WorkbenchState

BUNDLED_DIR = Path(__file__).resolve().parent.parent / "profiles"


def bundled_profiles() -> dict[str, Path | None]:
    """The profiles that come with toolbench: the embedded default, and any bundled files."""
    found: dict[str, Path | None] = {"default (embedded)": None}
    if BUNDLED_DIR.is_dir():
        for path in sorted(BUNDLED_DIR.iterdir()):
            if path.suffix.lower() in (".json", ".toml"):
                found[path.stem] = path
    return found


@dataclass
class ToolRow:
    """The editable state of one tool: allowed, denied, its own budget (blank for none)."""

    tool_id: str
    allow: w.Checkbox
    deny: w.Checkbox
    budget: w.Text


class ProfilePanel(Panel):
    """Edits the bench's profile. Nothing changes until `apply` is clicked; then the new
    profile is validated (an invalid value shows `agent.profile_invalid` here and leaves the
    bench as it was) and a new snapshot is frozen from it."""

    css_class = "tb-profile"

    def __init__(self, source: Workbench | WorkbenchState, invocation: Invocation | None = None) -> None:
        state = WorkbenchState.of(source, invocation)
        self.bundled = w.Dropdown(options=list(bundled_profiles()), description="bundled")
        self.load_bundled = w.Button(description="load")
        self.path = w.Text(placeholder="profile.json or profile.toml", description="file")
        self.load_file = w.Button(description="load file")
        self.save_button = w.Button(description="save", icon="save")
        self.title = w.HTML("")
        self.max_calls = w.IntText(description="calls / run", style={"description_width": "110px"})
        self.inline_limit = w.IntText(description="inline limit", style={"description_width": "110px"})
        self.rows: dict[str, ToolRow] = {}
        columns = "50px 50px minmax(0, 1fr) 80px 110px"
        self.header = w.GridBox([w.HTML(f"<b class='tb-muted'>{h}</b>") for h in ("allow", "deny", "ToolId", "kind",
                                                                                "budget")],
                                layout=w.Layout(grid_template_columns=columns, grid_gap="0px 8px"))
        self.tools = w.GridBox(layout=w.Layout(grid_template_columns=columns, grid_gap="0px 8px"))
        self.apply_button = w.Button(description="apply", button_style="primary")
        self.apply_button.add_class("tb-profile-apply")
        self.status = w.HTML("")
        super().__init__(state, [
            w.HTML("<span class='tb-title'>Profile</span>"), self.title,
            bar([self.bundled, self.load_bundled]), bar([self.path, self.load_file, self.save_button]),
            self.header, scroll([self.tools]), bar([self.max_calls, self.inline_limit]),
            bar([self.apply_button, self.status]),
        ])
        self._wire()
        self.refresh()

    def _wire(self) -> None:
        self.on_click(self.load_bundled, self._load_bundled)
        self.on_click(self.load_file, lambda: self._load(Profile.load(self.path.value)))
        self.on_click(self.save_button, self._save)
        self.on_click(self.apply_button, self.apply)
        self.on_state("profile", self.refresh)

    # views --------------------------------------------------------------------------------
    def refresh(self) -> None:
        profile = self.state.bench.profile
        settings = profile.tools
        self.title.value = (f"<code>{html.escape(profile.name)}</code> "
                            f"<span class='tb-muted'>{html.escape(profile.description)}</span>")
        self.max_calls.value = settings.max_calls_per_run
        self.inline_limit.value = settings.external_result_inline_char_limit
        kinds = {str(d.id): d.kind for d in self.state.bench.catalog()}
        ids = list(dict.fromkeys([*kinds, *settings.allow, *settings.deny]))
        cells: list[w.Widget] = []
        self.rows = {}
        for text in ids:
            row = ToolRow(tool_id=text,
                          allow=w.Checkbox(value=text in settings.allow, indent=False),
                          deny=w.Checkbox(value=text in settings.deny, indent=False),
                          budget=w.Text(value=str(settings.max_calls_per_tool.get(text, "")),
                                        placeholder="none", layout=w.Layout(width="100px")))
            self.rows[text] = row
            kind = kinds.get(text) or ToolId.parse(text).kind
            missing = "" if text in kinds else " <i class='tb-error-line'>(not offered)</i>"
            cells += [row.allow, row.deny, w.HTML(f"<code title='{html.escape(text, quote=True)}'>{html.escape(text)}"
                                                  f"</code>{missing}"), w.Label(kind), row.budget]
        self.tools.children = cells

    def clear_error(self) -> None:
        super().clear_error()
        self.status.value = ""

    # actions ------------------------------------------------------------------------------
    def edited(self) -> Profile:
        """The profile the panel's fields describe (validated; raises `agent.profile_invalid`)."""
        settings = self.state.bench.profile.tools
        allowed = {t for t, r in self.rows.items() if r.allow.value}
        allow = [t for t in settings.allow if t in allowed] + [t for t in self.rows if t in allowed
                                                               and t not in settings.allow]
        return self.state.bench.profile.edit(
            allow=allow,
            deny=[t for t, r in self.rows.items() if r.deny.value],
            max_calls_per_tool={t: r.budget.value.strip() for t, r in self.rows.items() if r.budget.value.strip()},
            max_calls_per_run=self.max_calls.value,
            external_result_inline_char_limit=self.inline_limit.value,
        )

    def apply(self) -> None:
        self.state.set_profile(self.edited())
        self.status.value = "<span class='tb-ok-line'>applied: a new invocation, on a new snapshot</span>"

    def _load(self, profile: Profile) -> None:
        self.state.set_profile(profile)
        self.status.value = f"<span class='tb-ok-line'>loaded <code>{html.escape(profile.name)}</code></span>"

    def _load_bundled(self) -> None:
        path = bundled_profiles()[self.bundled.value]
        self._load(Profile.default() if path is None else Profile.load(path))

    def _save(self) -> None:
        if not self.path.value.strip():

            raise ToolbenchError("bench.misuse", "type a file path to save the profile to")
        profile = self.edited()
        profile.save(self.path.value.strip())
        where = html.escape(self.path.value.strip())
        self.status.value = f"<span class='tb-ok-line'>saved to <code>{where}</code></span>"
