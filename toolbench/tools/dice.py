"""`dice.roll`: roll dice from a formula such as `d6`, `1d20`, `3d6+4`, `2d10-1` or `20` (1d20).

The rules and the text are TauriTavern's (`agent_tools/dice/roll.rs`): 1 to 100 dice of 1 to
1,000,000 sides, a modifier within ±1,000,000, no spaces inside the formula, no leading zeros
in the count or the sides; the result reads `Rolled 3d6+4: 2 + 5 + 6 + 4 = 17.`
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from ..core.arguments import quote
from ..core.descriptors import ToolDescriptor
from ..core.errors import ToolError
from ..core.ids import ToolId
from ..core.results import ToolOutput
from .base import BuiltinTool, ToolContext

MAX_DICE: Final = 100
MAX_SIDES: Final = 1_000_000
MAX_MODIFIER: Final = 1_000_000
# No valid formula comes near this (`100d1000000+1000000` is 19 characters); a longer one is
# refused before it is parsed, so digits past Python's int-conversion limit never reach int().
MAX_FORMULA_CHARS: Final = 100
# ASCII only: `\d` and int() would take other scripts' digits, which upstream refuses.
_FORMULA = re.compile(r"([1-9][0-9]*)?[dD]([1-9][0-9]*)(?:([+-])([0-9]+))?", re.ASCII)
_HOW = "write NdS[+M] with no spaces, e.g. `3d6+4`, or a plain `20`"

DESCRIPTOR = ToolDescriptor(
    id=ToolId.builtin("dice.roll"),
    description=(
        "Roll dice. `formula` is NdS with an optional +M or -M and no spaces: `d6`, `1d20`, `3d6+4`, "
        f"`2d10-1`; a plain number such as `20` rolls one die with that many sides. Up to {MAX_DICE} dice "
        f"of 1 to {MAX_SIDES:,} sides."
    ),
    input_schema={
        "type": "object",
        "properties": {"formula": {"type": "string", "description": "Dice formula, e.g. `3d6+4`."}},
        "required": ["formula"],
        "additionalProperties": False,
    },
    read_only=True,
    example={"formula": "2d6"},
)


@dataclass(frozen=True, slots=True)
class Formula:
    """A parsed formula: `count` dice of `sides` sides plus `modifier`; `min` and `max` bound the total."""

    count: int
    sides: int
    modifier: int

    @property
    def normalized(self) -> str:
        """The canonical spelling: `1d6` for `d6` or `6`, `3d6+4` for `3D6+4`, `1d6` for `1d6-0`."""
        return f"{self.count}d{self.sides}" + (f"{self.modifier:+d}" if self.modifier else "")

    @property
    def min(self) -> int:
        return self.count + self.modifier

    @property
    def max(self) -> int:
        return self.count * self.sides + self.modifier


def parse_formula(formula: str) -> Formula:
    """The formula, or ToolError(tool.invalid_arguments) saying what is wrong.

    Spaces around it are trimmed; the formula is echoed cut to 200 characters."""
    text = formula.strip()
    if len(text) > MAX_FORMULA_CHARS:
        raise ToolError("tool.invalid_arguments", f"`formula` {quote(formula)!r} is {len(text):,} characters "
                        f"long; a dice formula is at most {MAX_FORMULA_CHARS}: {_HOW}.")
    if any(c.isspace() for c in text):
        raise ToolError("tool.invalid_arguments", f"`formula` {quote(formula)!r} has spaces inside; {_HOW}.")
    match = _FORMULA.fullmatch("1d" + text if text.isascii() and text.isdigit() else text)
    if not match:
        raise ToolError("tool.invalid_arguments", f"`formula` {quote(formula)!r} is not a dice formula; {_HOW} "
                        "(the count and the sides are whole numbers without leading zeros).")
    count_text, sides_text, sign, mod_text = match.groups()
    parsed = Formula(int(count_text or 1), int(sides_text), int(mod_text or 0) * (-1 if sign == "-" else 1))
    if parsed.count > MAX_DICE:
        raise ToolError("tool.invalid_arguments", f"`formula` rolls {parsed.count} dice; roll 1 to {MAX_DICE}.")
    if parsed.sides > MAX_SIDES:
        raise ToolError("tool.invalid_arguments", f"`formula` has {parsed.sides}-sided dice; use 1 to "
                        f"{MAX_SIDES:,} sides.")
    if abs(parsed.modifier) > MAX_MODIFIER:
        raise ToolError("tool.invalid_arguments", f"`formula` modifier {parsed.modifier} is beyond "
                        f"±{MAX_MODIFIER:,}.")
    return parsed


def render(formula: Formula, rolls: Sequence[int]) -> str:
    """Upstream's text: `Rolled 3d6+4: 2 + 5 + 6 + 4 = 17.`, or `Rolled 1d20: 14.` when the sum
    would only repeat the one roll."""
    total = sum(rolls) + formula.modifier
    terms = " + ".join(map(str, rolls))
    if formula.modifier:
        terms += f" {'+' if formula.modifier > 0 else '-'} {abs(formula.modifier)}"
    if terms == str(total):
        return f"Rolled {formula.normalized}: {total}."
    return f"Rolled {formula.normalized}: {terms} = {total}."


def roll(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    formula = parse_formula(args["formula"])
    rolls = [ctx.rng.randint(1, formula.sides) for _ in range(formula.count)]
    return ToolOutput(
        content=render(formula, rolls),
        structured={"formula": formula.normalized, "rolls": rolls, "modifier": formula.modifier,
                    "total": sum(rolls) + formula.modifier, "min": formula.min, "max": formula.max},
    )


TOOLS = (BuiltinTool(DESCRIPTOR, roll),)
