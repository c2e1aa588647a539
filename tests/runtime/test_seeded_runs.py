"""A seeded bench: the same script gives the same rolls, in this process or a new one, whatever
ids the invocations get; each invocation, and each delegated child, has a stream of its own."""

from __future__ import annotations

from agents_support import WAIT, delegate, parent_profile
from deadline import run_with_deadline

from toolbench.testing import ScriptedModel

ROLL = {"formula": "10d1000000"}
SCRIPT = """
import sys
from toolbench import Profile, Workbench
with Workbench(sys.argv[1], profile=Profile.default().edit(allow=["builtin:dice.roll"]),
               seed=int(sys.argv[2])) as bench:
    first, second = bench.invocation(), bench.invocation()  # ids made by the bench, random
    report([inv.call("dice_roll", {"formula": "10d1000000"}).structured["rolls"]
            for inv in (first, second, first)])
"""


def test_a_seeded_script_rolls_the_same_in_a_new_process(tmp_path):
    def run(folder: str, seed: int) -> list:
        return run_with_deadline(SCRIPT, args=(str(tmp_path / folder), str(seed)))

    first = run("a", 7)
    assert run("b", 7) == first
    assert first[0] != first[1] and first[0] != first[2]  # two invocations, and a stream that moves on
    assert run("c", 8) != first


def test_the_invocation_id_does_not_change_the_rolls(make_bench):
    def rolls(folder: str, invocation_id: str | None) -> list:
        inv = make_bench(folder, seed=7).invocation(id=invocation_id)
        return [inv.call("dice_roll", ROLL).structured["rolls"] for _ in range(3)]

    assert rolls("a", None) == rolls("b", None) == rolls("c", "inv_mine")


def test_an_unseeded_bench_rolls_differently(make_bench):
    assert make_bench("a").invocation().call("dice_roll", ROLL).structured["rolls"] != \
        make_bench("b").invocation().call("dice_roll", ROLL).structured["rolls"]


def test_delegated_children_have_streams_of_their_own_and_the_same_again(make_bench):
    def rolls(folder: str) -> list:
        bench = make_bench(folder, profile=parent_profile(), seed=3)
        parent = bench.invocation()
        seen = [parent.call("dice_roll", ROLL).structured["rolls"]]
        for _ in range(2):
            model = ScriptedModel([[("dice_roll", ROLL, "c1")], [("task_return", {"summary": "ok"})]])
            bench.agents.model = model
            delegate(parent)
            bench.agents.wait(timeout=WAIT)
            seen.append(model.requests[1].messages[-1]["content"])  # the child's roll, as its model read it
        return seen

    first = rolls("a")
    assert rolls("b") == first
    parent_rolls = " + ".join(map(str, first[0]))
    assert first[1] != first[2] and parent_rolls not in first[1] and parent_rolls not in first[2]
