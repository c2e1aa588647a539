"""The `workspace.shell` engine: a fresh bashkit shell per call, over mounted roots.

This is the only module that runs bashkit commands. bashkit stays inside it and the two modules
it uses, shell_pool (the interpreters: built, kept, dropped) and shell_survey (the host checks
before a call and the static analysis of the command); its exceptions and result shapes stop
there. The tool module, shell, holds the model-facing side: schema, arguments, description and
the result layout.

The guest sees `/` as the workspace root. `/` itself is an empty read-only filesystem; each
`Mount` puts one host directory on it, read-write or read-only (bashkit's `ReadOnlyFs`). Writes
go straight to the host disk, so they persist when the command later fails, times out or is
cancelled. Nothing else of the host is visible: no host programs, no host environment (only
`HOME=/`), no network (bashkit's default). Symlinks that leave a mount are refused by bashkit.

Each call runs in a worker thread, so a long command never blocks the event loop and a sync
caller stays interruptible. It takes an interpreter kept for its configuration, reset after its
last call (shell_pool), so every call still starts from a fresh shell. Cancellation sets
bashkit's flag, which the interpreter checks between commands and inside embedded Python; a
builtin already running (`sleep`) finishes first, so `run_shell` waits at most
`_STOP_GRACE_SECONDS` for it and then reports the cancel anyway.

Before the run, shell_survey checks what the shell may open (bashkit reads a mounted file whole
and blocks on a FIFO): it covers or refuses hazards and keeps the root folders in place. What
an outcome says of writes comes from there too: `may_have_written` is a static judgement and
`changed` a stat diff of the watched files, since bashkit keeps no log of writes to a real mount.

`commands` adds commands of the caller's for one call (the shell bridge): each is registered on
the interpreter before the run and removed before it is handed back, so the next call, of any
invocation, never sees them. A command runs in the worker thread, between the script's commands.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import posixpath
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

from ...core.errors import ToolbenchError
from ...core.shell_settings import ShellSettings
from ...core.workspace_settings import WorkspaceSettings
from ..base import StopSignal
from .shell_pool import IDLE, WORKERS, Command, CommandResult, Config, as_builtin
from .shell_survey import (
    after_write,
    analyze,
    diff,
    is_directory,
    may_write,
    recent_survey,
    scan,
    touches_no_content,
)

__all__ = [
    "Command",
    "CommandResult",
    "Mount",
    "ShellOutcome",
    "ShellStatus",
    "guest_path",
    "run_shell",
    "run_shell_blocking",
]

ShellStatus = Literal["exited", "timed_out", "cancelled", "failed"]

_GUARD_SECONDS: Final = 2.0  # past the timeout, in case an embedded runtime ignores bashkit's deadline
_STOP_GRACE_SECONDS: Final = 0.5  # how long a cancel waits for the interpreter to stop
_DEADLINE_SHARE: Final = 0.98  # a non-zero exit this close to the timeout is the deadline (python, jq)
_CANCELLED_ERROR: Final = "execution cancelled"
_TIMEOUT_ERRORS: Final = ("execution timeout", "parser timeout")
_MAX_FILE_BYTES: Final[int] = WorkspaceSettings.model_fields["max_file_bytes"].default


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
    max_file_bytes: int = _MAX_FILE_BYTES,
    commands: Mapping[str, Command] | None = None,
) -> ShellOutcome:
    """Run `command` in a fresh shell (a new or reset interpreter) with cwd `workdir` over `mounts`.

    Model-caused problems come back as outcomes; a misconfigured mount (host path missing or
    not a directory, guest path used twice) raises `ToolbenchError("bench.misuse")`. If the
    caller's task is cancelled, the interpreter is told to stop and `CancelledError` propagates.
    `cancel` (an event of the running loop) stops the command with a `cancelled` outcome.
    `watch(name)` selects the files whose changes the outcome lists in `changed` (shell_survey).
    A mounted file over `max_file_bytes` (default: the workspace default) is never opened.
    `commands` are the caller's own commands for this call (module doc).
    """
    job = _prepare(command, workdir, mounts, settings, cancel is not None and cancel.is_set(), watch,
                   max_file_bytes, commands)
    if isinstance(job, ShellOutcome):
        return job
    loop = asyncio.get_running_loop()
    done: asyncio.Future[ShellOutcome] = loop.create_future()
    done.add_done_callback(_retrieve)  # a late failure after we stopped waiting is not an error
    WORKERS.submit(functools.partial(job.run_into, loop, done))
    cancelled = asyncio.ensure_future(cancel.wait()) if cancel is not None else None
    waiting: list[asyncio.Future[Any]] = [done] if cancelled is None else [done, cancelled]
    try:
        await asyncio.wait(
            waiting,
            timeout=settings.timeout_seconds + _GUARD_SECONDS,
            return_when=asyncio.FIRST_COMPLETED,
        )
    except asyncio.CancelledError:
        job.abandon()
        raise
    finally:
        if cancelled is not None:
            cancelled.cancel()
    if done.done():
        return done.result()
    job.abandon()
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
    max_file_bytes: int = _MAX_FILE_BYTES,
    commands: Mapping[str, Command] | None = None,
) -> ShellOutcome:
    """`run_shell` for a thread that may block (not an event loop's): the same outcomes, the
    same worker thread, timeout guard and cancel grace, without a hop through an event loop.
    `stop` (set from any thread) stops the command with a `cancelled` outcome; an exception in
    the waiting thread (KeyboardInterrupt) tells the interpreter to stop and propagates."""
    job = _prepare(command, workdir, mounts, settings, stop is not None and stop.is_set(), watch, max_file_bytes,
                   commands)
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
        WORKERS.submit(task)
        wake.wait(settings.timeout_seconds + _GUARD_SECONDS)
    except BaseException:
        job.abandon()
        raise
    finally:
        if forget is not None:
            forget()
    if done.is_set():
        value = box[0]
        if isinstance(value, BaseException):
            raise value
        return value  # type: ignore[no-any-return]
    job.abandon()
    done.wait(_STOP_GRACE_SECONDS)
    status: ShellStatus = "cancelled" if stop is not None and stop.is_set() else "timed_out"
    return ShellOutcome(status, None, "", "", may_have_written=job.may_have_written)


def _prepare(command: str, workdir: str, mounts: Sequence[Mount], settings: ShellSettings, stopped: bool,
             watch: Callable[[str], bool] | None, max_file_bytes: int,
             commands: Mapping[str, Command] | None) -> _Job | ShellOutcome:
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
    return _Job(command, guest_path(workdir), mounts, settings, watch, max_file_bytes, commands or {})


class _Job:
    """One call's interpreter, taken and run in a worker thread; `stop` may come from any thread."""

    def __init__(self, command: str, workdir: str, mounts: tuple[Mount, ...], settings: ShellSettings,
                 watch: Callable[[str], bool] | None = None, max_file_bytes: int = _MAX_FILE_BYTES,
                 commands: Mapping[str, Command] | None = None) -> None:
        self.command = command
        self.commands = dict(commands or {})
        self.workdir = workdir
        self.mounts = mounts
        self.settings = settings
        self.watch = watch
        self.max_file_bytes = max_file_bytes
        self.may_have_written = False
        self._lock = threading.Lock()
        self._stopped = False
        self._abandoned = False  # the caller stopped waiting: the interpreter is never reused
        self._reusable = True  # False once the run leaves the interpreter in doubt (timeout, engine error)
        self._config: Config = (mounts, settings, workdir, ())
        self._bash: Any = None  # the interpreter while its command runs, so `stop` can reach it
        self._used: Any = None  # the interpreter to hand back once the caller has the outcome

    def stop(self) -> None:
        # Under the lock: once `_run` has let go of the interpreter, a late stop cannot cancel
        # the next call that uses it. `cancel` only sets a flag: it never waits for the command.
        with self._lock:
            self._stopped = True
            if self._bash is not None:
                self._bash.cancel()

    def abandon(self) -> None:
        """The caller stops waiting for the outcome: stop the command, and never reuse its
        interpreter (it may be stuck for good, in a read that ignores the cancel)."""
        with self._lock:
            self._abandoned = True
        self.stop()

    def run_into(self, loop: asyncio.AbstractEventLoop, done: asyncio.Future[ShellOutcome]) -> None:
        try:
            outcome = self._run()
        except BaseException as exc:  # handed to the awaiting task, which re-raises it
            _settle(loop, done, exc)
        else:
            _settle(loop, done, outcome)
        self.release()

    def release(self) -> None:
        """Hand the interpreter back: reset and kept for the next call of this configuration,
        or, when it is in doubt, dropped on a reaper thread."""
        held = [self._used] if self._used is not None else []
        self._used = None  # `held` is now the only reference: the pool takes it from there
        with self._lock:
            keep = self._reusable and not self._abandoned
        if held and keep:
            try:  # reset() keeps registered builtins: this call's commands must go first
                for name in self.commands:
                    held[0].remove_builtin(name)
            except Exception:  # an interpreter whose commands cannot go is never reused
                keep = False
        if held:
            IDLE.give(self._config, held, keep=keep)

    def _run(self) -> ShellOutcome:
        survey = recent_survey(self.mounts, self.max_file_bytes)
        self._config = (self.mounts, self.settings, self.workdir, survey.covers)
        bash = self._used = IDLE.take(self._config)
        for name, command in self.commands.items():
            bash.add_builtin(name, as_builtin(command))
        if not is_directory(bash, self.workdir):
            return _failed(f"workdir {self.workdir}: No such directory")
        analysis = analyze(bash, self.command)
        self.may_have_written = may_write(analysis)
        if survey.refusal is not None and not touches_no_content(analysis):
            return _failed(survey.refusal)
        with self._lock:
            if self._stopped:
                return ShellOutcome("cancelled", None, "", "", may_have_written=False)
            self._bash = bash
        watch = self.watch if self.may_have_written else None
        before = scan(self.mounts, watch) if watch is not None else None
        started = time.monotonic()
        try:
            result = bash.execute_sync(self.command)
        except Exception as exc:  # bashkit raises RuntimeError for faults of its own
            self._reusable = False  # in an unknown state: not kept
            return _failed(f"shell engine error: {exc}", self.may_have_written)
        finally:
            with self._lock:
                stopped, self._bash = self._stopped, None
            if self.may_have_written:
                after_write(self.mounts)  # the next call surveys afresh
        elapsed = time.monotonic() - started
        outcome = _outcome(result, elapsed, self.settings, stopped, self.may_have_written)
        if outcome.status == "timed_out":  # a read past the deadline may still hold its thread pool
            self._reusable = False
        if watch is None:
            return outcome
        after = scan(self.mounts, watch) if before is not None else None
        return dataclasses.replace(outcome, changed=diff(before, after))


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
