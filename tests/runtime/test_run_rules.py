"""The seeds' run rules at the invocation: turn contracts (TauriTavern §3.2, §4.2, §5.2), the
registry's case-insensitive fallback and the loop breaker (LiveAgent §7.5, §2.1)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from toolbench import Profile, ToolbenchError, TurnContract, Workbench

TOOLS = ["builtin:dice.roll", "builtin:workspace.read_file", "builtin:workspace.list_files"]


@pytest.fixture
def inv(tmp_path: Path) -> Any:
    bench = Workbench(tmp_path, Profile.default().edit(allow=TOOLS), seed=1)
    yield bench.invocation()
    bench.close()


# --- turn contracts -----------------------------------------------------------------------

@pytest.mark.parametrize(("contract", "code"), [
    (TurnContract(tools=["dice_roll", "dice_roll"]), "tool.turn_duplicate_id"),
    (TurnContract(tools=[], choice="required"), "tool.turn_required_empty"),
    (TurnContract(tools=["dice_roll"], choice="workspace_read_file"), "tool.turn_specific_not_available"),
    (TurnContract(tools=["memory_manage"]), "tool.turn_tool_not_in_snapshot"),
])
def test_a_contract_that_cannot_hold_is_misuse_and_uses_no_round(inv: Any, contract: TurnContract, code: str) -> None:
    with pytest.raises(ToolbenchError) as info:
        inv.turn([("dice_roll", {"formula": "d6"})], contract=contract)
    assert info.value.code == code
    assert inv.records == [] and inv.budget()["total"] == 80


def test_a_call_outside_the_turn_is_refused_before_the_budget_is_charged(inv: Any) -> None:
    contract = TurnContract(tools=["dice_roll"])
    outside, inside = inv.turn([("workspace_read_file", {"path": "work/README.md"}),
                                ("dice_roll", {"formula": "d6"})], contract=contract)
    assert outside.error_code == "model.tool_not_in_turn" and outside.structured["available"] == ["dice_roll"]
    assert not inside.is_error
    assert inv.budget()["total"] == 79  # only the call inside the contract was charged


def test_choice_none_refuses_every_call_and_a_specific_choice_every_other_tool(inv: Any) -> None:
    assert inv.call("dice_roll", {"formula": "d6"}, contract=TurnContract(choice="none")).error_code \
        == "model.tool_choice_violation"
    specific = TurnContract(choice="workspace_list_files")
    other, named = inv.turn([("dice_roll", {"formula": "d6"}), ("workspace_list_files", {"path": "work"})],
                            contract=specific)
    assert other.error_code == "model.tool_choice_violation" and not named.is_error
    assert inv.budget()["total"] == 79


def test_an_unknown_name_under_a_contract_is_still_unknown_and_charged(inv: Any) -> None:
    """Upstream's gate looks the tool up in the snapshot first (and charges it, §4.5)."""
    result = inv.call("nope", {}, contract=TurnContract(tools=["dice_roll"]))
    assert result.error_code == "model.unknown_tool_call" and inv.budget()["total"] == 79


def test_a_contract_may_name_tools_by_tool_id_and_a_choice_as_a_mapping(inv: Any) -> None:
    contract = TurnContract(tools=["builtin:dice.roll"], choice={"name": "builtin:dice.roll"})
    assert not inv.call("dice_roll", {"formula": "d6"}, contract=contract).is_error


def test_the_rendering_uses_the_same_contract(inv: Any) -> None:
    contract = TurnContract(tools=["workspace_list_files", "dice_roll"], choice="dice_roll")
    snapshot = inv.snapshot
    assert [t["function"]["name"] for t in snapshot.render("openai", contract=contract)] == \
        ["dice_roll", "workspace_list_files"]  # the snapshot's order, not the contract's
    assert snapshot.tool_choice("openai", contract) == {"type": "function", "function": {"name": "dice_roll"}}
    assert snapshot.tool_choice("anthropic", contract) == {"type": "tool", "name": "dice_roll"}
    assert snapshot.tool_choice("openai", TurnContract(choice="required")) == "required"
    assert snapshot.tool_choice("openai", TurnContract(tools=[], choice="none")) is None  # no tools: neither key


def test_respond_enforces_the_contract_of_its_request(inv: Any) -> None:
    body = {"id": "r1", "choices": [{"finish_reason": "tool_calls", "message": {"role": "assistant", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "workspace_list_files", "arguments": "{}"}}]}}]}
    [result] = inv.respond("openai", body, contract=TurnContract(tools=["dice_roll"]))
    assert result.error_code == "model.tool_not_in_turn"


# --- case-insensitive fallback ------------------------------------------------------------

def test_a_name_that_matches_only_trimmed_and_lowercased_runs_and_says_which_tool(inv: Any) -> None:
    result = inv.call("  Dice_Roll ", {"formula": "1d4"})
    assert not result.is_error and result.tool_id == "builtin:dice.roll"
    assert "this ran `dice_roll`" in result.content
    assert inv.records[-1].call_name == "  Dice_Roll "  # the record keeps what the model sent
    assert inv.call("dice_roll", {"formula": "1d4"}).content.count("this ran") == 0  # exact: no note


