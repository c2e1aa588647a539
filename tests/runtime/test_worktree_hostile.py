"""A worktree child against a hostile model and a hostile workspace: applying its changes never
loses the parent's uncommitted work (a three-way merge against the commit the worktree was made
from; a conflict applies nothing), never writes the runtime folders or the read-only roots, takes
`*` in allowed_output_paths as one path segment, and no git command toolbench runs executes code
the workspace planted (hooks, fsmonitor, filters, an external diff, the caller's GIT_* variables)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from agents_support import WAIT, parent_profile
from deadline import run_with_deadline

from toolbench.core.errors import ToolbenchError
from toolbench.runtime import git as git_runner
from toolbench.runtime import worktree_apply, worktrees
from toolbench.testing import ScriptedModel


def git(cwd: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True, timeout=30,
                          env=env).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A workspace repository that does not ignore `.toolbench/` (a planted one need not)."""
    ws = tmp_path / "ws"
    (ws / "work").mkdir(parents=True)
    git(ws, "init", "-q")
    git(ws, "config", "user.email", "t@example.com")
    git(ws, "config", "user.name", "t")
    (ws / "work" / "story.md").write_text("one\ntwo\nthree\nfour\nfive\nsix\nseven\n")
    (ws / "work" / "notes.md").write_text("original\n")
    git(ws, "add", ".")
    git(ws, "commit", "-q", "-m", "start")
    return ws


def make(repo: Path, **options: Any) -> worktrees.Worktree:
    return worktrees.create(repo, repo / ".toolbench" / "worktrees" / "child", **options)


def finish(tree: worktrees.Worktree) -> dict[str, Any]:
    return worktrees.finish(tree, completed=True).view()


STORY = "one\ntwo\nthree\nfour\nfive\nsix\nseven\n"


# 1. applying is a three-way merge against the worktree's base -----------------------------------

def test_the_issue_a_parent_edit_and_a_child_edit_of_one_file_conflict_and_nothing_is_lost(make_bench, repo):
    bench = make_bench(profile=parent_profile("builtin:workspace.write_file"), seed=1)
    (repo / "work" / "story.md").write_text("the parent's draft\n")  # uncommitted
    bench.agents.model = ScriptedModel([
        [("workspace_read_file", {"path": "work/story.md"})],
        [("workspace_write_file", {"path": "work/story.md", "content": "the child's version\n"}),
         ("workspace_write_file", {"path": "work/new.md", "content": "new\n"})],
        [("task_return", {"summary": "rewrote"})]])
    result = bench.invocation(id="inv_root").call("agent_delegate", {"agents": [
        {"id": "maker", "prompt": "Rewrite.", "mode": "worktree", "apply_policy": "auto"}]})
    assert not result.is_error, result.content
    (task,) = bench.agents.wait(timeout=WAIT)
    tree = task["worktree"]
    assert tree["applied"] is False and tree["code"] == "agent.apply_conflict"
    assert tree["conflicts"] == ["work/story.md"] and "work/story.md" in tree["reason"]
    # the parent's text stays; nothing else was applied either; the child's version is kept
    assert (repo / "work" / "story.md").read_text() == "the parent's draft\n"
    assert not (repo / "work" / "new.md").exists()
    assert tree["retained"] is True and tree["path"].startswith(".toolbench/worktrees/")  # no host path
    assert (repo / tree["path"] / "work" / "story.md").read_text() == "the child's version\n"


def test_a_file_only_the_child_changed_is_applied(repo):
    tree = make(repo, policy="auto")
    (tree.path / "work" / "story.md").write_text("child\n")
    (repo / "work" / "notes.md").write_text("the parent's\n")  # another file: no conflict
    view = finish(tree)
    assert view["applied"] is True and "conflicts" not in view and view["retained"] is False
    assert (repo / "work" / "story.md").read_text() == "child\n"
    assert (repo / "work" / "notes.md").read_text() == "the parent's\n"


