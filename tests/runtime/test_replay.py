"""bench.replay: a recorded conversation's calls run again, each compared with its recording."""

from __future__ import annotations

import json
import os

import pytest
from deadline import run_with_deadline
from hypothesis import given, settings
from hypothesis import strategies as st

from toolbench import Profile, ToolbenchError, ToolError, Workbench
from toolbench.runtime.replay import Replay, normalise
from toolbench.runtime.replay_sources import SOURCE_BYTES
from toolbench.testing import ScriptedModel

# "mistral": the provider installed from tests/fixtures/user_provider (conftest, plugin_support)
PROTOCOLS = ("openai", "openai-responses", "anthropic", "gemini", "mistral")
pytestmark = pytest.mark.user_provider
SHOUT = "extension/demo:shout"
PLAN = [[("shout", {"text": "hi"}), ("dice_roll", {"formula": "3d6"})], [("shout", {"text": "yo"})], "done"]


def profile() -> Profile:
    return Profile.default().edit(allow=["builtin:dice.roll", SHOUT])


def make(make_bench, folder: str = "ws", seed: int | None = 1, *, loud: bool = True) -> Workbench:
    bench = make_bench(folder, profile=Profile.default().edit(allow=["builtin:dice.roll"]), seed=seed)
    shout(bench, (lambda text: text.upper()) if loud else (lambda text: text.lower()))
    bench.profile = profile()
    return bench


def shout(bench: Workbench, fn) -> None:
    bench.register_tool("demo", fn, name="shout")


def record(bench: Workbench, protocol: str = "openai", plan=PLAN):
    run = bench.invocation().run(ScriptedModel(plan, protocol=protocol), "go")
    assert run.stop_reason == "final"
    return run


def statuses(replay: Replay) -> list[tuple[str, str]]:
    return [(d.call_name, d.status) for d in replay.diffs]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_recorded_run_replays_the_same(make_bench, protocol):
    bench = make(make_bench)
    run = record(bench, protocol)
    replay = bench.replay(run)
    assert replay.ok
    assert statuses(replay) == [("shout", "same"), ("dice_roll", "same"), ("shout", "same")]
    assert [d.call_id for d in replay.diffs] == [r.call_id for r in run.results]  # the same call ids
    assert [r.round for r in replay.invocation.records] == [1, 1, 2]  # round by round as recorded
    assert replay.invocation.id != bench.invocation().id


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_the_run_body_pairs_replay_the_same_as_the_run(make_bench, protocol):
    bench = make(make_bench)
    run = record(bench, protocol, [[("shout", {"text": "hi"})], [("shout", {"text": "yo"})], "done"])
    pairs = [{"request": r.request, "response": r.response} for r in run.rounds]
    assert bench.replay(pairs).ok  # protocol read from the body shape
    assert bench.replay(pairs, protocol=protocol).ok


def test_a_changed_tool_is_reported_with_its_diff(make_bench):
    bench = make(make_bench)
    run = record(bench)
    shout(bench, lambda text: text.lower())
    replay = bench.replay(run)
    assert not replay.ok
    assert statuses(replay) == [("shout", "changed"), ("dice_roll", "same"), ("shout", "changed")]
    first = replay.changed[0]
    assert (first.before.content, first.after.content) == ("HI", "hi")
    assert "-HI\n+hi\n" in first.text_diff()
    assert "changed" in repr(replay) and "+hi" in repr(replay)
    frame = replay.to_dataframe()
    assert list(frame["status"]) == ["changed", "same", "changed"]
    assert list(frame["call_id"]) == [d.call_id for d in replay.diffs]


def test_a_tool_that_fails_now_is_now_error(make_bench):
    bench = make(make_bench)
    run = record(bench)

    def broken(text: str) -> str:
        raise ToolError("demo.broken", "the shouter is broken")

    shout(bench, broken)
    replay = bench.replay(run)
    assert statuses(replay)[0] == ("shout", "now_error")
    assert replay.diffs[0].after is not None and replay.diffs[0].after.error_code == "demo.broken"
    assert "demo.broken" in repr(replay)


