"""`mode: "worktree"` children of the LiveAgent form (reference liveagent-tools §8), on a real git
repository: the child's file tools work in a git worktree of the workspace, and its changes are
applied (auto; explicit when every changed file is allowed) or kept (none), and the worktree is
removed unless retained or left with unapplied changes."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from agents_support import WAIT, parent_profile

from toolbench.testing import ScriptedModel


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True, timeout=30).stdout


@pytest.fixture
def repo(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    git(ws, "init", "-q")
    git(ws, "config", "user.email", "t@example.com")
    git(ws, "config", "user.name", "t")
    (ws / "work").mkdir()  # the default profile's tools see work/, output/, tmp/, ...
    (ws / "work" / "notes.md").write_text("original\n")
    (ws / ".gitignore").write_text(".toolbench/\n")
    git(ws, "add", ".")
    git(ws, "commit", "-q", "-m", "start")
    return ws


@pytest.fixture
def bench(make_bench, repo):
    return make_bench(profile=parent_profile("builtin:workspace.write_file"), seed=1)


def worktrees(repo: Path) -> list[str]:
    """The workspace's worktrees, relative to it (as a view gives them)."""
    return [os.path.relpath(line.split(" ", 1)[1], repo)
            for line in git(repo, "worktree", "list", "--porcelain").splitlines()
            if line.startswith("worktree ")][1:]  # the first is the workspace itself


def writes(*files: tuple[str, str], status: str = "completed") -> ScriptedModel:
    # notes.md is read first: write_file changes a file only after reading it
    return ScriptedModel([[("workspace_read_file", {"path": "work/notes.md"})],
                          [("workspace_write_file", {"path": p, "content": c}) for p, c in files],
                          [("task_return", {"summary": "wrote", "status": status})]])


def run(bench, model, **entry):
    bench.agents.model = model
    inv = bench.invocation(id="inv_root")
    result = inv.call("agent_delegate", {"agents": [{"id": "maker", "prompt": "Write.", "mode": "worktree",
                                                     **entry}]})
    assert not result.is_error, result.content
    (task,) = bench.agents.wait(timeout=WAIT)
    return task


def test_policy_none_applies_nothing_and_keeps_the_worktree_with_the_changes(bench, repo):
    task = run(bench, writes(("work/notes.md", "changed\n"), ("work/new.txt", "x")))
    assert task["status"] == "completed"
    tree = task["worktree"]
    assert tree["applyPolicy"] == "none" and tree["applied"] is False
    assert tree["changedFiles"] == ["work/new.txt", "work/notes.md"]
    assert (repo / "work" / "notes.md").read_text() == "original\n" and not (repo / "work/new.txt").exists()
    # unapplied changes keep the worktree (upstream's cleanup rule), and it holds the child's files
    assert tree["retained"] is True and worktrees(repo) == [tree["path"]]
    assert (repo / tree["path"] / "work/new.txt").read_text() == "x"


def test_the_child_works_in_its_worktree_not_the_workspace(bench, repo):
    model = ScriptedModel([[("workspace_read_file", {"path": "work/notes.md"})],
                           [("task_return", {"summary": "read"})]])
    task = run(bench, model)
    assert "original" in model.requests[1].messages[-1]["content"]
    assert "workspace_write_file" in model.requests[0].tool_names  # file tools, unlike readonly
    # nothing changed: the worktree is removed, and the records stay in the bench's store
    assert task["worktree"]["changedFiles"] == [] and task["worktree"]["retained"] is False
    assert worktrees(repo) == []
    assert bench.agents.invocation(task["taskId"]).records[0].call_name == "workspace_read_file"


def test_auto_applies_the_changes_and_removes_the_worktree(bench, repo):
    task = run(bench, writes(("work/notes.md", "changed\n"), ("work/src/new.txt", "x")), apply_policy="auto")
    tree = task["worktree"]
    assert tree["applied"] is True and tree["retained"] is False and "path" not in tree
    assert (repo / "work" / "notes.md").read_text() == "changed\n"
    assert (repo / "work" / "src" / "new.txt").read_text() == "x"
    assert worktrees(repo) == []


def test_auto_applies_nothing_when_the_child_failed(bench, repo):
    task = run(bench, writes(("work/notes.md", "changed\n"), status="failed"), apply_policy="auto")
    assert task["status"] == "failed" and task["worktree"]["applied"] is False
    assert (repo / "work" / "notes.md").read_text() == "original\n" and task["worktree"]["retained"] is True


def test_explicit_applies_when_every_changed_file_is_allowed(bench, repo):
    task = run(bench, writes(("work/out/a.txt", "a"), ("work/out/deep/b.md", "b")), apply_policy="explicit",
               allowed_output_paths=["work/out"])
    assert task["worktree"]["applied"] is True
    out = repo / "work" / "out"
    assert (out / "a.txt").read_text() == "a" and (out / "deep" / "b.md").read_text() == "b"


