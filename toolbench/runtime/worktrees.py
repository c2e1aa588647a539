"""Git worktrees for `mode: "worktree"` children (reference liveagent-tools §8): made with real
`git worktree add` from the workspace's HEAD, read for what the child changed, applied to the
workspace as the entry's `apply_policy` says, and removed unless kept.

Git runs through subprocess with an argument list and a timeout, never a shell string."""

from __future__ import annotations

import fnmatch
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.errors import ToolbenchError
from ..core.fileio import write_atomic

GIT_TIMEOUT = 60.0  # seconds for one git command
IGNORED = frozenset({".DS_Store", "Thumbs.db", "Desktop.ini"})  # never counted as changes (upstream)


def git(cwd: Path, *args: str) -> str:
    """stdout of `git <args>` in `cwd`; ToolbenchError(agent.worktree_failed) when git fails."""
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=GIT_TIMEOUT,
                              check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ToolbenchError("agent.worktree_failed", f"git {' '.join(args)}: {exc}") from exc
    if done.returncode != 0:
        raise ToolbenchError("agent.worktree_failed", f"git {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout


def is_repository(path: Path) -> bool:
    """Whether `path` is the top of a git work tree with a commit (a worktree needs a HEAD)."""
    try:
        top = git(path, "rev-parse", "--show-toplevel").strip()
        git(path, "rev-parse", "--verify", "HEAD")
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
    changed: list[str] = field(default_factory=list)
    applied: bool = False
    retained: bool = True
    reason: str = ""

    def view(self) -> dict[str, Any]:
        out: dict[str, Any] = {"applyPolicy": self.policy, "allowedOutputPaths": list(self.allowed),
                               "retainWorktree": self.retain, "changedFiles": list(self.changed),
                               "applied": self.applied, "retained": self.retained}
        if self.retained:
            out["path"] = str(self.path)
        if self.reason:
            out["reason"] = self.reason
        return out


def create(repo: Path, path: Path, **options: Any) -> Worktree:
    """A detached worktree of `repo`'s HEAD at `path` (which must not exist yet)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    git(repo, "worktree", "add", "--detach", str(path), "HEAD")
    return Worktree(repo, path, **options)


def changed_paths(path: Path) -> list[str]:
    """Paths (POSIX, relative) the worktree changed: git status with untracked files, minus IGNORED."""
    out = git(path, "status", "--porcelain", "-z", "--untracked-files=all")
    items = out.split("\0")
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
    return sorted({p for p in found if Path(p).name not in IGNORED})


def allowed(path: str, patterns: Sequence[str]) -> bool:
    """Whether `path` matches an allowed output path: as a prefix (a folder or the file itself),
    or as a glob with `*`, `**/` and `?`."""
    for raw in patterns:
        pattern = raw.strip().lstrip("./").rstrip("/") if raw.strip() not in (".", "./") else ""
        if pattern == "" or path == pattern or path.startswith(pattern + "/"):
            return True
        if any(c in pattern for c in "*?[") and (fnmatch.fnmatchcase(path, pattern)
                                                 or fnmatch.fnmatchcase(path, pattern.replace("**/", ""))):
            return True
    return False


def decide(tree: Worktree) -> bool:
    """Whether the policy applies these changes: none never, auto always, explicit only when
    every changed path is allowed (else `reason` names the ones outside)."""
    if tree.policy == "auto":
        return True
    if tree.policy == "explicit":
        outside = [p for p in tree.changed if not allowed(p, tree.allowed)]
        if outside:
            tree.reason = "changed files outside allowed_output_paths: " + ", ".join(outside)
        return not outside
    tree.reason = "apply_policy none: the changes stay in the worktree"
    return False


def apply(tree: Worktree) -> None:
    """Copy every changed file into the workspace (atomically, each); a file the child deleted is
    deleted there. Nothing goes through a link on either side: a changed path that does raises
    OSError before any file is copied, and the worktree is kept for a look."""
    for rel in tree.changed:
        if _through_link(tree.path, rel) or _through_link(tree.repo, rel):
            raise OSError(f"`{rel}` goes through a link; no change was applied")
    for rel in tree.changed:
        src, dst = tree.path / rel, tree.repo / rel
        if src.is_file():
            write_atomic(dst, src.read_bytes())
        elif dst.is_file():
            dst.unlink()


def _through_link(root: Path, rel: str) -> bool:
    """Whether `root/rel`, or a folder on the way to it, is a symbolic link."""
    parts = Path(rel).parts
    if any(part in ("..", "/") for part in parts):
        return True
    return any(root.joinpath(*parts[:i]).is_symlink() for i in range(1, len(parts) + 1))


def remove(tree: Worktree) -> None:
    git(tree.repo, "worktree", "remove", "--force", str(tree.path))
    tree.retained = False


def finish(tree: Worktree, completed: bool) -> Worktree:
    """Read the changes, apply them if the child completed and the policy says so, then remove the
    worktree when it is not retained and nothing is left unapplied (upstream's cleanup rule)."""
    try:
        tree.changed = changed_paths(tree.path)
        if tree.changed and completed and decide(tree):
            apply(tree)
            tree.applied = True
        elif tree.changed and not completed:
            tree.reason = "the child did not complete: its changes stay in the worktree"
        if not tree.retain and (tree.applied or not tree.changed):
            remove(tree)
    except (ToolbenchError, OSError) as exc:  # apply failed: keep the worktree for a look
        tree.reason = f"{type(exc).__name__}: {exc}"
    return tree