def test_an_error_that_succeeds_now_is_now_ok(make_bench):
    bench = make(make_bench)

    def broken(text: str) -> str:
        raise ToolError("demo.broken", "the shouter is broken")

    shout(bench, broken)
    run = record(bench)
    assert run.results[0].is_error
    shout(bench, lambda text: text.upper())
    replay = bench.replay(run)
    assert statuses(replay)[0] == ("shout", "now_ok")
    assert replay.diffs[0].before.error_code == "demo.broken"


def test_a_tool_the_profile_denies_now_is_missing(make_bench):
    bench = make(make_bench)
    run = record(bench)
    bench.profile = bench.profile.edit(deny=[SHOUT])
    replay = bench.replay(run)
    assert statuses(replay) == [("shout", "missing"), ("dice_roll", "same"), ("shout", "missing")]
    assert replay.diffs[0].after is None
    assert [r.call_name for r in replay.invocation.records] == ["dice_roll"]  # a missing tool's call does not run
    assert replay.to_dataframe()["status"].iloc[0] == "missing"


def test_a_name_unknown_when_recorded_is_run_and_compared(make_bench):
    bench = make(make_bench)
    run = record(bench, plan=[[("no_such_tool", {})], "done"])
    assert run.results[0].error_code == "model.unknown_tool_call"
    assert statuses(bench.replay(run)) == [("no_such_tool", "same")]


def test_the_seed_makes_the_dice_the_same(make_bench, tmp_path):
    plan = [[("dice_roll", {"formula": "10d1000000"})], "done"]
    bench = make(make_bench, "a", seed=5)
    run = record(bench, plan=plan)
    assert bench.replay(run).ok  # the replay draws the recorded invocation's stream
    pairs = tmp_path / "dice.jsonl"
    pairs.write_text("\n".join(json.dumps({"request": r.request, "response": r.response}) for r in run.rounds))
    # Raw pairs name no invocation: a fresh bench with the same seed rolls its first stream again.
    assert make(make_bench, "b", seed=5).replay(pairs).ok
    other = make(make_bench, "c", seed=6).replay(pairs)
    assert statuses(other) == [("dice_roll", "changed")]
    unseeded = make(make_bench, "d", seed=None).replay(run)
    assert statuses(unseeded) == [("dice_roll", "changed")]


def test_an_invocation_or_its_id_replays_its_runs_or_its_records(make_bench):
    bench = make(make_bench)
    inv = bench.invocation()
    inv.run(ScriptedModel(PLAN), "go")
    assert bench.replay(inv).ok
    assert bench.replay(inv.id).ok
    by_hand = bench.invocation()
    by_hand.turn([("shout", {"text": "a"}), ("shout", '{"text": "b"}')])
    by_hand.call("shout", {"text": "c"})
    replay = bench.replay(by_hand.id)
    assert replay.ok and [d.round for d in replay.diffs] == [1, 1, 2]
    shout(bench, lambda text: text)
    assert [d.status for d in bench.replay(by_hand).diffs] == ["changed"] * 3


def test_a_reopened_invocation_replays_after_a_restart(make_bench):
    bench = make(make_bench, "ws")
    inv = bench.invocation()
    inv.run(ScriptedModel(PLAN, protocol="anthropic"), "go")
    bench.close()
    again = make(make_bench, "ws")
    assert again.replay(inv.id).ok


def test_an_externalised_result_is_the_same_whatever_its_invocation_and_round(make_bench):
    bench = make(make_bench)
    bench.profile = bench.profile.edit(external_result_inline_char_limit=100)
    shout(bench, lambda text: text.upper() * 100)
    inv = bench.invocation()
    inv.call("dice_roll", {"formula": "1d6"})  # the run's round is 2 here, 1 in the replay
    run = inv.run(ScriptedModel([[("shout", {"text": "hi"})], "done"]), "go")
    assert "tool-results/" + inv.id + "/round-002-" in run.results[0].content
    replay = bench.replay(run)
    assert replay.ok, replay
    assert normalise(run.results[0].content) == normalise(replay.invocation.records[0].result.content)


