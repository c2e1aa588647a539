"""`dice.roll`: formulas, ranges, upstream's text and refusals (reference §8; the cases are
TauriTavern's own tests in `agent_tools/dice/roll.rs`)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolbench.tools.dice import parse_formula, render


@pytest.fixture
def roll(bench):
    inv = bench.invocation()
    return lambda wire: inv.call("dice_roll", wire)


@pytest.mark.parametrize(
    ("formula", "normalized", "count", "sides", "modifier", "low", "high"),
    [
        ("20", "1d20", 1, 20, 0, 1, 20),  # upstream: a plain number is one die
        ("d6-2", "1d6-2", 1, 6, -2, -1, 4),  # upstream: default count, negative modifier
        ("3D6+4", "3d6+4", 3, 6, 4, 7, 22),  # upstream: explicit count, capital D
        ("d6", "1d6", 1, 6, 0, 1, 6),
        ("1d20", "1d20", 1, 20, 0, 1, 20),
        ("2d10-1", "2d10-1", 2, 10, -1, 1, 19),
        ("1d1", "1d1", 1, 1, 0, 1, 1),  # a 1-sided die is valid upstream
        ("1d1000000", "1d1000000", 1, 1_000_000, 0, 1, 1_000_000),
        ("100d6+1000000", "100d6+1000000", 100, 6, 1_000_000, 1_000_100, 1_000_600),
        ("1d6+04", "1d6+4", 1, 6, 4, 5, 10),  # only the count and the sides refuse leading zeros
        ("1d6-0", "1d6", 1, 6, 0, 1, 6),
        ("  4d8+2\n", "4d8+2", 4, 8, 2, 6, 34),  # spaces around the formula are trimmed
        (" " * 150 + "d6", "1d6", 1, 6, 0, 1, 6),  # before the length is checked
    ],
)
def test_formulas_parse_as_upstream(formula, normalized, count, sides, modifier, low, high):
    parsed = parse_formula(formula)
    assert (parsed.normalized, parsed.count, parsed.sides, parsed.modifier) == (normalized, count, sides, modifier)
    assert (parsed.min, parsed.max) == (low, high)


@pytest.mark.parametrize("formula", ["20", "d6-2", "3D6+4", "1d1", "1d1000000", "2d10-1"])
def test_rolls_are_in_range_and_structured_as_upstream(roll, formula):
    result = roll({"formula": formula})
    assert not result.is_error and result.tool_id == "builtin:dice.roll"
    out = result.structured
    parsed = parse_formula(formula)
    assert list(out) == ["formula", "rolls", "modifier", "total", "min", "max"]
    assert (out["formula"], out["modifier"], out["min"], out["max"]) == (
        parsed.normalized, parsed.modifier, parsed.min, parsed.max)
    assert len(out["rolls"]) == parsed.count and all(1 <= r <= parsed.sides for r in out["rolls"])
    assert out["total"] == sum(out["rolls"]) + parsed.modifier
    assert out["min"] <= out["total"] <= out["max"]
    assert result.content == render(parsed, out["rolls"])


def test_a_one_sided_die_with_a_modifier_gives_upstreams_result(roll):
    result = roll({"formula": "1d1+2"})  # upstream's `roll_tool_returns_structured_result`
    assert result.content == "Rolled 1d1+2: 1 + 2 = 3."
    assert result.structured == {"formula": "1d1+2", "rolls": [1], "modifier": 2, "total": 3, "min": 3, "max": 3}


@pytest.mark.parametrize(
    ("formula", "rolls", "text"),
    [
        ("1d20", [14], "Rolled 1d20: 14."),  # upstream: a single die shows no sum
        ("3d6+4", [2, 5, 6], "Rolled 3d6+4: 2 + 5 + 6 + 4 = 17."),  # upstream
        ("2d10-1", [3, 10], "Rolled 2d10-1: 3 + 10 - 1 = 12."),
        ("1d6-2", [1], "Rolled 1d6-2: 1 - 2 = -1."),
        ("2d6", [3, 3], "Rolled 2d6: 3 + 3 = 6."),
    ],
)
def test_the_text_is_upstreams(formula, rolls, text):
    assert render(parse_formula(formula), rolls) == text


def test_totals_are_always_in_range(bench):
    bench.profile = bench.profile.edit(max_calls_per_run=100_000, max_rounds=100_000)
    inv = bench.invocation()

    @settings(max_examples=40)
    @given(count=st.integers(1, 100), sides=st.integers(1, 1_000_000), modifier=st.integers(-1_000_000, 1_000_000))
    def check(count, sides, modifier):
        formula = f"{count}d{sides}" + (f"{modifier:+d}" if modifier else "")
        result = inv.call("dice_roll", {"formula": formula})
        assert not result.is_error
        assert count + modifier <= result.structured["total"] <= count * sides + modifier

    check()


@pytest.mark.parametrize(
    "formula",
    [
        # upstream's `reject_invalid_or_unbounded_formulas`
        "", "0d6", "1d0", "1d20 + 4", "1dd20", "1d20++4", "1d20+", "01d6", "101d6", "1d1000001",
        # and more of the same rules
        "abc", "d", "3d6+", "3d6*2", "1d6+1000001", "1d6-1000001", "-1d6", "d6d6", "1d6+2+3", "1d06", "0",
        "007", " 4D8 + 2 ", "1d\t6", "1d6\u00a0+2", "1d\u0666", "\u00b2d6", "99999999999999999999d6",
    ],
)
def test_bad_formulas_are_refused_with_the_reason(roll, formula):
    result = roll({"formula": formula})
    assert result.is_error and result.error_code == "tool.invalid_arguments"
    assert "formula" in result.content  # the reason names the parameter


@pytest.mark.parametrize("wire", [{}, {"formula": 20}, {"formula": "d6", "extra": 1}, {"formula": None}, "[]"])
def test_arguments_that_break_the_schema_are_refused(roll, wire):
    result = roll(wire)
    assert result.is_error and result.error_code == "tool.invalid_arguments"


@pytest.mark.parametrize("formula", ["1" * 200_000, "1" * 5000 + "d6", "x" * 300, "d6" + "+" * 150])
def test_overlong_formulas_are_refused_and_echoed_cut(roll, formula):
    result = roll({"formula": formula})
    assert result.is_error and result.error_code == "tool.invalid_arguments"
    assert len(result.content) < 600
