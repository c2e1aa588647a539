"""The provider registry: names and provider objects are interchangeable in every public function,
built-in names are fixed, clashes and non-providers are refused with codes."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, get_args

import pytest
from protocol_tools import READ_FILE, load_fixture, tool

from toolbench import ToolbenchError
from toolbench.cli import main
from toolbench.protocols import (
    PROTOCOLS,
    AssistantTurn,
    BaseProvider,
    ChatCompletionsProvider,
    DecodedResponse,
    Exchange,
    Problem,
    ProtocolName,
    Provider,
    RenderableTool,
    RenderOptions,
    ResponsesProvider,
    ResultView,
    Round,
    check,
    decode_response,
    encode_history,
    encode_result,
    encode_tool_choice,
    get_provider,
    names,
    register,
    render,
    unregister,
)

RESPONSES = {
    "openai": "openai_chat_response.json",
    "openai-responses": "openai_responses_response.json",
    "anthropic": "anthropic_messages_response.json",
    "gemini": "gemini_generate_content_response.json",
}
ROUND = [Exchange("call_1", "workspace_read_file", {"path": "a.md"}, ResultView("text")),
         Exchange("call_2", "dice_roll", {}, ResultView("boom", is_error=True))]


class Echo:
    """A provider written against the Protocol alone (no base class): one fake API shape."""

    name = "echo"

    def render_list(self, tools: Sequence[RenderableTool], options: RenderOptions) -> list[dict[str, Any]]:
        return [{"tool": t.call_name} for t in tools]

    def check_tools(self, tools: Sequence[RenderableTool], options: RenderOptions) -> list[Problem]:
        return [Problem(self.name, t.call_name, "name.pattern", "no dots", True) for t in tools if "." in t.call_name]

    def decode(self, response: Any, id_seed: str | None = None) -> DecodedResponse:
        return DecodedResponse(())

    def encode_history(self, rounds: Sequence[Round], turns: Sequence[AssistantTurn | None] | None = None
                       ) -> list[dict[str, Any]]:
        return [self.encode_result(ex) for r in rounds for ex in r]

    def encode_result(self, exchange: Exchange) -> dict[str, Any]:
        return {"echo": exchange.call_id}

    def encode_tool_choice(self, choice: Any, call_names: Iterable[str]) -> dict[str, Any] | str | None:
        return None


@pytest.fixture
def echo() -> Any:
    provider = register(Echo())
    yield provider
    unregister("echo")


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_built_in_provider_object_gives_what_its_name_gives(protocol):
    provider = get_provider(protocol)
    assert isinstance(provider, Provider) and provider.name == protocol
    body = load_fixture(RESPONSES[protocol])
    assert render(provider, [READ_FILE], strict=True) == render(protocol, [READ_FILE], strict=True)
    assert check([tool("a.b")], protocols=[provider]) == check([tool("a.b")], protocols=[protocol])
    assert decode_response(provider, body, id_seed="s") == decode_response(protocol, body, id_seed="s")
    assert encode_history(provider, [ROUND]) == encode_history(protocol, [ROUND])
    assert encode_result(provider, ROUND[1]) == encode_result(protocol, ROUND[1])
    assert encode_tool_choice(provider, "required", ["dice_roll"]) == encode_tool_choice(protocol, "required",
                                                                                          ["dice_roll"])


def test_the_built_in_providers_are_protocols_and_protocol_name_in_one_order():
    assert names() == PROTOCOLS == get_args(ProtocolName)  # nothing is registered outside a test's fixture
    assert all(isinstance(get_provider(name), BaseProvider) for name in PROTOCOLS)


@pytest.mark.parametrize("protocol", ["mistral", "", 42, None, ["openai"], object()])
def test_anything_but_a_known_name_or_a_provider_is_protocol_unknown(protocol):
    with pytest.raises(ToolbenchError) as info:
        render(protocol, [READ_FILE])
    assert info.value.code == "protocol.unknown"


def test_a_provider_that_only_follows_the_protocol_works_unregistered_and_registered():
    assert render(Echo(), [READ_FILE]) == [{"tool": "workspace_read_file"}]
    with pytest.raises(ToolbenchError):
        render("echo", [READ_FILE])
    register(Echo())
    try:
        assert encode_history("echo", [ROUND]) == [{"echo": "call_1"}, {"echo": "call_2"}]
        assert "echo" in {p.protocol for p in check([tool("a.b")])}  # the default covers it
    finally:
        unregister("echo")


def test_a_taken_name_is_refused_unless_replaced(echo):
    with pytest.raises(ToolbenchError) as info:
        register(Echo())
    assert info.value.code == "protocol.name_taken"
    other = Echo()
    assert register(other, replace=True) is other and get_provider("echo") is other


@pytest.mark.parametrize("name", PROTOCOLS)
def test_a_built_in_name_can_be_neither_replaced_nor_unregistered(name):
    with pytest.raises(ToolbenchError) as info:
        register(ChatCompletionsProvider(name), replace=True)
    assert info.value.code == "protocol.name_taken"
    with pytest.raises(ToolbenchError) as info:
        unregister(name)
    assert info.value.code == "protocol.name_taken"
    assert get_provider(name).name == name


def test_unregistering_an_unknown_name_is_protocol_unknown():
    with pytest.raises(ToolbenchError) as info:
        unregister("never-registered")
    assert info.value.code == "protocol.unknown"


@pytest.mark.parametrize("name", ["", " mistral", "a b", "-x", "x" * 65, "mis/tral"])
def test_a_name_that_cannot_go_into_a_run_log_is_refused(name):
    with pytest.raises(ToolbenchError) as info:
        register(ChatCompletionsProvider(name))
    assert info.value.code == "bench.misuse"
    assert name not in names()


@pytest.mark.parametrize("thing", ["openai", Echo])  # a name, and a class not instantiated
def test_something_that_is_not_a_provider_is_refused(thing):
    with pytest.raises(ToolbenchError) as info:
        register(thing)  # type: ignore[arg-type]
    assert info.value.code == "bench.misuse"


def test_a_provider_class_is_not_a_provider():
    with pytest.raises(ToolbenchError) as info:
        render(Echo, [READ_FILE])  # type: ignore[arg-type]
    assert info.value.code == "protocol.unknown"


def test_a_provider_object_may_not_borrow_a_built_in_name():
    """`openai` in a run log or a Problem means OpenAI's API, whoever rendered it."""
    with pytest.raises(ToolbenchError) as info:
        check([READ_FILE], protocols=[ChatCompletionsProvider("openai", max_tools=5)])
    assert info.value.code == "protocol.name_taken"


