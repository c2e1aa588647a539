"""`dice.roll`: formulas, ranges, seeded reproducibility and refusals (reference §8)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st


@pytest.fixture
def roll(bench):
    inv = bench.invocation()
    return lambda wire: inv.call("dice_roll", wire)


@pytest.mark.parametrize(
    ("formula", "count", "sides", "modifier"),
    [
        ("d6", 1, 6, 0),
        ("1d20", 1, 20, 0),
        ("3d6+4", 3, 6, 4),
        ("2d10-1", 2, 10, -1),
        ("20", 1, 20, 0),
        (" 4D8 + 2 ", 4, 8, 2),
    ],
)
def test_formulas_roll_in_range(roll, formula, count, sides, modifier):
    result = roll({"formula": formula})
    assert not result.is_error and result.tool_id == "builtin:dice.roll"
    out = result.structured
    assert out["modifier"] == modifier
    assert out["formula"] == f"{count}d{sides}" + (f"{modifier:+d}" if modifier else "")
    assert len(out["rolls"]) == count and all(1 <= r <= sides for r in out["rolls"])
    assert out["total"] == sum(out["rolls"]) + modifier
    assert count + modifier <= out["total"] <= count * sides + modifier
    assert str(out["total"]) in result.content


def test_totals_are_always_in_range(bench):
    bench.profile = bench.profile.edit(max_calls_per_run=100_000)
    inv = bench.invocation()

    @settings(max_examples=40)
    @given(count=st.integers(1, 100), sides=st.integers(2, 1000), modifier=st.integers(-1000, 1000))
    def check(count, sides, modifier):
        formula = f"{count}d{sides}" + (f"{modifier:+d}" if modifier else "")
        result = inv.call("dice_roll", {"formula": formula})
        assert not result.is_error
        assert count + modifier <= result.structured["total"] <= count * sides + modifier

    check()


def test_a_seeded_bench_rolls_the_same_dice_again(make_bench):
    def rolls(folder: str, seed: int) -> list:
        bench = make_bench(folder, seed=seed)
        inv = bench.invocation(id="inv_dice")
        return [inv.call("dice_roll", {"formula": "10d1000"}).structured["rolls"] for _ in range(3)]

    first = rolls("a", 7)
    assert rolls("b", 7) == first
    assert rolls("c", 8) != first


@pytest.mark.parametrize(
    "formula",
    ["", "abc", "d", "0d6", "101d6", "1d1", "1d0", "1d1001", "3d6+", "3d6*2", "1d6+1000001", "-1d6", "d6d6",
     "1d6 + 2 + 3", "99999999999999999999d6"],
)
def test_bad_formulas_are_refused_with_the_reason(roll, formula):
    result = roll({"formula": formula})
    assert result.is_error and result.error_code == "tool.invalid_arguments"
    assert "formula" in result.content  # the reason names the parameter


@pytest.mark.parametrize("wire", [{}, {"formula": 20}, {"formula": "d6", "extra": 1}, {"formula": None}, "[]"])
def test_arguments_that_break_the_schema_are_refused(roll, wire):
    result = roll(wire)
    assert result.is_error and result.error_code == "tool.invalid_arguments"


@pytest.mark.parametrize("formula", ["1" * 200_000, "1" * 5000 + "d6", "x" * 300, " " * 150 + "d6"])
def test_overlong_formulas_are_refused_and_echoed_cut(roll, formula):
    result = roll({"formula": formula})
    assert result.is_error and result.error_code == "tool.invalid_arguments"
    assert len(result.content) < 600