def test_changes_to_different_lines_merge_and_keep_both(repo):
    tree = make(repo, policy="auto")
    (tree.path / "work" / "story.md").write_text(STORY.replace("six", "SIX (child)"))
    (repo / "work" / "story.md").write_text(STORY.replace("two", "TWO (parent)"))
    view = finish(tree)
    assert view["applied"] is True and view["merged"] == ["work/story.md"]
    assert (repo / "work" / "story.md").read_text() == STORY.replace("two", "TWO (parent)").replace(
        "six", "SIX (child)")


def test_changes_to_the_same_line_conflict_and_apply_nothing(repo):
    tree = make(repo, policy="auto")
    (tree.path / "work" / "story.md").write_text(STORY.replace("four", "child"))
    (tree.path / "work" / "other.md").write_text("clean\n")  # would apply alone: nothing is applied
    (repo / "work" / "story.md").write_text(STORY.replace("four", "parent"))
    view = finish(tree)
    assert view["applied"] is False and view["code"] == "agent.apply_conflict"
    assert view["conflicts"] == ["work/story.md"] and view["retained"] is True
    assert (repo / "work" / "story.md").read_text() == STORY.replace("four", "parent")
    assert not (repo / "work" / "other.md").exists()
    assert str(tree.path) in git(repo, "worktree", "list", "--porcelain")  # still there


@pytest.mark.parametrize("case", ["parent deleted, child changed", "child deleted, parent changed",
                                  "both added, other content", "both changed a binary file"])
def test_changes_that_cannot_merge_conflict(repo, case):
    tree = make(repo, policy="auto")
    child, parent = tree.path / "work", repo / "work"
    if case == "parent deleted, child changed":
        (child / "story.md").write_text("child\n")
        (parent / "story.md").unlink()
    elif case == "child deleted, parent changed":
        (child / "story.md").unlink()
        (parent / "story.md").write_text(STORY + "parent\n")
    elif case == "both added, other content":
        (child / "fresh.md").write_text("child\n")
        (parent / "fresh.md").write_text("parent\n")
    else:
        (child / "story.md").write_bytes(b"\0child" + STORY.encode())
        (parent / "story.md").write_bytes(STORY.encode() + b"\0parent")
    view = finish(tree)
    assert view["applied"] is False and view["code"] == "agent.apply_conflict", view
    assert len(view["conflicts"]) == 1 and view["retained"] is True


def test_the_same_change_on_both_sides_is_no_conflict(repo):
    tree = make(repo, policy="auto")
    for root in (tree.path, repo):
        (root / "work" / "story.md").write_text("same\n")
        (root / "work" / "fresh.md").write_text("same\n")
    view = finish(tree)
    assert view["applied"] is True and (repo / "work" / "fresh.md").read_text() == "same\n"


def test_a_child_deletion_of_a_file_the_parent_kept_is_applied(repo):
    tree = make(repo, policy="auto")
    (tree.path / "work" / "notes.md").unlink()
    view = finish(tree)
    assert view["applied"] is True and not (repo / "work" / "notes.md").exists()


def test_the_base_is_the_commit_the_worktree_was_made_from(repo):
    """A parent that commits after the child started: the merge base is still the child's start."""
    tree = make(repo, policy="auto")
    (repo / "work" / "story.md").write_text(STORY.replace("one", "ONE (parent)"))
    git(repo, "commit", "-qam", "parent")
    (tree.path / "work" / "story.md").write_text(STORY.replace("seven", "SEVEN (child)"))
    assert finish(tree)["applied"] is True
    assert (repo / "work" / "story.md").read_text() == STORY.replace("one", "ONE (parent)").replace(
        "seven", "SEVEN (child)")


# 2. the runtime folders and the read-only roots are never applied -------------------------------

PROTECTED = (".toolbench/cron/tasks.json", "tool-args/a.json", "skills/evil/SKILL.md", "tool-results/r.txt")


@pytest.mark.parametrize("policy", [{"policy": "auto"}, {"policy": "explicit", "allowed": ("**",)},
                                    {"policy": "explicit", "allowed": (".",)}])