def test_explicit_allows_globs(bench, repo):
    task = run(bench, writes(("work/docs/a.md", "a"), ("work/b.md", "b")), apply_policy="explicit",
               allowed_output_paths=["**/*.md"])
    assert task["worktree"]["applied"] is True
    assert (repo / "work" / "b.md").exists() and (repo / "work" / "docs" / "a.md").exists()


def test_explicit_applies_nothing_when_one_file_is_outside_and_says_which(bench, repo):
    task = run(bench, writes(("work/out/a.txt", "a"), ("work/notes.md", "changed\n")), apply_policy="explicit",
               allowed_output_paths=["work/out/"])
    tree = task["worktree"]
    assert tree["applied"] is False and "work/notes.md" in tree["reason"]
    assert not (repo / "work" / "out").exists() and (repo / "work" / "notes.md").read_text() == "original\n"
    assert tree["retained"] is True and worktrees(repo) == [tree["path"]]


def test_retain_worktree_keeps_it_after_applying(bench, repo):
    task = run(bench, writes(("work/new.txt", "x")), apply_policy="auto", retain_worktree=True)
    tree = task["worktree"]
    assert tree["applied"] is True and tree["retained"] is True
    assert (repo / "work/new.txt").read_text() == "x"
    assert worktrees(repo) == [tree["path"]] and (repo / tree["path"]).is_dir()


def test_retain_worktree_false_removes_it(bench, repo):
    task = run(bench, writes(("work/new.txt", "x")), apply_policy="auto", retain_worktree=False)
    assert task["worktree"]["retained"] is False and worktrees(repo) == []
    assert not any((repo / ".toolbench" / "worktrees").iterdir())


def test_a_workspace_that_is_not_a_git_repository_is_refused_before_any_child_starts(make_bench):
    bench = make_bench("plain", profile=parent_profile("builtin:workspace.write_file"), seed=1)
    model = ScriptedModel([])
    bench.agents.model = model
    inv = bench.invocation(id="inv_root")
    result = inv.call("agent_delegate", {"agents": [{"id": "ok", "prompt": "Look."},
                                                    {"id": "maker", "prompt": "Write.", "mode": "worktree"}]})
    assert result.is_error and result.structured["status"] == "rejected"
    assert [i["code"] for i in result.structured["issues"]] == ["agent.worktree_unavailable"]
    assert bench.agents.tasks() == [] and model.requests == []


def test_a_worktree_that_cannot_be_made_starts_nothing(bench, repo):
    (repo / ".toolbench").mkdir(exist_ok=True)
    (repo / ".toolbench" / "worktrees").write_text("in the way")  # so no worktree folder can be made
    model = ScriptedModel([])
    bench.agents.model = model
    inv = bench.invocation(id="inv_root")
    result = inv.call("agent_delegate", {"agents": [{"id": "ok", "prompt": "Look."},
                                                    {"id": "maker", "prompt": "Write.", "mode": "worktree"}]})
    assert result.is_error and result.error_code == "agent.provision_failed"
    assert bench.agents.tasks() == [] and model.requests == [] and worktrees(repo) == []


def test_the_shell_runs_in_the_worktree_and_its_changes_are_applied(make_bench, repo):
    bench = make_bench(profile=parent_profile("builtin:workspace.shell"), seed=1)
    model = ScriptedModel([[("workspace_shell", {"command": "cat work/notes.md; echo made > work/shell.txt"})],
                           [("task_return", {"summary": "ran"})]])
    task = run(bench, model, apply_policy="auto")
    assert "original" in model.requests[1].messages[-1]["content"]
    assert task["worktree"]["changedFiles"] == ["work/shell.txt"] and task["worktree"]["applied"] is True
    assert (repo / "work" / "shell.txt").read_text() == "made\n"


def test_a_change_through_a_link_in_the_workspace_applies_nothing(repo: Path, tmp_path: Path) -> None:
    """The worktree's changes are copied only along real folders: a workspace folder that is a
    link out keeps every change in the worktree (coded)."""
    from toolbench.runtime import worktrees as wt

    tree = wt.create(repo, repo / ".toolbench" / "worktrees" / "child", policy="auto")
    (tree.path / "work" / "a.md").write_text("new")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "notes.md").write_text("original\n")
    (repo / "work" / "notes.md").unlink()
    (repo / "work").rmdir()
    (repo / "work").symlink_to(outside)
    view = wt.finish(tree, completed=True).view()
    assert view["applied"] is False and view["code"] == "agent.apply_refused" and view["retained"] is True
    assert sorted(p.name for p in outside.iterdir()) == ["notes.md"]
