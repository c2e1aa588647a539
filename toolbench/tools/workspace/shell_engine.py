"""The `workspace.shell` engine: a fresh bashkit shell per call, over mounted roots.

This is the only module that touches bashkit; its exceptions and result shapes stop here.

The guest sees `/` as the workspace root. `/` itself is an empty read-only filesystem; each
`Mount` puts one host directory on it, read-write or read-only (bashkit's `ReadOnlyFs`). Writes
go straight to the host disk, so they persist when the command later fails, times out or is
cancelled. Nothing else of the host is visible: no host programs, no host environment (only
`HOME=/`), no network (bashkit's default). Symlinks that leave a mount are refused by bashkit.

Each call runs in a worker thread, so a long command never blocks the event loop and a sync
caller stays interruptible. Building an interpreter costs about 0.5 ms, so interpreters are
kept per configuration (`_Idle`) and bashkit's `reset()` (a rebuild with the same config and
mounts, ~0.1 ms) runs after each call, in the worker once the caller has its outcome: every
call still starts from a fresh shell. Cancellation sets bashkit's flag, which the interpreter
checks between commands and inside embedded Python; a builtin already running (`sleep`)
finishes first, so `run_shell` waits at most `_STOP_GRACE_SECONDS` for it and then reports
the cancel anyway.

bashkit keeps no log of writes through a real mount, and its snapshot diff covers only the
in-memory filesystem, so the outcome does not list changed paths. `may_have_written` is a cheap
static judgement instead (bashkit's `analyze`): False only when every command is a known
reader and every write redirect goes to `/dev/null`, `/dev/stdout` or `/dev/stderr`.

A caller that needs the changed files passes `watch`, a predicate on file names: when the
command may write, the files of the writable mounts whose names it accepts are stat'ed before
and after the run (in the worker thread; other names are never stat'ed, and a scan gives up
past `_MAX_WATCH_ENTRIES` directory entries), and `changed` lists those created or modified,
oldest change first. Static analysis cannot name the targets (python's `open`, `mv` of a
folder, globs), so the stat diff over the writable roots is the one reliable source.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import os
import posixpath
import queue
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

import bashkit

from ...core.errors import ToolbenchError, ToolError
from ...core.shell_settings import ShellSettings
from ..base import StopSignal

__all__ = [
    "SHELL_DESCRIPTION",
    "SHELL_INPUT_SCHEMA",
    "Mount",
    "ShellOutcome",
    "ShellStatus",
    "describe_shell",
    "format_result",
    "guest_path",
    "parse_shell_args",
    "run_shell",
    "run_shell_blocking",
]

ShellStatus = Literal["exited", "timed_out", "cancelled", "failed"]

_ENV: Final = {"HOME": "/", "BASHKIT_ALLOW_INPROCESS_PYTHON": "1"}
_GUARD_SECONDS: Final = 2.0  # past the timeout, in case an embedded runtime ignores bashkit's deadline
_STOP_GRACE_SECONDS: Final = 0.5  # how long a cancel waits for the interpreter to stop
_DEADLINE_SHARE: Final = 0.98  # a non-zero exit this close to the timeout is the deadline (python, jq)
_CANCELLED_ERROR: Final = "execution cancelled"
_TIMEOUT_ERRORS: Final = ("execution timeout", "parser timeout")
_HARMLESS_SINKS: Final = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})
_MAX_WATCH_ENTRIES: Final = 20_000  # directory entries one `watch` scan visits before giving up
# Commands that cannot change a file by themselves (options such as `sort -o`, `uniq IN OUT`,
# `tree -o`, `sed -i` or `xxd IN OUT` rule the others out). Redirects are judged separately.
_READERS: Final = frozenset(
    """
    : [ basename bc cat cd cksum cmp column comm cut date declare df diff dirname du echo egrep exit expand
    export expr factor false fgrep file fmt fold grep head hexdump hostname id join jq local ls md5sum nl od
    paste printenv printf pwd read readlink realpath return rev rg seq set sha1sum sha224sum sha256sum
    sha384sum sha512sum shasum shift sleep stat strings sum tac tail test tr true type uname unexpand unset
    wc which whoami
    """.split()  # noqa: SIM905 (a word list reads better than 80 quoted strings)
)


@dataclass(frozen=True, slots=True)
class Mount:
    """A host directory shown to the shell at `guest_path` (absolute, normalised, not `/`)."""

    host_path: Path
    guest_path: str
    writable: bool

    def __post_init__(self) -> None:
        object.__setattr__(self, "host_path", Path(self.host_path))
        guest = self.guest_path
        if not isinstance(guest, str) or guest == "/" or guest_path(guest) != guest:
            raise ToolbenchError("bench.misuse", f"a mount's guest path must be absolute and normalised: {guest!r}")


@dataclass(frozen=True, slots=True)
class ShellOutcome:
    """What one shell call came to. `exit_code` is set exactly when `status` is `exited`."""

    status: ShellStatus
    exit_code: int | None
    stdout: str
    stderr: str
    output_truncated: bool = False
    may_have_written: bool = True
    # Watched files the run created or modified (guest paths, oldest change first); None when
    # unknown (the writable roots hold too many entries to compare). Empty without `watch`.
    changed: tuple[str, ...] | None = ()

    def __post_init__(self) -> None:
        if (self.status == "exited") != (self.exit_code is not None):
            raise ToolbenchError("bench.misuse", f"a {self.status} shell outcome with exit code {self.exit_code}")


def guest_path(path: str) -> str:
    """Normalise a guest path: relative means below `/`, and `..` stops at `/`."""
    return posixpath.normpath("/" + path.lstrip("/"))


async def run_shell(
    command: str,
    *,
    workdir: str = "/",
    mounts: Sequence[Mount],
    settings: ShellSettings,
    cancel: asyncio.Event | None = None,
    watch: Callable[[str], bool] | None = None,
) -> ShellOutcome:
    """Run `command` in a fresh shell (a new or reset interpreter) with cwd `workdir` over `mounts`.

    Model-caused problems come back as outcomes; a misconfigured mount (host path missing or
    not a directory, guest path used twice) raises `ToolbenchError("bench.misuse")`. If the
    caller's task is cancelled, the interpreter is told to stop and `CancelledError` propagates.
    `cancel` (an event of the running loop) stops the command with a `cancelled` outcome.
    `watch(name)` selects the files whose changes the outcome lists in `changed` (module doc).
    """
    job = _prepare(command, workdir, mounts, settings, cancel is not None and cancel.is_set(), watch)
    if isinstance(job, ShellOutcome):
        return job
    loop = asyncio.get_running_loop()
    done: asyncio.Future[ShellOutcome] = loop.create_future()
    done.add_done_callback(_retrieve)  # a late failure after we stopped waiting is not an error
    _WORKERS.submit(functools.partial(job.run_into, loop, done))
    cancelled = asyncio.ensure_future(cancel.wait()) if cancel is not None else None
    waiting: list[asyncio.Future[Any]] = [done] if cancelled is None else [done, cancelled]
    try:
        await asyncio.wait(
            waiting,
            timeout=settings.timeout_seconds + _GUARD_SECONDS,
            return_when=asyncio.FIRST_COMPLETED,
        )
    except asyncio.CancelledError:
        job.stop()
        raise
    finally:
        if cancelled is not None:
            cancelled.cancel()
    if done.done():
        return done.result()
    job.stop()
    await asyncio.wait([done], timeout=_STOP_GRACE_SECONDS)
    status: ShellStatus = "cancelled" if cancel is not None and cancel.is_set() else "timed_out"
    return ShellOutcome(status, None, "", "", may_have_written=job.may_have_written)


def run_shell_blocking(
    command: str,
    *,
    workdir: str = "/",
    mounts: Sequence[Mount],
    settings: ShellSettings,
    stop: StopSignal | None = None,
    watch: Callable[[str], bool] | None = None,
) -> ShellOutcome:
    """`run_shell` for a thread that may block (not an event loop's): the same outcomes, the
    same worker thread, timeout guard and cancel grace, without a hop through an event loop.
    `stop` (set from any thread) stops the command with a `cancelled` outcome; an exception in
    the waiting thread (KeyboardInterrupt) tells the interpreter to stop and propagates."""
    job = _prepare(command, workdir, mounts, settings, stop is not None and stop.is_set(), watch)
    if isinstance(job, ShellOutcome):
        return job
    done = threading.Event()  # the job ended; `box` holds its outcome or exception
    wake = threading.Event()  # the job ended or `stop` was set
    box: list[Any] = []

    def task() -> None:
        try:
            box.append(job._run())
        except BaseException as exc:  # handed to the waiting thread, which re-raises it
            box.append(exc)
        done.set()
        wake.set()
        job.release()

    forget = stop.on_set(wake.set) if stop is not None else None
    try:
        _WORKERS.submit(task)
        wake.wait(settings.timeout_seconds + _GUARD_SECONDS)
    except BaseException:
        job.stop()
        raise
    finally:
        if forget is not None:
            forget()
    if done.is_set():
        value = box[0]
        if isinstance(value, BaseException):
            raise value
        return value  # type: ignore[no-any-return]
    job.stop()
    done.wait(_STOP_GRACE_SECONDS)
    status: ShellStatus = "cancelled" if stop is not None and stop.is_set() else "timed_out"
    return ShellOutcome(status, None, "", "", may_have_written=job.may_have_written)


def _prepare(command: str, workdir: str, mounts: Sequence[Mount], settings: ShellSettings, stopped: bool,
             watch: Callable[[str], bool] | None) -> _Job | ShellOutcome:
    """The checks both entry points make before the run: a job, or the outcome without one."""
    if not isinstance(command, str) or not isinstance(workdir, str):
        raise ToolbenchError("bench.misuse", "run_shell takes the command and workdir as strings")
    mounts = tuple(sorted(mounts, key=lambda m: m.guest_path.count("/")))
    if len({m.guest_path for m in mounts}) != len(mounts):
        raise ToolbenchError("bench.misuse", "two mounts share a guest path")
    if len(command) > settings.max_command_chars:
        return _failed(f"command is {len(command):,} characters long; the limit is {settings.max_command_chars:,}")
    if stopped:
        return ShellOutcome("cancelled", None, "", "", may_have_written=False)
    return _Job(command, guest_path(workdir), mounts, settings, watch)


class _Job:
    """One call's interpreter, taken and run in a worker thread; `stop` may come from any thread."""

    def __init__(self, command: str, workdir: str, mounts: tuple[Mount, ...], settings: ShellSettings,
                 watch: Callable[[str], bool] | None = None) -> None:
        self.command = command
        self.workdir = workdir
        self.mounts = mounts
        self.settings = settings
        self.watch = watch
        self.may_have_written = False
        self._lock = threading.Lock()
        self._stopped = False
        self._bash: Any = None  # the interpreter while its command runs, so `stop` can reach it
        self._used: Any = None  # the interpreter to hand back once the caller has the outcome

    def stop(self) -> None:
        # Under the lock: once `_run` has let go of the interpreter, a late stop cannot cancel
        # the next call that uses it.
        with self._lock:
            self._stopped = True
            if self._bash is not None:
                self._bash.cancel()

    def run_into(self, loop: asyncio.AbstractEventLoop, done: asyncio.Future[ShellOutcome]) -> None:
        try:
            outcome = self._run()
        except BaseException as exc:  # handed to the awaiting task, which re-raises it
            _settle(loop, done, exc)
        else:
            _settle(loop, done, outcome)
        self.release()

    def release(self) -> None:
        """Reset the interpreter and keep it for the next call of this configuration."""
        bash, self._used = self._used, None
        if bash is not None:
            _IDLE.give((self.mounts, self.settings, self.workdir), bash)

    def _run(self) -> ShellOutcome:
        bash = self._used = _IDLE.take((self.mounts, self.settings, self.workdir))
        if not _is_directory(bash, self.workdir):
            return _failed(f"workdir {self.workdir}: No such directory")
        self.may_have_written = _may_write(bash, self.command)
        with self._lock:
            if self._stopped:
                return ShellOutcome("cancelled", None, "", "", may_have_written=False)
            self._bash = bash
        watch = self.watch if self.may_have_written else None
        before = _scan(self.mounts, watch) if watch is not None else None
        started = time.monotonic()
        try:
            result = bash.execute_sync(self.command)
        except Exception as exc:  # bashkit raises RuntimeError for faults of its own
            self._used = None  # in an unknown state: not kept
            return _failed(f"shell engine error: {exc}", self.may_have_written)
        finally:
            with self._lock:
                stopped, self._bash = self._stopped, None
        elapsed = time.monotonic() - started
        outcome = _outcome(result, elapsed, self.settings, stopped, self.may_have_written)
        if watch is None:
            return outcome
        after = _scan(self.mounts, watch) if before is not None else None
        return dataclasses.replace(outcome, changed=_diff(before, after))


def _retrieve(future: asyncio.Future[ShellOutcome]) -> None:
    if not future.cancelled():
        future.exception()


def _settle(loop: asyncio.AbstractEventLoop, done: asyncio.Future[ShellOutcome], value: Any) -> None:
    def settle() -> None:
        if done.done():
            return
        if isinstance(value, BaseException):
            done.set_exception(value)
        else:
            done.set_result(value)

    with contextlib.suppress(RuntimeError):  # the loop closed while the command ran: nobody waits
        loop.call_soon_threadsafe(settle)


_Config = tuple[tuple[Mount, ...], ShellSettings, str]  # mounts, limits, workdir


class _Idle:
    """Interpreters waiting for their next call, by configuration (the least recently used
    configurations are dropped past `_MAX_CONFIGS`). Each is reset before it is kept, so
    taking one is as good as building it; an idle interpreter holds about 0.1 MB."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: OrderedDict[_Config, list[Any]] = OrderedDict()

    def take(self, config: _Config) -> Any:
        with self._lock:
            kept = self._idle.get(config)
            if kept:
                self._idle.move_to_end(config)
                return kept.pop()
        return _interpreter(*config)

    def give(self, config: _Config, bash: Any) -> None:
        try:
            bash.reset()  # variables, functions, options, cwd and the cancel flag; mounts and limits stay
        except Exception:  # an interpreter that cannot reset is dropped, never reused
            return
        with self._lock:
            kept = self._idle.setdefault(config, [])
            self._idle.move_to_end(config)
            if len(kept) < _MAX_IDLE_PER_CONFIG:
                kept.append(bash)
            while len(self._idle) > _MAX_CONFIGS:
                self._idle.popitem(last=False)


_MAX_CONFIGS: Final = 32
_MAX_IDLE_PER_CONFIG: Final = 4
_IDLE: Final = _Idle()


def _interpreter(mounts: tuple[Mount, ...], settings: ShellSettings, workdir: str) -> Any:
    """A new interpreter over `mounts`, starting in `workdir`, with the call limits of `settings`."""
    bash = bashkit.BashTool(
        cwd=workdir,
        env=_ENV,
        timeout_seconds=settings.timeout_seconds,
        max_commands=settings.max_commands,
        max_loop_iterations=settings.max_loop_iterations,
        python=True,
        typescript=True,
    )
    bash.mount("/", _empty_root(), read_only=True)
    for mount in mounts:
        try:
            bash.mount(
                mount.guest_path,
                _host_fs(str(mount.host_path.absolute()), mount.writable),
                read_only=not mount.writable,
            )
        except RuntimeError as exc:
            raise ToolbenchError(
                "bench.misuse", f"cannot mount {mount.host_path} at {mount.guest_path}: {exc}"
            ) from exc
    return bash


@functools.cache
def _empty_root() -> Any:
    """The guest's `/`: one empty filesystem, mounted read-only in every interpreter."""
    return bashkit.FileSystem()


@functools.lru_cache(maxsize=256)
def _host_fs(host_path: str, writable: bool) -> Any:
    """A host directory as a bashkit filesystem; kept, since making one costs ~20 µs per mount
    and bashkit's RealFs holds no state but its root (protection is per mount, not per handle)."""
    return bashkit.FileSystem.real(host_path, writable=writable)


class _Workers:
    """Daemon threads that run shell calls: one more whenever all are busy, none ever stopped.

    Daemon, so a cancelled call still finishing a long builtin never holds up interpreter exit;
    reused, since starting a thread per call costs as much as running `echo`."""

    def __init__(self) -> None:
        self._tasks: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0

    def submit(self, task: Callable[[], None]) -> None:
        with self._lock:
            start = self._idle == 0
            if not start:
                self._idle -= 1
        if start:
            threading.Thread(target=self._work, name="toolbench-shell", daemon=True).start()
        self._tasks.put(task)

    def _work(self) -> None:
        while True:
            self._tasks.get()()
            with self._lock:
                self._idle += 1


_WORKERS: Final = _Workers()


def _is_directory(bash: Any, path: str) -> bool:
    try:
        return bash.stat(path).get("file_type") == "directory"
    except RuntimeError:
        return False


_Stat = tuple[int, int, int, int]  # ctime_ns, mtime_ns, size, inode


def _scan(mounts: tuple[Mount, ...], watch: Callable[[str], bool]) -> dict[str, _Stat] | None:
    """Guest path -> stat of each watched regular file in the writable mounts (links not
    followed); None past `_MAX_WATCH_ENTRIES` entries."""
    found: dict[str, _Stat] = {}
    visited = 0
    for mount in mounts:
        if not mount.writable:
            continue
        stack = [(str(mount.host_path), mount.guest_path)]
        while stack:
            host, guest = stack.pop()
            try:
                entries = os.scandir(host)
            except OSError:
                continue
            with entries:
                for entry in entries:
                    visited += 1
                    if visited > _MAX_WATCH_ENTRIES:
                        return None
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            stack.append((entry.path, f"{guest}/{entry.name}"))
                        elif watch(entry.name) and entry.is_file(follow_symlinks=False):
                            st = entry.stat(follow_symlinks=False)
                            found[f"{guest}/{entry.name}"] = (st.st_ctime_ns, st.st_mtime_ns, st.st_size, st.st_ino)
                    except OSError:  # removed while we looked
                        continue
    return found


def _diff(before: dict[str, _Stat] | None, after: dict[str, _Stat] | None) -> tuple[str, ...] | None:
    """Files created or modified between two scans, oldest change first (ctime covers a
    rename too; equal times, common within one command, fall back to the path order)."""
    if before is None or after is None:
        return None
    changed = sorted((stat[0], stat[1], path) for path, stat in after.items() if before.get(path) != stat)
    return tuple(path for _, _, path in changed)


def _may_write(bash: Any, command: str) -> bool:
    try:
        analysis = bash.analyze(command)
    except Exception:  # does not parse: it will fail before running anything, but stay cautious
        return True
    if analysis.is_opaque or analysis.has_dynamic_commands or analysis.functions:
        return True
    if any(r.is_write and r.path not in _HARMLESS_SINKS for r in analysis.redirects):
        return True
    return not set(analysis.command_names) <= _READERS


def _outcome(result: Any, elapsed: float, settings: ShellSettings, stopped: bool, wrote: bool) -> ShellOutcome:
    stdout, stdout_cut = _clip(result.stdout, settings.max_stdout_chars)
    stderr, stderr_cut = _clip(result.stderr, settings.max_stderr_chars)
    truncated = stdout_cut or stderr_cut or bool(result.stdout_truncated or result.stderr_truncated)
    error = result.error
    status: ShellStatus
    if stopped or error == _CANCELLED_ERROR:
        status = "cancelled"
    elif error is not None:
        status = "timed_out" if any(e in error for e in _TIMEOUT_ERRORS) else "failed"
    elif result.exit_code != 0 and elapsed >= settings.timeout_seconds * _DEADLINE_SHARE:
        status = "timed_out"  # embedded Python and jq report the shared deadline as their own error
    else:
        return ShellOutcome("exited", result.exit_code, stdout, stderr, truncated, wrote)
    return ShellOutcome(status, None, stdout, stderr, truncated, wrote)


def _clip(text: str, limit: int) -> tuple[str, bool]:
    return (text[:limit], True) if len(text) > limit else (text, False)


def _failed(message: str, may_have_written: bool = False) -> ShellOutcome:
    return ShellOutcome("failed", None, "", message, may_have_written=may_have_written)


# ---- the model-facing side: arguments, schema, description, result ----

SHELL_INPUT_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "command": {"type": "string", "description": "The bash script to run."},
        "workdir": {
            "type": "string",
            "description": "Working directory inside the workspace; `/` is the workspace root. Default `/`.",
        },
    },
    "required": ["command"],
    "additionalProperties": False,
}

