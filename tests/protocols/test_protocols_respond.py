"""`inv.respond` and `inv.transcript` with real provider state, and a reopen in between: the
run log keeps each round's assistant turn, so the follow-up request is the one the API takes."""

from __future__ import annotations

import json

import pytest
from protocol_sdk import validate_history
from protocol_tools import load_fixture

from toolbench import Profile, Workbench
from toolbench.runtime.records import LOG_NAME

ROUNDS = [
    ("anthropic", "anthropic_thinking_response.json"),
    ("openai-responses", "openai_responses_reasoning_response.json"),
    ("openai", "openai_chat_empty_ids_response.json"),
    ("gemini", "gemini_thinking_response.json"),
]
PROFILE = Profile.default().edit(allow=["builtin:workspace.read_file", "builtin:dice.roll"])


def bench_at(tmp_path) -> Workbench:
    return Workbench(tmp_path / "ws", profile=PROFILE, seed=7)


def test_anthropic_transcript_after_thinking_has_the_shape_the_api_requires(tmp_path):
    body = load_fixture("anthropic_thinking_response.json")
    thinking, redacted, text, read, dice = body["content"]
    with bench_at(tmp_path) as bench:
        inv = bench.invocation(id="inv_think")
        results = inv.respond("anthropic", body)
        messages = inv.transcript("anthropic")
    assert messages == [
        {"role": "assistant", "content": [
            thinking, redacted, {"type": "text", "text": text["text"]},
            {"type": "tool_use", "id": read["id"], "name": "workspace_read_file", "input": read["input"]},
            {"type": "tool_use", "id": dice["id"], "name": "dice_roll", "input": dice["input"]},
        ]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": r.call_id, "content": m, "is_error": r.is_error}
            for r, m in zip(results, [f"## Tool error\n\n{results[0].content}", results[1].content], strict=True)
        ]},
    ]
    assert results[0].is_error and results[1].error_code is None  # no such note in this workspace
    validate_history("anthropic", messages)


def test_every_protocols_state_survives_a_reopen(tmp_path):
    with bench_at(tmp_path) as bench:
        inv = bench.invocation(id="inv_state")
        for protocol, name in ROUNDS:
            inv.respond(protocol, load_fixture(name))
        before = {protocol: inv.transcript(protocol) for protocol, _ in ROUNDS}
        records = inv.records
        bench.flush()
    log = [json.loads(line) for line in (tmp_path / "ws" / ".toolbench" / "invocations" / "inv_state" / LOG_NAME)
           .read_text(encoding="utf-8").splitlines()]
    assert [(e["turn"], e["protocol"]) for e in log if "turn" in e] == [
        (1, "anthropic"), (2, "openai-responses"), (3, "openai"), (4, "gemini")]

    with bench_at(tmp_path) as again:
        reopened = again.open_invocation("inv_state")
        assert reopened.records == records
        for protocol, _ in ROUNDS:
            assert reopened.transcript(protocol) == before[protocol]
            validate_history(protocol, _without_gemini_extension(protocol, before[protocol]))
        # Each protocol's round carries its own state; the others replay as plain calls.
        anthropic = before["anthropic"]
        assert [b["type"] for b in anthropic[0]["content"]][:3] == ["thinking", "redacted_thinking", "text"]
        assert all(b["type"] == "tool_use" for m in anthropic[2::2] for b in m["content"])
        assert [i["type"] for i in before["openai-responses"][:4]] == [  # round 1 (anthropic's): plain calls
            "function_call", "function_call", "function_call_output", "function_call_output"]
        assert [i["type"] for i in before["openai-responses"]].count("reasoning") == 1
        gemini_model_turns = before["gemini"][0::2]
        assert [p.get("thought") for p in gemini_model_turns[3]["parts"]] == [True, None, None]
        # Counting goes on: a new round gets new synthesised ids.
        reopened.respond("openai", load_fixture("openai_chat_empty_ids_response.json"))
        ids = [r.call_id for r in reopened.records if r.call_id.startswith("tb-openai-")]
        assert len(ids) == len(set(ids)) == 4


def test_a_log_from_before_turns_were_kept_still_replays_the_gemini_signature(tmp_path):
    body = load_fixture("gemini_thinking_response.json")
    signature = body["candidates"][0]["content"]["parts"][1]["thoughtSignature"]
    with bench_at(tmp_path) as bench:
        bench.invocation(id="inv_old").respond("gemini", body)
        bench.flush()
    path = tmp_path / "ws" / ".toolbench" / "invocations" / "inv_old" / LOG_NAME
    old = []
    for line in path.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        if "turn" in entry:
            continue  # older versions wrote no turn lines ...
        if entry["record"]["callName"] == "workspace_read_file":
            entry["record"]["signature"] = signature  # ... but kept the signature on the call
        old.append(json.dumps(entry))
    path.write_text("\n".join(old) + "\n", encoding="utf-8")
    with bench_at(tmp_path) as again:
        [model, _] = again.open_invocation("inv_old").transcript("gemini")
    assert [p.get("thoughtSignature") for p in model["parts"]] == [signature, None]


@pytest.mark.parametrize("finish", [2, 3])
def test_a_refused_or_cut_response_runs_nothing_and_uses_no_round(tmp_path, finish):
    body = load_fixture("gemini_vertex_int_enums_response.json")
    body["candidates"][0]["finishReason"] = finish
    with bench_at(tmp_path) as bench:
        inv = bench.invocation(id="inv_cut")
        with pytest.raises(Exception) as info:
            inv.respond("gemini", body)
        assert info.value.code in ("model.output_truncated", "model.provider_refusal")  # type: ignore[attr-defined]
        assert inv.records == []
        inv.call("dice_roll", {"formula": "d4"})
        assert inv.records[0].round == 1


def _without_gemini_extension(protocol: str, messages: list[dict]) -> list[dict]:
    """Chat messages less the Gemini endpoint's `extra_content`, which the OpenAI SDK does not model."""
    if protocol != "openai":
        return messages
    out = json.loads(json.dumps(messages))
    for message in out:
        for call in message.get("tool_calls") or []:
            call.pop("extra_content", None)
    return out
