"""`worldinfo.read_activated` over SillyTavern world info (reference §8): loading and bad files,
activation (constant, disabled, keywords in the recent chat only, secondary-key logic), the
index without arguments, and reading refs with 1-based line ranges."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolbench import Profile, ToolbenchError, Workbench
from toolbench.core.chat_settings import WorldInfoSettings
from toolbench.tools.chat_history import ChatMessage
from toolbench.tools.worldinfo_book import activate, matches, parse_worldinfo

WI = ["builtin:worldinfo.read_activated"]


def entry(uid: int, keys: list[str], content: str = "", **fields: Any) -> dict[str, Any]:
    return {"uid": uid, "key": keys, "keysecondary": [], "comment": f"entry {uid}", "content": content,
            "constant": False, "disable": False, "selective": True, "selectiveLogic": 0, "order": 100,
            "position": 0, "probability": 100, **fields}


def book(*entries: dict[str, Any]) -> dict[str, Any]:
    return {"entries": {str(e["uid"]): e for e in entries}}


LORE = book(
    entry(0, [], "The realm is cold.\nSheep everywhere.", constant=True),
    entry(1, ["dragon"], "A red dragon.\nIt sleeps.\nIt bargains.\nIt keeps bargains."),
    entry(2, ["inn"], "The Gilded Goose."),                 # only in the older chat
    entry(3, ["dragon"], "Draft.", disable=True),
    entry(4, ["griffin"], "Never mentioned."),
)
# the inn is mentioned at #0 only; with scan depth 2 the scan sees #2 and #3
CHAT = [("Narrator", False, "You enter the inn."), ("Ada", True, "Hello."),
        ("Narrator", False, "A dragon sleeps nearby."), ("Ada", True, "We wait.")]


def st_chat(messages: list[tuple[str, bool, str]]) -> str:
    rows = [{"user_name": "Ada", "character_name": "Narrator"}]
    rows += [{"name": n, "is_user": u, "mes": m} for n, u, m in messages]
    return "".join(json.dumps(r) + "\n" for r in rows)


@pytest.fixture
def wi_bench(make_bench, tmp_path: Path):
    def make(lore: dict[str, Any] = LORE, chat: list | None = CHAT, **settings: Any) -> Workbench:
        profile = Profile.default().edit(allow=WI)
        if settings:
            profile = profile.edit(worldinfo=settings)
        bench = make_bench(profile=profile)
        (tmp_path / "lore.json").write_text(json.dumps(lore), encoding="utf-8")
        bench.load_worldinfo(tmp_path / "lore.json")
        if chat is not None:
            (tmp_path / "chat.jsonl").write_text(st_chat(chat), encoding="utf-8")
            bench.load_chat(tmp_path / "chat.jsonl")
        return bench
    return make


def call(bench: Workbench, args: Any = None):
    return bench.invocation().call("worldinfo_read_activated", args)


def ok(result):
    assert not result.is_error, (result.error_code, result.content)
    return result


def err(result, code: str):
    assert result.is_error and result.error_code == code, (result.error_code, result.content)
    return result


def active_refs(bench: Workbench) -> list[str]:
    return [a["ref"] for a in ok(call(bench)).structured["active"]]


# --- loading ------------------------------------------------------------------------------

def test_world_info_loads_as_a_named_book(wi_bench):
    bench = wi_bench()
    [lore] = bench.worldinfo
    assert lore.name == "lore" and [e.uid for e in lore.entries] == [0, 1, 2, 3, 4]
    first = lore.entries[1]
    assert (first.keys, first.comment, first.constant, first.disabled) == (("dragon",), "entry 1", False, False)
    assert lore.entries[3].disabled and lore.entries[0].constant


def test_loading_a_book_of_the_same_name_replaces_it_and_other_names_add(wi_bench, tmp_path):
    bench = wi_bench()
    (tmp_path / "more.json").write_text(json.dumps(book(entry(7, [], "x", constant=True))), encoding="utf-8")
    bench.load_worldinfo(tmp_path / "more.json")
    bench.load_worldinfo(tmp_path / "more.json", name="extra")
    bench.load_worldinfo(tmp_path / "more.json", name="lore")
    assert [b.name for b in bench.worldinfo] == ["lore", "more", "extra"]
    assert active_refs(bench) == ["lore:7", "more:7", "extra:7"]


@pytest.mark.parametrize("data", [
    "{not json",
    json.dumps([entry(0, ["a"])]),
    json.dumps({"entries": [entry(0, ["a"])]}),
    json.dumps({"name": "no entries"}),
    json.dumps(book(entry(0, "dragon"))),
    json.dumps(book(entry(0, ["a", 3]))),
    json.dumps(book(entry(0, ["a"], content=["x"]))),
    json.dumps(book(entry(0, ["a"], selectiveLogic=7))),
    json.dumps(book(entry(0, ["a"], constant="yes"))),
    json.dumps({"entries": {"0": entry(1, ["a"]), "1": entry(1, ["b"])}}),
    json.dumps({"entries": {"x": {"key": ["a"]}}}),
])
def test_bad_world_info_files_are_refused(make_bench, tmp_path, data):
    (tmp_path / "bad.json").write_text(data, encoding="utf-8")
    with pytest.raises(ToolbenchError) as info:
        make_bench().load_worldinfo(tmp_path / "bad.json")
    assert info.value.code == "worldinfo.file_invalid"


def test_missing_world_info_file_is_unreadable(make_bench, tmp_path):
    with pytest.raises(ToolbenchError) as info:
        make_bench().load_worldinfo(tmp_path / "missing.json")
    assert info.value.code == "worldinfo.file_unreadable"


def test_without_world_info_the_tool_says_so(make_bench):
    err(call(make_bench(profile=Profile.default().edit(allow=WI))), "worldinfo.not_loaded")


def test_world_info_is_chat_scene_only(wi_bench):
    snapshot = wi_bench().invocation("session").snapshot
    assert [(d.tool_id, d.code) for d in snapshot.diagnostics] == [(WI[0], "tool.scene_excluded")]


# --- activation ---------------------------------------------------------------------------

def test_constant_and_recent_keyword_entries_are_active_disabled_and_older_ones_are_not(wi_bench):
    result = ok(call(wi_bench()))
    active = {a["ref"]: a for a in result.structured["active"]}
    assert list(active) == ["lore:0", "lore:1"]
    assert active["lore:0"]["reason"] == "constant"
    assert (active["lore:1"]["key"], active["lore:1"]["messageIndex"]) == ("dragon", 2)


def test_constant_entries_are_active_without_a_chat(wi_bench):
    assert active_refs(wi_bench(chat=None)) == ["lore:0"]


def test_a_deeper_scan_reaches_older_messages(wi_bench):
    assert active_refs(wi_bench(scan_depth=4)) == ["lore:0", "lore:1", "lore:2"]
    assert active_refs(wi_bench(scan_depth=0)) == ["lore:0"]


def test_an_entry_scan_depth_overrides_the_profile(wi_bench):
    lore = book(entry(2, ["inn"], "x", scanDepth=10), entry(1, ["dragon"], "y", scanDepth=1))
    assert active_refs(wi_bench(lore)) == ["lore:2"]


def test_an_invocation_keeps_the_world_info_it_was_created_with(wi_bench, tmp_path):
    bench = wi_bench()
    inv = bench.invocation()
    (tmp_path / "lore.json").write_text(json.dumps(book(entry(9, [], "x", constant=True))), encoding="utf-8")
    bench.load_worldinfo(tmp_path / "lore.json")
    assert [a["ref"] for a in ok(inv.call("worldinfo_read_activated")).structured["active"]] == ["lore:0", "lore:1"]
    assert active_refs(bench) == ["lore:9"]


def msgs(*texts: str, name: str = "") -> list[ChatMessage]:
    return [ChatMessage(index=i, role="user", name=name, text=t) for i, t in enumerate(texts)]


def refs(lore: dict[str, Any], messages: list[ChatMessage], **settings: Any) -> list[str]:
    books = [parse_worldinfo(lore, name="b")]
    return [a.ref for a in activate(books, messages, WorldInfoSettings(**settings))]


@pytest.mark.parametrize(("logic", "text", "active"), [
    (0, "dragon and gold", True),      # AND_ANY: one secondary key matches
    (0, "dragon alone", False),
    (3, "dragon, gold and gems", True),  # AND_ALL
    (3, "dragon and gold", False),
    (2, "dragon alone", True),         # NOT_ANY
    (2, "dragon and gems", False),
    (1, "dragon and gold", True),      # NOT_ALL
    (1, "dragon, gold and gems", False),
])
def test_secondary_keys_follow_selective_logic(logic, text, active):
    lore = book(entry(0, ["dragon"], "x", keysecondary=["gold", "gems"], selectiveLogic=logic))
    assert refs(lore, msgs(text)) == (["b:0"] if active else [])


def test_secondary_keys_are_ignored_when_not_selective():
    lore = book(entry(0, ["dragon"], "x", keysecondary=["gold"], selective=False))
    assert refs(lore, msgs("dragon alone")) == ["b:0"]


def test_case_and_whole_words_follow_the_profile_and_the_entry():
    lore = book(entry(0, ["Inn"], "x"), entry(1, ["Inn"], "y", caseSensitive=True),
                entry(2, ["inn"], "z", matchWholeWords=True))
    assert refs(lore, msgs("a dinner")) == ["b:0"]
    assert refs(lore, msgs("the inn.")) == ["b:0", "b:2"]
    assert refs(lore, msgs("the Inn")) == ["b:0", "b:1", "b:2"]
    assert refs(lore, msgs("a dinner"), match_whole_words=True) == []
    assert refs(lore, msgs("the inn"), case_sensitive=True) == ["b:2"]


@pytest.mark.parametrize(("key", "text", "found"), [
    ("/north(ern)? hill/i", "the Northern Hill", True),
    ("/north(ern)? hill/", "the Northern Hill", False),
    ("/[unclosed/", "a /[unclosed/ key", True),    # not a valid pattern: plain text
    ("red dragon", "a RED DRAGON", True),
    ("龙", "山下睡着一条龙。", True),
])
def test_keys_match_as_sillytavern_does(key, text, found):
    assert matches(text, key) is found


def test_speaker_names_are_scanned_unless_the_profile_says_not():
    lore = book(entry(0, ["tobin"], "x"))
    assert refs(lore, msgs("hello", name="Tobin")) == ["b:0"]
    assert refs(lore, msgs("hello", name="Tobin"), include_names=False) == []


def test_active_entries_are_ordered_by_order_then_uid():
    lore = book(entry(5, [], "a", constant=True, order=1), entry(2, [], "b", constant=True, order=100),
                entry(1, [], "c", constant=True, order=100))
    assert refs(lore, []) == ["b:5", "b:1", "b:2"]


# --- the index and reading ----------------------------------------------------------------

def test_without_arguments_the_index_lists_active_refs(wi_bench):
    result = ok(call(wi_bench()))
    lines = result.content.splitlines()
    assert lines[0] == "Active world info: 2 of 5 entries (books: lore; scan depth 2: messages #2-#3)."
    assert lines[1] == '- lore:0 "entry 0": constant; 2 lines, 36 chars'
    assert lines[2] == '- lore:1 "entry 1": key `dragon` in message #2; 4 lines, 56 chars'
    assert '{"entries": [{"ref": "lore:0"}]}' in lines[3]
    assert result.structured["activeCount"] == 2 and result.structured["entryCount"] == 5


@pytest.mark.parametrize("wire", [None, "", "{}", "null"])
def test_every_empty_argument_form_gives_the_index(wi_bench, wire):
    assert ok(call(wi_bench(), wire)).structured["activeCount"] == 2


def test_reading_refs_with_1_based_line_ranges(wi_bench):
    result = ok(call(wi_bench(), {"entries": [{"ref": "lore:1", "start_line": 2, "line_count": 2},
                                             {"ref": "lore:0"}]}))
    assert result.content.splitlines()[:4] == ['[lore:1] "entry 1" · lines 2-3 of 4', "     2\tIt sleeps.",
                                               "     3\tIt bargains.", "[lore:1 continues: line 4 not shown.]"]
    assert [(e["ref"], e["startLine"], e["endLine"]) for e in result.structured["entries"]] == [
        ("lore:1", 2, 3), ("lore:0", 1, 2)]


def test_a_bare_uid_names_the_only_active_entry_with_it(wi_bench):
    assert ok(call(wi_bench(), {"entries": [{"ref": "1"}]})).structured["entries"][0]["ref"] == "lore:1"


@pytest.mark.parametrize(("item", "code", "hint"), [
    ({"ref": "lore:2"}, "worldinfo.ref_unknown", "lore:0, lore:1"),   # exists but not active
    ({"ref": "lore:3"}, "worldinfo.ref_unknown", "Active refs"),      # disabled
    ({"ref": "other:1"}, "worldinfo.ref_unknown", "Active refs"),
    ({"ref": "lore:1", "start_line": 5}, "worldinfo.line_out_of_range", "1 to 4"),
    ({"ref": "lore:1", "line_count": 2}, "tool.invalid_arguments", "start_line"),
    ({"ref": "lore:1", "offset": 2}, "tool.invalid_arguments", "offset"),
    ({"ref": 1}, "tool.invalid_arguments", "ref"),
])
def test_reading_refuses_bad_items_with_codes(wi_bench, item, code, hint):
    assert hint in err(call(wi_bench(), {"entries": [item]}), code).content


@pytest.mark.parametrize("args", [{"entries": []}, {"refs": ["lore:1"]}, {"entries": [{"ref": "lore:1"}] * 21}])
def test_the_schema_is_closed(wi_bench, args):
    err(call(wi_bench(), args), "tool.invalid_arguments")


def test_reading_stops_at_the_character_cap_with_a_note(wi_bench):
    long = "\n".join("v" * 99 for _ in range(20))
    lore = book(entry(0, [], long, constant=True), entry(1, [], "short", constant=True))
    result = ok(call(wi_bench(lore, max_chars_per_call=500), {"entries": [{"ref": "lore:0"}, {"ref": "lore:1"}]}))
    assert result.structured["capped"] and result.structured["entries"][0]["endLine"] == 5
    assert 'continue with {"ref": "lore:0", "start_line": 6}' in result.content
    assert "not read: lore:1" in result.content


def test_the_index_is_capped_too(wi_bench):
    lore = book(*(entry(i, [], "x", constant=True, comment="c" * 80) for i in range(30)))
    result = ok(call(wi_bench(lore, max_chars_per_call=500)))
    assert result.structured["capped"] and len(result.structured["active"]) < 30
    assert "more active entries are not listed" in result.content


def test_the_demo_bench_activates_its_sample_lore():
    with Workbench.demo() as bench:
        result = ok(bench.invocation(id="inv_demo_wi").call("worldinfo_read_activated"))
        assert [a["ref"] for a in result.structured["active"]] == ["lore:0", "lore:6", "lore:1", "lore:5"]