# raw bodies as users capture them ---------------------------------------------------------

def chat_pairs(result_text: str = "HI") -> list[dict]:
    call = {"id": "call_a", "type": "function", "function": {"name": "shout", "arguments": '{"text":"hi"}'}}
    return [
        {"request": {"model": "gpt-x", "messages": [{"role": "user", "content": "go"}]},
         "response": {"id": "c1", "object": "chat.completion", "choices": [
             {"index": 0, "finish_reason": "tool_calls",
              "message": {"role": "assistant", "content": None, "tool_calls": [call]}}]}},
        {"request": {"model": "gpt-x", "messages": [
            {"role": "user", "content": "go"}, {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "call_a", "content": result_text}]},
         "response": {"id": "c2", "object": "chat.completion", "choices": [
             {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "done"}}]}},
    ]


def responses_pairs() -> list[dict]:
    call = {"type": "function_call", "id": "fc_1", "call_id": "call_r", "name": "shout",
            "arguments": '{"text":"hi"}', "status": "completed"}
    return [
        {"request": {"model": "gpt-x", "input": "go"},
         "response": {"id": "r1", "object": "response", "status": "completed",
                      "output": [{"type": "reasoning", "id": "rs_1", "summary": []}, call]}},
        {"request": {"model": "gpt-x", "input": [
            {"role": "user", "content": "go"}, {"type": "reasoning", "id": "rs_1", "summary": []}, call,
            {"type": "function_call_output", "call_id": "call_r",
             "output": [{"type": "input_text", "text": "HI"}]}]}},
    ]


def anthropic_pairs() -> list[dict]:
    use = {"type": "tool_use", "id": "toolu_a", "name": "shout", "input": {"text": "hi"}}
    bad = {"type": "tool_use", "id": "toolu_b", "name": "shout", "input": {}}
    return [
        {"request": {"model": "claude-x", "max_tokens": 100, "messages": [{"role": "user", "content": "go"}]},
         "response": {"id": "m1", "type": "message", "role": "assistant", "stop_reason": "tool_use",
                      "content": [{"type": "thinking", "thinking": "...", "signature": "s"}, use, bad]}},
        {"request": {"model": "claude-x", "max_tokens": 100, "messages": [
            {"role": "user", "content": "go"}, {"role": "assistant", "content": [use, bad]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_a", "content": [{"type": "text", "text": "HI"}]},
                {"type": "tool_result", "tool_use_id": "toolu_b", "is_error": True,
                 "content": "missing text"}]}]},
         "response": {"id": "m2", "type": "message", "role": "assistant", "stop_reason": "end_turn",
                      "content": [{"type": "text", "text": "done"}]}},
    ]


def gemini_pairs() -> list[dict]:
    calls = [{"functionCall": {"name": "shout", "args": {"text": "hi"}}},
             {"functionCall": {"name": "shout", "args": {"text": "yo"}}}]
    return [
        {"request": {"contents": [{"role": "user", "parts": [{"text": "go"}]}]},
         "response": {"candidates": [{"content": {"role": "model", "parts": calls}, "finishReason": "STOP"}],
                      "responseId": "g1"}},
        {"request": {"contents": [
            {"role": "user", "parts": [{"text": "go"}]}, {"role": "model", "parts": calls},
            {"role": "user", "parts": [{"functionResponse": {"name": "shout", "response": {"output": "HI"}}},
                                       {"functionResponse": {"name": "shout", "response": {"output": "YO"}}}]}]},
         "response": {"candidates": [{"content": {"role": "model", "parts": [{"text": "done"}]},
                                      "finishReason": "STOP"}]}},
    ]


