"""The run policy a profile sets (`profile.run`): round limit, delegation, presentation.

Named as TauriTavern's profile schema names them (upstream keeps `maxRounds` under `tools`,
`presentation` under `run` and `canDelegate` / `canHandoff` under `delegation`; a profile
exported from upstream is moved here on load, `core/profile_migrate.py`):

* `max_rounds` (default 80, upstream's default profile): model rounds per invocation; a run
  stops with a coded result when it is reached (the runtime reads it).
* `presentation`: `foreground` (default, upstream's default profile) or `background`. A
  foreground run must publish with `workspace.commit` before `workspace.finish`
  (`finish_requires_commit`); upstream ties the rule to presentation, so it is not a key of
  its own.
* `can_delegate`, `can_handoff`: whether `agent.delegate` / `agent.handoff` may run. Upstream's
  serde default is false, but upstream also refuses to load a profile that lists either tool
  with its flag off, so a loadable upstream profile always has the flag on for a tool it offers.
  Here the allow list is the gate and both default to true; an imported upstream profile keeps
  its own values (the migration fills upstream's `false` where it says nothing).
* `allowed_agents`: the agent ids this profile may delegate or hand off to; `*` (default) is
  any. Beyond upstream, whose target profiles list their callers instead (`allowedCallers`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Literal

from pydantic import Field, field_validator

from .agents import check_agent_id
from .errors import ToolError
from .section import Section

ANY_AGENT: Final = "*"
Presentation = Literal["foreground", "background"]
DelegationKind = Literal["delegate", "handoff"]
# Upstream's codes (delegate_tool.rs, handoff_tool.rs): one per tool, the reason in the text.
DENIED_CODES: Final[dict[DelegationKind, str]] = {
    "delegate": "agent.delegation_policy_denied",
    "handoff": "agent.handoff_policy_denied",
}


class RunSettings(Section):
    """How an invocation may run: rounds, delegation, presentation; frozen."""

    max_rounds: int = Field(default=80, ge=1, strict=True)
    """Model rounds per invocation (upstream `tools.maxRounds`)."""
    presentation: Presentation = "foreground"
    """`foreground` runs must commit before they finish; `background` runs need not."""
    can_delegate: bool = True
    """Whether `agent.delegate` may start sub-agents."""
    can_handoff: bool = True
    """Whether `agent.handoff` may pass the job on."""
    allowed_agents: tuple[str, ...] = (ANY_AGENT,)
    """Agent ids delegate and handoff may name; `*` is any."""

    @field_validator("allowed_agents")
    @classmethod
    def _agents(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if not value:
            raise ValueError("list at least one agent id or `*` (set can_delegate / can_handoff false to forbid all)")
        for agent_id in value:
            if agent_id != ANY_AGENT:
                check_agent_id(agent_id)
        return value

    @property
    def finish_requires_commit(self) -> bool:
        """Whether `workspace.finish` needs an explicit `workspace.commit` first (foreground runs)."""
        return self.presentation == "foreground"

    def check_delegation(self, kind: DelegationKind, agent_ids: Sequence[str]) -> None:
        """Raise ToolError with upstream's code when this policy forbids `kind` or names other agents.

        `agent.delegation_policy_denied` for delegate, `agent.handoff_policy_denied` for handoff;
        the message says which rule (the flag, or the agents not in `allowed_agents`)."""
        code = DENIED_CODES[kind]
        if not (self.can_delegate if kind == "delegate" else self.can_handoff):
            flag = "can_delegate" if kind == "delegate" else "can_handoff"
            raise ToolError(code, f"This profile does not allow {kind} (run.{flag} is false).",
                            structured={"rule": flag})
        if ANY_AGENT in self.allowed_agents:
            return
        refused = [a for a in dict.fromkeys(agent_ids) if a not in self.allowed_agents]
        if refused:
            raise ToolError(code, f"This profile may not {kind} to {', '.join(f'`{a}`' for a in refused)}; "
                            f"allowed: {', '.join(f'`{a}`' for a in self.allowed_agents)}.",
                            structured={"rule": "allowed_agents", "refused": refused,
                                        "allowed": list(self.allowed_agents)})