@pytest.mark.parametrize("rules", [{"name_pattern": "[a-z"}, {"max_name_bytes": 0}, {"max_tools": 0},
                                   {"description_limit": -1}])
def test_an_openai_shaped_provider_refuses_broken_rules(rules):
    with pytest.raises(ToolbenchError) as info:
        ChatCompletionsProvider("x", **rules)
    assert info.value.code == "bench.misuse"


def test_openai_shaped_rules_are_the_providers_own():
    tools = [tool(f"t{i}") for i in range(3)] + [tool("has.dot")]
    strict = ResponsesProvider("strict-llm", name_pattern=r"[a-z0-9]+", max_tools=2, max_tools_fatal=True)
    rules = {(p.rule, p.call_name, p.fatal) for p in check(tools, protocols=[strict])}
    assert rules == {("list.too_many_tools", "", True), ("name.pattern", "has.dot", True)}
    loose = ChatCompletionsProvider("loose-llm", name_pattern=r"[a-z0-9.]+", max_tools=None)
    assert check(tools, protocols=[loose]) == []
    assert render(strict, tools) == render("openai-responses", tools)  # the rules change no wire shape


def test_the_cli_refuses_a_provider_name_it_does_not_know(capsys):
    with pytest.raises(SystemExit) as info:
        main(["snapshot", "--protocol", "mistral"])
    assert info.value.code == 2


def test_a_base_provider_subclass_gets_the_history_checks():
    # The skeleton refuses a history no provider accepts, whatever the hooks.
    class Tiny(ChatCompletionsProvider):
        pass

    with pytest.raises(ToolbenchError) as info:
        encode_history(Tiny("tiny"), [[ROUND[0], ROUND[0]]])  # an id twice in one round
    assert info.value.code == "protocol.history_invalid"
    assert len(encode_history(Tiny("tiny"), [[ROUND[0]], [ROUND[0]]])) == 4  # Chat Completions: per round
