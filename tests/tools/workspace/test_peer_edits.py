"""The edit-tool test cases of six peers, run against toolbench's matcher.

`peer_edits/<peer>.json` holds the cases of opencode, Cline, Codex, Aider, Roo Code and LiveAgent,
each translated from one of their tests into one edit (file, old, new, replace_all) with what the
peer does with it (`peer_result`) and where it comes from (`origin`); README.md there tells how.
`peer_edits/explanations.json` explains, case by case, every place where toolbench differs.

The rules, per case:

- toolbench never writes bytes nobody vouched for: a success must equal the peer's text, or the
  `toolbench_text` of the case's explanation (with a `why`); a success where the peer refuses
  needs one too;
- a refusal where the peer succeeds is listed with `"toolbench_refuses": true`, a `reason` and a
  `why`;
- an explanation that no longer describes a difference fails, so the data stays true.

Over the cases the peers accept, the share toolbench accepts is printed per peer (`-s`) and must
reach `MIN_SHARE`.
"""

from __future__ import annotations

import json
import math
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pytest

from toolbench.core.errors import ToolError
from toolbench.tools.workspace.edit_match import apply_edit

DATA = Path(__file__).parent / "peer_edits"
PEERS = ("opencode", "cline", "codex", "aider", "roo", "liveagent")

# The share of peer-accepted cases that toolbench accepts, rounded down: 131 of 163 when these
# cases were collected, 145 of 164 (88.4%) with edit_more's passes. Issue 15's goal was 0.90;
# every case left is refused by design (a similarity guess, a pick among several matches, an
# empty old_string, or an indentation no uniform shift explains, which LiveAgent's reference
# refuses: tables of ../shared/reference/liveagent-tools.md §1.6).
MIN_SHARE = 0.88

_CASE_KEYS = {"id", "peer", "origin", "file", "old", "new", "replace_all", "peer_result"}
_ERROR_CODES = {"workspace.edit_no_match", "workspace.edit_ambiguous", "tool.invalid_arguments"}


def _load() -> tuple[dict[str, dict[str, Any]], list[dict[str, Any]]]:
    docs = {peer: json.loads((DATA / f"{peer}.json").read_text(encoding="utf-8")) for peer in PEERS}
    cases = [case for doc in docs.values() for case in doc["cases"]]
    return docs, cases


DOCS, CASES = _load()
EXPLAINED: dict[str, dict[str, Any]] = json.loads((DATA / "explanations.json").read_text(encoding="utf-8"))


def _run(case: dict[str, Any]) -> tuple[bool, str]:
    """(True, the new text) or (False, the error code)."""
    try:
        result = apply_edit(case["file"], case["old"], case["new"], replace_all=case["replace_all"])
    except ToolError as exc:
        return False, exc.code
    return True, result.text


@pytest.fixture(scope="module")
def outcomes() -> dict[str, tuple[bool, str]]:
    return {case["id"]: _run(case) for case in CASES}


def test_the_data_is_well_formed() -> None:
    ids = [case["id"] for case in CASES]
    assert len(ids) == len(set(ids)), "case ids must be unique"
    for peer, doc in DOCS.items():
        assert doc["peer"] == peer
        assert doc["sources"] and all({"repo", "commit", "paths"} <= set(s) for s in doc["sources"])
        assert all({"test", "why"} <= set(s) for s in doc["skipped"])
        for case in doc["cases"]:
            assert set(case) >= _CASE_KEYS, case["id"]
            assert case["peer"] == peer and case["id"].startswith(peer + "/")
            assert {"repo", "path", "commit", "test"} <= set(case["origin"]), case["id"]
            result = case["peer_result"]
            assert isinstance(result["ok"], bool)
            assert ("text" in result) if result["ok"] else bool(result.get("reason")), case["id"]
            assert all(isinstance(case[k], str) for k in ("file", "old", "new"))
            assert isinstance(case["replace_all"], bool)
    known = set(ids)
    for cid, entry in EXPLAINED.items():
        assert cid in known, f"explanations.json names no case {cid!r}"
        assert entry.get("why"), cid
        refuses = entry.get("toolbench_refuses") is True
        assert refuses != ("toolbench_text" in entry), f"{cid}: give toolbench_text or toolbench_refuses, not both"
        assert not refuses or entry.get("reason"), f"{cid}: a refusal needs a reason"


@pytest.mark.parametrize("case", CASES, ids=[case["id"] for case in CASES])
def test_case(case: dict[str, Any], outcomes: dict[str, tuple[bool, str]]) -> None:
    ok, out = outcomes[case["id"]]
    peer = case["peer_result"]
    entry = EXPLAINED.get(case["id"])
    if ok:
        if entry and entry.get("toolbench_refuses"):
            pytest.fail(f"explained as a refusal, but toolbench now accepts it: {out!r}; update explanations.json")
        if entry:
            if peer["ok"] and peer["text"] == out:
                pytest.fail("toolbench now writes the peer's own text: drop the explanation")
            assert out == entry["toolbench_text"], "toolbench's bytes changed from the explained ones"
        elif not peer["ok"]:
            pytest.fail(
                f"toolbench accepts what {case['peer']} refuses ({peer['reason']}): "
                f"explain it with toolbench_text {out!r} and why it is right"
            )
        elif peer["text"] is None:
            pytest.fail(f"the peer's text is unknown: pin toolbench_text {out!r} in explanations.json")
        else:
            assert out == peer["text"], "toolbench wrote other bytes than the peer, unexplained"
    else:
        assert out in _ERROR_CODES
        if peer["ok"]:
            assert entry and entry.get("toolbench_refuses"), (
                f"toolbench refuses ({out}) what {case['peer']} accepts: list it in explanations.json "
                "with toolbench_refuses, a reason and why"
            )
        else:
            assert entry is None, "both refuse: the explanation describes no difference, drop it"


def test_share_of_peer_accepted_cases(outcomes: dict[str, tuple[bool, str]]) -> None:
    rows: dict[str, Counter[str]] = defaultdict(Counter)
    for case in CASES:
        row = rows[case["peer"]]
        ok, out = outcomes[case["id"]]
        row["collected"] += 1
        if case["peer_result"]["ok"]:
            row["peer ok"] += 1
            row["toolbench ok"] += ok
        entry = EXPLAINED.get(case["id"], {})
        row["explained"] += ok and "toolbench_text" in entry
        row["wrong bytes"] += ok and out != entry.get("toolbench_text", case["peer_result"].get("text"))
    for peer in PEERS:
        rows[peer]["skipped"] = sum(s.get("count", 1) for s in DOCS[peer]["skipped"])
    total = sum(rows.values(), Counter())
    cols = ("collected", "skipped", "peer ok", "toolbench ok", "share", "explained", "wrong bytes")
    print("\n" + " ".join(f"{c:>12}" for c in ("peer", *cols)))
    for name, row in [*((p, rows[p]) for p in PEERS), ("all", total)]:
        share = row["toolbench ok"] / row["peer ok"] if row["peer ok"] else math.nan
        cells = [row[c] if c != "share" else f"{share:.1%}" for c in cols]
        print(" ".join(f"{v:>12}" for v in (name, *cells)))
    refusals = Counter(e["reason"] for e in EXPLAINED.values() if e.get("toolbench_refuses"))
    print("refusals by reason:")
    for reason, n in refusals.most_common():
        print(f"  {n:3}  {reason}")
    assert total["wrong bytes"] == 0
    share = total["toolbench ok"] / total["peer ok"]
    assert share >= MIN_SHARE, f"toolbench accepts {share:.1%} of the peer-accepted cases, below {MIN_SHARE:.0%}"
