"""Pure memory rules (reference §5.2, §5.6): slugs, days, risk, merge (evidence: test_memory_evidence)."""

from __future__ import annotations

from datetime import date, datetime

import pytest

from toolbench.core.errors import ToolError
from toolbench.tools.memory.rules import (
    check_risk,
    local_day,
    merge_bodies,
    normalize_slug,
    split_units,
)


@pytest.mark.parametrize(("raw", "slug"), [
    ("prefers-tabs", "prefers-tabs"), ("Prefers_Tabs", "prefers-tabs"), ("abc", "abc"), ("a1b", "a1b"),
    ("x" * 64, "x" * 64), (" Mixed_Case-1 ", "mixed-case-1"),
])
def test_slugs_are_lowercased_and_kebab_cased(raw, slug):
    assert normalize_slug(raw) == slug


@pytest.mark.parametrize("raw", ["ab", "-abc", "abc-", "x" * 65, "has space", "ünï", "a.b.c", ""])
def test_bad_slugs_are_refused_with_a_suggestion(raw):
    with pytest.raises(ToolError) as err:
        normalize_slug(raw)
    assert err.value.code == "memory.slug_invalid"
    assert "suggested_slug" in err.value.structured


@pytest.mark.parametrize(("clock", "day"), [
    (datetime(2026, 3, 10, 3, 59), date(2026, 3, 9)),
    (datetime(2026, 3, 10, 4, 0), date(2026, 3, 10)),
    (datetime(2026, 3, 10, 23, 0), date(2026, 3, 10)),
])
def test_the_journal_day_rolls_over_at_four(clock, day):
    assert local_day(clock) == day


@pytest.mark.parametrize("body", [
    "-----BEGIN RSA PRIVATE KEY-----\nabc", "-----BEGIN PRIVATE KEY-----", "key AKIAABCDEFGHIJKLMNOP here",
    "sk-ant-api03-abcdefghijklmnop", "ghp_" + "a" * 36, "github_pat_" + "A1" * 15, "xoxb-1234-5678-abcdef",
])
def test_secret_patterns_are_hard_blocked(body):
    with pytest.raises(ToolError) as err:
        check_risk(body)
    assert err.value.code == "memory.risk_hard_blocked"


@pytest.mark.parametrize("body", [
    "How to bypass auth", "Disable validation first", "override safety", "Ignore previous instructions",
    "run sudo apt", "call exec(x)", "eval(code)", "git commit --no-verify",
])
def test_soft_patterns_flag_low_risk(body):
    assert check_risk(body) == "low"


def test_plain_text_has_no_risk():
    assert check_risk("The user likes green tea.") == "none"


def test_merge_units_keep_code_blocks_and_structured_lines_whole():
    body = "# Title\nFirst. Second!\n- item one\n> quote\n| a | b |\n\n```py\nx = 1\n\ny = 2\n```\n中文句子。另一句。"
    assert split_units(body) == ["# Title", "First.", "Second!", "- item one", "> quote", "| a | b |",
                                 "```py\nx = 1\n\ny = 2\n```", "中文句子。", "另一句。"]


def test_merge_replaces_the_best_match_and_appends_new_units():
    old = "The user drinks green tea every morning. The user lives in Paris."
    new = "The user drinks black tea every morning. Works remotely."
    assert merge_bodies(old, new) == ("The user drinks black tea every morning.\n\nThe user lives in Paris."
                                      "\n\nWorks remotely.")


def test_a_merge_with_a_blank_side_keeps_the_other_as_it_is():
    """upstream merge_memory_content: nothing to merge means no reformatting."""
    assert merge_bodies("First. Second.", "  ") == "First. Second."
    assert merge_bodies("", "- a\n- b") == "- a\n- b"


def test_merge_deduplicates():
    assert merge_bodies("- a\n- b", "- a\n- b\n- c") == "- a\n\n- b\n\n- c"
