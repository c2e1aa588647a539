"""Render, a provider's response calling every tool, decode, encode the history: all valid."""

from __future__ import annotations

import pytest
from protocol_sdk import RESPONSE_MODELS, validate_history, validate_tools
from protocol_tools import TOOLS, load_response

from toolbench.core.arguments import ToolArguments
from toolbench.protocols import PROTOCOLS, Exchange, ResultView, decode_calls, encode_history, render


def advertised_names(protocol: str, rendered: list[dict]) -> list[str]:
    if protocol == "openai":
        return [t["function"]["name"] for t in rendered]
    if protocol == "gemini":
        return [d["name"] for d in rendered[0]["functionDeclarations"]]
    return [t["name"] for t in rendered]


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("strict", [False, True])
def test_round_trip(protocol, strict):
    rendered = render(protocol, TOOLS, strict=strict)
    validate_tools(protocol, rendered)
    names = advertised_names(protocol, rendered)

    response = load_response(protocol)
    RESPONSE_MODELS[protocol].model_validate(response)
    calls = decode_calls(protocol, response, id_seed="inv_test/round-001")
    assert sorted(c.call_name for c in calls) == sorted(names)  # the fixture calls every tool

    exchanges = []
    for i, call in enumerate(calls):
        arguments = ToolArguments.decode(call.arguments)
        if not arguments.is_valid:
            result = ResultView("Tool arguments must be a JSON object.", is_error=True)
        elif i == len(calls) - 1:
            result = None  # the last call never confirmed a result
        else:
            result = ResultView(f"ok {call.call_name}")
        exchanges.append(Exchange(call.call_id, call.call_name, arguments.replay_object(), result, call.signature))
    second_round = [Exchange(f"{exchanges[0].call_id}-2", exchanges[0].call_name, {"path": "b.md"}, ResultView("done"))]
    history = encode_history(protocol, [exchanges, second_round])
    validate_history(protocol, history)
    assert (
        len(history)
        == {"openai": 2 + len(calls) + 1, "openai-responses": 2 * len(calls) + 2, "anthropic": 4, "gemini": 4}[protocol]
    )
