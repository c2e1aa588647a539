"""The interpreters of the `workspace.shell` engine: kept per configuration, dropped on reapers.

This module builds bashkit interpreters (`_interpreter`) and turns a caller's `Command` into a
bashkit builtin (`as_builtin`); shell_engine runs commands on them.
Building one costs about 0.5 ms, so interpreters are kept per configuration (`_Idle`: mounts,
limits, workdir and covers) and bashkit's `reset()` (a rebuild with the same config and mounts,
~0.1 ms) runs after each call, in the worker once the caller has its outcome: every call still
starts from a fresh shell. Calls run on `WORKERS`, daemon threads reused from call to call.

Interpreters are never waited on. A call stuck in a FIFO read ends at bashkit's deadline, but
the read goes on in the interpreter's own thread pool, and dropping the interpreter joins that
pool: it blocks until the read ends, perhaps never. So an interpreter the pool lets go (evicted,
not reset, or not reused) is dropped on a reaper thread (`_discard`), never under the pool's
lock nor on a caller's thread; one that timed out, met an engine error, or whose caller stopped
waiting (`shell_engine._Job.abandon`) is not reused; a stuck drop holds one reaper thread for
good, nothing else.
"""

from __future__ import annotations

import functools
import queue
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, TypeAlias

import bashkit

from ...core.errors import ToolbenchError
from ...core.shell_settings import ShellSettings

if TYPE_CHECKING:
    from .shell_engine import Mount

@dataclass(frozen=True, slots=True)
class CommandResult:
    """What a caller's command gives the script: its output and exit code."""

    stdout: str = ""
    stderr: str = ""
    exit_code: int = 0


# A caller's command: (argv after the name, the piped stdin or None) -> its result.
Command = Callable[[list[str], str | None], CommandResult]


def as_builtin(command: Command) -> Callable[[Any], Any]:
    """`command` as a bashkit builtin callback (bashkit's context and result stay here)."""

    def run(ctx: Any) -> Any:
        out = command(list(ctx.argv), ctx.stdin)
        return bashkit.BuiltinResult(stdout=out.stdout, stderr=out.stderr, exit_code=out.exit_code)

    return run


_ENV: Final = {"HOME": "/", "BASHKIT_ALLOW_INPROCESS_PYTHON": "1"}

Config: TypeAlias = "tuple[tuple[Mount, ...], ShellSettings, str, tuple[str, ...]]"  # mounts, limits, workdir, covers


class _Idle:
    """Interpreters waiting for their next call, by configuration (the least recently used
    configurations are dropped past `_MAX_CONFIGS`). Each is reset before it is kept, so
    taking one is as good as building it; an idle interpreter holds about 0.1 MB. The lock
    guards the dict only: nothing is built, reset or dropped while it is held."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: OrderedDict[Config, list[Any]] = OrderedDict()

    def take(self, config: Config) -> Any:
        with self._lock:
            kept = self._idle.get(config)
            if kept:
                self._idle.move_to_end(config)
                return kept.pop()
        return _interpreter(*config)

    def give(self, config: Config, held: list[Any], *, keep: bool) -> None:
        """Take the interpreter out of `held` (a one-item list that holds the only reference):
        reset and kept when `keep`, else (or when the reset fails, or there is no room) dropped
        on a reaper thread, like the interpreters of the configuration this one pushes out."""
        if keep:
            try:
                held[0].reset()  # variables, functions, options, cwd and the cancel flag; mounts and limits stay
            except Exception:  # an interpreter that cannot reset is dropped, never reused
                keep = False
        gone: list[Any] = []
        if keep:
            with self._lock:
                kept = self._idle.setdefault(config, [])
                self._idle.move_to_end(config)
                if len(kept) < _MAX_IDLE_PER_CONFIG:
                    kept.append(held.pop())
                while len(self._idle) > _MAX_CONFIGS:
                    gone += self._idle.popitem(last=False)[1]
        gone += held
        held.clear()
        _discard(gone)


_MAX_CONFIGS: Final = 32
_MAX_IDLE_PER_CONFIG: Final = 4
IDLE: Final = _Idle()


def _interpreter(mounts: tuple[Mount, ...], settings: ShellSettings, workdir: str, covers: tuple[str, ...]) -> Any:
    """A new interpreter over `mounts`, starting in `workdir`, with the call limits of `settings`,
    and an empty read-only folder over each guest path of `covers` (see shell_survey)."""
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
    for path in covers:
        bash.mount(path, _cover(), read_only=True)
    return bash


@functools.cache
def _empty_root() -> Any:
    """The guest's `/`: one empty filesystem, mounted read-only in every interpreter."""
    return bashkit.FileSystem()


@functools.cache
def _cover() -> Any:
    """What a hazard shows as: one empty filesystem (without bashkit's /dev, /home, /tmp)."""
    fs = bashkit.FileSystem()
    for entry in fs.read_dir("/"):
        fs.remove(f"/{entry['name']}", recursive=True)
    return fs


@functools.lru_cache(maxsize=256)
def _host_fs(host_path: str, writable: bool) -> Any:
    """A host directory as a bashkit filesystem; kept, since making one costs ~20 µs per mount
    and bashkit's RealFs holds no state but its root (protection is per mount, not per handle)."""
    return bashkit.FileSystem.real(host_path, writable=writable)


class _Workers:
    """Daemon threads that run shell calls: one more whenever all are busy, none ever stopped.

    Daemon, so a cancelled call still finishing a long builtin never holds up interpreter exit;
    reused, since starting a thread per call costs as much as running `echo`."""

    def __init__(self, name: str = "toolbench-shell") -> None:
        self._name = name
        self._tasks: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0

    def submit(self, task: Callable[[], None]) -> None:
        with self._lock:
            start = self._idle == 0
            if not start:
                self._idle -= 1
        if start:
            threading.Thread(target=self._work, name=self._name, daemon=True).start()
        self._tasks.put(task)

    def _work(self) -> None:
        while True:
            self._tasks.get()()
            with self._lock:
                self._idle += 1


WORKERS: Final = _Workers()
_REAPERS: Final = _Workers("toolbench-shell-reaper")


def _discard(interpreters: list[Any]) -> None:
    """Drop each interpreter of `interpreters` (a list only the caller refers to; emptied here)
    on a reaper thread. Dropping one joins its runtime's blocking threads, which never returns
    while one of them is stuck (a read of a FIFO): no lock, worker or caller may wait for it."""
    while interpreters:
        _REAPERS.submit(functools.partial(_drop, [interpreters.pop()]))


def _drop(box: list[Any]) -> None:
    box.pop()  # the last reference goes here, on the reaper's thread