def test_runtime_folders_and_read_only_roots_are_never_applied(repo, policy):
    (repo / ".toolbench" / "cron").mkdir(parents=True)
    (repo / ".toolbench" / "cron" / "tasks.json").write_text("the parent's tasks")
    tree = make(repo, **policy)
    for rel in (*PROTECTED, "work/a.md"):
        (tree.path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tree.path / rel).write_text("the child's")
    view = finish(tree)
    assert view["applied"] is True and sorted(view["skipped"]) == sorted(PROTECTED)
    assert (repo / "work" / "a.md").read_text() == "the child's"
    assert (repo / ".toolbench" / "cron" / "tasks.json").read_text() == "the parent's tasks"
    assert not any((repo / rel).exists() for rel in PROTECTED[1:])


def test_a_child_cron_task_in_its_worktree_never_reaches_the_workspace(make_bench, repo):
    bench = make_bench(profile=parent_profile("builtin:cron.create"), seed=1)
    inv = bench.invocation(id="inv_root")
    shell_task = {"name": "tick", "cron": "* * * * * *", "type": "shell", "script": "echo hi"}
    assert not inv.call("cron_create", {**shell_task, "name": "mine"}).is_error
    before = (repo / ".toolbench" / "cron" / "tasks.json").read_bytes()
    bench.agents.model = ScriptedModel([[("cron_create", shell_task)], [("task_return", {"summary": "made"})]])
    result = inv.call("agent_delegate", {"agents": [{"id": "maker", "prompt": "Schedule.", "mode": "worktree",
                                                     "apply_policy": "auto"}]})
    assert not result.is_error, result.content
    (task,) = bench.agents.wait(timeout=WAIT)
    assert ".toolbench/cron/tasks.json" in task["worktree"]["skipped"]
    assert (repo / ".toolbench" / "cron" / "tasks.json").read_bytes() == before
    assert [t["name"] for t in json.loads(before)["tasks"]] == ["mine"]


# 3. allowed_output_paths: `*` is one segment, `**` any depth, a plain path a folder -------------

@pytest.mark.parametrize(("pattern", "path", "expected"), [
    ("output/*.md", "output/x.md", True),
    ("output/*.md", "output/a/b/x.md", False),
    ("output/**/*.md", "output/x.md", True),
    ("output/**/*.md", "output/a/b/x.md", True),
    ("src/**", "src/a/b.py", True),
    ("src/**", "other/src/b.py", False),
    ("src", "src/a/b.py", True),
    ("src", "src", True),
    ("src", "srcs/a.py", False),
    ("src", "work/src/a.py", False),
    ("./src/", "src/a.py", True),
    (".github", ".github/ci.yml", True),
    (".", "anything/at/all.txt", True),
    ("work/?.md", "work/a.md", True),
    ("work/?.md", "work/a/b.md", False),
])
def test_allowed_output_paths_match_with_path_semantics(pattern, path, expected):
    assert worktrees.allowed(path, [pattern]) is expected


def test_a_hostile_allowed_pattern_matches_nothing_in_bounded_time():
    assert worktrees.allowed("work/" + "a" * 200, ["*a" * 30 + "b", "[" * 500]) is False


def test_explicit_refuses_a_deep_path_a_one_segment_star_does_not_cover(repo):
    tree = make(repo, policy="explicit", allowed=("work/*.md",))
    (tree.path / "work" / "a" / "b").mkdir(parents=True)
    (tree.path / "work" / "a" / "b" / "x.md").write_text("deep")
    view = finish(tree)
    assert view["applied"] is False and view["code"] == "agent.apply_not_allowed"
    assert not (repo / "work" / "a").exists()


# 4. no git command runs code the workspace planted --------------------------------------------

def _script(path: Path, marker: Path, tail: str = "") -> str:
    path.write_text(f"#!/bin/sh\ntouch '{marker}'\n{tail}")
    path.chmod(0o755)
    return str(path)