def test_hand_written_chat_pairs_replay(make_bench):
    bench = make(make_bench)
    assert statuses(bench.replay(chat_pairs())) == [("shout", "same")]
    assert statuses(bench.replay(chat_pairs("hi"))) == [("shout", "changed")]


def test_hand_written_responses_pairs_replay_with_a_last_request_only(make_bench):
    replay = make(make_bench).replay(responses_pairs())
    assert statuses(replay) == [("shout", "same")] and replay.diffs[0].call_id == "call_r"


def test_hand_written_anthropic_pairs_read_text_blocks_and_the_error_flag(make_bench):
    bench = make(make_bench)
    replay = bench.replay(anthropic_pairs())
    assert statuses(replay) == [("shout", "same"), ("shout", "changed")]  # both errors: the texts differ
    second = replay.diffs[1]
    assert second.before.is_error and second.after is not None and second.after.is_error
    assert second.after.error_code == "tool.invalid_arguments"


def test_hand_written_gemini_pairs_without_ids_pair_by_name_in_order(make_bench):
    replay = make(make_bench).replay(gemini_pairs())
    assert statuses(replay) == [("shout", "same"), ("shout", "same")]
    assert [d.before.content for d in replay.diffs] == ["HI", "YO"]


def test_json_and_jsonl_files_replay(make_bench, tmp_path):
    bench = make(make_bench)
    lines = tmp_path / "cassette.jsonl"
    lines.write_text("\n".join(json.dumps(p) for p in anthropic_pairs()) + "\n")
    assert statuses(bench.replay(lines))[0] == ("shout", "same")
    assert statuses(bench.replay(str(lines)))[0] == ("shout", "same")
    whole = tmp_path / "cassette.json"
    whole.write_text(json.dumps({"protocol": "gemini", "pairs": gemini_pairs()}))
    assert bench.replay(whole).ok
    listed = tmp_path / "list.json"
    listed.write_text(json.dumps(chat_pairs()))
    assert bench.replay(listed).ok


@pytest.mark.parametrize(("source", "code"), [
    (42, "replay.source_invalid"),
    ([], "replay.source_invalid"),
    ([{"response": {}}], "replay.source_invalid"),
    (["not a pair"], "replay.source_invalid"),
    ([{"request": {}, "response": {"choices": "nope"}}], "replay.source_invalid"),
    ([{"request": {"messages": []}, "response": {"what": 1}}], "replay.protocol_undetected"),
    (chat_pairs()[:1], "replay.result_missing"),
    ([chat_pairs()[0], {"request": {"messages": [{"role": "user", "content": "go"}]}}], "replay.result_missing"),
    ([chat_pairs()[0], {"request": {"messages": "not a list"}}], "replay.source_invalid"),
    ("no/such/file.jsonl", "replay.source_invalid"),
])
def test_a_malformed_source_is_a_coded_error(make_bench, source, code):
    with pytest.raises(ToolbenchError) as caught:
        make(make_bench).replay(source)
    assert caught.value.code == code


def test_an_unparsable_file_and_a_bad_scene_are_coded_errors(make_bench, tmp_path):
    bench = make(make_bench)
    broken = tmp_path / "broken.jsonl"
    broken.write_text("{not json\n")
    with pytest.raises(ToolbenchError) as caught:
        bench.replay(broken)
    assert caught.value.code == "replay.source_invalid"
    with pytest.raises(ToolbenchError) as caught:
        bench.replay(chat_pairs(), scene="nope")  # type: ignore[arg-type]
    assert caught.value.code == "bench.misuse"
    with pytest.raises(ToolbenchError) as caught:
        bench.replay(chat_pairs(), protocol="nope")
    assert caught.value.code == "protocol.unknown"


def test_the_round_limit_of_the_bench_now_does_not_refuse_recorded_rounds(make_bench):
    bench = make(make_bench)
    run = record(bench)  # two rounds of calls
    bench.profile = bench.profile.edit(run={"maxRounds": 1})
    assert bench.replay(run).ok


