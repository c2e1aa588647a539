"""Git worktrees for `mode: "worktree"` children (reference liveagent-tools §8): made with real
`git worktree add` from the workspace's HEAD (whose commit is recorded: the merge base), read for
what the child changed, applied to the workspace as the entry's `apply_policy` says, and removed
unless kept.

Which changed paths are applied:
- never a runtime folder (`.toolbench/`, `tool-args/`), a read-only root (`skills/`,
  `tool-results/`) or anything in a `.git` folder, whatever the policy (`protected`, from the
  workspace settings' RUNTIME_DIRS and READ_ONLY_ROOTS): the child's cron tasks or skill edits
  stay in its worktree, and the view lists them as `skipped`. They never keep a worktree by
  themselves: they are never applied by design, and keeping the worktree for them would keep
  every one whose runtime files git sees.
- explicit: every other changed path must match an allowed output path (`allowed`). A path with
  no glob character is a prefix: the file or the folder itself. A glob has git's path semantics
  (`patterns.compile_glob`, as `workspace.glob` takes it, matched by RE2 in linear time): `*` and
  `?` never cross `/`, `**` is any depth, a pattern with no `/` matches at any depth (`*.md`),
  and one that matches a folder covers what is in it. A pattern that cannot compile matches
  nothing.
- how: `worktree_apply`, a three-way merge decided whole before anything is written; a conflict
  or a refused path applies nothing.

Every git command goes through `git.run`, hardened against what a workspace can plant."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from ..core.errors import ToolbenchError
from ..core.workspace_settings import READ_ONLY_ROOTS, RUNTIME_DIRS
from ..tools.workspace.patterns import PatternError, compile_glob
from ..tools.workspace.runtime_files import make_runtime_folder
from . import git, worktree_apply

IGNORED: Final = frozenset({".DS_Store", "Thumbs.db", "Desktop.ini"})  # never counted as changes (upstream)
PROTECTED_ROOTS: Final = frozenset(r.casefold() for r in RUNTIME_DIRS | READ_ONLY_ROOTS)  # casefolded: a
# case-insensitive file system takes `.TOOLBENCH/` for `.toolbench/`
_GLOB_CHARS: Final = frozenset("*?[")


def is_repository(path: Path) -> bool:
    """Whether `path` is the top of a git work tree with a commit (a worktree needs a HEAD).

    Its `.git` must be a real folder: a planted `.git` file (`gitdir: /elsewhere`) or link would
    make git check another repository out where the child reads it."""
    git_dir = path / ".git"
    if git_dir.is_symlink() or not git_dir.is_dir():
        return False
    try:
        top = git.output(path, "rev-parse", "--show-toplevel").strip()
        git.run(path, "rev-parse", "--verify", "HEAD")
    except ToolbenchError:
        return False
    return Path(top).resolve() == path.resolve()


@dataclass
class Worktree:
    """One child's worktree and what became of it; `view()` is what the parent is told."""

    repo: Path
    path: Path
    policy: str = "none"
    allowed: tuple[str, ...] = ()
    retain: bool = False
    base: str = ""  # the commit the worktree was made from: the merge base
    changed: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # protected paths, never applied
    merged: list[str] = field(default_factory=list)  # applied by a clean three-way merge
    conflicts: list[str] = field(default_factory=list)
    applied: bool = False
    retained: bool = True
    code: str = ""  # why nothing was applied, when it is a refusal
    reason: str = ""

    def view(self) -> dict[str, Any]:
        out: dict[str, Any] = {"applyPolicy": self.policy, "allowedOutputPaths": list(self.allowed),
                               "retainWorktree": self.retain, "changedFiles": list(self.changed),
                               "applied": self.applied, "retained": self.retained}
        if self.retained:  # relative to the workspace: the model is never shown a host path
            out["path"] = Path(os.path.relpath(self.path, self.repo)).as_posix()
        for key, value in (("skipped", self.skipped), ("merged", self.merged), ("conflicts", self.conflicts),
                           ("code", self.code), ("reason", self.reason)):
            if value:
                out[key] = list(value) if isinstance(value, list) else value
        return out


def create(repo: Path, path: Path, **options: Any) -> Worktree:
    """A detached worktree of `repo`'s HEAD at `path` (which must not exist yet)."""
    base = git.output(repo, "rev-parse", "--verify", "HEAD^{commit}").strip()
    # Beneath the workspace: a planted `.toolbench/worktrees` link must not put the child elsewhere.
    make_runtime_folder(repo, path.parent.relative_to(repo).as_posix())
    # Checked out by a second command run in the worktree: `worktree add` would check out in a
    # child git whose config (an `includeIf "gitdir:"`) can name drivers the repository's does not.
    git.run(repo, "worktree", "add", "--no-checkout", "--detach", str(path), base)
    tree = Worktree(repo, path, base=base, **options)
    try:
        git.run(path, "reset", "--hard", "--quiet", "--no-recurse-submodules")
    except ToolbenchError:
        with contextlib.suppress(ToolbenchError):
            remove(tree)
        raise
    return tree