def _plant(repo: Path, kind: str, marker: Path) -> None:
    hooks = repo / ".git" / "hooks"
    if kind in ("post-checkout", "reference-transaction", "post-index-change"):
        _script(hooks / kind, marker)
    elif kind == "fsmonitor":
        git(repo, "config", "core.fsmonitor", _script(repo.parent / "fsmonitor.sh", marker))
    elif kind in ("smudge", "clean", "process"):
        (repo / ".gitattributes").write_text("*.md filter=evil\n")
        git(repo, "add", ".gitattributes")
        git(repo, "commit", "-q", "-m", "attributes")  # committed before the filter is defined
        command = _script(repo.parent / "filter.sh", marker, "cat\n")
        git(repo, "config", f"filter.evil.{kind}", command)
        git(repo, "config", "filter.evil.required", "true")
    elif kind == "hooksPath":  # a hooks folder the config names, inside the workspace
        _script(repo / "work" / "post-checkout", marker)
        git(repo, "config", "core.hooksPath", "work")
    elif kind == "diff.external":
        git(repo, "config", "diff.external", _script(repo.parent / "diff.sh", marker))
    elif kind in ("include", "includeIf"):  # a filter in an included config file, for every worktree too
        (repo / ".gitattributes").write_text("*.md filter=sneaky\n")
        git(repo, "add", ".gitattributes")
        git(repo, "commit", "-q", "-m", "attributes")
        command = _script(repo.parent / "filter.sh", marker, "cat\n")
        (repo.parent / "included.cfg").write_text(f'[filter "sneaky"]\n\tsmudge = {command}\n')
        key = "include.path" if kind == "include" else "includeIf.gitdir:**/worktrees/**.path"
        git(repo, "config", key, str(repo.parent / "included.cfg"))


PLANTS = ["post-checkout", "reference-transaction", "post-index-change", "fsmonitor", "smudge", "clean",
          "process", "hooksPath", "diff.external", "include", "includeIf"]


@pytest.mark.parametrize("kind", PLANTS)
def test_a_full_worktree_delegate_runs_nothing_the_workspace_planted(make_bench, repo, kind):
    marker = repo.parent / f"ran-{kind}"
    _plant(repo, kind, marker)
    bench = make_bench(profile=parent_profile("builtin:workspace.write_file"), seed=1)
    (repo / "work" / "notes.md").write_text("the parent's, same size\n")  # status must compare contents
    bench.agents.model = ScriptedModel([
        [("workspace_read_file", {"path": "work/story.md"})],
        [("workspace_write_file", {"path": "work/story.md", "content": STORY + "child\n"})],
        [("task_return", {"summary": "wrote"})]])
    result = bench.invocation(id="inv_root").call("agent_delegate", {"agents": [
        {"id": "maker", "prompt": "Write.", "mode": "worktree", "apply_policy": "auto"}]})
    assert not result.is_error, result.content
    (task,) = bench.agents.wait(timeout=WAIT)
    assert task["worktree"]["applied"] is True, task["worktree"]  # create, status, apply ...
    assert task["worktree"]["retained"] is False  # ... and remove all ran
    assert not marker.exists(), f"{kind} ran"


def test_the_callers_git_variables_do_not_reach_git(make_bench, repo, monkeypatch):
    """GIT_DIR, GIT_CONFIG_PARAMETERS (a hooks folder) and the like belong to the host's shell,
    not to the workspace: toolbench's git starts from a clean environment."""
    marker = repo.parent / "ran-env"
    hooks = repo.parent / "env-hooks"
    hooks.mkdir()
    _script(hooks / "post-checkout", marker)
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", f"'core.hookspath'='{hooks}'")
    monkeypatch.setenv("GIT_WORK_TREE", str(repo.parent))
    tree = make(repo, policy="auto")
    (tree.path / "work" / "story.md").write_text("child\n")
    view = finish(tree)
    assert view["applied"] is True and not marker.exists()
    assert (repo / "work" / "story.md").read_text() == "child\n"