_ALLOWED_KEYS: Final = ("command", "workdir")


def parse_shell_args(args: dict[str, Any]) -> tuple[str, str]:
    """Check the closed argument set; return `(command, workdir)`. The command is not trimmed."""
    for key in args:
        if key not in _ALLOWED_KEYS:
            raise ToolError("tool.invalid_arguments", f"`{key}` is not supported")
    command = args.get("command")
    if not isinstance(command, str):
        raise ToolError("tool.invalid_arguments", "command must be a string")
    workdir = args.get("workdir")
    if workdir is None:  # absent, or null as strict-mode providers send for optional fields
        return command, "/"
    if not isinstance(workdir, str):
        raise ToolError("tool.invalid_arguments", "workdir must be a string")
    return command, workdir


def describe_shell(*, writable: Sequence[str], read_only: Sequence[str], settings: ShellSettings) -> str:
    """The model-facing description of the shell for these roots (guest names) and limits."""

    def roots(names: Sequence[str]) -> str:
        return ", ".join(guest_path(n) for n in names) or "none"

    s = settings
    return (
        "Run a bash script in a sandboxed in-process interpreter (bashkit). Every call starts a fresh "
        "shell: variables, functions, aliases and the working directory do not carry over; files do.\n"
        f"`/` is the workspace root. Writable: {roots(writable)}. Read-only: {roots(read_only)}. "
        "Nothing else of the host is visible, there are no host programs and no network.\n"
        "Available: bash syntax and bashkit's builtins (ls, cat, grep, rg, sed, awk, find, sort, head, "
        "tail, wc, cut, tr, diff, tar, ...), `jq`, `python3` (an embedded Python subset: json, math "
        "and the like, open() and pathlib on workspace files; no os, re, subprocess or third-party "
        "modules), and `node` / `deno` / `ts` (an embedded JavaScript/TypeScript subset for "
        "computation: console.log, no require, fs or network).\n"
        "`workdir` (default `/`) must be an existing directory.\n"
        f"Limits per call: {s.timeout_seconds:g} s; command up to {s.max_command_chars:,} characters; "
        f"stdout and stderr kept up to {s.max_stdout_chars:,} and {s.max_stderr_chars:,} characters "
        f"(the rest is cut); {s.max_commands:,} commands and {s.max_loop_iterations:,} iterations per "
        "loop. Files written before a failure, a timeout or a cancel stay written."
    )