def changed_paths(path: Path) -> list[str]:
    """Paths (POSIX, relative) the worktree changed: git status with untracked files, minus IGNORED."""
    items = os.fsdecode(git.run(path, "status", "--porcelain", "-z", "--untracked-files=all",
                                        "--ignore-submodules=all")[1]).split("\0")
    found: list[str] = []
    i = 0
    while i < len(items):
        item = items[i]
        i += 1
        if len(item) < 4:
            continue
        status, name = item[:2], item[3:]
        if "R" in status or "C" in status:  # a rename's source follows; both paths changed
            found.append(items[i])
            i += 1
        found.append(name)
    return sorted({p for p in found if p.rsplit("/", 1)[-1] not in IGNORED})


def protected(path: str) -> bool:
    """Whether `path` is never applied: in a runtime folder, a read-only root or a `.git` folder."""
    parts = path.casefold().split("/")
    return parts[0] in PROTECTED_ROOTS or ".git" in parts


def _normal(raw: str) -> str:
    """An allowed path without `./` in front or `/` behind; "" for the workspace itself."""
    pattern = raw.strip()
    while pattern.startswith("./"):
        pattern = pattern[2:].lstrip("/")
    return "" if pattern == "." else pattern.rstrip("/")


def allowed(path: str, patterns: Sequence[str]) -> bool:
    """Whether `path` matches an allowed output path (the module says how)."""
    for raw in patterns:
        pattern = _normal(raw)
        if pattern == "" or path == pattern or path.startswith(pattern + "/"):
            return True
        if _GLOB_CHARS.intersection(pattern):
            try:
                compiled = compile_glob(pattern)
            except PatternError:
                continue
            if compiled is not None and compiled.matches(path):
                return True
    return False


def _refuse(tree: Worktree, code: str, reason: str) -> bool:
    tree.code, tree.reason = code, reason
    return False


def decide(tree: Worktree, paths: Sequence[str]) -> bool:
    """Whether the policy applies these changes: none never, auto always, explicit only when
    every path is allowed (else the reason names the ones outside)."""
    if tree.policy == "auto":
        return True
    if tree.policy == "explicit":
        outside = [p for p in paths if not allowed(p, tree.allowed)]
        return not outside or _refuse(tree, "agent.apply_not_allowed", "changed files outside "
                                      "allowed_output_paths, so nothing was applied: " + ", ".join(outside))
    tree.reason = "apply_policy none: the changes stay in the worktree"
    return False


def apply(tree: Worktree, paths: Sequence[str]) -> None:
    """Merge `paths` into the workspace (`worktree_apply`), or nothing with a coded reason."""
    todo = worktree_apply.plan(tree.repo, tree.path, tree.base, paths)
    if todo.conflicts:
        tree.conflicts = todo.conflicts
        _refuse(tree, "agent.apply_conflict", "the child and the workspace both changed "
                f"{', '.join(todo.conflicts)} and the changes do not merge: nothing was applied; the "
                "child's versions stay in the worktree")
    elif todo.refused:
        _refuse(tree, "agent.apply_refused", "nothing was applied: " + "; ".join(todo.refused))
    else:
        try:
            worktree_apply.write(tree.repo, todo)
        except (worktree_apply.Refused, OSError) as exc:
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            _refuse(tree, "agent.apply_failed", f"writing the changes failed part-way ({why}); the worktree "
                    "keeps the child's versions")
            return
        tree.merged, tree.applied = todo.merged, True


def remove(tree: Worktree) -> None:
    git.run(tree.repo, "worktree", "remove", "--force", str(tree.path))
    tree.retained = False


def finish(tree: Worktree, completed: bool) -> Worktree:
    """Read the changes, apply them if the child completed and the policy says so, then remove the
    worktree when it is not retained and nothing is left unapplied (upstream's cleanup rule;
    skipped paths do not count, the module says why)."""
    try:
        tree.changed = changed_paths(tree.path)
        tree.skipped = [p for p in tree.changed if protected(p)]
        todo = [p for p in tree.changed if not protected(p)]
        if todo and completed and decide(tree, todo):
            apply(tree, todo)
        elif todo and not completed:
            tree.reason = "the child did not complete: its changes stay in the worktree"
        elif tree.skipped and not todo:
            tree.reason = "only runtime or read-only paths changed, and those are never applied"
        if not tree.retain and (tree.applied or not todo):
            remove(tree)
    except ToolbenchError as exc:  # git failed: keep the worktree for a look
        tree.code, tree.reason = exc.code, exc.message
    except OSError as exc:  # a temp file for a merge could not be made
        tree.code, tree.reason = "agent.apply_failed", f"nothing was applied: {exc.strerror or type(exc).__name__}"
    return tree