def test_a_planted_file_that_is_not_regular_refuses_the_apply_in_bounded_time(repo):
    """A FIFO where the parent's file was: reading it would block; it is refused, coded."""
    tree = make(repo, policy="auto")
    (tree.path / "work" / "story.md").write_text("child\n")
    (repo / "work" / "story.md").unlink()
    os.mkfifo(repo / "work" / "story.md")
    view = run_with_deadline(f"""
from pathlib import Path
from toolbench.runtime import worktrees
tree = worktrees.Worktree(Path({str(repo)!r}), Path({str(tree.path)!r}), policy="auto", base={tree.base!r})
report(worktrees.finish(tree, completed=True).view())
""", deadline=60)
    assert view["applied"] is False and view["code"] == "agent.apply_refused"
    assert view["retained"] is True


def test_a_file_past_the_size_limit_refuses_the_apply(repo, monkeypatch):
    monkeypatch.setattr(worktree_apply, "MAX_FILE_BYTES", 1000)
    tree = make(repo, policy="auto")
    (tree.path / "work" / "big.md").write_text("x" * 2000)
    view = finish(tree)
    assert view["applied"] is False and view["code"] == "agent.apply_refused"
    assert not (repo / "work" / "big.md").exists()


def test_a_config_with_more_drivers_than_can_be_neutralised_is_refused(repo):
    with (repo / ".git" / "config").open("a") as config:
        config.writelines(f'[filter "f{i}"]\n\tsmudge = true\n' for i in range(git_runner.MAX_DRIVERS + 1))
    with pytest.raises(ToolbenchError) as info:
        make(repo)
    assert info.value.code == "agent.worktree_failed"


@pytest.mark.parametrize(("path", "expected"), [
    (".toolbench/cron/tasks.json", True), (".TOOLBENCH/cron/tasks.json", True), ("tool-args/a.json", True),
    ("skills/x/SKILL.md", True), ("tool-results/r.txt", True), ("work/.git/config", True),
    ("work/a.md", False), ("work/skills/a.md", False), ("work/.gitignore", False),
])
def test_protected_paths(path, expected):
    assert worktrees.protected(path) is expected


def test_a_link_the_child_made_is_never_followed(repo, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("host secret")
    tree = make(repo, policy="auto")
    (tree.path / "work" / "leak.md").symlink_to(secret)
    view = finish(tree)
    assert view["applied"] is False and view["code"] == "agent.apply_refused"
    assert not (repo / "work" / "leak.md").exists()


# 5. the repository and the worktree folder are the workspace's own ------------------------------

def test_a_planted_git_file_pointing_at_another_repository_is_no_repository(repo, tmp_path):
    # `.git` as a file (`gitdir: ...`) or a link would check another repository out for the child.
    secret = tmp_path / "secret"
    secret.mkdir()
    git(secret, "init", "-q")
    (secret / "plan.txt").write_text("TOP SECRET\n")
    git(secret, "add", ".")
    git(secret, "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-q", "-m", "s")
    workspace = tmp_path / "planted"
    workspace.mkdir()
    (workspace / ".git").write_text(f"gitdir: {secret / '.git'}\n")
    assert not worktrees.is_repository(workspace)
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / ".git").symlink_to(secret / ".git")
    assert not worktrees.is_repository(linked)
    assert worktrees.is_repository(repo)


def test_a_worktrees_folder_linked_out_of_the_workspace_is_refused(repo, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (repo / ".toolbench").mkdir(exist_ok=True)
    (repo / ".toolbench" / "worktrees").symlink_to(outside)
    with pytest.raises(ToolbenchError) as info:
        make(repo)
    assert info.value.code == "storage.not_regular_file"  # a link where the folder should be: not followed
    assert list(outside.iterdir()) == []


def test_a_git_planted_in_the_workspace_is_not_run_through_a_relative_path_entry(repo, tmp_path, monkeypatch):
    marker = tmp_path / "pwned"
    fake = repo / "git"
    fake.write_text(f"#!/bin/sh\ntouch {marker}\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", os.pathsep + os.environ["PATH"])  # an empty entry: the working folder
    assert worktrees.is_repository(repo)
    tree = make(repo)
    worktrees.remove(tree)
    assert not marker.exists()