def test_a_call_the_recording_refused_for_its_round_limit_is_kept_as_it_was(make_bench):
    bench = make(make_bench)
    bench.profile = bench.profile.edit(run={"maxRounds": 1})
    run = bench.invocation().run(ScriptedModel(PLAN), "go", max_rounds=2)
    assert run.results[-1].error_code == "agent.max_tool_rounds_exceeded"
    bench.profile = bench.profile.edit(run={"maxRounds": 5})
    replay = bench.replay(run)
    assert replay.ok and statuses(replay)[-1] == ("shout", "same")



DEEP = 100_000
BAD_FILES = {
    "deep.jsonl": b"[" * DEEP + b"]" * DEEP + b"\n",
    "deep.json": b'{"pairs": ' + b"[" * DEEP + b"]" * DEEP + b"}",
    "bom.jsonl": b"\xff\xfe" + json.dumps(chat_pairs()[0]).encode("utf-16-le"),
    "latin1.json": b'[{"request": {"x": "\xe9"}}]',
    # a body 900 deep parses (under Python's recursion limit), then meets the recursive readers
    "deep-body.json": b'[{"request": {}, "response": {"choices": ' + b"[" * 900 + b"]" * 900 + b"}}]",
}


@pytest.mark.parametrize("name", BAD_FILES)
def test_a_file_that_is_not_json_pairs_is_source_invalid(make_bench, tmp_path, name):
    path = tmp_path / name
    path.write_bytes(BAD_FILES[name])
    with pytest.raises(ToolbenchError) as caught:
        make(make_bench).replay(path)
    assert caught.value.code == "replay.source_invalid"


def test_a_fifo_a_folder_a_device_and_a_huge_file_are_source_invalid_without_blocking(tmp_path):
    os.mkfifo(tmp_path / "fifo.jsonl")
    (tmp_path / "folder.jsonl").mkdir()
    with open(tmp_path / "huge.jsonl", "wb") as huge:  # sparse: no disk spent
        huge.truncate(SOURCE_BYTES + 1)
    paths = [str(tmp_path / n) for n in ("fifo.jsonl", "folder.jsonl", "huge.jsonl")] + ["/dev/zero"]
    seen = run_with_deadline("""
import sys
from toolbench import ToolbenchError, Workbench
codes = []
with Workbench(sys.argv[1]) as bench:
    for path in sys.argv[2:]:
        try:
            bench.replay(path)
            codes.append("replayed")
        except ToolbenchError as exc:
            codes.append(exc.code)
report(codes)
""", args=(str(tmp_path / "ws"), *paths), deadline=60, memory_mb=1024)
    assert seen == ["replay.source_invalid"] * 4


REPLAY_CODES = {"replay.source_invalid", "replay.protocol_undetected", "replay.result_missing"}
PAIR_KEYS = ["request", "response", "pairs", "protocol", "choices", "messages", "content", "role", "candidates"]
PAIR_LIKE = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=6),
                         lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(PAIR_KEYS), inner,
                                                                                     max_size=3), max_leaves=10)


def test_any_bytes_as_a_replay_file_give_a_replay_or_a_coded_error(make_bench, tmp_path):
    bench = make(make_bench)

    @settings(max_examples=200, deadline=None)
    @given(st.binary(max_size=300) | PAIR_LIKE.map(lambda v: json.dumps(v).encode()),
           st.sampled_from([".json", ".jsonl"]))
    def check(content: bytes, suffix: str) -> None:
        path = tmp_path / f"source{suffix}"
        path.write_bytes(content)
        try:
            bench.replay(path)
        except ToolbenchError as exc:
            assert exc.code in REPLAY_CODES, exc

    check()