SHELL_DESCRIPTION: Final = describe_shell(
    writable=("work", "tmp", "output"), read_only=("tool-results", "skills"), settings=ShellSettings()
)

_HEADERS: Final[dict[str, str]] = {"cancelled": "Command cancelled.", "timed_out": "Command timed out."}
_ERROR_CODES: Final[dict[str, str]] = {
    "exited": "workspace.shell_exit",
    "timed_out": "workspace.shell_timeout",
    "cancelled": "workspace.shell_cancelled",
    "failed": "workspace.shell_failed",
}


def format_result(outcome: ShellOutcome) -> tuple[str, dict[str, Any], str | None]:
    """`(content, structured, error_code)` as TauriTavern lays a shell result out.

    Content: a header (`Exit code: <n>`, or a cancel/timeout sentence, or nothing when the
    engine failed), stdout, then stderr (under a `stderr:` line only when stdout is non-empty:
    the upstream quirk), then `Output truncated.`; a newline goes between parts only where the
    previous part does not already end with one. `error_code` is None only for exit code 0.
    """
    parts: list[str] = []
    if outcome.status == "exited":
        parts.append(f"Exit code: {outcome.exit_code}")
    elif outcome.status in _HEADERS:
        parts.append(_HEADERS[outcome.status])
    if outcome.stdout:
        parts.append(outcome.stdout)
    if outcome.stderr:
        if outcome.stdout:
            parts.append("stderr:")
        parts.append(outcome.stderr)
    if outcome.output_truncated:
        parts.append("Output truncated.")
    content = ""
    for part in parts:
        if content and not content.endswith("\n"):
            content += "\n"
        content += part
    structured = {"exitCode": outcome.exit_code, "outputTruncated": outcome.output_truncated}
    ok = outcome.status == "exited" and outcome.exit_code == 0
    return content, structured, None if ok else _ERROR_CODES[outcome.status]
