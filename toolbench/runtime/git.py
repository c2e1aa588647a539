"""The one way toolbench runs git, hardened so a hostile workspace cannot run code through it.

A workspace's `.git/` is input like any file in it: its config can name hooks, an fsmonitor, filter
and diff drivers, pagers, credential helpers, and include other config files; `.gitattributes`
in the tree (or `.git/info/attributes`) attach drivers to paths. Every command goes through `run`,
which closes each of those doors:

- A clean environment: only PATH is kept from the host (no GIT_DIR, GIT_CONFIG_PARAMETERS, ...:
  the caller's shell is not the workspace's), HOME is `/dev/null` and the system and global config
  are off (GIT_CONFIG_NOSYSTEM, GIT_CONFIG_GLOBAL), so only the repository's own config is read;
  LC_ALL=C; no terminal prompt.
- Command-scope config (GIT_CONFIG_COUNT, which wins over every config file and, unlike `-c`,
  takes any key, a subsection with `=` in it too) that turns off hooks (`core.hooksPath` is
  `/dev/null`, a folder with no hooks), the fsmonitor, credential helpers, every transport
  protocol and the external diff.
- Drivers are named per repository, so they are neutralised per name: before each command the
  repository's `filter.*`, `diff.*` and `merge.*` names are read (`git config --get-regexp`,
  which runs nothing and follows includes as the command will) and each one's commands are set
  empty (`filter.<x>.required` false): git then checks files out and compares them byte for
  byte. An empty diff command makes a diff fail instead of running anything; none of the
  commands toolbench runs is a diff (SUBCOMMANDS lists them: a new one is reviewed here first).
  A repository with more than MAX_DRIVERS driver names is refused rather than half neutralised.

Git runs with an argument list (never a shell string) and a timeout; its output is bytes (path
names need not be UTF-8), and its error text has the working folder replaced by `.` so a
message for the model names no host path."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Collection
from pathlib import Path
from typing import Final

from ..core.errors import ToolbenchError

GIT_TIMEOUT: Final = 60.0  # seconds for one git command
MAX_DRIVERS: Final = 256
SUBCOMMANDS: Final = frozenset({"rev-parse", "worktree", "reset", "status", "ls-tree", "cat-file", "merge-file"})
_FIXED: Final = (("core.hooksPath", os.devnull), ("core.fsmonitor", "false"), ("credential.helper", ""),
                 ("protocol.allow", "never"), ("diff.external", ""), ("core.pager", "cat"))
_DRIVER_KEYS: Final = {"filter": (("clean", ""), ("smudge", ""), ("process", ""), ("required", "false")),
                       "diff": (("command", ""), ("textconv", "")), "merge": (("driver", ""),)}


def _env(config: list[tuple[str, str]]) -> dict[str, str]:
    env = {"PATH": _search_path(), "HOME": os.devnull, "LC_ALL": "C", "LANG": "C",
           "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_TERMINAL_PROMPT": "0",
           "GIT_CONFIG_COUNT": str(len(config))}
    for i, (key, value) in enumerate(config):
        env[f"GIT_CONFIG_KEY_{i}"], env[f"GIT_CONFIG_VALUE_{i}"] = key, value
    return env


def _search_path() -> str:
    """The absolute entries of PATH: an empty or relative one would find a `git` (or a program
    git runs) planted in the workspace, which is the working folder of every command."""
    return os.pathsep.join(p for p in os.environ.get("PATH", os.defpath).split(os.pathsep) if os.path.isabs(p))


def _program() -> str:
    found = shutil.which("git", path=_search_path())
    if found is None:
        raise ToolbenchError("agent.worktree_failed", "git is not installed (no `git` on the PATH)")
    return found


def _spawn(cwd: Path, args: list[str], config: list[tuple[str, str]], stdin: bytes | None,
           ok: Collection[int]) -> tuple[int, bytes]:
    try:
        done = subprocess.run([_program(), *args], cwd=cwd, input=stdin, capture_output=True, env=_env(config),
                              timeout=GIT_TIMEOUT, check=False)
    except subprocess.TimeoutExpired as exc:
        raise ToolbenchError("agent.worktree_failed", f"git {args[0]} took over {GIT_TIMEOUT:g} s") from exc
    except OSError as exc:
        raise ToolbenchError("agent.worktree_failed", f"git {args[0]} could not run: {exc.strerror}") from exc
    if done.returncode not in ok:
        why = os.fsdecode(done.stderr).strip().replace(str(cwd), ".")
        raise ToolbenchError("agent.worktree_failed", f"git {args[0]}: {why or f'exit {done.returncode}'}")
    return done.returncode, done.stdout


def _drivers(cwd: Path) -> list[tuple[str, str]]:
    """Empty commands for every filter, diff and merge driver the repository's config names."""
    pattern = r"^(" + "|".join(_DRIVER_KEYS) + r")\..*\."
    _, out = _spawn(cwd, ["config", "-z", "--name-only", "--get-regexp", pattern], list(_FIXED), None, (0, 1))
    names = {(key.split(".", 1)[0], key[key.index(".") + 1:key.rindex(".")])
             for key in os.fsdecode(out).split("\0") if key.count(".") >= 2}
    if len(names) > MAX_DRIVERS:
        raise ToolbenchError("agent.worktree_failed", f"the repository's config names {len(names)} filter, diff "
                             f"or merge drivers; toolbench neutralises at most {MAX_DRIVERS}")
    return [(f"{section}.{name}.{key}", value) for section, name in sorted(names)
            for key, value in _DRIVER_KEYS[section]]


def run(cwd: Path, *args: str, stdin: bytes | None = None, ok: Collection[int] = (0,)) -> tuple[int, bytes]:
    """(exit status, stdout) of `git <args>` in `cwd`, hardened as the module says.

    ToolbenchError(agent.worktree_failed) when git cannot run, times out or exits with a status
    not in `ok`."""
    if not args or args[0] not in SUBCOMMANDS:
        raise ToolbenchError("agent.worktree_failed", f"git {args[:1]} is not a command toolbench runs")
    return _spawn(cwd, list(args), [*_FIXED, *_drivers(cwd)], stdin, ok)


def output(cwd: Path, *args: str) -> str:
    """stdout of `git <args>` in `cwd` as text (a name that is not UTF-8 keeps its bytes as surrogates)."""
    return os.fsdecode(run(cwd, *args)[1])