def test_a_loose_name_two_tools_share_is_unknown(tmp_path: Path) -> None:
    with Workbench(tmp_path) as bench:
        for name in ("Lookup", "lookup"):
            bench.enable(bench.register_tool("x", lambda: "ok", name=name))
        inv = bench.invocation()
        assert not inv.call("Lookup").is_error and not inv.call("lookup").is_error  # exact names first
        assert inv.call("LOOKUP").error_code == "model.unknown_tool_call"


# --- the loop breaker ---------------------------------------------------------------------

def test_the_same_failure_under_new_call_ids_gets_the_guidance_from_the_second_time(inv: Any) -> None:
    args = {"path": "work/missing.md"}
    first = inv.call("workspace_read_file", args)
    second = inv.call("workspace_read_file", args)
    third = inv.call("workspace_read_file", args)
    assert first.is_error and "failed" not in first.content.split("\n\n")[-1]
    assert "failed 2 times in a row" in second.content and second.structured["failedInARow"] == 2
    assert "failed 3 times in a row" in third.content and "Do not retry" in third.content
    assert first.error_code == second.error_code == third.error_code  # the code stays the tool's


def test_a_success_or_other_arguments_start_the_count_again(inv: Any) -> None:
    missing = {"path": "work/missing.md"}
    inv.call("workspace_read_file", missing)
    assert "in a row" not in inv.call("workspace_read_file", {"path": "work/other.md"}).content
    inv.call("workspace_read_file", missing)
    inv.call("dice_roll", {"formula": "d6"})  # a success resets
    assert "in a row" not in inv.call("workspace_read_file", missing).content


def test_a_server_that_reuses_call_ids_across_rounds_still_counts(inv: Any) -> None:
    """Local servers send `call_0` every round; only a replay of the same round and id would not count."""
    missing = {"path": "work/missing.md"}
    inv.turn([("workspace_read_file", missing, "call_0")])
    again = inv.turn([("workspace_read_file", missing, "call_0")])[0]
    assert "failed 2 times in a row" in again.content


def test_the_runtime_s_own_refusals_get_no_loop_guidance(inv: Any) -> None:
    contract = TurnContract(tools=["dice_roll"])
    for _ in range(3):
        refused = inv.call("workspace_list_files", {"path": "work"}, contract=contract)
    assert refused.error_code == "model.tool_not_in_turn" and "in a row" not in refused.content


def test_a_loose_name_that_was_refused_says_how_it_was_read_not_that_it_ran(inv: Any) -> None:
    refused = inv.call("Dice_Roll", {"formula": "d6"}, contract=TurnContract(tools=["workspace_list_files"]))
    assert refused.error_code == "model.tool_not_in_turn"
    assert "it was read as `dice_roll`" in refused.content and "this ran" not in refused.content


# --- maxRounds ----------------------------------------------------------------------------

def test_calls_past_the_profile_s_max_rounds_get_a_coded_result_and_charge_nothing(tmp_path: Path) -> None:
    profile = Profile.default().edit(allow=TOOLS, max_rounds=2)
    with Workbench(tmp_path, profile) as bench:
        inv = bench.invocation()
        assert not inv.call("dice_roll", {"formula": "d6"}).is_error
        assert not inv.turn([("dice_roll", {"formula": "d6"}), ("dice_roll", {"formula": "d4"})])[1].is_error
        late = inv.turn([("dice_roll", {"formula": "d6"}), ("workspace_list_files", {"path": "work"})])
        assert [r.error_code for r in late] == ["agent.max_tool_rounds_exceeded"] * 2
        assert late[0].structured["maxRounds"] == 2
        assert inv.budget()["total"] == 77  # the refused round used no budget
        reopened = bench.open_invocation(inv.id)
        assert reopened.call("dice_roll", {"formula": "d6"}).error_code == "agent.max_tool_rounds_exceeded"


def test_a_script_in_the_shell_is_held_to_the_round_s_tools(tmp_path: Path) -> None:
    profile = Profile.default().edit(allow=[*TOOLS, "builtin:workspace.shell"])
    with Workbench(tmp_path, profile) as bench:
        inv = bench.invocation()
        shell = inv.call("workspace_shell", {"command": "builtin.dice.roll '{\"formula\": \"2d6\"}'"},
                         contract=TurnContract(tools=["workspace_shell"]))
        nested = [r for r in inv.records if r.via is not None]
        assert [r.result.error_code for r in nested] == ["model.tool_not_in_turn"]
        assert "model.tool_not_in_turn" in shell.content
        allowed = inv.call("workspace_shell", {"command": "builtin.dice.roll '{\"formula\": \"2d6\"}'"},
                           contract=TurnContract(tools=["workspace_shell", "dice_roll"]))
        assert "Rolled 2d6" in allowed.content


def test_a_foreground_run_without_a_commit_tool_may_finish(tmp_path: Path) -> None:
    profile = Profile.default().edit(allow=["builtin:workspace.write_file", "builtin:workspace.finish"])
    with Workbench(tmp_path, profile) as bench:
        assert not bench.invocation().call("workspace_finish", {}).is_error
