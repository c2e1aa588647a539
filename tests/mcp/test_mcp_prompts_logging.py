"""A server's prompts, completions and log messages through `bench.mcp`, with in-process
servers: prompts with their arguments, messages mapped to text and attachments as tool results
are, completion refs and arguments in each accepted form (and the normalisers' properties),
`logging/setLevel` and the bounded per-server log."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from feature_servers import PNG, LegacyState, legacy, legacy_server, modern_server
from hypothesis import given
from hypothesis import strategies as st
from mcp_support import wait_until

from toolbench.core.errors import ToolbenchError
from toolbench.core.results import ToolOutput
from toolbench.mcp import LOG_LEVELS, MAX_LOGS, McpManager, McpPrompt, McpResourceTemplate
from toolbench.mcp._server_features import completion_argument, completion_ref, log_level

Call = Callable[..., ToolOutput]


def code_of(action: Callable[[], Any]) -> str:
    with pytest.raises(ToolbenchError) as info:
        action()
    return info.value.code


# --- prompts --------------------------------------------------------------------------------

def test_prompts_are_listed_with_their_arguments(manager: McpManager) -> None:
    manager.add("features", server=modern_server())
    prompts = {p.name: p for p in manager.prompts("features")}
    weather = prompts["weather"]
    assert (weather.server, weather.description) == ("features", "Ask about a city's weather")
    assert [(a.name, a.required) for a in weather.arguments] == [("city", True), ("days", False)]
    assert weather.to_json()["arguments"][0] == {"name": "city", "required": True}
    assert prompts["picture"].arguments == ()


def test_a_prompt_with_arguments_reads_as_its_messages(manager: McpManager) -> None:
    manager.add("features", server=modern_server())
    [weather] = [p for p in manager.prompts("features") if p.name == "weather"]
    for prompt in ("weather", weather):  # by name, or the value prompts() returned
        result = manager.get_prompt("features", prompt, {"city": "Oslo", "days": "3"})
        assert (result.server, result.name) == ("features", "weather")
        [message] = result.messages
        assert (message.role, message.kind, message.text, message.attachments) == (
            "user", "text", "What is the weather in Oslo for 3 day(s)?", ())


def test_prompt_messages_map_content_to_text_and_attachments_as_tool_results_do(manager: McpManager) -> None:
    manager.add("features", server=modern_server())
    look, image, resource = manager.get_prompt("features", "picture").messages
    assert (look.kind, look.text) == ("text", "Look at this:")  # trimmed, as a tool result's text
    assert (image.kind, image.text) == ("image", "")
    [attachment] = image.attachments
    assert (attachment.kind, attachment.mime_type, attachment.data) == ("image", "image/png", PNG)
    assert (resource.role, resource.kind) == ("assistant", "resource")
    assert resource.text == "Resource `demo://text` (text/plain):\n\nhello, resource"
    assert manager.get_prompt("features", "picture").attachments == (attachment,)


def test_a_prompt_the_server_refuses_is_request_failed(manager: McpManager) -> None:
    manager.add("features", server=modern_server())
    assert code_of(lambda: manager.get_prompt("features", "weather")) == "mcp.request_failed"  # city is required
    assert code_of(lambda: manager.get_prompt("features", "no-such-prompt")) == "mcp.request_failed"


@pytest.mark.parametrize("arguments", [{"city": 3}, ["Oslo"], "city=Oslo", {1: "Oslo"}])
def test_prompt_arguments_that_are_not_text_are_misuse(manager: McpManager, arguments: Any) -> None:
    manager.add("features", server=modern_server())
    with pytest.raises(ToolbenchError, match="argument names to text") as info:
        manager.get_prompt("features", "weather", arguments)
    assert info.value.code == "bench.misuse"


# --- completion -----------------------------------------------------------------------------

def test_complete_takes_a_prompt_in_each_form_and_the_argument_either_way(manager: McpManager) -> None:
    asked: list[dict[str, Any]] = []
    manager.add("features", server=modern_server(asked))
    [weather] = [p for p in manager.prompts("features") if p.name == "weather"]
    refs: list[Any] = ["weather", weather, {"type": "ref/prompt", "name": "weather"}]
    for ref in refs:
        completion = manager.complete("features", ref, ("city", "O"))
        assert (completion.values, completion.total, completion.has_more) == (("Oslo", "Osaka"), 3, True)
    completion = manager.complete("features", "weather", {"name": "city", "value": "Ot"}, context={"days": "2"})
    assert completion.to_json() == {"values": ["Ottawa"], "total": 1, "hasMore": False}
    assert [a["ref"] for a in asked] == [{"type": "ref/prompt", "name": "weather"}] * 4
    assert asked[-1]["argument"] == {"name": "city", "value": "Ot"} and asked[-1]["context"] == {"days": "2"}


def test_complete_takes_a_resource_template_as_its_value_its_text_or_the_spec_dict(manager: McpManager) -> None:
    asked: list[dict[str, Any]] = []
    manager.add("features", server=modern_server(asked))
    [template] = manager.resource_templates("features")
    for ref in (template, "demo://items/{item}", {"type": "ref/resource", "uri": "demo://items/{item}"}):
        assert manager.complete("features", ref, ("item", "P")).values == ("Paris",)
    assert [a["ref"] for a in asked] == [{"type": "ref/resource", "uri": "demo://items/{item}"}] * 3


@pytest.mark.parametrize(("ref", "argument"), [
    (3, ("city", "")), ("", ("city", "")), ({"type": "ref/tool", "name": "x"}, ("city", "")),
    ({"type": "ref/prompt"}, ("city", "")), ("weather", ("city",)), ("weather", ("city", 3)),
    ("weather", {"name": "city"}), ("weather", "city"),
])
def test_complete_names_what_it_accepts(manager: McpManager, ref: Any, argument: Any) -> None:
    manager.add("features", server=modern_server())
    with pytest.raises(ToolbenchError, match=r"complete\((ref|argument)=") as info:
        manager.complete("features", ref, argument)
    assert info.value.code == "bench.misuse"


names = st.text(min_size=1).filter(lambda s: "{" not in s)


@given(st.one_of(
    names.map(lambda n: n),
    names.map(lambda n: McpPrompt("s", n)),
    names.map(lambda n: {"type": "ref/prompt", "name": n}),
    names.map(lambda n: McpResourceTemplate("s", "x://{" + n + "}", "t")),
    names.map(lambda n: {"type": "ref/resource", "uri": n}),
))
def test_completion_ref_is_idempotent_and_gives_the_spec_form(ref: Any) -> None:
    once = completion_ref(ref)
    assert completion_ref(once) == once
    assert once["type"] in ("ref/prompt", "ref/resource") and set(once) == {"type", "name" if
                                                                            once["type"] == "ref/prompt" else "uri"}


@given(st.text(min_size=1), st.text())
def test_completion_argument_takes_both_forms_and_is_idempotent(name: str, value: str) -> None:
    expected = {"name": name, "value": value}
    assert completion_argument((name, value)) == completion_argument([name, value]) == expected
    assert completion_argument(expected) == expected


# --- logging --------------------------------------------------------------------------------

def test_a_2025_server_takes_the_log_level_and_its_messages_are_kept(manager: McpManager, call: Call) -> None:
    state = LegacyState()
    manager.add("old", transport=legacy(legacy_server(state)))
    manager.set_log_level("old", "WARNING")  # any letter case
    assert state.levels == ["warning"]
    call("mcp/old:log", count=3)
    assert wait_until(lambda: len(manager.logs("old")) == 3)
    logs = manager.logs("old")
    assert [(m.server, m.level, m.logger, m.data) for m in logs] == [
        ("old", "warning", "feature-test", {"n": n}) for n in range(3)]
    assert all(isinstance(m.time, float) for m in logs)
    assert logs[0].to_json()["logger"] == "feature-test"


def test_the_log_keeps_the_last_max_logs_and_survives_a_reconnect(manager: McpManager, call: Call) -> None:
    manager.add("old", transport=legacy(legacy_server(LegacyState())))
    call("mcp/old:log", count=MAX_LOGS + 5)
    assert wait_until(lambda: manager.logs("old")[-1].data == {"n": MAX_LOGS + 4}), "the last message did not come"
    assert [m.data["n"] for m in manager.logs("old")] == list(range(5, MAX_LOGS + 5))
    manager.refresh("old", restart=True)
    assert len(manager.logs("old")) == MAX_LOGS


@pytest.mark.parametrize("level", ["verbose", "", None, 3])
def test_a_log_level_that_is_not_one_of_the_spec_is_misuse(manager: McpManager, level: Any) -> None:
    manager.add("old", transport=legacy(legacy_server(LegacyState())))
    with pytest.raises(ToolbenchError, match="debug, info, notice") as info:
        manager.set_log_level("old", level)
    assert info.value.code == "bench.misuse"


@given(st.sampled_from(LOG_LEVELS), st.sampled_from([str.lower, str.upper, str.title]))
def test_log_level_reads_any_letter_case_and_is_idempotent(level: str, case: Callable[[str], str]) -> None:
    assert log_level(case(level)) == level == log_level(log_level(level))


def test_the_values_and_limits_are_public_in_toolbench_mcp() -> None:
    import toolbench.mcp as mcp

    names = {"Completion", "LogLevel", "LogMessage", "McpPrompt", "McpPromptArgument", "McpResource",
             "McpResourceTemplate", "PromptMessage", "PromptResult", "ResourceContent", "ResourceRead",
             "ResourceUpdate", "LOG_LEVELS", "MAX_LOGS", "MAX_PAGES"}
    assert names <= set(mcp.__all__) and all(hasattr(mcp, n) for n in mcp.__all__)
    assert mcp.LOG_LEVELS[0] == "debug" and mcp.LOG_LEVELS[-1] == "emergency"
