"""Odd but valid values, and misuse: what a model can send becomes a coded result, what a
developer passes wrongly raises `bench.misuse`; nothing escapes raw, nothing is lost."""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolbench import Profile, ToolbenchError, Workbench
from toolbench.core.arguments import ToolArguments
from toolbench.examples.demo_mcp import build_server


def _deep(depth: int) -> Any:
    return json.loads("[" * depth + "]" * depth)


def _chat_completion(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": "c", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": None,
                "tool_calls": [{"id": call_id, "type": "function",
                                "function": {"name": name, "arguments": arguments}}]}}]}


@pytest.mark.parametrize("wire", ['{"formula": NaN}', '{"formula": Infinity}', '{"formula": -Infinity}',
                                  '{"formula": 1e400}', {"formula": float("nan")}, {"formula": float("inf")},
                                  '{"formula": 1' + "0" * 5000 + "}"],
                         ids=["nan", "inf", "-inf", "1e400", "dict-nan", "dict-inf", "5000-digits"])
def test_numbers_json_cannot_carry_are_invalid_arguments(bench: Workbench, wire: Any):
    inv = bench.invocation("session")
    result = inv.call("dice_roll", wire)
    assert result.error_code == "tool.invalid_arguments"
    assert "not JSON" in result.content or "JSON object" in result.content
    # Nothing that is not JSON reaches a transcript a provider would refuse.
    for protocol in ("openai", "anthropic"):
        json.dumps(inv.transcript(protocol), allow_nan=False)


def test_numbers_in_range_stay_valid():
    assert ToolArguments.decode('{"a": 1.5e300, "b": -2, "c": 1' + "0" * 100 + "}").is_valid


def test_arguments_nested_900_deep_to_a_builtin_are_invalid_arguments(bench: Workbench):
    inv = bench.invocation("session")
    result = inv.call("dice_roll", {"formula": _deep(900)})
    assert result.error_code == "tool.invalid_arguments"


def test_arguments_nested_300_deep_to_an_mcp_tool_are_not_sent_and_the_server_stays_up(make_bench):
    bench = make_bench(profile=Profile.default().edit(allow=["mcp/demo:echo"]))
    bench.mcp.add("demo", server=build_server(), id="demo")
    inv = bench.invocation("session")
    echo = next(name for name, tool_id in inv.snapshot.call_names.items() if str(tool_id) == "mcp/demo:echo")
    deep = inv.call(echo, {"text": "hi", "extra": _deep(300)})
    assert deep.error_code in ("mcp.call_not_sent", "tool.invalid_arguments")
    assert inv.blocked is None
    assert bench.mcp.servers[0].state == "active"
    assert inv.call(echo, {"text": "hi"}).error_code is None


def test_a_lone_surrogate_in_a_provider_call_id_is_recorded_and_answered(bench: Workbench):
    inv = bench.invocation("session")
    results = inv.respond("openai", _chat_completion("call_\ud800", "dice_roll", '{"formula": "1d6"}'))
    assert [r.error_code for r in results] == [None]
    assert inv.records[-1].call_id == "call_\ud800"
    assert inv.call("dice_roll", {"formula": "1d6"}, call_id="\udc00").error_code is None
    bench.flush()
    again = Workbench(bench.workspace, profile=bench.profile).open_invocation(inv.id)
    assert [r.call_id for r in again.records] == ["call_\ud800", "\udc00"]


def test_an_unknown_call_name_is_quoted_at_most_200_characters(bench: Workbench):
    inv = bench.invocation("session")
    result = inv.call("x" * 1_000_000, {})
    assert result.error_code == "model.unknown_tool_call"
    assert len(result.content) < 1_000


class _BadRepr:
    def __repr__(self) -> str:
        raise RuntimeError("no repr")


@pytest.mark.parametrize("call", [
    lambda inv: inv.call("dice_roll", {"formula": "1d6"}, call_id=7),
    lambda inv: inv.call(7, {"formula": "1d6"}),
    lambda inv: inv.call("dice_roll", _BadRepr()),
    lambda inv: inv.call("dice_roll", object()),
    lambda inv: inv.turn([("dice_roll", {}, 7)]),
])
def test_misuse_raises_bench_misuse(bench: Workbench, call):
    inv = bench.invocation("session")
    with pytest.raises(ToolbenchError) as info:
        call(inv)
    assert info.value.code == "bench.misuse"


@pytest.mark.parametrize("arguments", [{"formula": _BadRepr()}, {"formula": 10**5000}, 10**5000],
                         ids=["bad-repr", "huge-int-inside", "huge-int"])
def test_python_values_json_cannot_hold_are_invalid_arguments_not_exceptions(bench: Workbench, arguments):
    inv = bench.invocation("session")
    result = inv.call("dice_roll", arguments)
    assert result.error_code == "tool.invalid_arguments"
    assert len(result.content) < 1_000


@pytest.mark.parametrize("depth", [129, 300, 990])
def test_arguments_nested_past_the_limit_are_invalid_with_the_reason(bench: Workbench, depth: int):
    inv = bench.invocation("session")
    result = inv.call("dice_roll", '{"a":' + "[" * depth + "]" * depth + "}")
    assert result.error_code == "tool.invalid_arguments"
    assert "nested" in result.content  # "nested deeper than 128 levels", or too deep to parse at all
    assert ToolArguments.decode('{"a": "' + "[" * 500 + '"}').is_valid  # brackets in a string do not nest
