"""A provider defined outside the package: Mistral's chat completions, registered at run time and
used through a real Workbench (render, check, respond, transcript), the CLI and the snapshot panel.

Mistral's API has OpenAI's shape (https://docs.mistral.ai/capabilities/function_calling): tool
names of at most 64 of a-z A-Z 0-9 _ -, `tool_calls` in the assistant message, and a `tool`
message per result, which also carries the function's `name`. No tool-count limit is documented.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from toolbench import Profile, ToolbenchError, Workbench
from toolbench.cli import main
from toolbench.protocols import ChatCompletionsProvider, Exchange, names, register, render, unregister


@dataclass(frozen=True)
class MistralChat(ChatCompletionsProvider):
    """OpenAI's Chat Completions shape; each `tool` message names the function it answers."""

    def encode_result(self, exchange: Exchange) -> dict[str, Any]:
        return {**super().encode_result(exchange), "name": exchange.call_name}


MISTRAL = MistralChat("mistral", max_tools=None, description_limit=None)
# A local server that takes short lower-case names only (say, a grammar-constrained llama.cpp).
LOCAL = ChatCompletionsProvider("local-llm", name_pattern=r"[a-z_]+", name_charset="a-z _", max_name_bytes=12)
PROFILE = Profile.default().edit(allow=["builtin:workspace.read_file", "builtin:dice.roll"])
BODY = {
    "id": "cmpl-e5cc70bb28c444948073e77776eb30ef",
    "object": "chat.completion",
    "model": "mistral-large-latest",
    "choices": [{
        "index": 0,
        "message": {
            "role": "assistant",
            "content": "Rolling first.",
            "tool_calls": [{"id": "D681PevKs", "type": "function",
                            "function": {"name": "dice_roll", "arguments": "{\"formula\": \"1d6\"}"}}],
        },
        "finish_reason": "tool_calls",
    }],
}


@pytest.fixture
def registered() -> Iterator[None]:
    register(MISTRAL)
    register(LOCAL)
    try:
        yield
    finally:
        unregister("mistral")
        unregister("local-llm")


@pytest.fixture
def bench(tmp_path, registered) -> Iterator[Workbench]:
    with Workbench(tmp_path / "ws", profile=PROFILE, seed=7) as bench:
        yield bench


def test_a_registered_provider_renders_the_snapshot_by_name_or_object(bench):
    snapshot = bench.invocation().snapshot
    assert snapshot.render("mistral") == snapshot.render(MISTRAL) == snapshot.render("openai")
    assert [t["function"]["name"] for t in snapshot.render("mistral")] == ["workspace_read_file", "dice_roll"]


def test_the_registered_providers_follow_the_built_in_ones_in_names(registered):
    assert names() == ("openai", "openai-responses", "anthropic", "gemini", "mistral", "local-llm")


def test_check_applies_the_providers_own_name_rules(bench):
    snapshot = bench.invocation().snapshot
    assert snapshot.check(protocols=[MISTRAL]) == []
    local = snapshot.check(protocols=["local-llm"])
    assert [(p.protocol, p.call_name, p.rule, p.fatal) for p in local] == [
        ("local-llm", "workspace_read_file", "name.length", True),  # 19 bytes; this server takes 12
    ]
    assert {p.protocol for p in snapshot.check()} == {"local-llm"}  # the default covers every name


def test_respond_and_transcript_run_a_round_in_the_providers_shape(bench):
    inv = bench.invocation(id="inv_mistral")
    [result] = inv.respond(MISTRAL, BODY)
    assert result.call_id == "D681PevKs" and not result.is_error
    assert inv.transcript("mistral") == [
        {"role": "assistant", "content": "Rolling first.", "tool_calls": [
            {"id": "D681PevKs", "type": "function",
             "function": {"name": "dice_roll", "arguments": '{"formula": "1d6"}'}},  # as sent
        ]},
        {"role": "tool", "tool_call_id": "D681PevKs", "content": result.content, "name": "dice_roll"},
    ]
    # The turn is Mistral's: OpenAI's transcript replays the call without Mistral's text.
    assert inv.transcript("openai")[0]["content"] is None


def test_the_cli_and_the_snapshot_panel_offer_a_registered_provider(registered, capsys):
    assert main(["snapshot", "--protocol", "local-llm"]) == 0
    tools = json.loads(capsys.readouterr().out)
    assert tools and all(t["type"] == "function" and "name" in t["function"] for t in tools)
    from toolbench.widgets import SnapshotPanel

    with Workbench.demo(seed=7) as bench:
        panel = SnapshotPanel(bench)
        assert "mistral" in panel.protocol.options
        panel.protocol.value = "mistral"
        assert "dice_roll" in panel.rendered.value


def test_an_unregistered_name_is_unknown_again(registered):
    unregister("local-llm")
    with pytest.raises(ToolbenchError) as info:
        render("local-llm", [])
    assert info.value.code == "protocol.unknown"
    register(LOCAL)  # the fixture unregisters it
