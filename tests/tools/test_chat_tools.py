"""`chat.search` and `chat.read_messages` over a loaded chat (reference §8; seed: 0-based
message indexes, 1-based lines), and `bench.load_chat` for both JSONL forms and bad files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolbench import Profile, ToolbenchError, Workbench
from toolbench.tools.chat_history import parse_chat

CHAT_TOOLS = ["builtin:chat.search", "builtin:chat.read_messages"]


def st_chat(*messages: tuple[str, bool, str], header: bool = True) -> str:
    rows = [{"user_name": "Ada", "character_name": "Narrator", "create_date": "2025-01-05", "chat_metadata": {}}]
    rows = rows if header else []
    rows += [{"name": n, "is_user": u, "is_system": False, "mes": m, "extra": {}} for n, u, m in messages]
    return "".join(json.dumps(r) + "\n" for r in rows)


SAMPLE = st_chat(
    ("Narrator", False, "The inn is warm.\nTobin waves."),       # 0
    ("Ada", True, "Where is the dragon?"),                       # 1
    ("Narrator", False, "North.\nUnder the hill.\nThe DRAGON sleeps there."),  # 2
    ("Ada", True, "Then we go north at dawn."),                  # 3
    ("Narrator", False, "Dawn comes grey.\nThe dragon stirs."),   # 4
)


@pytest.fixture
def write(tmp_path: Path):
    def write(text: str | bytes, name: str = "chat.jsonl") -> Path:
        path = tmp_path / name
        path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
        return path
    return write


@pytest.fixture
def chat_bench(make_bench, write):
    def make(text: str = SAMPLE, **chat_settings) -> Workbench:
        profile = Profile.default().edit(allow=CHAT_TOOLS)
        if chat_settings:
            profile = profile.edit(chat=chat_settings)
        bench = make_bench(profile=profile)
        bench.load_chat(write(text))
        return bench
    return make


@pytest.fixture
def inv(chat_bench):
    return chat_bench().invocation()


def ok(result):
    assert not result.is_error, (result.error_code, result.content)
    return result


def err(result, code: str):
    assert result.is_error and result.error_code == code, (result.error_code, result.content)
    return result


# --- loading ------------------------------------------------------------------------------

def test_sillytavern_chat_loads_without_counting_the_header(make_bench, write):
    bench = make_bench()
    text = st_chat(("Narrator", False, "Hello"), ("Ada", True, "Hi\r\nthere"))
    text += json.dumps({"name": "System", "is_user": False, "is_system": True, "mes": "[roll: 17]"}) + "\n"
    chat = bench.load_chat(write(text))
    assert bench.chat is chat
    assert (chat.format, chat.user_name, chat.character_name) == ("sillytavern", "Ada", "Narrator")
    assert [(m.index, m.role, m.name) for m in chat.messages] == [
        (0, "assistant", "Narrator"), (1, "user", "Ada"), (2, "system", "System")]
    assert chat.messages[1].text == "Hi\nthere" and chat.messages[1].lines == ["Hi", "there"]


def test_sillytavern_chat_without_a_header_starts_at_index_0():
    chat = parse_chat(st_chat(("Ada", True, "first"), header=False))
    assert chat.format == "sillytavern" and chat.messages[0].text == "first" and chat.messages[0].index == 0


def test_plain_role_name_content_jsonl_loads(make_bench, write):
    rows = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "name": "Ada", "content": [{"type": "text", "text": "part one"},
                                                    {"type": "image_url", "image_url": {"url": "x"}},
                                                    {"type": "text", "text": "part two"}]},
        {"role": "assistant", "content": None},
        {"role": "tool", "name": "dice_roll", "content": "1d20 = 17"},
    ]
    chat = make_bench().load_chat(write("\n".join(json.dumps(r) for r in rows) + "\n\n"))
    assert chat.format == "plain"
    assert [(m.role, m.name, m.text) for m in chat.messages] == [
        ("system", "", "Be brief."), ("user", "Ada", "part one\npart two"), ("assistant", "", ""),
        ("tool", "dice_roll", "1d20 = 17")]


@pytest.mark.parametrize(("text", "line"), [
    ('{"name": "A", "is_user": true, "mes": "ok"}\n{not json\n', 2),
    ('[{"role": "user", "content": "a JSON array file"}]\n', 1),
    ('{"user_name": "Ada", "character_name": "N"}\n{"name": "N", "is_user": false}\n', 2),
    ('{"name": "N", "is_user": false, "mes": 12}\n', 1),
    ('{"role": "narrator", "content": "x"}\n', 1),
    ('{"role": "user"}\n', 1),
    ('{"role": "user", "content": {"text": "x"}}\n', 1),
])
def test_bad_chat_lines_are_refused_naming_the_line(make_bench, write, text, line):
    with pytest.raises(ToolbenchError) as info:
        make_bench().load_chat(write(text))
    assert info.value.code == "chat.file_invalid"
    assert f"line {line} " in info.value.message


def test_missing_or_binary_chat_files_are_unreadable(make_bench, write, tmp_path):
    bench = make_bench()
    for path in (tmp_path / "missing.jsonl", write(b"\xff\xfe\x00bad", "bin.jsonl")):
        with pytest.raises(ToolbenchError) as info:
            bench.load_chat(path)
        assert info.value.code == "chat.file_unreadable"
    assert bench.chat is None


def test_without_a_loaded_chat_the_tools_say_so(make_bench):
    inv = make_bench(profile=Profile.default().edit(allow=CHAT_TOOLS)).invocation()
    err(inv.call("chat_search", {"query": "x"}), "chat.not_loaded")
    err(inv.call("chat_read_messages", {"messages": [{"index": 0}]}), "chat.not_loaded")


def test_an_invocation_keeps_the_chat_it_was_created_with(chat_bench, write):
    bench = chat_bench()
    first = bench.invocation()
    bench.load_chat(write(st_chat(("Ada", True, "only one message")), "other.jsonl"))
    second = bench.invocation()
    assert ok(first.call("chat_read_messages", {"messages": [{"index": 4}]})).structured["messageCount"] == 5
    err(second.call("chat_read_messages", {"messages": [{"index": 4}]}), "chat.message_out_of_range")


def test_chat_tools_are_chat_scene_only(chat_bench):
    snapshot = chat_bench().invocation("session").snapshot
    assert not snapshot.bindings
    assert {d.tool_id: d.code for d in snapshot.diagnostics} == {t: "tool.scene_excluded" for t in CHAT_TOOLS}


def test_schemas_are_closed(chat_bench):
    for descriptor in chat_bench().catalog("chat"):
        if str(descriptor.id) in CHAT_TOOLS:
            assert descriptor.input_schema["additionalProperties"] is False
            assert descriptor.scenes == frozenset({"chat"}) and descriptor.read_only


# --- chat.search --------------------------------------------------------------------------

def test_search_finds_messages_newest_first_with_0_based_indexes_and_1_based_lines(inv):
    result = ok(inv.call("chat_search", {"query": "dragon"}))
    matches = result.structured["matches"]
    assert [m["index"] for m in matches] == [4, 2, 1]
    assert matches[1]["lines"] == [{"line": 3, "text": "The DRAGON sleeps there."}]  # case-insensitive
    assert "#4 assistant (Narrator)" in result.content and "L2: The dragon stirs." in result.content
    assert result.structured["nextEndMessage"] is None and not result.structured["capped"]


def test_search_filters_by_role(inv):
    result = ok(inv.call("chat_search", {"query": "dragon", "role": "user"}))
    assert [(m["index"], m["role"]) for m in result.structured["matches"]] == [(1, "user")]


def test_search_keeps_to_the_inclusive_message_range(inv):
    result = ok(inv.call("chat_search", {"query": "dragon", "start_message": 1, "end_message": 2}))
    assert [m["index"] for m in result.structured["matches"]] == [2, 1]
    assert result.structured["scanned"] == 2


def test_search_limit_says_where_to_continue(inv):
    result = ok(inv.call("chat_search", {"query": "dragon", "limit": 1}))
    assert [m["index"] for m in result.structured["matches"]] == [4]
    assert result.structured["nextEndMessage"] == 3 and result.structured["stoppedBy"] == "limit"
    assert "end_message=3" in result.content
    more = ok(inv.call("chat_search", {"query": "dragon", "limit": 1, "end_message": 3}))
    assert [m["index"] for m in more.structured["matches"]] == [2]


def test_search_scan_limit_stops_the_scan(inv):
    result = ok(inv.call("chat_search", {"query": "dragon", "scan_limit": 2}))
    assert result.structured["scanned"] == 2 and result.structured["stoppedBy"] == "scan_limit"
    assert [m["index"] for m in result.structured["matches"]] == [4]
    assert result.structured["nextEndMessage"] == 2


def test_search_without_matches_says_so(inv):
    result = ok(inv.call("chat_search", {"query": "griffin"}))
    assert result.structured["matches"] == [] and result.content.startswith("No message in messages 0-4")


def test_search_end_message_past_the_end_is_clamped(inv):
    assert ok(inv.call("chat_search", {"query": "x", "end_message": 99})).structured["endMessage"] == 4


@pytest.mark.parametrize(("args", "code", "hint"), [
    ({"query": "x", "start_message": 5}, "chat.message_out_of_range", "0 to 4"),
    ({"query": "x", "start_message": 3, "end_message": 1}, "tool.invalid_arguments", "after"),
    ({"query": "   "}, "tool.invalid_arguments", "blank"),
    ({"query": ""}, "tool.invalid_arguments", "query"),
    ({"query": "x", "limit": 51}, "tool.invalid_arguments", "limit"),
    ({"query": "x", "role": "narrator"}, "tool.invalid_arguments", "role"),
    ({"query": "x", "start_message": -1}, "tool.invalid_arguments", "start_message"),
    ({"query": "x", "regex": True}, "tool.invalid_arguments", "regex"),
    ({}, "tool.invalid_arguments", "query"),
])
def test_search_refuses_bad_arguments_with_codes(inv, args, code, hint):
    assert hint in err(inv.call("chat_search", args), code).content


def test_search_stops_at_the_character_cap_with_a_note(chat_bench):
    long_line = "dragon " + "x" * 150
    text = st_chat(*[("Narrator", False, "\n".join([long_line] * 3)) for _ in range(10)])
    inv = chat_bench(text, max_chars_per_call=1000).invocation()
    result = ok(inv.call("chat_search", {"query": "dragon"}))
    out = result.structured
    assert out["capped"] and out["stoppedBy"] == "cap" and out["charLimit"] == 1000
    assert 1 <= len(out["matches"]) < 10
    assert f"end_message={out['nextEndMessage']}" in result.content and "cap of 1000 characters" in result.content


def test_search_on_an_empty_chat(chat_bench):
    inv = chat_bench(st_chat()).invocation()
    assert ok(inv.call("chat_search", {"query": "x"})).content == "The chat has no messages."


# --- chat.read_messages -------------------------------------------------------------------

def test_read_messages_by_0_based_index_as_numbered_lines(inv):
    result = ok(inv.call("chat_read_messages", {"messages": [{"index": 0}, {"index": 2}]}))
    assert result.content.splitlines()[:3] == ["#0 assistant (Narrator) · lines 1-2 of 2",
                                               "     1\tThe inn is warm.", "     2\tTobin waves."]
    assert [(m["index"], m["startLine"], m["endLine"], m["totalLines"]) for m in result.structured["messages"]] == [
        (0, 1, 2, 2), (2, 1, 3, 3)]


def test_read_messages_line_ranges_are_1_based(inv):
    result = ok(inv.call("chat_read_messages", {"messages": [{"index": 2, "start_line": 2, "line_count": 1}]}))
    assert result.content.splitlines() == ["#2 assistant (Narrator) · lines 2-2 of 3", "     2\tUnder the hill.",
                                           "[message #2 continues: line 3 not shown.]"]
    tail = ok(inv.call("chat_read_messages", {"messages": [{"index": 2, "start_line": 3}]}))
    assert tail.structured["messages"][0]["startLine"] == 3 and "The DRAGON" in tail.content


def test_line_count_requires_start_line(inv):
    result = err(inv.call("chat_read_messages", {"messages": [{"index": 2, "line_count": 1}]}),
                 "tool.invalid_arguments")
    assert "start_line" in result.content


@pytest.mark.parametrize(("item", "code", "hint"), [
    ({"index": 5}, "chat.message_out_of_range", "0 to 4"),
    ({"index": 2, "start_line": 4}, "chat.line_out_of_range", "1 to 3"),
    ({"index": -1}, "tool.invalid_arguments", "index"),
    ({"index": 1, "start_line": 0}, "tool.invalid_arguments", "start_line"),
    ({"index": 1, "max_chars": 10}, "tool.invalid_arguments", "max_chars"),
    ({"start_line": 1}, "tool.invalid_arguments", "index"),
])
def test_read_messages_refuses_bad_items_with_codes(inv, item, code, hint):
    result = err(inv.call("chat_read_messages", {"messages": [{"index": 0}, item]}), code)
    assert hint in result.content


def test_read_messages_takes_1_to_20_messages(inv):
    err(inv.call("chat_read_messages", {"messages": []}), "tool.invalid_arguments")
    err(inv.call("chat_read_messages", {"messages": [{"index": 0}] * 21}), "tool.invalid_arguments")
    assert len(ok(inv.call("chat_read_messages", {"messages": [{"index": 0}] * 20})).structured["messages"]) == 20


def test_read_messages_stops_at_the_character_cap_and_says_where_to_continue(chat_bench):
    line = "y" * 99
    text = st_chat(("Narrator", False, "\n".join([line] * 30)), ("Ada", True, "short"), ("Ada", True, "also"))
    inv = chat_bench(text, max_chars_per_call=1000).invocation()
    result = ok(inv.call("chat_read_messages", {"messages": [{"index": 0}, {"index": 1}, {"index": 2}]}))
    assert result.structured["capped"] and result.structured["charLimit"] == 1000
    first = result.structured["messages"]
    assert len(first) == 1 and first[0]["endLine"] == 10
    assert 'continue with {"index": 0, "start_line": 11}' in result.content
    assert "not read: message #1, message #2" in result.content
    rest = ok(inv.call("chat_read_messages", {"messages": [{"index": 0, "start_line": 11, "line_count": 5},
                                                           {"index": 1}]}))
    assert not rest.structured["capped"]
    assert [(m["startLine"], m["endLine"]) for m in rest.structured["messages"]] == [(11, 15), (1, 1)]


def test_a_message_that_does_not_fit_after_others_is_left_for_the_next_call(chat_bench):
    text = st_chat(("Ada", True, "short"), ("Narrator", False, "z" * 900))
    inv = chat_bench(text, max_chars_per_call=600).invocation()
    result = ok(inv.call("chat_read_messages", {"messages": [{"index": 0}, {"index": 1}]}))
    assert [m["index"] for m in result.structured["messages"]] == [0]
    assert "not read: message #1" in result.content and result.structured["capped"]


def test_a_single_line_longer_than_the_cap_is_cut_with_a_note(chat_bench):
    inv = chat_bench(st_chat(("Narrator", False, "w" * 5000)), max_chars_per_call=600).invocation()
    result = ok(inv.call("chat_read_messages", {"messages": [{"index": 0}]}))
    assert result.structured["messages"][0]["cut"] and result.structured["capped"]
    assert "only its first 600 characters" in result.content


def test_an_empty_message_reads_as_empty(chat_bench):
    inv = chat_bench(st_chat(("Narrator", False, ""))).invocation()
    assert ok(inv.call("chat_read_messages", {"messages": [{"index": 0}]})).content == "#0 assistant (Narrator) · empty"
    err(inv.call("chat_read_messages", {"messages": [{"index": 0, "start_line": 2}]}), "chat.line_out_of_range")


# --- the demo -----------------------------------------------------------------------------

def test_the_demo_bench_has_the_sample_chat_loaded():
    with Workbench.demo() as bench:
        assert bench.chat is not None and len(bench.chat) == 12 and bench.chat.format == "sillytavern"
        inv = bench.invocation(id="inv_demo_chat")
        assert ok(inv.call("chat_search", {"query": "dragon"})).structured["matches"][0]["index"] == 11


def test_the_demo_workspace_ships_the_sample_files_out_of_the_tools_sight():
    with Workbench(profile=Profile.default().edit(allow=["builtin:workspace.read_file"])) as bench:
        chat = bench.load_chat(bench.workspace / "data" / "chat.jsonl")
        assert len(chat) == 12 and chat.messages[5].role == "system"
        result = bench.invocation().call("workspace_read_file", {"path": "data/chat.jsonl"})
        assert result.error_code == "workspace.path_not_visible"
