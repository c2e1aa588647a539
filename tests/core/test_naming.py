"""Call names: builtin aliases, both MCP styles, and the one allocator (reference §2.2-2.4,
table 9.6; liveagent §3)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolbench import Profile, ToolDescriptor, ToolId
from toolbench.core.naming import (
    allocate,
    builtin_call_name,
    fnv1a_hex,
    liveagent_mcp_name,
    mcp_seed,
    tauritavern_mcp_name,
)
from toolbench.core.snapshot import prepare

CALL_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$")
MCP_SEED = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def allocate_all(seeds: list[str]) -> list[str]:
    used: set[str] = set()
    names = []
    for seed in seeds:
        name = allocate(seed, used)
        used.add(name)
        names.append(name)
    return names


def assert_valid_and_unique(names: list[str]) -> None:
    assert len(set(names)) == len(names)
    for name in names:
        assert CALL_NAME.match(name), name
        assert 0 < len(name.encode("utf-8")) <= 64


def test_builtin_alias_replaces_dots():
    assert builtin_call_name("workspace.read_file") == "workspace_read_file"
    assert builtin_call_name("dice.roll") == "dice_roll"


# --- table 9.6 ----------------------------------------------------------------------------


def test_alias_allocation_table():
    long_mcp = tauritavern_mcp_name("server" * 30, "tool" * 40)
    assert long_mcp == "mcp__serverserverserverse__tooltooltooltooltooltooltooltooltoolt"
    names = allocate_all(["read.state", "read_state", "界" * 80, "界" * 81, long_mcp, long_mcp])
    assert names == [
        "read_state",
        "read_state__2",
        "_" * 64,
        "_" * 61 + "__2",
        long_mcp,
        long_mcp[:61] + "__2",
    ]
    assert [len(n) for n in names] == [10, 13, 64, 64, 64, 64]
    assert_valid_and_unique(names)


def test_repeated_seeds_get_increasing_suffixes_within_64_bytes():
    assert allocate_all(["inspect"] * 3) == ["inspect", "inspect__2", "inspect__3"]
    names = allocate_all(["a" * 70] * 12)
    assert names[0] == "a" * 64
    assert names[1] == "a" * 61 + "__2"
    assert names[11] == "a" * 60 + "__12"
    assert_valid_and_unique(names)


@pytest.mark.parametrize("seed", ["1tool", "-tool", "", "界"])
def test_names_never_start_with_a_digit_or_dash(seed):
    name = allocate(seed, set())
    assert CALL_NAME.match(name)


def test_allocation_skips_names_already_used():
    assert allocate("dice_roll", {"dice_roll"}) == "dice_roll__2"
    assert allocate("x", {"x", "x__2"}) == "x__3"


# --- tauritavern mcp_model_name -----------------------------------------------------------


@pytest.mark.parametrize(
    ("server", "tool", "expected"),
    [
        ("my server", "issue.create", "mcp__my_server__issue_create"),
        ("", "***", "mcp__server__tool"),
        ("A  B..c", "x/y", "mcp__A_B_c__x_y"),
        ("s", "t" * 100, "mcp__s__" + "t" * 56),
        ("s" * 100, "t" * 10, "mcp__" + "s" * 47 + "__" + "t" * 10),
        ("server" * 30, "tool" * 40, "mcp__serverserverserverse__tooltooltooltooltooltooltooltooltoolt"),
        ("__a__b__", "-x-", "mcp__a_b__-x-"),
        ("服务器", "工具", "mcp__server__tool"),
    ],
)
def test_tauritavern_mcp_names(server, tool, expected):
    name = tauritavern_mcp_name(server, tool)
    assert name == expected
    assert len(name) <= 64
    assert mcp_seed("tauritavern", server, tool) == name


# --- liveagent style (liveagent §3.2) -----------------------------------------------------


@pytest.mark.parametrize(
    ("server", "tool", "expected"),
    [
        ("docs", "search", "mcp_docs_search"),
        ("github", "create_issue", "mcp_github_create_issue"),
        ("my server", "list.files", "mcp_my_server_list_files"),
        ("  __weird__  ", "--tool--", "mcp_weird_--tool--"),
        ("服务器", "工具", "mcp_server_tool"),
        ("", "tool", "mcp_server_tool"),
        ("a" * 30, "b" * 30, "mcp_aaaaaaaaaaaaaaaa_bbbbbbbbbbbbbbbbbbbbbbbb_3fe8f0d3"),
        (
            "filesystem-server-with-a-very-long-identifier",
            "read_multiple_files_with_metadata",
            "mcp_filesystem-serve_read_multiple_files_with_336e48ad",
        ),
        ("x" * 60, "y", "mcp_" + "x" * 48 + "_y"),
        ("srv", "a/b/c", "mcp_srv_a_b_c"),
        ("srv", "a b", "mcp_srv_a_b"),
        ("srv", "a_b", "mcp_srv_a_b"),
    ],
)
def test_liveagent_mcp_names(server, tool, expected):
    name = liveagent_mcp_name(server, tool)
    assert name == expected
    assert len(name) == len(expected)
    assert mcp_seed("liveagent", server, tool) == name


def test_liveagent_hash_check_values():
    assert fnv1a_hex("abc") == "1a47e90b"
    assert fnv1a_hex("") == "811c9dc5"


def test_liveagent_collision_is_resolved_by_the_allocator():
    names = allocate_all([liveagent_mcp_name("srv", "a b"), liveagent_mcp_name("srv", "a_b")])
    assert names == ["mcp_srv_a_b", "mcp_srv_a_b__2"]


@pytest.mark.parametrize(
    ("naming", "expected"),
    [("liveagent", ["mcp_srv_a_b", "mcp_srv_a_b__2"]), ("tauritavern", ["mcp__srv__a_b", "mcp__srv__a_b__2"])],
)
def test_colliding_mcp_tools_get_distinct_call_names_in_a_snapshot(naming, expected):
    first = ToolDescriptor(id=ToolId.mcp("reg-1", "a b"), server="srv")
    second = ToolDescriptor(id=ToolId.mcp("reg-1", "a_b"), server="srv")
    profile = Profile.default().edit(allow=[str(first.id), str(second.id)], naming=naming)
    snapshot = prepare(profile, {first.id: first, second.id: second}, snapshot_id="inv")
    assert [b.call_name for b in snapshot.bindings] == expected
    assert snapshot.call_names == dict(zip(expected, [first.id, second.id], strict=True))


# --- properties ---------------------------------------------------------------------------

seeds = st.text(max_size=90) | st.text(st.characters(max_codepoint=127), max_size=90)


@settings(max_examples=60)
@given(seq=st.lists(seeds | st.sampled_from(["read_state", "read.state", "界" * 81, "x" * 64]), max_size=25))
def test_allocated_names_are_valid_unique_and_short(seq):
    assert_valid_and_unique(allocate_all(seq))


@settings(max_examples=60)
@given(seq=st.lists(seeds, max_size=8))
def test_repeating_any_seed_still_gives_unique_names(seq):
    names = allocate_all(seq * 3)
    assert_valid_and_unique(names)


@settings(max_examples=80)
@given(style=st.sampled_from(["tauritavern", "liveagent"]), server=seeds, tool=seeds)
def test_mcp_seeds_of_both_styles_are_already_valid_call_names(style, server, tool):
    seed = mcp_seed(style, server, tool)
    assert MCP_SEED.match(seed)
    assert seed.startswith("mcp_")
    assert allocate(seed, set()) == seed  # the allocator has nothing to change


@settings(max_examples=40)
@given(style=st.sampled_from(["tauritavern", "liveagent"]), pairs=st.lists(st.tuples(seeds, seeds), max_size=10))
def test_mcp_seeds_of_any_servers_and_tools_allocate_uniquely(style, pairs):
    assert_valid_and_unique(allocate_all([mcp_seed(style, s, t) for s, t in pairs] * 2))


def test_mcp_name_changes_say_why_a_call_name_is_not_the_plain_name():
    from toolbench.core.naming import mcp_name_changes

    assert mcp_name_changes("tauritavern", "s", "ok", "mcp__s__ok") == ()
    assert mcp_name_changes("tauritavern", "s", "a.b", "mcp__s__a_b") == ("sanitised",)
    assert mcp_name_changes("tauritavern", "s", "a.b", "mcp__s__a_b__2") == ("sanitised", "de-duplicated")
    long = "x" * 80
    cut = tauritavern_mcp_name("s", long)
    assert mcp_name_changes("tauritavern", "s", long, cut) == ("truncated",)
    assert mcp_name_changes("liveagent", "s", "ok", "mcp_s_ok") == ()
    assert mcp_name_changes("liveagent", "s", long, liveagent_mcp_name("s", long)) == ("truncated",)
