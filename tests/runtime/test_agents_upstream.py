"""LiveAgent's own sub-agent tests, ported case by case as data (tests/fixtures/liveagent_subagents.json).

Each row names its upstream file and test title. A row is run one way: `delegate` (an
agent_delegate call on a bench, after `setup` children were made), `concurrency` (the pure
clamp), `route` (send_message's pure recipient rule, the sender `agent-a` seeing `agent-b`),
`send` (agent_send_message on a bench), or `scenario` (a function below, for behaviour over
several calls). A row with `skip_reason` has no meaning in toolbench and says why. A row whose
`upstream` is a source file (no `.test.mjs`) follows a rule of upstream's code that no upstream
test covers, and names the code in `source`. The counts are asserted, so nothing is skipped
silently. Scenario helpers live in tests/runtime/upstream_support.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from agents_support import WAIT, parent_profile
from upstream_support import SCENARIOS, always_return, init_repo, worktrees

from toolbench.core.agents import batch_concurrency, route_message
from toolbench.core.errors import CODES, ToolError

TABLE = json.loads((Path(__file__).parents[1] / "fixtures" / "liveagent_subagents.json").read_text())
ROWS: list[dict[str, Any]] = TABLE["rows"]
KINDS = ("delegate", "concurrency", "route", "send", "scenario")
# How many tests each upstream file has (grep -c '^test(' at the mirror's HEAD).
UPSTREAM_TESTS = {"validate.test.mjs": 20, "agent-tool.test.mjs": 26, "store.test.mjs": 10,
                  "persistence.test.mjs": 8, "send-message.test.mjs": 9, "bus-roster.test.mjs": 14}


def rows(kind: str) -> list[Any]:
    return [pytest.param(r, id=f"{r['upstream'].split('.')[0]}: {r['test'][:50]} / {r['case']}")
            for r in ROWS if r.get("kind") == kind]


# --- the table itself ------------------------------------------------------------------------
def test_every_upstream_test_has_a_row_and_every_row_is_run_or_explained():
    titles: dict[str, set[str]] = {}
    for r in ROWS:
        if r["upstream"].endswith(".test.mjs"):
            titles.setdefault(r["upstream"], set()).add(r["test"])
        else:
            assert r["source"].startswith("crates/") and "kind" in r, r  # names upstream's code, and runs
        assert ("skip_reason" in r) != ("kind" in r), r  # run one way, or say why not
        assert r.get("kind", "delegate") in KINDS, r
        if r.get("kind") == "scenario":
            assert r["scenario"] in SCENARIOS, r["scenario"]
        assert "known_mismatch" not in r, r  # none left: each follows upstream
    assert {f: len(t) for f, t in titles.items()} == UPSTREAM_TESTS
    ported = sum("kind" in r for r in ROWS)
    skipped = sum("skip_reason" in r for r in ROWS)
    from_source = sum(not r["upstream"].endswith(".test.mjs") for r in ROWS)
    assert (ported, skipped, from_source) == (91, 33, 4)


def test_upstream_codes_map_to_listed_toolbench_codes():
    for upstream, ours in TABLE["codes"].items():
        assert ours in CODES, upstream
    for r in ROWS:
        wanted = r.get("upstream_code")
        expect = r.get("expect")
        code = expect.get("error_code") if isinstance(expect, dict) else None
        if wanted is None or code is None:
            continue
        got = sorted(i[0] for i in r["expect"]["issues"]) if isinstance(wanted, list) else [code]
        assert got == sorted(TABLE["codes"][w] for w in (wanted if isinstance(wanted, list) else [wanted])), r


# --- delegate rows ---------------------------------------------------------------------------
@pytest.fixture
def bench_for(make_bench, tmp_path):
    def make(row: dict[str, Any]):
        if row.get("git"):
            init_repo(tmp_path / "ws")
        bench = make_bench(profile=parent_profile("builtin:workspace.write_file"), seed=1)
        bench.agents.model = always_return()
        for template in row.get("templates", ()):
            bench.agents.define(template, description="Review code paths")
        return bench
    return make


@pytest.mark.parametrize("row", rows("delegate"))
def test_delegate_row(bench_for, tmp_path, row):
    bench = bench_for(row)
    parent = bench.invocation(id="inv_root")
    if row.get("setup"):
        made = parent.call("agent_delegate", {"agents": row["setup"]})
        assert not made.is_error, made.content
        bench.agents.wait(timeout=WAIT)
    before = len(bench.agents.tasks())
    result = parent.call("agent_delegate", row["args"])
    expect = row["expect"]
    if expect.get("ok"):
        assert not result.is_error, result.content
        tasks = result.structured["tasks"]
        assert [[t["childId"], t["mode"]] for t in tasks] == expect["children"]
        if "template" in expect:
            assert [t["agentId"] for t in tasks] == [expect["template"]]
        for key, value in expect.get("worktree", {}).items():
            assert tasks[0]["worktree"][key] == value, key
        bench.agents.wait(timeout=WAIT)
        if "tasks_of_child" in expect:
            (child,) = [c for c in bench.agents.roster() if c["id"] == expect["children"][0][0]]
            assert len(child["tasks"]) == expect["tasks_of_child"]
        return
    assert result.is_error and result.error_code == expect["error_code"], result.content
    assert len(bench.agents.tasks()) == before  # atomic: nothing of the batch started
    data = result.structured or {}
    if "issues" in expect:
        assert [[i["code"], i["entry"]] for i in data["issues"]] == expect["issues"]
    for word in expect.get("message_has", ()):
        assert word in data["issues"][0]["message"]
    if "issue_agents" in expect:
        assert [i["agentId"] for i in data["issues"]] == expect["issue_agents"]
    if "roster" in expect:
        assert [c["id"] for c in data["roster"]] == expect["roster"]
    if "roster_fields" in expect:  # what a resuming entry must match, in the data and in the text
        (child,) = [c for c in data["roster"] if c["id"] == expect["roster_fields"]["id"]]
        assert {k: child[k] for k in expect["roster_fields"]} == expect["roster_fields"]
        (line,) = [x for x in result.content.splitlines() if f"`{child['id']}`" in x]
        assert all(str(v) in line for v in expect["roster_fields"].values()), line
    if "templates" in expect:
        assert [t["id"] for t in data["templates"]] == expect["templates"]
    if expect.get("no_worktrees"):
        assert worktrees(tmp_path / "ws") == []


# --- pure rows -------------------------------------------------------------------------------
@pytest.mark.parametrize("row", rows("concurrency"))
def test_concurrency_row(row):
    assert batch_concurrency(row["count"], row["value"]) == row["expect"]


@pytest.mark.parametrize("row", rows("route"))
def test_route_row(row):
    expect = row["expect"]
    try:
        route = route_message(row["to"], row["channel"], has_parent=row.get("has_parent", True),
                              roster=row.get("roster", ["agent-b"]))
    except ToolError as exc:
        assert exc.code == expect["error_code"]
        if "valid" in expect:
            assert (exc.structured or {})["valid"] == expect["valid"]
        return
    assert "error_code" not in expect, route
    assert route.channel == expect["channel"]
    if "recipients" in expect:
        assert list(route.recipients) == expect["recipients"]


@pytest.mark.parametrize("row", rows("send"))
def test_send_row(make_bench, row):
    bench = make_bench(profile=parent_profile(), seed=1)
    result = bench.invocation(id="inv_root").call("agent_send_message", row["args"])
    assert result.is_error and result.error_code == row["expect"]["error_code"]


# --- scenarios -------------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted({r["scenario"] for r in ROWS if r.get("kind") == "scenario"}))
def test_scenario(name, make_bench, tmp_path):
    SCENARIOS[name](make_bench, tmp_path)

