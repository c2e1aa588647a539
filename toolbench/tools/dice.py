"""`dice.roll`: roll dice from a formula such as `d6`, `1d20`, `3d6+4`, `2d10-1` or `20` (1d20)."""

from __future__ import annotations

import re
from typing import Any, Final

from ..core.arguments import quote
from ..core.descriptors import ToolDescriptor
from ..core.errors import ToolError
from ..core.ids import ToolId
from ..core.results import ToolOutput
from .base import BuiltinTool, ToolContext

MAX_DICE: Final = 100
MAX_SIDES: Final = 1000
MAX_MODIFIER: Final = 1_000_000
# No valid formula comes near this (`100d1000+1000000` is 16 characters); a longer one is
# refused before it is parsed, so digits past Python's int-conversion limit never reach int().
MAX_FORMULA_CHARS: Final = 100
_FORMULA = re.compile(r"^\s*(?:(\d*)\s*[dD]\s*)?(\d+)\s*(?:([+-])\s*(\d+))?\s*$")

DESCRIPTOR = ToolDescriptor(
    id=ToolId.builtin("dice.roll"),
    description=(
        "Roll dice. `formula` is NdS with an optional +M or -M: `d6`, `1d20`, `3d6+4`, `2d10-1`; "
        "a plain number such as `20` rolls one die with that many sides."
    ),
    input_schema={
        "type": "object",
        "properties": {"formula": {"type": "string", "description": "Dice formula, e.g. `3d6+4`."}},
        "required": ["formula"],
        "additionalProperties": False,
    },
    read_only=True,
)


def parse_formula(formula: str) -> tuple[int, int, int]:
    """(count, sides, modifier), or ToolError(tool.invalid_arguments) saying what is wrong.

    The formula is echoed cut to 200 characters."""
    if len(formula) > MAX_FORMULA_CHARS:
        raise ToolError("tool.invalid_arguments", f"`formula` {quote(formula)!r} is {len(formula):,} characters "
                        f"long; a dice formula is at most {MAX_FORMULA_CHARS}. Write NdS[+M], e.g. `3d6+4`.")
    match = _FORMULA.match(formula)
    if not match:
        raise ToolError("tool.invalid_arguments", f"`formula` {quote(formula)!r} is not a dice formula; write "
                        "NdS[+M], e.g. `3d6+4`, or a plain `20`.")
    count_text, sides_text, sign, mod_text = match.groups()
    count = int(count_text) if count_text else 1
    sides = int(sides_text)
    modifier = int(mod_text or 0) * (-1 if sign == "-" else 1)
    if not 1 <= count <= MAX_DICE:
        raise ToolError("tool.invalid_arguments", f"`formula` rolls {count} dice; roll between 1 and {MAX_DICE}.")
    if not 2 <= sides <= MAX_SIDES:
        raise ToolError("tool.invalid_arguments", f"`formula` has {sides}-sided dice; use 2 to {MAX_SIDES} sides.")
    if abs(modifier) > MAX_MODIFIER:
        raise ToolError("tool.invalid_arguments", f"`formula` modifier {modifier} is beyond ±{MAX_MODIFIER}.")
    return count, sides, modifier


def roll(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    formula = args["formula"]
    count, sides, modifier = parse_formula(formula)
    rolls = [ctx.rng.randint(1, sides) for _ in range(count)]
    total = sum(rolls) + modifier
    canonical = f"{count}d{sides}" + (f"{modifier:+d}" if modifier else "")
    detail = ", ".join(map(str, rolls)) + (f"; {modifier:+d}" if modifier else "")
    return ToolOutput(
        content=f"{canonical} = {total} (rolls: {detail})",
        structured={"formula": canonical, "rolls": rolls, "modifier": modifier, "total": total},
    )


TOOLS = (BuiltinTool(DESCRIPTOR, roll),)