@pytest.mark.parametrize("body", [
    {"request": {"messages": True}},  # found by the property above
    {"request": {"messages": [{"role": "user", "content": 5}]}, "response": {"choices": 7}},
    {"request": {"contents": "x"}, "response": {"candidates": [{"content": 3}]}},
    {"request": {"input": 1}, "response": {"output": [5]}},
])
def test_a_body_of_a_shape_no_provider_sends_gives_a_replay_or_a_coded_error(make_bench, body):
    bench = make_bench()
    try:
        outcome: object = bench.replay([body])
    except ToolbenchError as exc:  # anything else (a TypeError from deep inside) fails the test
        outcome = exc.code
    assert outcome in ("replay.source_invalid", "replay.protocol_undetected") or hasattr(outcome, "diffs"), outcome


# many recordings, in flight -----------------------------------------------------------------
class InFlight:
    """An async tool whose calls wait until `target` are running at once: the peak is certain."""

    def __init__(self, target: int) -> None:
        self.target, self.now, self.peak = target, 0, 0
        self.full: object = None

    async def __call__(self, text: str) -> str:
        import asyncio

        self.full = self.full or asyncio.Event()
        self.now += 1
        self.peak = max(self.peak, self.now)
        if self.now >= self.target:
            self.full.set()  # type: ignore[attr-defined]
        try:
            await asyncio.wait_for(self.full.wait(), 30)  # type: ignore[attr-defined]
            return text.upper()
        finally:
            self.now -= 1


@pytest.mark.parametrize("concurrency", [1, 3, 8])
def test_replay_many_runs_recordings_in_flight_in_their_order(make_bench, concurrency):
    bench = make(make_bench)
    builtin = ("openai", "openai-responses", "anthropic", "gemini", "openai")
    runs = [record(bench, protocol) for protocol in builtin * 2]  # ten recordings, every built-in shape
    bench.unregister_tool(SHOUT)
    tool = InFlight(min(concurrency, len(runs)))
    shout(bench, tool)
    replays = bench.replay_many(iter(runs), concurrency=concurrency)  # any iterable, read as it goes
    assert tool.peak == min(concurrency, len(runs)) and tool.now == 0
    assert [statuses(r) for r in replays] == [[("shout", "same"), ("dice_roll", "same"), ("shout", "same")]] * 10
    assert [[d.call_id for d in r.diffs] for r in replays] == [[x.call_id for x in run.results] for run in runs]
    assert len({r.invocation_id for r in replays}) == 10 and all(r.invocation is None for r in replays)
    again = bench.open_invocation(replays[0].invocation_id)  # each named, its records kept on disk
    assert [r.call_name for r in again.records] == ["shout", "dice_roll", "shout"]
    assert all(inv.id != replays[0].invocation_id for inv in bench._kernel.invocations[:-1])  # none held


def test_replay_many_refuses_a_bad_concurrency_and_stops_at_a_bad_source(make_bench):
    bench = make(make_bench)
    run = record(bench)
    with pytest.raises(ToolbenchError) as misuse:
        bench.replay_many([run], concurrency=0)
    assert misuse.value.code == "bench.misuse"
    with pytest.raises(ToolbenchError) as bad:
        bench.replay_many([run, "no such invocation", run], concurrency=2)
    assert bad.value.code == "replay.source_invalid"  # the first bad source stops the batch, with its code


def test_replay_many_shows_a_bar_of_runs_done_and_the_rate_of_same(make_bench, capsys):
    bench = make(make_bench)
    runs = [record(bench) for _ in range(3)]
    bench.unregister_tool(SHOUT)
    shout(bench, lambda text: text.lower())  # now every shout is `changed`
    replays = bench.replay_many([runs[0], runs[1]], progress=True)
    err = capsys.readouterr().err
    assert "replays" in err and "2/2" in err and "same=0%" in err and "changed=2" in err
    assert [r.ok for r in replays] == [False, False]
    bench.replay_many(iter(runs), progress=False)
    assert capsys.readouterr().err == ""  # no bar asked, none drawn
