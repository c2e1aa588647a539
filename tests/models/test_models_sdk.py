"""Every adapter through its real SDK client (sync and async) against `LocalProvider` on
127.0.0.1: the exact request bodies the SDK sent, round by round, and each way a provider can
fail ending the run with a coded error (issue 19, "Done when"). No network, no key."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from deadline import run_with_deadline

from toolbench import Workbench
from toolbench.models import Anthropic, Gemini, OpenAIChat, OpenAIResponses
from toolbench.protocols._bodies import ENCRYPTED, SIGNATURE, THOUGHT_SIGNATURE
from toolbench.testing import LocalProvider

PROMPT = "Roll 2d6 and list the files."
CALLS = [("dice_roll", {"formula": "2d6"}), ("workspace_list_files", {"path": "."})]
FINAL = "You rolled 7; the workspace is empty."
# "mistral": the provider installed from tests/fixtures/user_provider (conftest, plugin_support),
# driven by the openai SDK's Chat Completions client with the adapter's protocol override.
PROTOCOLS = ("openai", "openai-responses", "anthropic", "gemini", "mistral")
pytestmark = pytest.mark.user_provider

# Per protocol: the adapter on a provider (sync or async client), the path it posts to, where
# the conversation goes in the body, the canned answers.
ADAPTERS: dict[str, Callable[[LocalProvider, bool], Any]] = {
    "openai": lambda p, aio: OpenAIChat(p.async_openai() if aio else p.openai(), "gpt-4.1"),
    "openai-responses": lambda p, aio: OpenAIResponses(p.async_openai() if aio else p.openai(), "gpt-5-mini",
                                                       store=False, include=["reasoning.encrypted_content"]),
    "anthropic": lambda p, aio: Anthropic(p.async_anthropic() if aio else p.anthropic(), "claude-sonnet-4-5",
                                          max_tokens=2048, thinking={"type": "enabled", "budget_tokens": 1024}),
    "gemini": lambda p, aio: Gemini(p.gemini(), "gemini-2.5-flash", aio=aio, temperature=0),
    "mistral": lambda p, aio: OpenAIChat(p.async_openai() if aio else p.openai(), "mistral-large-latest",
                                         protocol="mistral"),
}
PATHS = {"openai": "/v1/chat/completions", "openai-responses": "/v1/responses", "anthropic": "/v1/messages",
         "gemini": "/v1beta/models/gemini-2.5-flash:generateContent", "mistral": "/v1/chat/completions"}
KEY = {"openai": "messages", "openai-responses": "input", "anthropic": "messages", "gemini": "contents",
       "mistral": "messages"}
ANSWERS = {
    "openai": (LocalProvider.chat_calls, LocalProvider.chat_text),
    "openai-responses": (LocalProvider.responses_calls, LocalProvider.responses_text),
    "anthropic": (LocalProvider.anthropic_calls, LocalProvider.anthropic_text),
    "gemini": (LocalProvider.gemini_calls, LocalProvider.gemini_text),
    # the provider's own bodies, with usage: what a Mistral-shaped API answers
    "mistral": (lambda calls: LocalProvider.calls_body("mistral", calls, usage=(96, 31)),
                lambda text: LocalProvider.text_body("mistral", text, n=2, usage=(170, 14))),
}


@pytest.fixture
def bench(tmp_path: Path) -> Iterator[Workbench]:
    with Workbench(tmp_path / "ws", seed=1) as bench:
        yield bench


def wire(value: Any) -> Any:
    """A value as JSON carries it (tuples become lists)."""
    return json.loads(json.dumps(value))


def added(*usages: dict[str, Any]) -> dict[str, Any]:
    total: dict[str, Any] = {}
    for usage in usages:
        for key, value in usage.items():
            if isinstance(value, dict):
                total[key] = added(total.get(key, {}), value)
            elif isinstance(value, (int, float)) and not isinstance(value, bool):
                total[key] = total.get(key, 0) + value
    return total


def usage_of(protocol: str, body: dict[str, Any]) -> dict[str, Any]:
    return dict(body["usageMetadata" if protocol == "gemini" else "usage"])


# --- a two-round run: parallel calls, then the final text ----------------------------------------

@pytest.mark.parametrize("aio", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_two_round_run_sends_exactly_the_snapshot_and_the_transcript(bench: Workbench, protocol: str,
                                                                       aio: bool) -> None:
    calls_body, text_body = ANSWERS[protocol]
    first, second = calls_body(CALLS), text_body(FINAL)
    inv = bench.invocation()
    with LocalProvider([first, second]) as provider:
        adapter = ADAPTERS[protocol](provider, aio)
        run = inv.run(adapter, PROMPT)
    assert (run.stop_reason, run.final_text, run.error) == ("final", FINAL, None)
    assert [r.path for r in provider.requests] == [PATHS[protocol]] * 2
    sent = [r.body for r in provider.requests]
    opening = [adapter.user_message(PROMPT)]
    assert sent[0]["tools"] == wire(inv.snapshot.render(protocol))
    assert sent[0][KEY[protocol]] == opening
    assert sent[1]["tools"] == sent[0]["tools"]
    assert sent[1][KEY[protocol]] == wire(opening + inv.transcript(protocol))
    assert [wire(r.request) for r in run.rounds] == sent  # the recorded body is the wire body
    assert [r.response for r in run.rounds] == [first, second]
    assert run.usage == added(usage_of(protocol, first), usage_of(protocol, second))
    assert [not r.is_error for r in run.results] == [True, True]
    assert [len(r.results) for r in run.rounds] == [2, 0]


def test_chat_completions_round_two_carries_the_calls_and_their_results(bench: Workbench) -> None:
    inv = bench.invocation()
    with LocalProvider([LocalProvider.chat_calls(CALLS), LocalProvider.chat_text(FINAL)]) as provider:
        run = inv.run(ADAPTERS["openai"](provider, False), PROMPT)
    _user, assistant, *results = provider.requests[1].body["messages"]
    ids = [c["id"] for c in assistant["tool_calls"]]
    assert [c["function"]["name"] for c in assistant["tool_calls"]] == ["dice_roll", "workspace_list_files"]
    assert [(m["role"], m["tool_call_id"]) for m in results] == [("tool", i) for i in ids]
    assert [m["content"] for m in results] == [r.content for r in run.results]


def test_anthropic_round_two_sends_the_thinking_block_back_with_its_signature(bench: Workbench) -> None:
    inv = bench.invocation()
    answer = LocalProvider.anthropic_calls(CALLS, thinking="Roll first, then list.")
    with LocalProvider([answer, LocalProvider.anthropic_text(FINAL)]) as provider:
        inv.run(ADAPTERS["anthropic"](provider, False), PROMPT)
    sent = provider.requests[1].body
    assert sent["thinking"] == {"type": "enabled", "budget_tokens": 1024} and sent["max_tokens"] == 2048
    _user, assistant, results = sent["messages"]
    assert assistant["content"][0] == {"type": "thinking", "thinking": "Roll first, then list.",
                                       "signature": SIGNATURE}
    uses = [b["id"] for b in assistant["content"] if b["type"] == "tool_use"]
    assert [b["tool_use_id"] for b in results["content"] if b["type"] == "tool_result"] == uses
    headers = provider.requests[0].headers  # anthropic 2.x sends the key as a bearer token
    assert headers.get("x-api-key") == "test" or headers.get("authorization") == "Bearer test"


def test_responses_round_two_sends_the_reasoning_item_back_with_its_encrypted_content(bench: Workbench) -> None:
    inv = bench.invocation()
    with LocalProvider([LocalProvider.responses_calls(CALLS), LocalProvider.responses_text(FINAL)]) as provider:
        inv.run(ADAPTERS["openai-responses"](provider, False), PROMPT)
    sent = provider.requests[1].body
    assert sent["store"] is False and sent["include"] == ["reasoning.encrypted_content"]
    items = sent["input"]
    reasoning = next(i for i in items if i.get("type") == "reasoning")
    assert reasoning["encrypted_content"] == ENCRYPTED
    calls = [i["call_id"] for i in items if i.get("type") == "function_call"]
    assert [i["call_id"] for i in items if i.get("type") == "function_call_output"] == calls and len(calls) == 2


def test_gemini_round_two_sends_the_thought_signature_back_on_its_part(bench: Workbench) -> None:
    inv = bench.invocation()
    with LocalProvider([LocalProvider.gemini_calls(CALLS), LocalProvider.gemini_text(FINAL)]) as provider:
        inv.run(ADAPTERS["gemini"](provider, False), PROMPT, system="Be brief.")
    first, second = (r.body for r in provider.requests)
    assert first["systemInstruction"] == {"parts": [{"text": "Be brief."}]}
    assert first["generationConfig"] == {"temperature": 0}
    # the SDK would send parameters_json_schema; the adapter's body goes out as rendered
    assert all("parametersJsonSchema" in d for d in first["tools"][0]["functionDeclarations"])
    _user, model, results = second["contents"]
    signed = [p for p in model["parts"] if "functionCall" in p]
    assert signed[0]["thoughtSignature"] == THOUGHT_SIGNATURE and "thoughtSignature" not in signed[1]
    assert [p["functionResponse"]["name"] for p in results["parts"]] == ["dice_roll", "workspace_list_files"]


# --- what a provider can answer instead ----------------------------------------------------------

def run_against(bench: Workbench, protocol: str, answers: list[Any], *, aio: bool = False) -> tuple[Any, Any]:
    with LocalProvider(answers) as provider:
        run = bench.invocation().run(ADAPTERS[protocol](provider, aio), PROMPT)
    return run, provider


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_401_in_round_two_ends_the_run_with_the_providers_message(bench: Workbench, protocol: str) -> None:
    calls_body, _ = ANSWERS[protocol]
    error = LocalProvider.error(401, LocalProvider.error_body(protocol, 401, "Incorrect API key provided: te**st."))
    run, provider = run_against(bench, protocol, [calls_body(CALLS), error])
    assert run.stop_reason == "provider_error"
    assert (run.error.code, run.error.round, run.error.status) == ("model.provider_auth", 2, 401)
    assert "Incorrect API key provided" in run.error.message
    assert len(run.rounds) == 2 and run.rounds[1].error == run.error and run.rounds[1].response is None
    assert len(run.rounds[0].results) == 2  # round one's calls ran and stay recorded
    assert run.rounds[1].request == provider.requests[1].body


@pytest.mark.parametrize("aio", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_429_is_rate_limited_and_not_retried(bench: Workbench, protocol: str, aio: bool) -> None:
    error = LocalProvider.error(429, LocalProvider.error_body(protocol, 429, "Rate limit reached for requests"),
                                {"retry-after": "20"})
    run, provider = run_against(bench, protocol, [error], aio=aio)
    assert (run.stop_reason, run.error.code, run.error.round) == ("provider_error", "model.provider_rate_limited", 1)
    assert "Rate limit reached" in run.error.message
    assert len(provider.requests) == 1


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_400_is_a_rejected_request(bench: Workbench, protocol: str) -> None:
    error = LocalProvider.error(400, LocalProvider.error_body(protocol, 400, "tools[0].name: invalid"))
    run, _ = run_against(bench, protocol, [error])
    assert (run.error.code, run.error.status) == ("model.request_rejected", 400)
    assert "tools[0].name: invalid" in run.error.message


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_500_past_the_end_of_the_script_is_a_provider_error(bench: Workbench, protocol: str) -> None:
    run, _ = run_against(bench, protocol, [])
    assert (run.error.code, run.error.status) == ("model.provider_error", 500)
    assert "not scripted" in run.error.message


@pytest.mark.parametrize("aio", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_server_that_hangs_up_is_unreachable(bench: Workbench, protocol: str, aio: bool) -> None:
    run, _ = run_against(bench, protocol, [LocalProvider.hang_up()], aio=aio)
    assert (run.stop_reason, run.error.code, run.error.round) == ("provider_error", "model.provider_unreachable", 1)


@pytest.mark.parametrize("body", [{"unexpected": True}, b"<html>502 Bad Gateway</html>"], ids=["shape", "not-json"])
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_body_not_in_the_providers_shape_is_an_invalid_response(bench: Workbench, protocol: str,
                                                                  body: Any) -> None:
    from toolbench.testing_provider import Answer

    run, _ = run_against(bench, protocol, [Answer(body=body)])
    assert (run.stop_reason, run.error.code) == ("provider_error", "model.invalid_response")


@pytest.mark.parametrize(("protocol", "answer"), [
    ("openai", LocalProvider.chat_refusal()),
    ("openai-responses", LocalProvider.responses_refusal()),
    ("anthropic", LocalProvider.anthropic_refusal()),
    ("gemini", LocalProvider.gemini_safety()),
])
def test_a_refusal_ends_the_run_as_a_provider_refusal(bench: Workbench, protocol: str, answer: Any) -> None:
    run, _ = run_against(bench, protocol, [answer])
    assert (run.stop_reason, run.error.code, run.error.round) == ("provider_error", "model.provider_refusal", 1)
    assert run.rounds[0].response == answer  # the refused answer is kept


def test_a_stalled_server_times_out_under_the_clients_timeout(tmp_path: Path) -> None:
    """Each SDK with a short timeout against a server that holds the request: the run ends with
    model.provider_timeout for all four, sync and async, in bounded time."""
    codes = run_with_deadline(f"""
        from toolbench import Workbench
        from toolbench.models import Anthropic, Gemini, OpenAIChat, OpenAIResponses
        from toolbench.testing import LocalProvider

        def adapters(p, aio):
            oa = p.async_openai(timeout=0.3) if aio else p.openai(timeout=0.3)
            an = p.async_anthropic(timeout=0.3) if aio else p.anthropic(timeout=0.3)
            return [OpenAIChat(oa, "gpt-4.1"), OpenAIResponses(oa, "gpt-5-mini"),
                    Anthropic(an, "claude-sonnet-4-5", max_tokens=64),
                    Gemini(p.gemini(timeout_ms=300), "gemini-2.5-flash", aio=aio)]

        out = []
        with Workbench({str(tmp_path / "ws")!r}, seed=1) as bench:
            for aio in (False, True):
                with LocalProvider([LocalProvider.stall()] * 4) as p:
                    for adapter in adapters(p, aio):
                        run = bench.invocation().run(adapter, "hi")
                        out.append([run.stop_reason, run.error.code, run.error.round])
        report(out)
    """, deadline=60)
    assert codes == [["provider_error", "model.provider_timeout", 1]] * 8


def test_gemini_sends_the_recorded_body_with_attachments_as_built() -> None:
    """An image part (`inlineData.mimeType`) goes over the wire in the REST body's own names, as
    recorded; the SDK's converter would send `inline_data.mime_type`."""
    from toolbench.models import Gemini

    contents = [{"role": "user", "parts": [{"text": "what is this?"},
                                           {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}]},
                {"role": "model", "parts": [{"functionCall": {"name": "look", "args": {}}}]},
                {"role": "user", "parts": [{"functionResponse": {"name": "look", "response": {"output": "a dot"},
                                            "parts": [{"inlineData": {"mimeType": "image/png",
                                                                      "data": "iVBORw0KGgo="}}]}}]}]
    with LocalProvider([LocalProvider.gemini_text("A dot.")]) as provider:
        model = Gemini(provider.gemini(), "gemini-2.5-flash")
        body = model.request(system="terse", messages=contents, tools=[], tool_choice=None)
        import asyncio

        answer = asyncio.run(model.send(body))
    assert provider.requests[0].body == body
    assert model.read(answer).text == "A dot."


