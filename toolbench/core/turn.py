"""Turn contracts: which of the snapshot's tools one round may use, and the tool choice.

TauriTavern's `ToolTurnContract` (reference §3.2, §4.2): a round offers a subset of the frozen
snapshot (`tools`, default all of it) with a choice: `auto`, `none`, `required`, or one call
name (the round must call that tool). The same value renders the request
(`snapshot.render(protocol, contract=...)`, `snapshot.tool_choice(protocol, contract)`) and is
enforced at dispatch (`inv.turn(calls, contract=...)`): a call outside it gets a recoverable
coded result before any budget is reserved. A contract that cannot be met is misuse, raised
with upstream's codes when it is applied to a snapshot.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import field_validator

from .descriptors import Frozen
from .errors import ToolbenchError, ToolError

if TYPE_CHECKING:
    from .snapshot import Snapshot

KEYWORDS = ("auto", "none", "required")


class TurnContract(Frozen):
    """`TurnContract(tools=["dice_roll"], choice="required")`: call names of the snapshot (or
    their ToolId text); `tools=None` offers every tool. `choice` is `auto`, `none`,
    `required`, or a call name (also `{"name": call_name}`)."""

    tools: tuple[str, ...] | None = None
    choice: str = "auto"

    @field_validator("choice", mode="before")
    @classmethod
    def _choice(cls, value: Any) -> Any:
        if isinstance(value, Mapping) and set(value) == {"name"}:
            return value["name"]
        return value

    def apply(self, snapshot: Snapshot) -> Turn:
        """This contract over `snapshot`, checked (raises `tool.turn_*` when it cannot hold)."""
        by_id = {str(b.tool_id): b.call_name for b in snapshot.bindings}
        if self.tools is None:
            names = tuple(b.call_name for b in snapshot.bindings)
        else:
            resolved = [by_id.get(t, t) for t in self.tools]
            missing = [t for t in resolved if snapshot.binding_for(t) is None]
            if missing:
                raise ToolbenchError("tool.turn_tool_not_in_snapshot", f"the turn names tools the snapshot "
                                     f"`{snapshot.id}` does not offer: {', '.join(missing)}")
            if len(set(resolved)) != len(resolved):
                raise ToolbenchError("tool.turn_duplicate_id", "the turn names a tool twice")
            names = tuple(resolved)
        specific = None
        if self.choice not in KEYWORDS:
            specific = by_id.get(self.choice, self.choice)
            if specific not in names:
                raise ToolbenchError("tool.turn_specific_not_available",
                                     f"the turn's choice `{self.choice}` is not among its tools")
        elif self.choice == "required" and not names:
            raise ToolbenchError("tool.turn_required_empty", "choice `required` with no tools in the turn")
        return Turn(names, self.choice if specific is None else "specific", specific)


@dataclass(frozen=True, slots=True)
class Turn:
    """A contract applied to one snapshot: the call names offered and the choice."""

    names: tuple[str, ...]
    choice: str  # auto | none | required | specific
    specific: str | None = None

    def protocol_choice(self) -> str | dict[str, str]:
        """The choice as `toolbench.protocols.encode_tool_choice` takes it."""
        return {"name": self.specific} if self.specific is not None else self.choice

    def check(self, call_name: str, *, nested: bool = False) -> None:
        """Raise the recoverable error a call of `call_name` gets in this round, if any. A
        `nested` call (a script's, through the shell bridge) is held to the round's tools only:
        the choice was about the model's own call."""
        if not nested and self.choice == "none":
            raise ToolError("model.tool_choice_violation", "This round allows no tool calls (tool choice `none`); "
                            "answer without calling a tool.")
        if not nested and self.specific is not None and call_name != self.specific:
            raise ToolError("model.tool_choice_violation", f"This round must call `{self.specific}` "
                            "(the request's tool choice); call it instead.")
        if call_name not in self.names:
            offered = ", ".join(f"`{n}`" for n in self.names) or "none"
            raise ToolError("model.tool_not_in_turn", f"`{call_name}` is not offered in this round. "
                            f"Call one of: {offered}.", structured={"available": list(self.names)})