def test_stopped_runs_on_a_sync_client_do_not_starve_the_bench(tmp_path: Path) -> None:
    """A stopped run cannot stop a sync client's request (it ends at the SDK's timeout); eight of
    them held at once must leave the bench able to run the next request and an approval."""
    result = run_with_deadline(f"""
        import asyncio, threading
        from toolbench import Workbench
        from toolbench.models import OpenAIChat
        from toolbench.testing import LocalProvider

        with Workbench({str(tmp_path / "ws")!r}, seed=1) as bench:
            stalled = LocalProvider([LocalProvider.stall()] * 8).start()
            model = OpenAIChat(stalled.openai(timeout=120), "gpt-4.1")
            for _ in range(8):
                inv = bench.invocation()
                future = inv.submit(inv.arun(model, "hi"))
                n = len(stalled.requests)
                for _ in range(1000):  # until the request reached the server (10 s at most)
                    if len(stalled.requests) > n:
                        break
                    threading.Event().wait(0.01)
                future.cancel()
            sent = len(stalled.requests)
            bench.on_approval(lambda request: True)
            with LocalProvider([LocalProvider.chat_text("still here")]) as quick:
                run = bench.invocation().run(OpenAIChat(quick.openai(), "gpt-4.1"), "hi")
            stalled.close()
        report([sent, run.stop_reason, run.final_text])
    """, deadline=90)
    assert result == [8, "final", "still here"]
